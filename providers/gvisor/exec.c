/* One execution in a running (warm) container through the exec API.
 *
 * POST /containers/ID/exec -> POST /exec/EID/start on a connection of our
 * own, upgraded to a raw stream -> half-close it (the program's stdin is
 * a pipe that reads EOF: never the host's /dev/null, which runsc would
 * chown to the sandbox user) -> drain the multiplexed output into the
 * capped demultiplexer while watching the deadline and cancel_fd -> GET
 * /exec/EID/json for the exit code.
 *
 * Why a hand-made request for the start: the stream must be half-closed
 * after the request (that is how stdin ends, as `docker exec -i` does),
 * and libcurl cannot shut down the write side of a connection it drives.
 * Everything else goes through gv_docker_call().
 *
 * A timeout or cancel kills the whole container (gVisor has no per-exec
 * kill through the API), telling the caller first (on_kill), and every
 * other execution in it stops at once when killed_fd says so. The caller
 * then takes no new execution into it; likewise after an execution whose
 * process has exited while something (a detached descendant) still holds
 * its output: the container is not clean any more. */
#include "providers/gvisor/gvisor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/runner.h"
#include "base/util.h"

/* How often a stream that stays open is checked against the exec's state. */
#define INSPECT_EVERY_MS 250
/* After the process exited, how long its output may still drain. */
#define DRAIN_GRACE_MS 500
/* After a kill, how long the stream may take to end. Not longer: Docker
 * can hold an exec's stream well after its container died (10 s seen
 * here), and the caller drops the container anyway, checking that nothing
 * of it is left. */
#define EXEC_KILL_GRACE_MS 1000

static int exec_create(const struct gv_docker *d, const struct gv_exec_spec *s, char eid[65], struct gv_exec_out *o)
{
	_cleanup_json_ json_t *body = json_pack("{s:b, s:b, s:b, s:b, s:o, s:o, s:s}", "AttachStdin", 1,
						"AttachStdout", 1, "AttachStderr", 1, "Tty", 0, "Cmd",
						gv_strv_json(s->argv), "Env", gv_strv_json(s->env), "WorkingDir",
						s->workdir ? s->workdir : "/");
	if (body && s->user)
		json_object_set_new(body, "User", json_string(s->user));
	_cleanup_free_ char *path = NULL;
	if (!body || asprintf(&path, "/containers/%s/exec", s->container) < 0)
		return -ENOMEM;
	long st;
	_cleanup_json_ json_t *reply = NULL;
	char err[384] = "";
	int r = gv_docker_call(d, "POST", path, body, GV_LIFECYCLE_TIMEOUT_MS, &st, &reply, err, sizeof err);
	if (r < 0 || gv_created_id(st, reply, eid) < 0) {
		agsbx_error_set(&o->err, r < 0 ? GV_R_UNAVAILABLE : GV_R_EXEC_FAILED,
				"cannot create an exec in container %.12s: %s", s->container, err);
		return r < 0 ? r : -EIO;
	}
	return 0;
}

/* Reads up to the blank line that ends the response headers; whatever
 * came after it is already stream data (fed to the demultiplexer). */
static int read_headers(int fd, struct gv_demux *dm, long *status)
{
	char buf[8192];
	size_t len = 0;
	uint64_t until = agsbx_now_us() + (uint64_t)GV_LIFECYCLE_TIMEOUT_MS * 1000;
	for (;;) {
		char *end = memmem(buf, len, "\r\n\r\n", 4);
		if (end) {
			buf[len < sizeof buf ? len : sizeof buf - 1] = '\0';
			if (sscanf(buf, "HTTP/1.%*d %ld", status) != 1)
				return -EPROTO;
			size_t used = (size_t)(end + 4 - buf);
			gv_demux_feed(dm, buf + used, len - used);
			return 0;
		}
		uint64_t now = agsbx_now_us();
		if (len >= sizeof buf - 1 || now >= until)
			return -EPROTO;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, (int)((until - now) / 1000) + 1) < 0 && errno != EINTR)
			return -errno;
		ssize_t r = recv(fd, buf + len, sizeof buf - 1 - len, MSG_DONTWAIT);
		if (r == 0)
			return -EPROTO;
		if (r > 0)
			len += (size_t)r;
	}
}

/* The start request on a connection of our own; returns the socket with
 * the raw stream, its write side shut (stdin EOF). */
static int exec_start(const struct gv_docker *d, const char *eid, struct gv_demux *dm, struct gv_exec_out *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(d->socket) >= sizeof sa.sun_path)
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, d->socket, strlen(d->socket) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	/* Not SOCK_CLOEXEC (the portable subset): a child forked meanwhile
	 * cannot keep it either, the runner marks every fd above 2
	 * close-on-exec in the child before its exec. */
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	static const char body[] = "{\"Detach\":false,\"Tty\":false}";
	_cleanup_free_ char *req = NULL;
	int n = asprintf(&req,
			 "POST %s/exec/%s/start HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n"
			 "Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: %zu\r\n\r\n%s",
			 d->prefix, eid, sizeof body - 1, body);
	long st = 0;
	int r = n < 0 ? -ENOMEM : connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ? -errno : 0;
	if (r == 0)
		r = agsbx_write_all(fd, req, (size_t)n); /* SIGPIPE is ignored (agsbx_runner_init) */
	if (r == 0)
		r = read_headers(fd, dm, &st);
	if (r == 0 && st != 101 && st != 200)
		r = -EIO;
	if (r < 0) {
		agsbx_error_set(&o->err, st ? GV_R_EXEC_FAILED : GV_R_UNAVAILABLE,
				"cannot start exec %.12s (HTTP %ld): %s", eid, st, strerror(-r));
		close(fd);
		return r;
	}
	shutdown(fd, SHUT_WR);
	return fd;
}

/* GET /exec/EID/json: 1 still running, 0 exited (*code), -errno. */
static int exec_state(const struct gv_docker *d, const char *eid, int *code)
{
	_cleanup_free_ char *path = NULL;
	if (asprintf(&path, "/exec/%s/json", eid) < 0)
		return -ENOMEM;
	long st;
	_cleanup_json_ json_t *j = NULL;
	char err[256];
	int r = gv_docker_call(d, "GET", path, NULL, 0, &st, &j, err, sizeof err);
	if (r < 0)
		return r;
	return gv_exec_state_answer(st, j, code);
}

/* The stream can end a moment before Docker has recorded the exit (the
 * attach copy ends at the program's EOF, the exit event comes apart):
 * exec_state() until it has, at most until the deadline or 2 s. */
static int exec_exit_wait(const struct gv_docker *d, const char *eid, uint64_t deadline, int *code)
{
	uint64_t until = agsbx_now_us() + 2000000;
	if (deadline < until)
		until = deadline;
	for (;;) {
		int st = exec_state(d, eid, code);
		if (st != 1 || agsbx_now_us() >= until)
			return st;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

struct drain {
	int fd;
	bool eof, exited, killed;
	bool killed_under;            /* by another execution's kill (killed_fd) */
	int code;
	uint64_t deadline, give_up, next_inspect;
};

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
}

/* One wait for output (at most until the next event); false on EOF. */
static bool drain_step(struct drain *dr, struct gv_demux *dm, const struct gv_exec_spec *s, uint64_t now)
{
	/* The next event still to come: after a kill only the give-up. */
	uint64_t next = dr->give_up;
	if (!dr->killed && dr->deadline < next)
		next = dr->deadline;
	if (!dr->killed && !dr->exited && dr->next_inspect < next)
		next = dr->next_inspect;
	struct pollfd p[4] = { { .fd = dr->fd, .events = POLLIN } };
	nfds_t np = 1;
	if (!dr->killed && s->killed_fd >= 0)
		p[np++] = (struct pollfd){ .fd = s->killed_fd, .events = POLLIN };
	if (!dr->killed && s->cancel_fd >= 0)
		p[np++] = (struct pollfd){ .fd = s->cancel_fd, .events = POLLIN };
	if (!dr->killed && agsbx_runner_abort_fd() > 2)
		p[np++] = (struct pollfd){ .fd = agsbx_runner_abort_fd(), .events = POLLIN };
	int wait_ms = next > now ? (int)((next - now) / 1000) + 1 : 0;
	if (poll(p, np, wait_ms > 1000 ? 1000 : wait_ms) > 0 && p[0].revents) {
		char buf[65536];
		ssize_t r = recv(dr->fd, buf, sizeof buf, MSG_DONTWAIT);
		if (r > 0)
			gv_demux_feed(dm, buf, (size_t)r);
		else if (r == 0 || (errno != EAGAIN && errno != EINTR))
			return false;
	}
	return true;
}

static void drain_run(struct drain *dr, const struct gv_docker *d, const struct gv_exec_spec *s, const char *eid,
		      struct gv_demux *dm, struct gv_exec_out *o)
{
	for (;;) {
		uint64_t now = agsbx_now_us();
		if (!drain_step(dr, dm, s, now)) {
			dr->eof = true;
			return;
		}
		now = agsbx_now_us();
		if (now >= dr->give_up)
			return;
		if (!dr->killed && s->killed_fd >= 0 && fd_readable(s->killed_fd)) {
			dr->killed = dr->killed_under = true;
			return;
		}
		if (!dr->killed && (now >= dr->deadline || gv_cancel_requested(s->cancel_fd))) {
			if (now >= dr->deadline)
				o->run.timed_out = true;
			else
				o->run.cancelled = true;
			if (s->on_kill)
				s->on_kill(s->kill_ud);
			gv_container_kill(d, s->container);
			dr->killed = true;
			dr->give_up = now + (uint64_t)EXEC_KILL_GRACE_MS * 1000;
		}
		if (!dr->killed && !dr->exited && now >= dr->next_inspect) {
			dr->next_inspect = now + (uint64_t)INSPECT_EVERY_MS * 1000;
			if (exec_state(d, eid, &dr->code) == 0) {
				/* Exited, yet something still holds its output. */
				dr->exited = true;
				dr->give_up = now + (uint64_t)DRAIN_GRACE_MS * 1000;
			}
		}
	}
}

static void exec_result(struct drain *dr, const struct gv_docker *d, const struct gv_exec_spec *s, const char *eid,
			struct gv_demux *dm, struct gv_exec_out *o)
{
	struct agsbx_run_result *r = &o->run;
	gv_demux_take(dm, r);
	o->dirty = dr->killed || !dr->eof;
	if (r->timed_out || r->cancelled) {
		r->status = r->timed_out ? AGSBX_RUN_STATUS_TIMEOUT : AGSBX_RUN_STATUS_CANCELLED;
		return;
	}
	if (dr->killed_under) {
		agsbx_error_set(&o->err, GV_R_EXEC_FAILED, "container %.12s was killed under exec %.12s", s->container,
				eid);
		return;
	}
	int code = dr->code;
	int st = dr->exited ? 0 : exec_exit_wait(d, eid, dr->deadline, &code);
	if (st != 0) {
		o->dirty = true;
		agsbx_error_set(&o->err, st < 0 ? GV_R_UNAVAILABLE : GV_R_EXEC_FAILED,
				"exec %.12s in container %.12s: %s", eid, s->container, st < 0 ? "no exit status" :
				"the stream ended but the process still runs");
		return;
	}
	r->exited = true;
	r->exit_code = code;
	r->status = code;
}

int gv_exec_run(const struct gv_docker *d, const struct gv_exec_spec *s, struct gv_exec_out *o)
{
	memset(o, 0, sizeof *o);
	char eid[65];
	struct gv_demux dm;
	gv_demux_init(&dm, s->max_output);
	int r = exec_create(d, s, eid, o);
	uint64_t t0 = agsbx_now_us();
	int fd = r < 0 ? r : exec_start(d, eid, &dm, o);
	if (fd < 0) {
		o->dirty = true;
		gv_demux_clear(&dm);
		o->run.out = strdup("");
		o->run.err = strdup("");
		return fd;
	}
	struct drain dr = {
		.fd = fd,
		.deadline = s->timeout_ms > 0 ? t0 + (uint64_t)s->timeout_ms * 1000 : UINT64_MAX,
		.give_up = UINT64_MAX,
		.next_inspect = t0 + (uint64_t)INSPECT_EVERY_MS * 1000,
	};
	drain_run(&dr, d, s, eid, &dm, o);
	close(fd);
	o->run.duration_us = agsbx_now_us() - t0;
	exec_result(&dr, d, s, eid, &dm, o);
	gv_demux_clear(&dm);
	if (!o->run.out)
		o->run.out = strdup("");
	if (!o->run.err)
		o->run.err = strdup("");
	return o->err.reason ? -EIO : 0;
}
