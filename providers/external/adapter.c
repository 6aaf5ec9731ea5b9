/* The agsbx-external/1 client: one adapter process per provider run, JSON
 * lines both ways, overlapping requests, a deadline on each, and every
 * misbehaviour turned into a recorded violation (the provider is then
 * defective and the adapter's whole tree is killed). The adapter is as
 * untrusted as a sandboxed program: everything it prints is bounded,
 * parsed strictly and escaped before it reaches the bundle. */
#include "providers/external/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/rundir.h"
#include "base/util.h"

#define TICK_MS 25

struct ext_pending {
	json_int_t id;
	json_t *resp;
	int efd;                      /* readable once answered or broken */
	struct ext_pending *next;
};

struct ext_adapter {
	pthread_mutex_t lock;         /* everything below but the fds */
	pthread_mutex_t wlock;        /* one request line at a time */
	struct agsbx_session *sess;
	int in_fd, out_fd, err_fd, stop_efd;
	pthread_t reader;
	bool reader_started, stop;
	char *dir;
	json_t *argv;
	json_int_t next_id;
	struct ext_pending *pending;
	const char *const *reasons;
	bool broken;
	const char *vreason;
	char vmsg[512];
	json_t *voffending;
	bool shutdown_answered;
	json_int_t shutdown_id;       /* the shutdown request, once sent */
	unsigned killed_on_violation;
	bool killed_child;
	int wstatus;
	char *tail;                   /* last EXT_STDERR_TAIL bytes of stderr */
	size_t tail_len;
	uint64_t err_total, requests, responses;
	char *line;
	size_t line_len;
	bool line_overflow;
};

static void wake(int efd)
{
	uint64_t one = 1;
	if (write(efd, &one, sizeof one) < 0) { /* an eventfd write cannot fail here */ }
}

/* ---- violations ---- */

/* The offending bytes, bounded and escaped (any bytes are safe). */
static json_t *offending_excerpt(const char *data, size_t len)
{
	return agsbx_json_string_sanitized(data, len > EXT_OFFENDING_MAX ? EXT_OFFENDING_MAX : len);
}

static void violation_locked(struct ext_adapter *a, const char *reason, const json_t *offending, const char *msg)
{
	if (a->broken)
		return;
	a->broken = true;
	a->vreason = reason;
	snprintf(a->vmsg, sizeof a->vmsg, "%s", msg);
	/* Always a bounded, escaped string: a response the caller found
	 * wanting is dumped and cut like a raw line. */
	if (json_is_string(offending)) {
		a->voffending = json_incref((json_t *)offending);
	} else if (offending) {
		char *d = json_dumps(offending, JSON_COMPACT);
		a->voffending = d ? offending_excerpt(d, strlen(d)) : NULL;
		free(d);
	}
	for (struct ext_pending *p = a->pending; p; p = p->next)
		wake(p->efd);
	a->stop = true;
	wake(a->stop_efd);
}

void ext_violation(struct ext_adapter *a, const char *reason, const json_t *offending, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&a->lock);
	violation_locked(a, reason, offending, msg);
	pthread_mutex_unlock(&a->lock);
}

bool ext_broken(struct ext_adapter *a, struct agsbx_error *fail)
{
	pthread_mutex_lock(&a->lock);
	bool b = a->broken;
	if (b)
		agsbx_fail(fail, a->vreason, "%s", a->vmsg);
	pthread_mutex_unlock(&a->lock);
	return b;
}

static void protocol_error(struct ext_adapter *a, const char *line, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void protocol_error(struct ext_adapter *a, const char *line, size_t len, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_t *off = line ? offending_excerpt(line, len) : NULL;
	ext_violation(a, EXT_R_PROTOCOL, off, "%s", msg);
	json_decref(off);
}

/* "exit status N" / "killed by signal N" without reaping (the session
 * does that when it ends). */
static void exit_desc(struct ext_adapter *a, char *buf, size_t size)
{
	siginfo_t si = { 0 };
	pid_t pid = agsbx_session_pid(a->sess);
	for (int i = 0; i < 40; i++) {
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
			break;
		usleep(25 * 1000);
	}
	if (si.si_pid != pid)
		snprintf(buf, size, "closed its stdout and is still running");
	else if (si.si_code == CLD_EXITED)
		snprintf(buf, size, "exited with status %d", si.si_status);
	else
		snprintf(buf, size, "was killed by signal %d", si.si_status);
}

/* ---- reading responses ---- */

static struct ext_pending *pending_find(struct ext_adapter *a, json_int_t id)
{
	for (struct ext_pending *p = a->pending; p; p = p->next)
		if (p->id == id && !p->resp)
			return p;
	return NULL;
}

static bool reason_allowed(const struct ext_adapter *a, const char *r)
{
	static const char *const generic[] = { "config_invalid", "grant_invalid", "released", "unsupported", NULL };
	for (const char *const *g = generic; *g; g++)
		if (strcmp(*g, r) == 0)
			return true;
	for (const char *const *g = a->reasons; g && *g; g++)
		if (strcmp(*g, r) == 0)
			return true;
	return false;
}

/* Envelope checks; the caller checks the op's own fields. */
static void handle_line(struct ext_adapter *a, const char *line, size_t len)
{
	const char *unfit = ext_line_unconfined(line, len);
	if (unfit)
		return protocol_error(a, line, len, "%s", unfit);
	json_error_t jerr;
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		return protocol_error(a, line, len, "not JSON: %s", jerr.text);
	_cleanup_json_ json_t *guard = j;
	if (!json_is_object(j))
		return protocol_error(a, line, len, "not a JSON object");
	/* Before anything of it is kept: what the bundle cannot hold breaks
	 * this adapter, not the run (confine.c). */
	unfit = ext_json_unconfined(j, 1);
	if (unfit)
		return protocol_error(a, line, len, "%s", unfit);
	json_t *id = json_object_get(j, "id"), *ok = json_object_get(j, "ok");
	if (!json_is_integer(id))
		return protocol_error(a, line, len, "response without an integer id");
	if (!json_is_boolean(ok))
		return protocol_error(a, line, len, "response %lld: ok missing or not a boolean",
				      (long long)json_integer_value(id));
	if (json_is_false(ok)) {
		const char *r = json_string_value(json_object_get(j, "reason"));
		if (!r || !json_is_string(json_object_get(j, "message")))
			return protocol_error(a, line, len, "refusal without a string reason and message");
		if (!reason_allowed(a, r))
			return protocol_error(a, line, len, "reason '%.64s' is outside the declared set", r);
	}
	pthread_mutex_lock(&a->lock);
	json_int_t n = json_integer_value(id);
	struct ext_pending *p = a->shutdown_answered ? NULL : pending_find(a, n);
	bool after = a->shutdown_answered;
	/* Here, not in the waiting thread: the adapter may exit right after
	 * this line, before that thread runs. */
	if (p && p->id == a->shutdown_id)
		a->shutdown_answered = true;
	if (p) {
		p->resp = json_incref(j);
		a->responses++;
		wake(p->efd);
	}
	json_int_t issued = a->next_id;
	pthread_mutex_unlock(&a->lock);
	if (after)
		return protocol_error(a, line, len, "output after shutdown");
	if (!p)
		return protocol_error(a, line, len, "%s id %lld", n > 0 && n <= issued ? "duplicate" : "unknown",
				      (long long)n);
}

/* One read of a non-blocking pipe: the byte count, or 0 when there is
 * nothing now (EAGAIN, EINTR) or ever again (EOF, error: *open false). */
static ssize_t pump_read(int fd, char *buf, size_t size, bool *open)
{
	ssize_t n = read(fd, buf, size);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		*open = false;
	return n > 0 ? n : 0;
}

static void pump_stdout(struct ext_adapter *a, bool *open)
{
	char buf[65536];
	ssize_t n = pump_read(a->out_fd, buf, sizeof buf, open);
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			if (!a->line_overflow)
				handle_line(a, a->line ? a->line : "", a->line_len);
			a->line_len = 0;
			a->line_overflow = false;
			continue;
		}
		if (a->line_overflow)
			continue;
		if (a->line_len >= EXT_MAX_LINE) {
			a->line_overflow = true;
			protocol_error(a, a->line, a->line_len, "a line over the %u-byte limit", EXT_MAX_LINE);
			continue;
		}
		if (!a->line) {
			a->line = malloc(EXT_MAX_LINE + 1);
			if (!a->line) {
				a->line_overflow = true;
				continue;
			}
		}
		a->line[a->line_len++] = buf[i];
	}
}

static void pump_stderr(struct ext_adapter *a, bool *open)
{
	char buf[16384];
	ssize_t n = pump_read(a->err_fd, buf, sizeof buf, open);
	if (n == 0)
		return;
	pthread_mutex_lock(&a->lock);
	a->err_total += (uint64_t)n;
	size_t keep = (size_t)n > EXT_STDERR_TAIL ? EXT_STDERR_TAIL : (size_t)n;
	const char *src = buf + n - keep;
	if (a->tail_len + keep > EXT_STDERR_TAIL) {
		size_t drop = a->tail_len + keep - EXT_STDERR_TAIL;
		memmove(a->tail, a->tail + drop, a->tail_len - drop);
		a->tail_len -= drop;
	}
	memcpy(a->tail + a->tail_len, src, keep);
	a->tail_len += keep;
	pthread_mutex_unlock(&a->lock);
}

static bool exit_expected(struct ext_adapter *a)
{
	pthread_mutex_lock(&a->lock);
	bool expected = a->shutdown_answered || a->broken;
	pthread_mutex_unlock(&a->lock);
	return expected;
}

/* What is still in the pipe, read now without waiting. */
static void drain_stdout(struct ext_adapter *a, bool *out_open)
{
	for (int i = 0; *out_open && i < 256; i++) {
		struct pollfd pf = { .fd = a->out_fd, .events = POLLIN };
		if (poll(&pf, 1, 0) <= 0)
			break;
		pump_stdout(a, out_open);
	}
}

/* The adapter ended (or closed stdout) without being asked to. Its last
 * lines are read before it is judged: an adapter answers shutdown and
 * exits at once, and the exit may be seen before the answer was read. */
static void check_exit(struct ext_adapter *a, bool *out_open)
{
	if (exit_expected(a) || (*out_open && !agsbx_session_exited(a->sess)))
		return;
	drain_stdout(a, out_open);
	if (exit_expected(a))
		return;
	char how[128];
	exit_desc(a, how, sizeof how);
	ext_violation(a, EXT_R_EXITED, NULL, "the adapter %s before shutdown", how);
}

static void *reader_main(void *arg)
{
	struct ext_adapter *a = arg;
	bool out_open = true, err_open = true;
	uint64_t recorded = 0;
	for (;;) {
		pthread_mutex_lock(&a->lock);
		bool stop = a->stop, broken = a->broken;
		pthread_mutex_unlock(&a->lock);
		if (stop) {
			/* Lines still in the pipe are judged too (output after
			 * shutdown is a violation). */
			if (!broken)
				drain_stdout(a, &out_open);
			broken = ext_broken(a, NULL);
			/* A violation: the tree goes now, not at the end of the run. */
			if (broken)
				a->killed_on_violation = agsbx_session_end(a->sess, &a->killed_child, &a->wstatus);
			return NULL;
		}
		struct pollfd pf[3] = { { .fd = a->stop_efd, .events = POLLIN },
					{ .fd = out_open ? a->out_fd : -1, .events = POLLIN },
					{ .fd = err_open ? a->err_fd : -1, .events = POLLIN } };
		int pr = poll(pf, 3, TICK_MS);
		if (pr > 0 && pf[1].revents)
			pump_stdout(a, &out_open);
		if (pr > 0 && pf[2].revents)
			pump_stderr(a, &err_open);
		/* The tree walk reads /proc: once per tick, not per read. */
		uint64_t now = agsbx_now_us();
		if (now - recorded >= TICK_MS * 1000) {
			agsbx_session_record(a->sess);
			recorded = now;
		}
		check_exit(a, &out_open);
	}
}

/* ---- sending requests ---- */

static int send_line(struct ext_adapter *a, const json_t *req, uint64_t deadline_us)
{
	_cleanup_free_ char *s = json_dumps(req, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!s)
		return -ENOMEM;
	size_t len = strlen(s);
	s[len] = '\n'; /* json_dumps' NUL becomes the line end */
	pthread_mutex_lock(&a->wlock);
	size_t off = 0;
	int r = 0;
	while (off <= len) {
		ssize_t n = write(a->in_fd, s + off, len + 1 - off);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			r = -errno;
			break;
		}
		uint64_t now = agsbx_now_us();
		if (now >= deadline_us) {
			r = -ETIMEDOUT;
			break;
		}
		struct pollfd pf = { .fd = a->in_fd, .events = POLLOUT };
		poll(&pf, 1, (int)((deadline_us - now) / 1000 + 1));
	}
	pthread_mutex_unlock(&a->wlock);
	return r;
}

static struct ext_pending *pending_add(struct ext_adapter *a)
{
	struct ext_pending *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->efd < 0) {
		free(p);
		return NULL;
	}
	pthread_mutex_lock(&a->lock);
	p->id = ++a->next_id;
	p->next = a->pending;
	a->pending = p;
	a->requests++;
	if (a->broken)
		wake(p->efd);
	pthread_mutex_unlock(&a->lock);
	return p;
}

/* Unlinks p and returns its response (new ref, may be NULL). */
static json_t *pending_take(struct ext_adapter *a, struct ext_pending *p)
{
	if (!p)
		return NULL;
	pthread_mutex_lock(&a->lock);
	for (struct ext_pending **pp = &a->pending; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	pthread_mutex_unlock(&a->lock);
	json_t *r = p->resp;
	close(p->efd);
	free(p);
	return r;
}

static bool answered(struct ext_adapter *a, struct ext_pending *p)
{
	pthread_mutex_lock(&a->lock);
	bool done = p->resp != NULL;
	pthread_mutex_unlock(&a->lock);
	return done;
}

static int request(struct ext_adapter *a, struct ext_pending *p, const char *op, json_t *fields, uint64_t deadline_us)
{
	json_t *req = fields ? fields : json_object();
	json_object_set_new(req, "id", json_integer(p->id));
	json_object_set_new(req, "op", json_string(op));
	if (strcmp(op, "shutdown") == 0) {
		pthread_mutex_lock(&a->lock);
		a->shutdown_id = p->id;
		pthread_mutex_unlock(&a->lock);
	}
	int r = send_line(a, req, deadline_us);
	json_decref(req);
	if (r == -ETIMEDOUT)
		ext_violation(a, EXT_R_TIMEOUT, NULL, "%s (id %lld): the adapter did not read its request in time", op,
			      (long long)p->id);
	else if (r < 0)
		ext_violation(a, EXT_R_EXITED, NULL, "%s (id %lld): cannot write the request: %s", op, (long long)p->id,
			      strerror(-r));
	return r;
}

struct waiting {
	struct ext_pending *p, *cp;   /* the request and its cancel */
	uint64_t deadline, cancel_deadline;
	int64_t deadline_ms;
	int cancel_fd;
	const char *exec_id;
};

/* One wait step; false when the wait is over. */
static bool wait_step(struct ext_adapter *a, struct waiting *w, const char *op)
{
	if (ext_broken(a, NULL))
		return false;
	bool done = answered(a, w->p), cdone = !w->cp || answered(a, w->cp);
	if (done && cdone)
		return false;
	uint64_t now = agsbx_now_us(), until = done ? w->cancel_deadline : w->deadline;
	if (!cdone && w->cancel_deadline < until)
		until = w->cancel_deadline;
	if (now >= until) {
		bool c = !cdone && now >= w->cancel_deadline;
		uint64_t sent = c ? w->cancel_deadline - (uint64_t)EXT_DEADLINE_MS * 1000
				  : w->deadline - (uint64_t)w->deadline_ms * 1000;
		ext_violation(a, EXT_R_TIMEOUT, NULL, "%s (id %lld) not answered within %lld ms (detected after %llu ms)",
			      c ? "cancel" : op, (long long)(c ? w->cp->id : w->p->id),
			      (long long)(c ? EXT_DEADLINE_MS : w->deadline_ms), (unsigned long long)((now - sent) / 1000));
		return false;
	}
	/* An answered request's eventfd stays readable: left in the set it
	 * would turn this wait into a spin until the deadline (an adapter that
	 * answers the cancel but never the execute burnt a core for 30 s). */
	struct pollfd pf[3] = { { .fd = done ? -1 : w->p->efd, .events = POLLIN },
				{ .fd = w->cp && !cdone ? w->cp->efd : -1, .events = POLLIN },
				{ .fd = w->cp ? -1 : w->cancel_fd, .events = POLLIN } };
	int pr = poll(pf, 3, (int)((until - now) / 1000 + 1));
	if (pr > 0 && pf[2].revents && !w->cp) {
		w->cp = pending_add(a);
		if (!w->cp)
			return false;
		w->cancel_deadline = agsbx_now_us() + (uint64_t)EXT_DEADLINE_MS * 1000;
		request(a, w->cp, "cancel", json_pack("{s:s}", "exec_id", w->exec_id), w->cancel_deadline);
	}
	return true;
}

int ext_call(struct ext_adapter *a, const char *op, json_t *fields, int64_t deadline_ms, int cancel_fd,
	     const char *exec_id, json_t **resp, struct agsbx_error *fail)
{
	*resp = NULL;
	struct waiting w = { .cancel_fd = exec_id && cancel_fd > 2 ? cancel_fd : -1, .exec_id = exec_id, .cancel_deadline = UINT64_MAX,
			     .deadline_ms = deadline_ms };
	w.p = pending_add(a);
	if (!w.p) {
		json_decref(fields);
		agsbx_fail(fail, "run_failed", "%s: out of memory", op);
		return -ENOMEM;
	}
	w.deadline = agsbx_now_us() + (uint64_t)deadline_ms * 1000;
	if (request(a, w.p, op, fields, w.deadline) == 0)
		while (wait_step(a, &w, op))
			;
	json_t *cr = pending_take(a, w.cp);
	if (cr && !(json_is_true(json_object_get(cr, "ok")) && json_is_boolean(json_object_get(cr, "cancelled"))))
		ext_violation(a, EXT_R_PROTOCOL, cr, "cancel response without a boolean 'cancelled'");
	json_decref(cr);
	json_t *r = pending_take(a, w.p);
	if (ext_broken(a, fail)) {
		json_decref(r);
		return -EPROTO;
	}
	*resp = r;
	return 0;
}

void ext_adapter_set_reasons(struct ext_adapter *a, const char *const *reasons)
{
	pthread_mutex_lock(&a->lock);
	a->reasons = reasons;
	pthread_mutex_unlock(&a->lock);
}

/* ---- start and finish ---- */

static int fresh_dir(const struct agsbx_ctx *ctx, char **out)
{
	char *d = strdup("/tmp/agsbx-adapter-XXXXXX");
	if (!d || !mkdtemp(d)) {
		int r = -errno;
		free(d);
		return r;
	}
	if (ctx->run_as && chown(d, ctx->run_uid, ctx->run_gid) < 0) {
		int r = -errno;
		rmdir(d);
		free(d);
		return r;
	}
	*out = d;
	return 0;
}

static void adapter_free(struct ext_adapter *a)
{
	if (a->dir) {
		agsbx_rm_tree(a->dir); /* its HOME: whatever the adapter left, no link followed */
		free(a->dir);
	}
	agsbx_session_free(a->sess);
	if (a->in_fd >= 0)
		close(a->in_fd);
	if (a->out_fd >= 0)
		close(a->out_fd);
	if (a->err_fd >= 0)
		close(a->err_fd);
	if (a->stop_efd >= 0)
		close(a->stop_efd);
	json_decref(a->argv);
	json_decref(a->voffending);
	free(a->tail);
	free(a->line);
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->wlock);
	free(a);
}

static int spawn(struct ext_adapter *a, const struct ext_start *st)
{
	_cleanup_free_ char *home = NULL;
	if (asprintf(&home, "HOME=%s", a->dir) < 0)
		return -ENOMEM;
	const char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", home, "LANG=C.UTF-8", "AGSBX_EXTERNAL_PROTOCOL=1", NULL };
	struct agsbx_run_opts o = {
		.argv = (const char *const *)st->argv, .envp = env, .cwd = a->dir, .cancel_fd = -1,
		.drop_privileges = st->ctx->run_as, .run_uid = st->ctx->run_uid, .run_gid = st->ctx->run_gid,
	};
	int fds[3];
	int r = agsbx_session_start(&o, &a->sess, fds);
	if (r < 0)
		return r;
	a->in_fd = fds[0];
	a->out_fd = fds[1];
	a->err_fd = fds[2];
	if (fcntl(a->in_fd, F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int ext_adapter_start(const struct ext_start *st, struct ext_adapter **out, struct agsbx_error *fail)
{
	*out = NULL;
	struct ext_adapter *a = calloc(1, sizeof *a);
	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->wlock, NULL);
	a->in_fd = a->out_fd = a->err_fd = -1;
	a->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	a->tail = malloc(EXT_STDERR_TAIL);
	a->argv = json_array();
	for (char *const *w = st->argv; *w; w++)
		json_array_append_new(a->argv, agsbx_json_string_sanitized(*w, strlen(*w)));
	int r = a->stop_efd < 0 || !a->tail ? -ENOMEM : fresh_dir(st->ctx, &a->dir);
	if (r == 0)
		r = spawn(a, st);
	if (r == 0 && pthread_create(&a->reader, NULL, reader_main, a) != 0)
		r = -EAGAIN;
	if (r < 0) {
		agsbx_fail(fail, EXT_R_START, "cannot start the adapter %s: %s", st->argv[0], strerror(-r));
		adapter_free(a);
		return r;
	}
	a->reader_started = true;
	*out = a;
	return 0;
}

/* shutdown, then up to the deadline for the adapter to exit by itself. */
static void shut_down(struct ext_adapter *a)
{
	json_t *resp = NULL;
	struct agsbx_error f = { 0 };
	if (ext_call(a, "shutdown", NULL, EXT_DEADLINE_MS, -1, NULL, &resp, &f) == 0) {
		if (!json_is_true(json_object_get(resp, "ok")))
			ext_violation(a, EXT_R_PROTOCOL, resp, "shutdown refused");
		/* No more requests: EOF on its stdin (a pipeline adapter's
		 * first stage ends only on that). */
		pthread_mutex_lock(&a->wlock);
		close(a->in_fd);
		a->in_fd = -1;
		pthread_mutex_unlock(&a->wlock);
	}
	json_decref(resp);
	uint64_t until = agsbx_now_us() + (uint64_t)EXT_DEADLINE_MS * 1000;
	while (!ext_broken(a, NULL) && !agsbx_session_exited(a->sess) && agsbx_now_us() < until)
		usleep(10 * 1000);
	if (!ext_broken(a, NULL) && !agsbx_session_exited(a->sess))
		ext_violation(a, EXT_R_TIMEOUT, NULL, "the adapter did not exit within %d ms of shutdown", EXT_DEADLINE_MS);
}

static json_t *record(struct ext_adapter *a, unsigned leftovers, int wstatus, bool child_killed)
{
	json_t *exit = child_killed ? json_pack("{s:b}", "killed", 1)
		       : WIFEXITED(wstatus) ? json_pack("{s:i}", "exit_status", WEXITSTATUS(wstatus))
					    : json_pack("{s:i}", "signal", WTERMSIG(wstatus));
	json_t *j = json_pack("{s:O, s:I, s:I, s:o, s:o, s:I, s:b, s:i}", "argv", a->argv, "requests",
			      (json_int_t)a->requests, "responses", (json_int_t)a->responses, "exit", exit,
			      "stderr_tail", agsbx_json_string_sanitized(a->tail, a->tail_len), "stderr_bytes",
			      (json_int_t)a->err_total, "stderr_truncated", a->err_total > a->tail_len, "killed_processes",
			      (int)leftovers);
	json_object_set_new(j, "violation",
			    a->broken ? json_pack("{s:s, s:s, s:O}", "reason", a->vreason, "message", a->vmsg,
						  "offending", a->voffending ? a->voffending : json_null())
				      : json_null());
	return j;
}

json_t *ext_adapter_finish(struct ext_adapter *a, struct agsbx_error *defect)
{
	if (!ext_broken(a, NULL))
		shut_down(a);
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	wake(a->stop_efd);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->reader, NULL);
	/* Drain what is left of stderr (a dying adapter's last words). */
	bool err_open = true;
	for (int i = 0; i < 64 && err_open; i++) {
		struct pollfd pf = { .fd = a->err_fd, .events = POLLIN };
		if (poll(&pf, 1, 0) <= 0)
			break;
		pump_stderr(a, &err_open);
	}
	bool child_killed = a->killed_child;
	int wstatus = a->wstatus;
	unsigned killed = a->killed_on_violation;
	if (!a->broken) {
		killed = agsbx_session_end(a->sess, &child_killed, &wstatus);
		/* Whatever was still running after a clean exit was left behind. */
		if (killed)
			ext_violation(a, EXT_R_LEFTOVER, NULL,
				      "%u process(es) of the adapter were still running after it exited and were killed", killed);
	}
	if (a->broken)
		agsbx_fail(defect, a->vreason, "%s", a->vmsg);
	json_t *j = record(a, killed, wstatus, child_killed);
	adapter_free(a);
	return j;
}
