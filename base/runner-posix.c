/* The bounded runner for platforms other than Linux (macOS), built only
 * with AGSBX_PORTABLE (the Linux build uses runner.c and the runner-*.c files it names).
 * Same contract as base/runner.h with what POSIX offers: argv only, stdin
 * /dev/null, a new session (so a new process group), both streams drained
 * to EOF with the per-stream cap, a timeout and a cancel fd. There is no
 * subreaper and no /proc: the cleanup SIGKILLs the child's process group;
 * a descendant that starts its own session escapes it (documented in
 * docs/portability.md), and the drain stops waiting for its pipes. */
#include "base/runner.h"
#include "base/runner-internal.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GRACE_MS 200           /* pipes still open after the group is gone */

extern char **environ;

struct stream {
	int fd;
	char *buf;
	size_t len, cap;
	uint64_t total;
	bool truncated;
};

int agsbx_runner_cleanup_stale_cgroups(bool dry_run, void (*fn)(void *ud, const char *path, bool removed), void *ud)
{
	(void)dry_run;
	(void)fn;
	(void)ud;
	return 0;   /* no cgroup leaves without Linux */
}

int agsbx_runner_init(void)
{
	return 0; /* no child subreaper here: the process group is the boundary */
}

void agsbx_runner_unregister_child(pid_t pid) { (void)pid; }

int agsbx_find_processes_with_marker(const char *marker, pid_t **pids)
{
	(void)marker;
	if (pids)
		*pids = NULL;
	return -ENOSYS;
}

int agsbx_find_tree_processes_with_marker(const char *marker, pid_t **pids)
{
	return agsbx_find_processes_with_marker(marker, pids);
}

int agsbx_find_run_leftovers(const struct agsbx_leftover_filter *f, struct agsbx_leftover **out)
{
	(void)f;
	*out = NULL;
	return -ENOSYS;   /* no /proc to judge a process by */
}

int agsbx_kill_leftover(const struct agsbx_leftover *l)
{
	(void)l;
	return -ENOSYS;
}

static int cloexec_pipe(int p[2])
{
	if (pipe(p) < 0)
		return -errno;
	for (int i = 0; i < 2; i++)
		if (fcntl(p[i], F_SETFD, FD_CLOEXEC) < 0)
			return -errno;
	return 0;
}

static const char *env_get(const char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (const char *const *e = envp ? envp : (const char *const *)environ; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* In the child: execve argv[0], searched in PATH (of envp) when it has no
 * slash. Only async-signal-safe calls. */
static void exec_child(const struct agsbx_run_opts *o, char *const *envp)
{
	const char *file = o->argv[0];
	if (strchr(file, '/')) {
		execve(file, (char *const *)o->argv, envp);
		return;
	}
	const char *path = env_get(o->envp, "PATH");
	if (!path)
		path = "/usr/bin:/bin";
	char cand[PATH_MAX];
	int first_err = ENOENT;
	while (*path) {
		size_t n = strcspn(path, ":");
		size_t fl = strlen(file);
		if (n + 1 + fl < sizeof cand) {
			memcpy(cand, n ? path : ".", n ? n : 1);
			size_t at = n ? n : 1;
			cand[at] = '/';
			memcpy(cand + at + 1, file, fl + 1);
			execve(cand, (char *const *)o->argv, envp);
			if (errno != ENOENT && first_err == ENOENT)
				first_err = errno;
		}
		path += n + (path[n] == ':');
	}
	errno = first_err;
}

static void child_main(const struct agsbx_run_opts *o, int devnull, int out, int err, int report)
{
	char *const *envp = o->envp ? (char *const *)o->envp : environ;
	int e = 0;
	if (setsid() < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		e = errno;
	if (!e && o->drop_privileges &&
	    (setgroups(1, &o->run_gid) < 0 || setgid(o->run_gid) < 0 || setuid(o->run_uid) < 0))
		e = errno;
	if (!e && o->cwd && chdir(o->cwd) < 0)
		e = errno;
	if (!e) {
		exec_child(o, envp);
		e = errno;
	}
	(void)!write(report, &e, sizeof e);
	_exit(127);
}

static void stream_read(struct stream *s)
{
	char tmp[16384];
	ssize_t n = read(s->fd, tmp, sizeof tmp);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(s->fd);
		s->fd = -1;
		return;
	}
	s->total += (uint64_t)n;
	size_t keep = s->len < s->cap ? s->cap - s->len : 0;
	if ((size_t)n > keep)
		s->truncated = true;
	if ((size_t)n < keep)
		keep = (size_t)n;
	if (keep) {
		memcpy(s->buf + s->len, tmp, keep);
		s->len += keep;
	}
}

/* Drains both streams while the child runs; returns why it stopped. */
static enum run_end drain(struct stream *s, pid_t pid, int cancel_fd, int64_t timeout_ms, int *status)
{
	uint64_t deadline = timeout_ms > 0 ? agsbx_now_us() + (uint64_t)timeout_ms * 1000u : 0, grace = 0;
	bool exited = false;
	for (;;) {
		if (!exited && waitpid(pid, status, WNOHANG) == pid) {
			exited = true;
			kill(-pid, SIGKILL); /* the rest of its group */
			grace = agsbx_now_us() + GRACE_MS * 1000u;
		}
		if (exited && ((s[0].fd < 0 && s[1].fd < 0) || agsbx_now_us() >= grace))
			return END_EXITED;
		if (!exited && deadline && agsbx_now_us() >= deadline)
			return END_TIMEOUT;
		struct pollfd p[3] = { { s[0].fd, POLLIN, 0 }, { s[1].fd, POLLIN, 0 }, { cancel_fd, POLLIN, 0 } };
		if (poll(p, 3, 20) < 0 && errno != EINTR)
			return END_CANCEL;
		if (!exited && cancel_fd >= 0 && (p[2].revents & (POLLIN | POLLHUP)))
			return END_CANCEL;
		for (int i = 0; i < 2; i++)
			if (s[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				stream_read(&s[i]);
	}
}

static int finish_stream(struct stream *s, char **out, size_t *len)
{
	if (s->fd >= 0)
		close(s->fd);
	s->buf[s->len] = '\0';
	*out = s->buf;
	*len = s->len;
	s->buf = NULL;
	return 0;
}

/* Starts the child; 0 with *pid, or -errno (spawn_errno set when exec
 * failed: nothing ran). */
static int spawn(const struct agsbx_run_opts *o, struct stream s[2], pid_t *pid, struct agsbx_run_result *res)
{
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, rep[2] = { -1, -1 }, r;
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (devnull < 0)
		return -errno;
	if ((r = cloexec_pipe(outp)) < 0 || (r = cloexec_pipe(errp)) < 0 || (r = cloexec_pipe(rep)) < 0)
		goto out;
	*pid = fork();
	if (*pid < 0) {
		r = -errno;
		goto out;
	}
	if (*pid == 0)
		child_main(o, devnull, outp[1], errp[1], rep[1]);
	close(rep[1]);
	rep[1] = -1;
	int e = 0;
	ssize_t n;
	while ((n = read(rep[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof e) { /* exec failed: reap, report */
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		res->spawn_errno = e;
		r = -e;
		goto out;
	}
	s[0].fd = outp[0];
	s[1].fd = errp[0];
	outp[0] = errp[0] = -1;
	fcntl(s[0].fd, F_SETFL, O_NONBLOCK);
	fcntl(s[1].fd, F_SETFL, O_NONBLOCK);
	r = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
		if (rep[i] >= 0)
			close(rep[i]);
	}
	close(devnull);
	return r;
}

int agsbx_run(const struct agsbx_run_opts *opts, struct agsbx_run_result *res)
{
	int r0 = agsbx_runner_run_begin(opts, res);
	if (r0 < 0)
		return r0;
	/* Lazily, for callers (and forked test children) that did not; here,
	 * not in runner-common.c, so the shared file calls no runner back. */
	agsbx_runner_init();
	size_t cap = opts->max_output_bytes ? opts->max_output_bytes : AGSBX_RUN_DEFAULT_MAX_OUTPUT;
	struct stream s[2] = { { .fd = -1, .cap = cap }, { .fd = -1, .cap = cap } };
	s[0].buf = malloc(cap + 1);
	s[1].buf = malloc(cap + 1);
	int r = s[0].buf && s[1].buf ? 0 : -ENOMEM;
	pid_t pid = 0;
	uint64_t start = agsbx_now_us();
	if (r == 0)
		r = spawn(opts, s, &pid, res);
	if (r < 0) {
		res->status = 127;
		free(s[0].buf);
		free(s[1].buf);
		return r;
	}
	int st = 0;
	enum run_end end = drain(s, pid, opts->cancel_fd > 2 ? opts->cancel_fd : -1, opts->timeout_ms, &st);
	if (end != END_EXITED) {
		res->killed = kill(-pid, SIGKILL) == 0;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	res->duration_us = agsbx_now_us() - start ? agsbx_now_us() - start : 1;
	agsbx_runner_fill_status(res, st, end);
	res->out_total = s[0].total;
	res->out_truncated = s[0].truncated;
	res->err_total = s[1].total;
	res->err_truncated = s[1].truncated;
	finish_stream(&s[0], &res->out, &res->out_len);
	finish_stream(&s[1], &res->err, &res->err_len);
	return 0;
}
