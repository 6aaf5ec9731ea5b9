/* The execution server of a shared container: `agsbx-payload serve`
 * started through one exec, kept on its raw stream, and a thread that
 * reads that stream. Why: every exec through Docker is a `runsc exec`
 * (about 60 ms of CPU on the CI kind), a fork and exec inside the sandbox
 * about 4 ms; a collect runs some 80 executions.
 *
 * Two framings nest: Docker's (stdout/stderr of the server, docker-api.c's
 * demultiplexer with a sink) and the server's own inside its stdout
 * (conformance/payload/serve.c). What this side keeps of each execution is
 * capped here, by the demultiplexer's rule: the server is a process in the
 * sandbox and bounds nothing for us. The deadline and
 * cancel kill the whole container, as in exec.c: the server is not trusted
 * to kill its children either. */
#include "providers/gvisor/gvisor.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/runner.h"
#include "base/util.h"

/* How often a waiting execution looks at its cancel and killed fds. */
#define WAIT_SLICE_MS 20
/* conformance/payload/serve.c's SERVE_MAX_REQUEST, less its NUL. */
#define REQUEST_MAX (256 * 1024 - 1)
#define HELLO "agsbx-serve 1"

struct sreq {
	uint32_t id;
	struct gv_demux cap;          /* its stdout and stderr, capped */
	bool done, held, signaled;
	int value, spawn_errno;
	struct sreq *next;
};

struct gv_server {
	int fd;
	char eid[65];
	char user[64];                /* its User ("" root): every execution's */
	pthread_t reader;
	bool reader_started;
	pthread_mutex_t lock;         /* everything below, and every sreq */
	pthread_cond_t cond;
	pthread_mutex_t wlock;        /* one request written at a time */
	struct gv_demux dm;           /* Docker's framing; sink: on_bytes */
	unsigned char hdr[9];
	size_t hdr_len;
	uint32_t left;                /* body bytes of the current frame to come */
	unsigned char small[16];      /* an H, F or Z frame's body */
	size_t small_len;
	bool hello, dead, broken;
	char diag[256];               /* the start of the server's stderr */
	size_t diag_len;
	uint32_t next_id;
	struct sreq *reqs;
};

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(char *p, uint32_t v)
{
	p[0] = (char)(v >> 24);
	p[1] = (char)(v >> 16);
	p[2] = (char)(v >> 8);
	p[3] = (char)v;
}

static struct sreq *req_of(struct gv_server *sv, uint32_t id)
{
	for (struct sreq *q = sv->reqs; q; q = q->next)
		if (q->id == id)
			return q;
	return NULL;
}

/* A whole H, F or Z frame (under sv->lock). One of the wrong size breaks
 * the stream: an execution must never wait for an end that was sent
 * malformed. */
static void frame_end(struct gv_server *sv)
{
	char type = (char)sv->hdr[0];
	struct sreq *q = req_of(sv, get32(sv->hdr + 1));
	if ((type == 'F' && sv->small_len != 4) || (type == 'Z' && sv->small_len != 12)) {
		sv->broken = true;
	} else if (type == 'H') {
		sv->hello = sv->small_len == sizeof HELLO - 1 && !memcmp(sv->small, HELLO, sv->small_len);
		sv->broken |= !sv->hello;
	} else if (type == 'F' && q) {
		q->spawn_errno = (int)get32(sv->small);
		q->done = true;
	} else if (type == 'Z' && q) {
		q->signaled = get32(sv->small) != 0;
		q->value = (int)get32(sv->small + 4);
		q->held = get32(sv->small + 8) != 0;
		q->done = true;
	}
	pthread_cond_broadcast(&sv->cond);
}

/* The server's stdout: its frames; stderr: kept for the error message. */
static void on_bytes(void *ud, int stream, const char *data, size_t n)
{
	struct gv_server *sv = ud;
	if (stream) {
		/* Printable ASCII only: it ends up in a one-line message. */
		for (size_t i = 0; i < n && sv->diag_len < sizeof sv->diag - 1; i++) {
			unsigned char c = (unsigned char)data[i];
			sv->diag[sv->diag_len++] = c >= 0x20 && c < 0x7f ? (char)c : ' ';
		}
		sv->diag[sv->diag_len] = '\0';
		return;
	}
	while (n > 0 && !sv->broken) {
		if (sv->hdr_len < sizeof sv->hdr) {
			size_t take = sizeof sv->hdr - sv->hdr_len < n ? sizeof sv->hdr - sv->hdr_len : n;
			memcpy(sv->hdr + sv->hdr_len, data, take);
			sv->hdr_len += take, data += take, n -= take;
			if (sv->hdr_len < sizeof sv->hdr)
				return;
			sv->left = get32(sv->hdr + 5);
			sv->small_len = 0;
			bool out = sv->hdr[0] == 'O' || sv->hdr[0] == 'E';
			sv->broken = !out && (!strchr("HFZ", sv->hdr[0]) || sv->left > sizeof sv->small);
		}
		size_t take = sv->left < n ? sv->left : n;
		struct sreq *q = req_of(sv, get32(sv->hdr + 1));
		if (sv->hdr[0] == 'O' || sv->hdr[0] == 'E') {
			if (q)
				gv_demux_add(&q->cap, sv->hdr[0] == 'E', data, take);
		} else if (take) {
			memcpy(sv->small + sv->small_len, data, take);
			sv->small_len += take;
		}
		sv->left -= (uint32_t)take, data += take, n -= take;
		if (sv->left == 0) {
			if (sv->hdr[0] != 'O' && sv->hdr[0] != 'E')
				frame_end(sv);
			sv->hdr_len = 0;
		}
	}
}

static void *reader_main(void *arg)
{
	struct gv_server *sv = arg;
	char buf[65536];
	for (;;) {
		struct pollfd p = { .fd = sv->fd, .events = POLLIN };
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		ssize_t r = recv(sv->fd, buf, sizeof buf, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		pthread_mutex_lock(&sv->lock);
		gv_demux_feed(&sv->dm, buf, (size_t)r);
		bool broken = sv->broken;
		pthread_mutex_unlock(&sv->lock);
		if (broken)
			break;
	}
	pthread_mutex_lock(&sv->lock);
	sv->dead = true;
	pthread_cond_broadcast(&sv->cond);
	pthread_mutex_unlock(&sv->lock);
	return NULL;
}

/* The condition variable's clock is the realtime one (the portable subset
 * has no pthread_condattr_setclock): only short slices and the lifecycle
 * bound are waited on it; deadlines are checked on the monotonic clock. */
static struct timespec abs_after_ms(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static struct gv_server *server_new(void)
{
	struct gv_server *sv = calloc(1, sizeof *sv);
	if (!sv)
		return NULL;
	sv->fd = -1;
	pthread_cond_init(&sv->cond, NULL);
	pthread_mutex_init(&sv->lock, NULL);
	pthread_mutex_init(&sv->wlock, NULL);
	gv_demux_init(&sv->dm, 0);
	sv->dm.sink = on_bytes;
	sv->dm.sink_ud = sv;
	return sv;
}

/* Until the greeting, the stream's end, or the lifecycle bound. */
static bool await_hello(struct gv_server *sv)
{
	struct timespec until = abs_after_ms(GV_LIFECYCLE_TIMEOUT_MS);
	pthread_mutex_lock(&sv->lock);
	while (!sv->hello && !sv->dead && !sv->broken)
		if (pthread_cond_timedwait(&sv->cond, &sv->lock, &until) == ETIMEDOUT)
			break;
	bool ok = sv->hello && !sv->dead;
	pthread_mutex_unlock(&sv->lock);
	return ok;
}

int gv_server_start(const struct gv_docker *d, const struct gv_exec_spec *spec, struct gv_server **out,
		    struct agsbx_error *err)
{
	*out = NULL;
	struct gv_server *sv = server_new();
	if (!sv)
		return -ENOMEM;
	static const char *const argv[] = { GV_IMAGE_PAYLOAD, "serve", NULL };
	struct gv_exec_spec s = *spec;
	s.argv = argv;
	snprintf(sv->user, sizeof sv->user, "%s", spec->user ? spec->user : "");
	struct gv_exec_out o = { 0 };
	int r = gv_exec_create(d, &s, sv->eid, &o);
	sv->fd = r < 0 ? r : gv_exec_start(d, sv->eid, &sv->dm, &o);
	if (sv->fd >= 0 && pthread_create(&sv->reader, NULL, reader_main, sv) == 0)
		sv->reader_started = true;
	if (sv->reader_started && await_hello(sv)) {
		*out = sv;
		return 0;
	}
	agsbx_error_set(&o.err, GV_R_EXEC_FAILED, "the execution server in container %.12s did not start%s%s",
			spec->container, sv->diag_len ? ": " : "", sv->diag);
	agsbx_error_set(err, o.err.reason, "%s", o.err.message);
	r = sv->fd < 0 ? sv->fd : -EIO;
	gv_server_stop(sv);
	return r;
}

void gv_server_stop(struct gv_server *sv)
{
	if (!sv)
		return;
	if (sv->fd >= 0)
		shutdown(sv->fd, SHUT_RDWR); /* the reader's recv ends */
	if (sv->reader_started)
		pthread_join(sv->reader, NULL);
	if (sv->fd >= 0)
		close(sv->fd);
	while (sv->reqs) {
		struct sreq *q = sv->reqs;
		sv->reqs = q->next;
		gv_demux_clear(&q->cap);
		free(q);
	}
	pthread_mutex_destroy(&sv->lock);
	pthread_mutex_destroy(&sv->wlock);
	pthread_cond_destroy(&sv->cond);
	free(sv);
}

const char *gv_server_exec_id(const struct gv_server *sv)
{
	return sv ? sv->eid : "";
}

/* The request frame: 'R' id len, then argc envc and the NUL-terminated
 * strings cwd, argv..., env... (serve.c's take_request). */
static char *request_frame(uint32_t id, const struct gv_exec_spec *s, size_t *len)
{
	size_t argc = 0, envc = 0, body = 8 + strlen(s->workdir ? s->workdir : "/") + 1;
	for (; s->argv[argc]; argc++)
		body += strlen(s->argv[argc]) + 1;
	for (; s->env && s->env[envc]; envc++)
		body += strlen(s->env[envc]) + 1;
	if (body > REQUEST_MAX)
		return NULL;
	char *f = malloc(9 + body), *p = f + 17;
	if (!f)
		return NULL;
	f[0] = 'R';
	put32(f + 1, id);
	put32(f + 5, (uint32_t)body);
	put32(f + 9, (uint32_t)argc);
	put32(f + 13, (uint32_t)envc);
	p = stpcpy(p, s->workdir ? s->workdir : "/") + 1;
	for (size_t i = 0; i < argc; i++)
		p = stpcpy(p, s->argv[i]) + 1;
	for (size_t i = 0; i < envc; i++)
		p = stpcpy(p, s->env[i]) + 1;
	*len = 9 + body;
	return f;
}

/* Registers q and sends its request: 0, or -errno with o->err set. */
static int send_request(struct gv_server *sv, const struct gv_exec_spec *s, struct sreq *q, struct gv_exec_out *o)
{
	pthread_mutex_lock(&sv->lock);
	bool dead = sv->dead;
	q->id = ++sv->next_id;
	if (!dead) {
		q->next = sv->reqs;
		sv->reqs = q;
	}
	pthread_mutex_unlock(&sv->lock);
	size_t len = 0;
	_cleanup_free_ char *f = dead ? NULL : request_frame(q->id, s, &len);
	int r = dead ? -EPIPE : f ? 0 : -E2BIG;
	if (r == 0) {
		pthread_mutex_lock(&sv->wlock);
		r = agsbx_write_all(sv->fd, f, len);
		pthread_mutex_unlock(&sv->wlock);
	}
	if (r < 0)
		agsbx_error_set(&o->err, GV_R_EXEC_FAILED, "cannot send an execution to the server in container %.12s: %s",
				s->container, strerror(-r));
	return r;
}

static void unlink_req(struct gv_server *sv, struct sreq *q)
{
	pthread_mutex_lock(&sv->lock);
	for (struct sreq **pp = &sv->reqs; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	pthread_mutex_unlock(&sv->lock);
}

static bool fd_ready(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return fd >= 0 && poll(&p, 1, 0) > 0;
}

enum wait_end { W_DONE, W_DEAD, W_KILLED_UNDER, W_KILL };

/* Until the execution ended, the server's stream ended, another
 * execution's kill, or this one's deadline or cancel (which kills). */
static enum wait_end await_end(struct gv_server *sv, const struct gv_exec_spec *s, struct sreq *q,
			       uint64_t deadline, struct gv_exec_out *o)
{
	for (;;) {
		struct timespec slice = abs_after_ms(WAIT_SLICE_MS);
		pthread_mutex_lock(&sv->lock);
		if (!q->done && !sv->dead)
			pthread_cond_timedwait(&sv->cond, &sv->lock, &slice);
		bool done = q->done, dead = sv->dead;
		pthread_mutex_unlock(&sv->lock);
		if (done)
			return W_DONE;
		if (dead)
			return W_DEAD;
		if (fd_ready(s->killed_fd))
			return W_KILLED_UNDER;
		bool late = agsbx_now_us() >= deadline;
		if (late || gv_cancel_requested(s->cancel_fd)) {
			if (late)
				o->run.timed_out = true;
			else
				o->run.cancelled = true;
			return W_KILL;
		}
	}
}

static void take_status(const struct sreq *q, struct agsbx_run_result *r)
{
	if (q->spawn_errno) {
		r->spawn_errno = q->spawn_errno;
		r->status = 127;
	} else if (q->signaled) {
		/* As Docker reports it for a container of its own (exit code
		 * 128+N): a step's result does not depend on where it ran. */
		r->exited = true;
		r->exit_code = r->status = 128 + q->value;
	} else {
		r->exited = true;
		r->exit_code = r->status = q->value;
	}
}

/* Why the stream ended: the server's exit code, when Docker has it, and
 * the start of what it wrote on stderr. */
static void server_ended(struct gv_server *sv, const struct gv_docker *d, const char *container,
			 struct agsbx_error *err)
{
	int code = -1;
	char how[48] = "";
	if (gv_exec_state(d, sv->eid, &code) == 0)
		snprintf(how, sizeof how, " with exit code %d", code);
	agsbx_error_set(err, GV_R_EXEC_FAILED, "the execution server in container %.12s ended%s%s%s", container, how,
			sv->diag_len ? ": " : "", sv->diag);
}

int gv_server_run(struct gv_server *sv, const struct gv_docker *d, const struct gv_exec_spec *s,
		  struct gv_exec_out *o)
{
	memset(o, 0, sizeof *o);
	struct sreq *q = calloc(1, sizeof *q);
	if (!q)
		return -ENOMEM;
	gv_demux_init(&q->cap, s->max_output);
	uint64_t t0 = agsbx_now_us();
	/* The server cannot change its credentials: a step asking for other
	 * ones is refused, never run as the server's. */
	bool same_user = strcmp(s->user ? s->user : "", sv->user) == 0;
	if (!same_user)
		agsbx_error_set(&o->err, GV_R_EXEC_FAILED, "execution as user '%s' asked of the server running as '%s'",
				s->user ? s->user : "", sv->user);
	int r = same_user ? send_request(sv, s, q, o) : -EPERM;
	enum wait_end end = W_DEAD;
	if (r == 0)
		end = await_end(sv, s, q, s->timeout_ms > 0 ? t0 + (uint64_t)s->timeout_ms * 1000 : UINT64_MAX, o);
	if (end == W_KILL) {
		if (s->on_kill)
			s->on_kill(s->kill_ud);
		gv_container_kill(d, s->container);
	}
	unlink_req(sv, q);
	o->run.duration_us = agsbx_now_us() - t0;
	gv_demux_take(&q->cap, &o->run);
	o->dirty = end != W_DONE || q->held;
	if (end == W_DONE)
		take_status(q, &o->run);
	else if (end == W_KILL)
		o->run.status = o->run.timed_out ? AGSBX_RUN_STATUS_TIMEOUT : AGSBX_RUN_STATUS_CANCELLED;
	else if (end == W_KILLED_UNDER)
		agsbx_error_set(&o->err, GV_R_EXEC_FAILED, "container %.12s was killed under this execution",
				s->container);
	else if (r == 0)
		server_ended(sv, d, s->container, &o->err);
	gv_demux_clear(&q->cap);
	free(q);
	return o->err.reason ? (r < 0 ? r : -EIO) : 0;
}
