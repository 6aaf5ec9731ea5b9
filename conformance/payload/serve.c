/* agsbx-payload serve: starts programs on request, inside a sandbox where
 * starting a process from outside is dear. Under gVisor through Docker each
 * `docker exec` is a `runsc exec`: about 60 ms of CPU and 80 ms of wall time
 * on the CI kind, against about 4 ms for a fork and exec inside the
 * sandbox. The gvisor provider starts this once per shared container and
 * sends each execution to it (docs/providers/gvisor.md, "The shared
 * container").
 *
 * Each program is started as `docker exec` starts one: a new session, stdin
 * a pipe that reads EOF, stdout and stderr pipes of their own, no other
 * descriptor, the given directory, the server's environment (the
 * container's) overlaid by the request's, default signal dispositions. The
 * server stays the parent, so the exit status is the kernel's wait status:
 * a signal death is reported as the signal.
 *
 * Wire format (all integers 4-byte big-endian; docs/payload.md):
 *   request, on stdin:  'R' id len  body = argc envc, then cwd, argv[argc],
 *                       env[envc] as NUL-terminated strings
 *   replies, on stdout: 'H' 0 len "agsbx-serve 1"   once, when ready
 *                       'O'|'E' id len bytes       the program's stdout|stderr
 *                       'F' id 4 errno             it could not be started
 *                       'Z' id 12 kind value held  it ended: kind 0 exit code,
 *                                                  1 signal; held 1 when
 *                                                  something still held its
 *                                                  output DRAIN_GRACE_MS later
 * Output is forwarded whole: bounding it is the harness's job, not this
 * sandboxed process's. A malformed request ends the server (exit 2): the
 * harness then sees its stream end. stdin's EOF ends it once its programs
 * have ended. Like the rest of the payload it never allocates. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "payload.h"

#define SERVE_MAX_CHILDREN 64
#define SERVE_MAX_REQUEST (256 * 1024)
#define SERVE_MAX_STRINGS 1024
#define DRAIN_GRACE_MS 500
/* What one forward may gather from a pipe before it writes a frame: a
 * flood crosses Docker's stream in few large frames, not many small ones. */
#define CHUNK (1024 * 1024)

extern char **environ;

struct child {
	uint32_t id;
	pid_t pid;                    /* 0: free slot */
	int fd[2];                    /* stdout, stderr read ends; -1 once at EOF */
	bool exited;
	int status;
	uint64_t exited_at_ms;
};

static struct child kids[SERVE_MAX_CHILDREN];
static int sigchld_pipe[2] = { -1, -1 };
static char req[SERVE_MAX_REQUEST];
static char *strs[SERVE_MAX_STRINGS + 2];

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* One frame; out_buf (when body lies in it, after 9 bytes of room) makes
 * it one write. */
static char out_buf[9 + CHUNK];

static void reply(char type, uint32_t id, const void *body, uint32_t len)
{
	unsigned char h[9];
	h[0] = (unsigned char)type;
	put32(h + 1, id);
	put32(h + 5, len);
	if (body == out_buf + 9) {
		memcpy(out_buf, h, sizeof h);
		write_all(STDOUT_FILENO, out_buf, sizeof h + len);
		return;
	}
	write_all(STDOUT_FILENO, (const char *)h, sizeof h);
	if (len)
		write_all(STDOUT_FILENO, body, len);
}

static void reply_end(const struct child *c, bool held)
{
	unsigned char b[12];
	bool sig = WIFSIGNALED(c->status);
	put32(b, sig);
	put32(b + 4, (uint32_t)(sig ? WTERMSIG(c->status) : WEXITSTATUS(c->status)));
	put32(b + 8, held);
	reply('Z', c->id, b, sizeof b);
}

/* Reads exactly n bytes of stdin: 1, 0 at EOF before the first byte, -1
 * on a short read or error. */
static int read_full(void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(STDIN_FILENO, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return got == 0 && r == 0 ? 0 : -1;
		got += (size_t)r;
	}
	return 1;
}

static void on_sigchld(int sig)
{
	(void)sig;
	int e = errno;
	if (write(sigchld_pipe[1], "c", 1) < 0) {
		/* full: a wake-up is already pending */
	}
	errno = e;
}

/* The request's env overlays the server's: an entry of environ stays
 * unless the request names the same variable. */
static bool env_overridden(const char *e, char *const *env, size_t envc)
{
	const char *eq = strchr(e, '=');
	size_t k = eq ? (size_t)(eq - e) : strlen(e);
	for (size_t i = 0; i < envc; i++)
		if (strncmp(env[i], e, k) == 0 && env[i][k] == '=')
			return true;
	return false;
}

static size_t merged_env(char **out, size_t cap, char *const *env, size_t envc)
{
	size_t n = 0;
	for (char **e = environ; *e && n < cap; e++)
		if (!env_overridden(*e, env, envc))
			out[n++] = *e;
	for (size_t i = 0; i < envc && n < cap; i++)
		out[n++] = env[i];
	out[n] = NULL;
	return n;
}

/* In the forked child: never returns. A failure before the program runs
 * is sent as its errno on the status pipe, pipes[2] (close-on-exec: EOF
 * there means it ran). */
static void child_exec(const char *cwd, char **argv, char **env, size_t envc, const int pipes[3][2])
{
	static char *envp[SERVE_MAX_STRINGS + 1];
	int in[2];
	signal(SIGCHLD, SIG_DFL);
	setsid();
	int e = pipe(in) < 0 ? errno : 0;
	if (!e) {
		close(in[1]);
		if (dup2(in[0], 0) < 0 || dup2(pipes[0][1], 1) < 0 || dup2(pipes[1][1], 2) < 0)
			e = errno;
		/* Only 0, 1, 2 and the close-on-exec status pipe are left to
		 * reach exec: every descriptor the server opens is close-on-exec
		 * (pipe2 O_CLOEXEC), and dup2's copies are not. */
		if (in[0] > 2)
			close(in[0]);
	}
	if (!e && chdir(cwd) < 0)
		e = errno;
	if (!e) {
		merged_env(envp, SERVE_MAX_STRINGS, env, envc);
		execve(argv[0], argv, envp);
		e = errno;
	}
	write_all(pipes[2][1], (const char *)&e, sizeof e);
	_exit(127);
}

static struct child *free_slot(void)
{
	for (int i = 0; i < SERVE_MAX_CHILDREN; i++)
		if (!kids[i].pid)
			return &kids[i];
	return NULL;
}

static void close_pipes(int pipes[3][2])
{
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 2; j++)
			if (pipes[i][j] >= 0)
				close(pipes[i][j]);
}

/* Forks and execs one request; a failure to start is an 'F' reply. */
static void start(uint32_t id, const char *cwd, char **argv, char **env, size_t envc)
{
	int pipes[3][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 } };
	struct child *c = free_slot();
	int e = c ? 0 : EAGAIN;
	for (int i = 0; i < 3 && !e; i++)
		if (pipe2(pipes[i], O_CLOEXEC) < 0)
			e = errno;
	/* The read ends only: the program's stdout and stderr stay blocking. */
	for (int i = 0; i < 2 && !e; i++)
		if (fcntl(pipes[i][0], F_SETFL, O_NONBLOCK) < 0)
			e = errno;
	pid_t pid = e ? -1 : fork();
	if (pid == 0)
		child_exec(cwd, argv, env, envc, (const int(*)[2])pipes);
	if (!e && pid < 0)
		e = errno;
	if (!e) {
		close(pipes[2][1]);
		pipes[2][1] = -1;
		int child_err = 0;
		ssize_t r;
		while ((r = read(pipes[2][0], &child_err, sizeof child_err)) < 0 && errno == EINTR)
			;
		if (r == (ssize_t)sizeof child_err)
			e = child_err ? child_err : EIO;
	}
	if (e) {
		unsigned char b[4];
		put32(b, (uint32_t)e);
		reply('F', id, b, sizeof b);
		if (pid > 0)
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		close_pipes(pipes);
		return;
	}
	*c = (struct child){ .id = id, .pid = pid, .fd = { pipes[0][0], pipes[1][0] } };
	pipes[0][0] = pipes[1][0] = -1;
	close_pipes(pipes);
}

/* One request off stdin: 1 handled, 0 EOF, -1 malformed. */
static int take_request(void)
{
	unsigned char h[9];
	int r = read_full(h, sizeof h);
	if (r <= 0)
		return r;
	uint32_t id = get32(h + 1), len = get32(h + 5);
	if (h[0] != 'R' || len < 8 || len > sizeof req - 1 || read_full(req, len) != 1)
		return -1;
	req[len] = '\0';
	uint32_t argc = get32((unsigned char *)req), envc = get32((unsigned char *)req + 4);
	if (argc < 1 || argc > SERVE_MAX_STRINGS || envc > SERVE_MAX_STRINGS - argc)
		return -1;
	/* cwd, argv..., NULL, env...: each string NUL-terminated in the body. */
	char *p = req + 8, *end = req + len;
	size_t n = 1 + argc + envc;
	for (size_t i = 0; i < n; i++) {
		char *z = memchr(p, '\0', (size_t)(end - p));
		if (!z)
			return -1;
		strs[i < 1 + argc ? i : i + 1] = p;
		p = z + 1;
	}
	strs[1 + argc] = NULL;
	start(id, strs[0], strs + 1, strs + 2 + argc, envc);
	return 1;
}

/* Forwards what one pipe has (non-blocking: read until it is empty or
 * CHUNK is full, then one frame); at EOF closes it. */
static void forward(struct child *c, int s)
{
	char *buf = out_buf + 9;
	size_t got = 0;
	ssize_t r = 0;
	while (got < CHUNK) {
		r = read(c->fd[s], buf + got, CHUNK - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got)
		reply(s ? 'E' : 'O', c->id, buf, (uint32_t)got);
	if (r == 0 || (r < 0 && errno != EAGAIN)) {
		close(c->fd[s]);
		c->fd[s] = -1;
	}
}

static void reap(void)
{
	char b[64];
	while (read(sigchld_pipe[0], b, sizeof b) > 0)
		;
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		for (int i = 0; i < SERVE_MAX_CHILDREN; i++)
			if (kids[i].pid == pid) {
				kids[i].exited = true;
				kids[i].status = st;
				kids[i].exited_at_ms = now_ms();
			}
}

/* Ends the children that exited and whose output is done, or whose
 * output something else still holds after the grace (closed unread). */
static void finish(uint64_t now)
{
	for (int i = 0; i < SERVE_MAX_CHILDREN; i++) {
		struct child *c = &kids[i];
		if (!c->pid || !c->exited)
			continue;
		bool open = c->fd[0] >= 0 || c->fd[1] >= 0;
		bool held = open && now >= c->exited_at_ms + DRAIN_GRACE_MS;
		if (open && !held)
			continue;
		for (int s = 0; s < 2; s++)
			if (c->fd[s] >= 0)
				close(c->fd[s]);
		reply_end(c, held);
		c->pid = 0;
	}
}

static bool any_child(void)
{
	for (int i = 0; i < SERVE_MAX_CHILDREN; i++)
		if (kids[i].pid)
			return true;
	return false;
}

/* One poll over stdin, the SIGCHLD pipe and every open output pipe. */
static int serve_step(bool *stdin_open)
{
	struct pollfd p[2 + 2 * SERVE_MAX_CHILDREN];
	struct child *of[2 + 2 * SERVE_MAX_CHILDREN];
	int side[2 + 2 * SERVE_MAX_CHILDREN];
	nfds_t n = 0;
	p[n++] = (struct pollfd){ .fd = sigchld_pipe[0], .events = POLLIN };
	/* A negative fd is skipped by poll: children always start at 2. */
	p[n++] = (struct pollfd){ .fd = *stdin_open ? STDIN_FILENO : -1, .events = POLLIN };
	int wait_ms = -1;
	uint64_t now = now_ms();
	for (int i = 0; i < SERVE_MAX_CHILDREN; i++)
		for (int s = 0; s < 2 && kids[i].pid; s++) {
			if (kids[i].fd[s] < 0)
				continue;
			of[n] = &kids[i];
			side[n] = s;
			p[n++] = (struct pollfd){ .fd = kids[i].fd[s], .events = POLLIN };
			if (kids[i].exited) {
				uint64_t until = kids[i].exited_at_ms + DRAIN_GRACE_MS;
				int ms = until > now ? (int)(until - now) + 1 : 0;
				if (wait_ms < 0 || ms < wait_ms)
					wait_ms = ms;
			}
		}
	if (poll(p, n, wait_ms) < 0 && errno != EINTR)
		return -1;
	for (nfds_t i = 2; i < n; i++)
		if (p[i].revents)
			forward(of[i], side[i]);
	if (*stdin_open && p[1].revents) {
		int r = take_request();
		if (r < 0)
			return -1;
		*stdin_open = r > 0;
	}
	if (p[0].revents)
		reap();
	finish(now_ms());
	return 0;
}

int serve_main(void)
{
	if (pipe2(sigchld_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return 1;
	struct sigaction sa = { .sa_handler = on_sigchld, .sa_flags = SA_RESTART | SA_NOCLDSTOP };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	static const char hello[] = "agsbx-serve 1";
	reply('H', 0, hello, sizeof hello - 1);
	bool stdin_open = true;
	while (stdin_open || any_child()) {
		if (serve_step(&stdin_open) < 0) {
			fprintf(stderr, "agsbx-payload: serve: malformed request or poll failure\n");
			return 2;
		}
	}
	return 0;
}
