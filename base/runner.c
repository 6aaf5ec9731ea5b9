/* The bounded process runner (contract in runner.h).
 *
 * Shape of one run:
 *   spawn   clone(CLONE_VM | CLONE_VFORK) + exec, posix_spawn-style:
 *           everything the child needs (argv, envp, PATH candidates) is
 *           prepared before, and the child makes raw system calls only
 *           (it runs in our memory, in a multithreaded process).
 *   drain   poll() over stdout, stderr, the child's pidfd and cancel_fd;
 *           every ~25 ms the child's process tree is walked and recorded
 *           (runner-walk.c, runner-tree.c).
 *   cleanup when the child has exited (left as a zombie so its pid and
 *           process group id cannot be reused yet), timed out or was
 *           cancelled: stop and kill the whole tree, including detached
 *           members re-parented to us, reap those, drain the pipes to EOF,
 *           then reap the child. */
#include "base/runner.h"
#include "base/runner-internal.h"
#include "base/cleanup.h"
#include "base/util.h"
#include "base/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/keyctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define SCAN_INTERVAL_US 25000       /* tree walk while the child runs */
#define QUIET_START_US 20000         /* pipes unwatched at first (drain_loop) */
#define NO_PIDFD_TICK_MS 10          /* exit polling when pidfds are missing */
#define DRAIN_GRACE_US 2000000       /* pipes after the tree was killed */
#define DISCARD_CHUNK 65536

/* ---- init ---- */

static _Atomic pid_t initialised_pid;

int agsbx_runner_init(void)
{
	/* Per process, not per program: the subreaper flag is not inherited
	 * over fork (Check runs each test in a forked child). */
	pid_t self = getpid();
	if (atomic_load(&initialised_pid) == self)
		return 0;
	struct sigaction sa = { .sa_handler = SIG_IGN };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPIPE, &sa, NULL) < 0)
		return -errno;
	/* SIGCHLD ignored (or SA_NOCLDWAIT) makes the kernel reap children
	 * itself: no exit status, and no zombie holding the child's pid while
	 * the tree is cleaned up. */
	struct sigaction chld;
	if (sigaction(SIGCHLD, NULL, &chld) == 0 &&
	    (chld.sa_handler == SIG_IGN || (chld.sa_flags & SA_NOCLDWAIT))) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigemptyset(&dfl.sa_mask);
		if (sigaction(SIGCHLD, &dfl, NULL) < 0)
			return -errno;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return -errno;
	atomic_store(&initialised_pid, self);
	return 0;
}

/* ---- output streams ---- */

struct stream {
	int fd;                   /* -1 once at EOF */
	char *buf;
	size_t len, alloc, cap;
	uint64_t total;
	bool truncated;
};

static int stream_grow(struct stream *s)
{
	return agsbx_buf_reserve(&s->buf, &s->alloc, s->alloc + 1, 4096, s->cap + 1);
}

/* Past the cap: move the bytes to /dev/null in the kernel when splice
 * can, so a flood costs no copies; read into a scratch buffer otherwise. */
static ssize_t stream_discard(struct stream *s, int devnull)
{
	static _Atomic bool no_splice;
	if (devnull >= 0 && !atomic_load(&no_splice)) {
		ssize_t n = splice(s->fd, NULL, devnull, NULL, 1 << 20, SPLICE_F_NONBLOCK);
		if (n >= 0 || errno == EAGAIN || errno == EINTR)
			return n;
		if (errno != EINVAL && errno != ENOSYS)
			return n;
		atomic_store(&no_splice, true);
	}
	char scratch[DISCARD_CHUNK];
	return read(s->fd, scratch, sizeof scratch);
}

/* Reads what is available now. Returns 1 at EOF (fd closed), 0 when the
 * pipe is empty, -errno on a read failure (the stream is then closed too). */
static int stream_pump(struct stream *s, int devnull)
{
	for (int i = 0; i < 64 && s->fd >= 0; i++) {
		ssize_t n;
		if (s->len < s->cap) {
			if (s->len + 1 >= s->alloc && stream_grow(s) < 0) {
				/* Out of memory: keep what we have and discard the
				 * rest (truncated), never leave the pipe unread (the
				 * poll loop would spin and the writer block). */
				s->cap = s->len;
				continue;
			}
			size_t room = s->alloc - 1 - s->len;
			if (room > s->cap - s->len)
				room = s->cap - s->len;
			n = read(s->fd, s->buf + s->len, room);
			if (n > 0)
				s->len += (size_t)n;
		} else {
			n = stream_discard(s, devnull);
			if (n > 0)
				s->truncated = true;
		}
		if (n > 0) {
			s->total += (uint64_t)n;
			continue;
		}
		if (n == 0) {
			close(s->fd);
			s->fd = -1;
			return 1;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 0;
		int r = -errno;
		close(s->fd);
		s->fd = -1;
		return r;
	}
	return 0;
}

static int stream_finish(struct stream *s, char **data, size_t *len)
{
	if (!s->buf) {
		s->buf = malloc(1);
		if (!s->buf)
			return -ENOMEM;
	}
	s->buf[s->len] = '\0';
	*data = s->buf;
	*len = s->len;
	s->buf = NULL;
	return 0;
}

/* ---- spawn ---- */

/* Shared with the child: clone(CLONE_VM | CLONE_VFORK) runs it in our
 * memory, with this thread suspended until it execs or exits. The child
 * writes only err, stage and cgroup_ok, and its own stack. */
struct spawn_plan {
	const char *const *argv;
	char *const *envp;
	char **candidates;        /* exec paths, in PATH order */
	const char *cwd;
	bool drop;
	uid_t uid;
	gid_t gid;
	pid_t parent;
	int devnull, out_w, err_w;
	int cgroup_procs_fd;      /* -1: no cgroup leaf */
	int fd3;                  /* > 2: becomes the program's fd 3 */
	int max_fd;               /* close_range fallback bound */
	bool subreaper;           /* the child keeps its own orphans */
	bool new_session_keyring;
	/* written by the child */
	volatile int err;
	volatile int stage;
	volatile int cgroup_ok;
};

enum child_stage { STAGE_SETUP = 1, STAGE_CWD, STAGE_PRIVS, STAGE_EXEC };

#define CHILD_STACK (64 * 1024)

static const char *env_path(const char *const *envp)
{
	if (envp) {
		for (size_t i = 0; envp[i]; i++)
			if (strncmp(envp[i], "PATH=", 5) == 0)
				return envp[i] + 5;
	}
	const char *p = getenv("PATH");
	return p ? p : "/usr/local/bin:/usr/bin:/bin";
}

/* execvp's search, done before fork: absolute/relative paths are used as
 * given; a bare name becomes one candidate per non-empty PATH entry (an
 * empty entry would mean the current directory, which we never search). */
static int build_candidates(const char *name, const char *path, char ***out)
{
	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		char **v = calloc(2, sizeof *v);
		if (!v || !(v[0] = strdup(name))) {
			free(v);
			return -ENOMEM;
		}
		*out = v;
		return 0;
	}
	size_t n = 1;
	for (const char *p = path; *p; p++)
		n += *p == ':';
	char **v = calloc(n + 1, sizeof *v);
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	for (const char *p = path; ; ) {
		size_t len = strcspn(p, ":");
		if (len > 0 && asprintf(&v[k], "%.*s/%s", (int)len, p, name) >= 0)
			k++;
		else if (len > 0) {
			agsbx_strv_free(v);
			return -ENOMEM;
		}
		if (!p[len])
			break;
		p += len + 1;
	}
	if (k == 0) {
		free(v);
		return -ENOENT;
	}
	*out = v;
	return 0;
}

/* The child. It shares our memory and our thread's TLS, so it runs no
 * instrumented code (sanitizer bookkeeping would land in the parent) and
 * calls no libc wrapper with side effects: raw system calls only. */
#define CHILD_FN __attribute__((no_sanitize("address", "undefined"), noinline))

struct k_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static CHILD_FN _Noreturn void child_fail(struct spawn_plan *p, int stage, int err)
{
	p->stage = stage;
	p->err = err ? err : EIO;
	syscall(SYS_exit_group, 127);
	__builtin_unreachable();
}

static CHILD_FN void child_join_cgroup(struct spawn_plan *p)
{
	char buf[24];
	int n = sizeof buf;
	long pid = syscall(SYS_getpid);
	buf[--n] = '\n';
	do {
		buf[--n] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid && n > 0);
	p->cgroup_ok = syscall(SYS_write, p->cgroup_procs_fd, buf + n, (size_t)(sizeof buf - (size_t)n)) ==
		       (long)(sizeof buf - (size_t)n);
}

/* The one descriptor a caller hands on, at a fixed number (bwrap's
 * --seccomp 3), after everything else was marked close-on-exec; the
 * pipes and /dev/null it may overwrite are already on 0-2. */
static CHILD_FN void child_pass_fd3(struct spawn_plan *p)
{
	if (p->fd3 == 3 ? syscall(SYS_fcntl, 3, F_SETFD, 0) < 0
			: p->fd3 > 2 && syscall(SYS_dup3, p->fd3, 3, 0) < 0)
		child_fail(p, STAGE_SETUP, errno);
}

/* Ignored signals survive exec (the harness ignores SIGPIPE) and a
 * parent's handler must never run here: reset every disposition while
 * everything is still blocked; then a session of its own, the cgroup
 * (before any privilege drop) and the standard descriptors. */
static CHILD_FN void child_setup_process(struct spawn_plan *p)
{
	struct k_sigaction dfl = { .handler = SIG_DFL };
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
	if (syscall(SYS_setsid) < 0)
		child_fail(p, STAGE_SETUP, errno);
	if (p->cgroup_procs_fd >= 0)
		child_join_cgroup(p);
	if (syscall(SYS_dup3, p->devnull, 0, 0) < 0 || syscall(SYS_dup3, p->out_w, 1, 0) < 0 ||
	    syscall(SYS_dup3, p->err_w, 2, 0) < 0)
		child_fail(p, STAGE_SETUP, errno);
	/* Everything but 0-2 closes at exec. */
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		for (int fd = 3; fd < p->max_fd; fd++)
			syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
	}
	child_pass_fd3(p);
}

/* The credential drop and what must follow it. */
static CHILD_FN void child_become_user(struct spawn_plan *p)
{
	if (p->drop) {
		if (syscall(SYS_setgroups, 0, NULL) < 0 ||
		    syscall(SYS_setresgid, p->gid, p->gid, p->gid) < 0 ||
		    syscall(SYS_setresuid, p->uid, p->uid, p->uid) < 0)
			child_fail(p, STAGE_PRIVS, errno);
	}
	/* After the drop, so the keyring is the run user's. ENOSYS/EPERM:
	 * keyrings are out of this process's reach altogether (no kernel
	 * support, a seccomp filter), so nothing is inherited either. */
	if (p->new_session_keyring && syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, 0L) < 0 && errno != ENOSYS &&
	    errno != EPERM)
		child_fail(p, STAGE_SETUP, errno);
	/* As the user the program runs as: never a directory only we could
	 * reach (below a 0700 parent), which would hand it a way in. */
	if (p->cwd && syscall(SYS_chdir, p->cwd) < 0)
		child_fail(p, STAGE_CWD, errno);
	/* After the credential change, which clears the parent-death signal. */
	if (syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(p, STAGE_SETUP, errno);
	if (syscall(SYS_getppid) != p->parent)
		child_fail(p, STAGE_SETUP, ESRCH);
	/* A one-shot run's child adopts its own orphans while it lives (the
	 * flag survives exec): a detached grandchild then stays in this run's
	 * tree instead of passing through ours, where a concurrent run's
	 * orphan sweep could take it for its own and kill it. */
	if (p->subreaper && syscall(SYS_prctl, PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		child_fail(p, STAGE_SETUP, errno);
}

/* execve of one candidate; ETXTBSY for a file we just wrote: a child
 * another of our threads is spawning holds our write descriptor until
 * its own exec closes it, a matter of microseconds (Go's ETXTBSY issue
 * 22315). Wait for that, at most 127 ms in all. Returns errno. */
static CHILD_FN int child_execve(const struct spawn_plan *p, const char *path)
{
	syscall(SYS_execve, path, p->argv, p->envp);
	int err = errno;
	for (long ns = 1000000; err == ETXTBSY && ns <= 64000000; ns *= 2) {
		struct timespec ts = { .tv_nsec = ns };
		syscall(SYS_nanosleep, &ts, NULL);
		syscall(SYS_execve, path, p->argv, p->envp);
		err = errno;
	}
	return err;
}

static CHILD_FN int child_main(void *arg)
{
	struct spawn_plan *p = arg;
	child_setup_process(p);
	child_become_user(p);
	uint64_t none = 0;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof none);
	int err = ENOENT;
	bool saw_eacces = false;
	for (size_t i = 0; p->candidates[i]; i++) {
		err = child_execve(p, p->candidates[i]);
		if (err == EACCES)
			saw_eacces = true;
		else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ELOOP &&
			 err != ENAMETOOLONG && err != ENODEV && err != ETIMEDOUT)
			break;
	}
	if (saw_eacces && (err == ENOENT || err == ENOTDIR))
		err = EACCES;
	child_fail(p, STAGE_EXEC, err);
}

/* Keeps pipe ends off 0-2 so the child's dup2 calls cannot clobber them
 * (a harness started with closed std fds). */
static int fd_above_stdio(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int saved = errno;
	close(fd);
	errno = saved;
	return nfd;
}

static int pipe_above_stdio(int p[2])
{
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	p[0] = fd_above_stdio(p[0]);
	p[1] = fd_above_stdio(p[1]);
	if (p[0] < 0 || p[1] < 0) {
		int r = -errno;
		if (p[0] >= 0)
			close(p[0]);
		if (p[1] >= 0)
			close(p[1]);
		p[0] = p[1] = -1;
		return r;
	}
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

struct run {
	struct agsbx_run_tree tree;   /* the tracking state (runner-tree.c) */
	struct stream out, err;
	int devnull;
	int pidfd;
	int cancel_fd;
	pid_t pid;
	bool exited_seen;             /* the child is a zombie, not yet reaped */
	bool keeps_orphans;           /* the child is a subreaper (one-shot runs) */
};

/* The parent's side of a spawn: both pipes (read ends non-blocking)
 * and the child's stack. */
struct spawn_res {
	int outp[2], errp[2];
	char **cands;
	void *stack;
};

static int spawn_res_open(struct spawn_res *sr, const struct agsbx_run_opts *opts,
			  struct agsbx_run_result *res)
{
	int r = build_candidates(opts->argv[0], env_path(opts->envp), &sr->cands);
	if (r < 0) {
		res->spawn_errno = -r;
		return r;
	}
	if ((r = pipe_above_stdio(sr->outp)) < 0 || (r = pipe_above_stdio(sr->errp)) < 0)
		return r;
	if (fcntl(sr->outp[0], F_SETFL, O_NONBLOCK) < 0 || fcntl(sr->errp[0], F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	sr->stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			 -1, 0);
	return sr->stack == MAP_FAILED ? -errno : 0;
}

static void spawn_res_close(struct spawn_res *sr)
{
	close_fd(&sr->outp[0]);
	close_fd(&sr->outp[1]);
	close_fd(&sr->errp[0]);
	close_fd(&sr->errp[1]);
	if (sr->stack != MAP_FAILED)
		munmap(sr->stack, CHILD_STACK);
	agsbx_strv_free(sr->cands);
}

static struct spawn_plan spawn_plan_for(const struct run *run, const struct agsbx_run_opts *opts,
					const struct spawn_res *sr)
{
	struct rlimit rl = { 0 };
	getrlimit(RLIMIT_NOFILE, &rl);
	return (struct spawn_plan){
		.argv = opts->argv,
		.envp = opts->envp ? (char *const *)opts->envp : environ,
		.candidates = sr->cands,
		.cwd = opts->cwd,
		.drop = opts->drop_privileges,
		.uid = opts->run_uid,
		.gid = opts->run_gid,
		.parent = getpid(),
		.devnull = run->devnull,
		.out_w = sr->outp[1],
		.err_w = sr->errp[1],
		.cgroup_procs_fd = run->tree.cgroup_procs_fd,
		.fd3 = opts->fd3 > 2 ? opts->fd3 : -1,
		.max_fd = rl.rlim_cur > 65536 || rl.rlim_cur == RLIM_INFINITY ? 65536 : (int)rl.rlim_cur,
		.subreaper = run->keeps_orphans,
		.new_session_keyring = opts->new_session_keyring,
	};
}

/* clone with every signal blocked: no handler may run in the child (on
 * our memory) before it reset the dispositions. */
static pid_t spawn_clone(struct run *run, struct spawn_plan *plan, void *stack)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	run->tree.start_us = agsbx_now_us();
	pid_t pid = agsbx_runner_spawn_registered(child_main, (char *)stack + CHILD_STACK, plan);
	int spawn_err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = spawn_err;
	return pid;
}

/* Starts the child; on return it is registered and has exec'd, or
 * nothing ran. vfork semantics: no page tables are copied, so the cost
 * does not grow with the harness, and when clone returns the child has
 * either exec'd or failed. */
static int spawn_child(struct run *run, const struct agsbx_run_opts *opts,
		       struct agsbx_run_result *res)
{
	struct spawn_res sr = { .outp = { -1, -1 }, .errp = { -1, -1 }, .stack = MAP_FAILED };
	int r = spawn_res_open(&sr, opts, res);
	if (r < 0)
		goto out;
	if (opts->spare_helpers)
		agsbx_runner_tree_spare(&run->tree, opts->own_exe, opts->own_word);
	/* A leaf would hold the helpers spared too: cgroup.kill takes all. */
	agsbx_runner_cgroup_prepare(&run->tree, opts->use_cgroup && !opts->spare_helpers);
	struct spawn_plan plan = spawn_plan_for(run, opts, &sr);
	pid_t pid = spawn_clone(run, &plan, sr.stack);
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	run->pid = pid;
	agsbx_runner_cgroup_joined(&run->tree, plan.cgroup_ok);
	if (plan.err) {
		/* Nothing ran: reap the failed child and report why. */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		agsbx_runner_unregister_child(pid);
		run->pid = 0;
		res->spawn_errno = plan.err;
		r = -plan.err;
		goto out;
	}
	run->pidfd = agsbx_pidfd_open(pid);
	agsbx_runner_tree_begin(&run->tree, pid);
	run->out.fd = TAKE_FD(sr.outp[0]);
	run->err.fd = TAKE_FD(sr.errp[0]);
out:
	spawn_res_close(&sr);
	return r;
}

/* ---- the drain loop ---- */

/* True once the child has exited; it is left a zombie (WNOWAIT) so its pid
 * and process group id stay ours until cleanup is done. */
static bool child_exited(struct run *run)
{
	if (run->exited_seen)
		return true;
	siginfo_t si = { 0 };
	if (waitid(P_PID, (id_t)run->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == run->pid)
		run->exited_seen = true;
	return run->exited_seen;
}

static int pump_ready(struct run *run, struct pollfd *pf, int idx_out, int idx_err)
{
	int r;
	if (idx_out >= 0 && pf[idx_out].revents && (r = stream_pump(&run->out, run->devnull)) < 0)
		return r;
	if (idx_err >= 0 && pf[idx_err].revents && (r = stream_pump(&run->err, run->devnull)) < 0)
		return r;
	return 0;
}

/* Saturating: a timeout too large to ever fire (INT64_MAX) must not
 * wrap the deadline around into the past. 0: none. */
static uint64_t drain_deadline(uint64_t start, int64_t timeout_ms)
{
	uint64_t max_ms = (UINT64_MAX - start) / 1000u;
	if (timeout_ms <= 0)
		return 0;
	return (uint64_t)timeout_ms >= max_ms ? UINT64_MAX : start + (uint64_t)timeout_ms * 1000u;
}

/* What one poll() of the drain loop watches; -1: not watched. */
struct drain_poll {
	struct pollfd pf[5];
	int n, out, err, pid, cancel, abort;
};

static void drain_poll_fill(struct drain_poll *d, const struct run *run, bool quiet)
{
	*d = (struct drain_poll){ .out = -1, .err = -1, .pid = -1, .cancel = -1, .abort = -1 };
	int afd = agsbx_runner_abort_fd();
	if (run->out.fd >= 0 && !quiet)
		d->pf[d->out = d->n++] = (struct pollfd){ .fd = run->out.fd, .events = POLLIN };
	if (run->err.fd >= 0 && !quiet)
		d->pf[d->err = d->n++] = (struct pollfd){ .fd = run->err.fd, .events = POLLIN };
	if (run->pidfd >= 0)
		d->pf[d->pid = d->n++] = (struct pollfd){ .fd = run->pidfd, .events = POLLIN };
	if (run->cancel_fd >= 0)
		d->pf[d->cancel = d->n++] = (struct pollfd){ .fd = run->cancel_fd, .events = POLLIN };
	if (afd > 2)
		d->pf[d->abort = d->n++] = (struct pollfd){ .fd = afd, .events = POLLIN };
}

#define DRAIN_GO_ON (-1)

/* What a poll()'s results mean: DRAIN_GO_ON, or how the run ends. */
static int drain_poll_handle(struct run *run, struct drain_poll *d)
{
	if (pump_ready(run, d->pf, d->out, d->err) < 0) {
		/* A read error on a pipe is not the child's fault; keep
		 * waiting for it with that stream closed. */
	}
	if (d->pid >= 0 && d->pf[d->pid].revents) {
		run->exited_seen = true;
		return END_EXITED;
	}
	if (d->cancel >= 0 && d->pf[d->cancel].revents) {
		if (d->pf[d->cancel].revents & POLLNVAL)
			run->cancel_fd = -1;   /* not a usable fd: no cancellation */
		else
			return child_exited(run) ? END_EXITED : END_CANCEL;
	}
	if (d->abort >= 0 && (d->pf[d->abort].revents & (POLLIN | POLLHUP | POLLERR)))
		return child_exited(run) ? END_EXITED : END_CANCEL;
	if (run->pidfd < 0 && child_exited(run))
		return END_EXITED;
	return DRAIN_GO_ON;
}

static enum run_end drain_loop(struct run *run, int64_t timeout_ms)
{
	uint64_t start = run->tree.start_us;
	uint64_t deadline = drain_deadline(start, timeout_ms);
	uint64_t next_scan = start + SCAN_INTERVAL_US;
	/* A short-lived child (most steps) writes a few bytes and exits:
	 * waking once for its output and again for its exit costs two trips
	 * through the scheduler where one does. So at first only the exit
	 * (pidfd) and cancel are watched: the pipes hold 64 KiB meanwhile
	 * and drain_rest reads what is left; a child that fills one waits
	 * at most QUIET_START_US. */
	uint64_t quiet_until = run->pidfd >= 0 ? start + QUIET_START_US : 0;
	for (;;) {
		uint64_t now = agsbx_now_us();
		if (deadline && now >= deadline)
			return child_exited(run) ? END_EXITED : END_TIMEOUT;
		if (now >= next_scan) {
			agsbx_runner_tree_record(&run->tree);
			next_scan = now + SCAN_INTERVAL_US;
		}
		bool quiet = now < quiet_until;
		uint64_t wake = next_scan;
		if (quiet && quiet_until < wake)
			wake = quiet_until;
		if (deadline && deadline < wake)
			wake = deadline;
		int ms = (int)((wake - now + 999) / 1000);
		if (run->pidfd < 0 && ms > NO_PIDFD_TICK_MS)
			ms = NO_PIDFD_TICK_MS;

		struct drain_poll d;
		drain_poll_fill(&d, run, quiet);
		if (poll(d.pf, (nfds_t)d.n, ms) < 0) {
			if (errno == EINTR)
				continue;
			/* poll itself failing leaves no way to wait: end the run. */
			return child_exited(run) ? END_EXITED : END_CANCEL;
		}
		int end = drain_poll_handle(run, &d);
		if (end != DRAIN_GO_ON)
			return (enum run_end)end;
	}
}

/* After the tree is gone the pipes normally hit EOF at once; a member we
 * could not kill (EPERM) may hold them, hence the grace bound. */
static void drain_rest(struct run *run)
{
	uint64_t until = agsbx_now_us() + DRAIN_GRACE_US;
	while (run->out.fd >= 0 || run->err.fd >= 0) {
		uint64_t now = agsbx_now_us();
		if (now >= until)
			break;
		struct pollfd pf[2];
		int n = 0, i_out = -1, i_err = -1;
		if (run->out.fd >= 0)
			pf[i_out = n++] = (struct pollfd){ .fd = run->out.fd, .events = POLLIN };
		if (run->err.fd >= 0)
			pf[i_err = n++] = (struct pollfd){ .fd = run->err.fd, .events = POLLIN };
		int pr = poll(pf, (nfds_t)n, (int)((until - now + 999) / 1000));
		if (pr < 0 && errno != EINTR)
			break;
		if (pr > 0)
			pump_ready(run, pf, i_out, i_err);
	}
	close_fd(&run->out.fd);
	close_fd(&run->err.fd);
}

static void run_release(struct run *run)
{
	close_fd(&run->out.fd);
	close_fd(&run->err.fd);
	close_fd(&run->pidfd);
	close_fd(&run->devnull);
	free(run->out.buf);
	free(run->err.buf);
	agsbx_runner_tree_end(&run->tree);
}

/* A run with its /dev/null (the child's stdin, and splice's sink). */
static int run_open(struct run *run, const struct agsbx_run_opts *opts)
{
	size_t cap = opts->max_output_bytes ? opts->max_output_bytes : AGSBX_RUN_DEFAULT_MAX_OUTPUT;
	if (cap > SIZE_MAX / 2)
		cap = SIZE_MAX / 2;
	*run = (struct run){
		.out = { .fd = -1, .cap = cap },
		.err = { .fd = -1, .cap = cap },
		.pidfd = -1,
		.cancel_fd = opts->cancel_fd,
	};
	agsbx_runner_tree_init(&run->tree);
	/* opts zero-initialised by a caller means cancel_fd 0 (stdin), which
	 * is never what they meant: only fds > 2 cancel. */
	if (run->cancel_fd <= 2)
		run->cancel_fd = -1;
	run->devnull = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (run->devnull >= 0)
		run->devnull = fd_above_stdio(run->devnull);
	return run->devnull < 0 ? -errno : 0;
}

/* After the drain: the tree killed, the pipes drained, the child reaped
 * and everything moved into res. */
static int run_finish(struct run *run, struct agsbx_run_result *res, enum run_end end)
{
	res->duration_us = agsbx_now_us() - run->tree.start_us;
	if (res->duration_us == 0)
		res->duration_us = 1;
	/* Kill the child itself only when it is still running (timeout or
	 * cancel); the rest of the tree goes in any case. */
	res->killed = agsbx_runner_tree_kill(&run->tree, end != END_EXITED);
	res->spared = agsbx_runner_tree_spared(&run->tree);
	drain_rest(run);
	int st = 0;
	pid_t w;
	while ((w = waitpid(run->pid, &st, 0)) < 0 && errno == EINTR)
		;
	int wait_err = w < 0 ? -errno : 0;
	agsbx_runner_unregister_child(run->pid);
	res->used_cgroup = run->tree.used_cgroup;
	agsbx_runner_fill_status(res, st, end);

	res->out_total = run->out.total;
	res->out_truncated = run->out.truncated;
	res->err_total = run->err.total;
	res->err_truncated = run->err.truncated;
	int r = stream_finish(&run->out, &res->out, &res->out_len);
	if (r == 0)
		r = stream_finish(&run->err, &res->err, &res->err_len);
	/* Someone else's waitpid(-1) took the child: its status is lost and
	 * must not pass for an exit 0. */
	if (r == 0 && wait_err < 0) {
		res->exited = false;
		res->exit_code = 0;
		res->status = -1;
		r = wait_err;
	}
	return r;
}

int agsbx_run(const struct agsbx_run_opts *opts, struct agsbx_run_result *res)
{
	int r = agsbx_runner_run_begin(opts, res);
	if (r < 0)
		return r;
	/* Lazily, for callers (and forked test children) that did not; here,
	 * not in runner-common.c, so the shared file calls no runner back. */
	agsbx_runner_init();
	struct run run;
	r = run_open(&run, opts);
	if (r < 0) {
		run_release(&run);
		return r;
	}
	/* Sessions (long-lived programs such as adapters) keep the usual
	 * orphan semantics: they may not reap children they did not start. */
	run.keeps_orphans = true;
	r = spawn_child(&run, opts, res);
	if (r < 0) {
		res->status = 127;
		stream_finish(&run.out, &res->out, &res->out_len);
		stream_finish(&run.err, &res->err, &res->err_len);
		run_release(&run);
		return r;
	}
	r = run_finish(&run, res, drain_loop(&run, opts->timeout_ms));
	run_release(&run);
	return r;
}

/* ---- long-lived sessions ---- */

struct agsbx_session {
	struct run run;
	bool reaped;
};

int agsbx_session_start(const struct agsbx_run_opts *opts, struct agsbx_session **out, int fds[3])
{
	*out = NULL;
	if (!opts || !opts->argv || !opts->argv[0])
		return -EINVAL;
	agsbx_runner_init();
	struct agsbx_session *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	s->run = (struct run){ .out = { .fd = -1 }, .err = { .fd = -1 }, .pidfd = -1, .cancel_fd = -1, .devnull = -1 };
	agsbx_runner_tree_init(&s->run.tree);
	int inp[2] = { -1, -1 };
	int r = pipe_above_stdio(inp);
	if (r < 0) {
		free(s);
		return r;
	}
	/* The child's stdin is the read end of our request pipe. */
	s->run.devnull = inp[0];
	struct agsbx_run_result res = { 0 };
	r = spawn_child(&s->run, opts, &res);
	close_fd(&s->run.devnull);
	if (r < 0) {
		close(inp[1]);
		run_release(&s->run);
		free(s);
		return r;
	}
	fds[0] = inp[1];
	fds[1] = TAKE_FD(s->run.out.fd);
	fds[2] = TAKE_FD(s->run.err.fd);
	*out = s;
	return 0;
}

pid_t agsbx_session_pid(const struct agsbx_session *s)
{
	return s->run.pid;
}

void agsbx_session_record(struct agsbx_session *s)
{
	if (!s->reaped)
		agsbx_runner_tree_record(&s->run.tree);
}

bool agsbx_session_exited(struct agsbx_session *s)
{
	return s->reaped || child_exited(&s->run);
}

unsigned agsbx_session_end(struct agsbx_session *s, bool *child_killed, int *wstatus)
{
	*child_killed = false;
	*wstatus = 0;
	if (s->reaped)
		return 0;
	bool running = !child_exited(&s->run);
	unsigned killed = agsbx_runner_tree_kill(&s->run.tree, running);
	*child_killed = running;
	int st = 0;
	while (waitpid(s->run.pid, &st, 0) < 0 && errno == EINTR)
		;
	agsbx_runner_unregister_child(s->run.pid);
	*wstatus = st;
	s->reaped = true;
	return killed;
}

void agsbx_session_free(struct agsbx_session *s)
{
	if (!s)
		return;
	if (!s->reaped) {
		bool k;
		int st;
		agsbx_session_end(s, &k, &st);
	}
	run_release(&s->run);
	free(s);
}
