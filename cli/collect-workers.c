/* collect's provider workers (see collect-workers.h). The report protocol
 * is one compact JSON object per line on a pipe: {"check": {...}} as each
 * check finishes, then {"provider": {...}} or {"error": "..."}; the parent
 * hands the records to the bundle (evidence/bundle.h). */
#include "cli/collect-workers.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/util.h"
#include "cli/commands.h"
#include "conformance/conformance.h"
#include "evidence/bundle.h"

#define REPORT_LINE_MAX (64u << 20)

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

/* One line, never interleaved with another thread's. Takes value. */
static void report(int fd, const char *key, json_t *value)
{
	json_t *msg = json_pack("{s:o}", key, value);
	char *line = msg ? json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(msg);
	if (!line)
		return;
	pthread_mutex_lock(&report_lock);
	if (agsbx_write_all(fd, line, strlen(line)) == 0)
		agsbx_write_all(fd, "\n", 1);
	pthread_mutex_unlock(&report_lock);
	free(line);
}

void agsbx_collect_report_check(int report_fd, const json_t *check)
{
	static const char *const keep[] = { "id", "verdict", "reason", "duration_us" };
	json_t *slim = json_object();
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		json_t *v = json_object_get(check, keep[i]);
		if (v)
			json_object_set(slim, keep[i], v);
	}
	report(report_fd, "check", slim);
}

/* ---- in the worker ----------------------------------------------------- */

static int worker_cancel_fd = -1;

/* The $HOME canary goes at once (async-signal-safe); then every running
 * execution is cancelled and the provider winds down (release, tear-down)
 * before the worker reports and exits. */
static void on_stop_signal(int sig)
{
	(void)sig;
	uint64_t one = 1;
	int e = errno;
	agsbx_conformance_remove_canaries();
	agsbx_conformance_remove_keyring_canary();
	if (worker_cancel_fd >= 0 && write(worker_cancel_fd, &one, sizeof one) < 0) { /* already pending */ }
	errno = e;
}

static void worker_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
}

static __attribute__((noreturn)) void worker_main(struct agsbx_collect_pool *p, size_t i, int fd, pid_t parent)
{
	/* A dead parent cannot read the report: the worker cancels its runs
	 * (SIGTERM below) and ends; the sandboxes' own death signals follow. */
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
	if (getppid() != parent)
		_exit(3); /* the parent died before the line above */
	worker_cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	worker_signals();
	/* Our own subreaper: this provider's orphans come to this process. */
	if (agsbx_runner_init() < 0) {
		report(fd, "error", json_string("cannot become a child subreaper; detached processes would escape"));
		_exit(3);
	}
	struct agsbx_error err = { 0 };
	json_t *pj = p->run(i, fd, worker_cancel_fd, p->run_ud, &err);
	if (pj)
		report(fd, "provider", pj);
	else
		report(fd, "error", json_string(err.message[0] ? err.message : "the provider run failed"));
	/* report() took pj. exit, not _exit: the parent flushed its stdio before the fork, and
	 * the sanitizers' leak check runs at exit (a leak then shows as a
	 * failed worker). */
	exit(pj ? 0 : 3);
}

/* ---- in the parent ----------------------------------------------------- */


static int start_worker(struct agsbx_collect_pool *p, size_t i)
{
	struct agsbx_collect_worker *w = &p->w[i];
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(fds[0]);
		close(fds[1]);
		return e;
	}
	if (pid == 0) {
		close(fds[0]);
		/* Other workers' pipes are not ours to hold open. */
		for (size_t k = 0; k < p->n; k++)
			if (p->w[k].fd >= 0)
				close(p->w[k].fd);
		worker_main(p, i, fds[1], parent);
	}
	close(fds[1]);
	w->pid = pid;
	w->fd = fds[0];
	w->start_us = agsbx_now_us();
	return 0;
}

static void handle_line(struct agsbx_collect_pool *p, struct agsbx_collect_worker *w, const char *line, size_t n)
{
	json_error_t jerr;
	json_t *msg = json_loadb(line, n, 0, &jerr);
	json_t *v;
	if ((v = json_object_get(msg, "check"))) {
		w->done++;
		if (p->on_check)
			p->on_check(p->ud, w, v);
	} else if ((v = json_object_get(msg, "provider")) && json_is_object(v)) {
		json_decref(w->result);
		w->result = json_incref(v);
	} else if ((v = json_object_get(msg, "error")) && json_is_string(v)) {
		snprintf(w->error, sizeof w->error, "%s", json_string_value(v));
	} else {
		snprintf(w->error, sizeof w->error, "unreadable worker report: %s", jerr.text);
	}
	json_decref(msg);
}

/* Reads what is there; returns false at EOF (or on a broken report). */
static bool read_reports(struct agsbx_collect_pool *p, struct agsbx_collect_worker *w)
{
	if (w->cap - w->len < 65536) {
		size_t cap = w->cap ? w->cap * 2 : 131072;
		char *b = cap <= REPORT_LINE_MAX ? realloc(w->buf, cap) : NULL;
		if (!b) {
			snprintf(w->error, sizeof w->error, "worker report too large");
			return false;
		}
		w->buf = b;
		w->cap = cap;
	}
	ssize_t r = read(w->fd, w->buf + w->len, w->cap - w->len);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (r <= 0)
		return false;
	w->len += (size_t)r;
	char *start = w->buf, *nl;
	while ((nl = memchr(start, '\n', w->len - (size_t)(start - w->buf)))) {
		handle_line(p, w, start, (size_t)(nl - start));
		start = nl + 1;
	}
	w->len -= (size_t)(start - w->buf);
	memmove(w->buf, start, w->len);
	return true;
}

static void finish_worker(struct agsbx_collect_worker *w)
{
	close(w->fd);
	w->fd = -1;
	int st = 0;
	while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
		;
	w->pid = 0;
	w->end_us = agsbx_now_us();
	bool clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (w->result && !clean) {
		/* It reported, then failed on the way out (a crash, a leak the
		 * sanitizer found): the run is not trustworthy. */
		json_decref(w->result);
		w->result = NULL;
		snprintf(w->error, sizeof w->error, "the %s worker failed after its report (%s %d)", w->ops->id,
			 WIFSIGNALED(st) ? "signal" : "exit status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return;
	}
	if (w->result || w->error[0])
		return;
	if (WIFSIGNALED(st))
		snprintf(w->error, sizeof w->error, "the %s worker was killed by signal %d", w->ops->id, WTERMSIG(st));
	else
		snprintf(w->error, sizeof w->error, "the %s worker exited with status %d and no report", w->ops->id,
			 WEXITSTATUS(st));
}

static size_t live_count(const struct agsbx_collect_pool *p, struct pollfd *pfd, size_t *map)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (p->w[i].fd < 0)
			continue;
		pfd[k] = (struct pollfd){ .fd = p->w[i].fd, .events = POLLIN };
		map[k++] = i;
	}
	return k;
}

/* Async-signal-safe: SIGTERM to every running worker. */
static void pool_cancel(const struct agsbx_collect_pool *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->w[i].pid > 0)
			kill(p->w[i].pid, SIGTERM);
}

int agsbx_collect_pool_run(struct agsbx_collect_pool *p)
{
	struct pollfd pfd[65];
	size_t map[64], next = 0;
	int max_live = p->max_live < 1 ? 1 : p->max_live > 64 ? 64 : p->max_live;
	for (size_t i = 0; i < p->n; i++)
		p->w[i].fd = -1;
	p->start_us = agsbx_now_us();
	bool stopping = false;
	for (;;) {
		size_t live = live_count(p, pfd, map);
		/* An interrupt (the runner's abort fd, cli/interrupt.c): no new
		 * worker starts, and the live ones are told once to cancel their
		 * executions and wind down; their reports are still read. */
		if (!stopping && agsbx_runner_aborted()) {
			stopping = true;
			pool_cancel(p);
		}
		while (!stopping && next < p->n && live < (size_t)max_live) {
			int r = start_worker(p, next);
			if (r < 0) {
				if (next == 0 && live == 0)
					return r;
				snprintf(p->w[next].error, sizeof p->w[next].error, "cannot start a worker: %s",
					 strerror(-r));
			}
			next++;
			live = live_count(p, pfd, map);
		}
		if (live == 0)
			return 0;
		int afd = stopping ? -1 : agsbx_runner_abort_fd();
		nfds_t nfd = live;
		if (afd > 2)
			pfd[nfd++] = (struct pollfd){ .fd = afd, .events = POLLIN };
		if (poll(pfd, nfd, -1) < 0 && errno != EINTR)
			return -errno;
		for (size_t k = 0; k < live; k++)
			if (pfd[k].revents && !read_reports(p, &p->w[map[k]]))
				finish_worker(&p->w[map[k]]);
	}
}

void agsbx_collect_pool_clear(struct agsbx_collect_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->w[i].buf);
		json_decref(p->w[i].result);
	}
	free(p->w);
	p->w = NULL;
	p->n = 0;
}

/* ---- the results ------------------------------------------------------ */

int agsbx_collect_pool_results(const struct agsbx_collect_pool *pool, int r, int check_jobs, json_t *bundle)
{
	if (r < 0) {
		agsbx_error_errno(r, "cannot start the provider runs");
		return AGSBX_EXIT_INTERNAL;
	}
	_cleanup_free_ struct agsbx_run_timing *per = calloc(pool->n ? pool->n : 1, sizeof *per);
	if (!per)
		return AGSBX_EXIT_INTERNAL;
	for (size_t i = 0; i < pool->n; i++) {
		const struct agsbx_collect_worker *w = &pool->w[i];
		if (!w->result) {
			agsbx_error("%s: %s", w->ops->id, w->error);
			return AGSBX_EXIT_INTERNAL;
		}
		if (agsbx_bundle_add_provider(bundle, w->result) < 0)
			return AGSBX_EXIT_INTERNAL;
		per[i] = (struct agsbx_run_timing){ .id = w->ops->id, .start_us = w->start_us - pool->start_us,
						    .end_us = w->end_us - pool->start_us };
	}
	struct agsbx_run_timings t = { .providers = per, .n = pool->n, .max_providers = pool->max_live,
				       .providers_us = agsbx_now_us() - pool->start_us,
				       .checks_per_provider = check_jobs };
	return agsbx_bundle_set_run_timings(bundle, &t) < 0 ? AGSBX_EXIT_INTERNAL : 0;
}
