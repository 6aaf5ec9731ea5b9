/* The exec API calls of a shared container's execution server (serve.c):
 *
 * POST /containers/ID/exec -> POST /exec/EID/start on a connection of our
 * own, upgraded to a raw stream, kept open both ways (the server's stdin is
 * its requests; never the host's /dev/null, which runsc would chown to the
 * sandbox user) -> GET /exec/EID/json for its state once the stream ends.
 *
 * Why a hand-made request for the start: the stream must stay ours to
 * write to and to close, and libcurl cannot hand over a connection it
 * drives. Everything else goes through
 * gv_docker_call(). */
#include "providers/gvisor/gvisor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/runner.h"
#include "base/util.h"

int gv_exec_create(const struct gv_docker *d, const struct gv_exec_spec *s, char eid[65], struct gv_exec_out *o)
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

int gv_exec_start(const struct gv_docker *d, const char *eid, struct gv_demux *dm, struct gv_exec_out *o)
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
	return fd;
}

int gv_exec_state(const struct gv_docker *d, const char *eid, int *code)
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
