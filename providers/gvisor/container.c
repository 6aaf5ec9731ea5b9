/* One bounded container run through the Engine API.
 *
 * create -> attach + wait?condition=next-exit (both registered before the
 * start, so no output and no exit can be missed) -> start -> a curl multi
 * loop that drains the attach stream into the capped demultiplexer while
 * watching the deadline and cancel_fd -> kill on timeout/cancel -> remove
 * -> verify that no container with the execution's label remains and that
 * no host process (shim, runsc-gofer, runsc-sandbox) names the container.
 * The log driver is "none": output never lands on the daemon's disk, and a
 * flood costs at most the caps in our memory. */
#include "providers/gvisor/gvisor.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/http-curl.h"
#include "base/rundir.h"
#include "base/http.h"
#include "base/util.h"

#define MEMORY_LIMIT (512LL << 20)
#define PIDS_LIMIT 256
/* After the wait answered, how long the attach stream may still drain. */
#define ATTACH_GRACE_MS 2000
/* After a kill, how long we wait for Docker to report the exit. */
#define KILL_GRACE_MS 10000
/* How long a removed container's shim/runsc processes may take to exit
 * before we stop them ourselves. */
#define PROC_GRACE_MS 3000
#define PROC_GRACE_SHORT_MS 500
#define PROC_SETTLE_MS 1000

struct xfer {
	CURL *e;
	struct curl_slist *hdrs;
	bool headers_done;
	bool done;
	CURLcode rc;
	struct gv_demux *demux;       /* attach: the output */
	char small[4096];             /* wait: the JSON answer */
	size_t small_len;
};

static size_t on_header(char *buf, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	/* The blank line ends the header block; Docker flushes it for both
	 * attach and wait before anything happens to the container. */
	if (len <= 2 && (len == 0 || buf[0] == '\r' || buf[0] == '\n'))
		x->headers_done = true;
	return len;
}

static size_t on_attach(char *buf, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	gv_demux_feed(x->demux, buf, size * n);
	return size * n;
}

static size_t on_small(char *buf, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	if (x->small_len + len >= sizeof x->small)
		return 0; /* a wait answer is tiny: anything else is wrong */
	memcpy(x->small + x->small_len, buf, len);
	x->small_len += len;
	x->small[x->small_len] = '\0';
	return len;
}

static int xfer_setup(struct xfer *x, const struct gv_docker *d, const char *path, curl_write_callback wcb)
{
	_cleanup_free_ char *url = NULL;
	if (asprintf(&url, "http://docker%s%s", d->prefix, path) < 0)
		return -ENOMEM;
	x->e = curl_easy_init();
	if (!x->e)
		return -ENOMEM;
	x->hdrs = curl_slist_append(NULL, "Expect:");
	curl_easy_setopt(x->e, CURLOPT_UNIX_SOCKET_PATH, d->socket);
	curl_easy_setopt(x->e, CURLOPT_URL, url);
	curl_easy_setopt(x->e, CURLOPT_NOSIGNAL, 1L);
	agsbx_curl_set_protocols(x->e, "http", false);
	curl_easy_setopt(x->e, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
	curl_easy_setopt(x->e, CURLOPT_POST, 1L);
	curl_easy_setopt(x->e, CURLOPT_POSTFIELDS, "");
	curl_easy_setopt(x->e, CURLOPT_POSTFIELDSIZE, 0L);
	curl_easy_setopt(x->e, CURLOPT_HTTPHEADER, x->hdrs);
	curl_easy_setopt(x->e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x->e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(x->e, CURLOPT_WRITEFUNCTION, wcb);
	curl_easy_setopt(x->e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->e, CURLOPT_PRIVATE, x);
	return 0;
}

static void xfer_cleanup(CURLM *m, struct xfer *x)
{
	if (x->e) {
		if (m)
			curl_multi_remove_handle(m, x->e);
		curl_easy_cleanup(x->e);
	}
	curl_slist_free_all(x->hdrs);
	x->e = NULL;
	x->hdrs = NULL;
}

static long xfer_status(struct xfer *x)
{
	long st = 0;
	curl_easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &st);
	return st;
}

static void multi_step(CURLM *m)
{
	int running;
	curl_multi_perform(m, &running);
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(m, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		struct xfer *x = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		if (x) {
			x->done = true;
			x->rc = msg->data.result;
		}
	}
}

/* ---- the create request ------------------------------------------------ */

json_t *gv_strv_json(const char *const *v)
{
	json_t *a = json_array();
	for (; v && *v; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

static json_t *create_body(const struct gv_run_spec *s, const char *exec_id)
{
	char owner[64] = "";
	agsbx_owner_token(owner, sizeof owner);
	json_t *hc = json_pack("{s:s, s:s, s:b, s:[s], s:[s], s:I, s:I, s:I, s:o, s:{s:s, s:{}}, s:b}",
			       "Runtime", s->runtime, "NetworkMode", "none", "ReadonlyRootfs", 1,
			       "CapDrop", "ALL", "SecurityOpt", "no-new-privileges",
			       "PidsLimit", (json_int_t)PIDS_LIMIT, "Memory", (json_int_t)MEMORY_LIMIT,
			       "MemorySwap", (json_int_t)MEMORY_LIMIT, "Binds", gv_strv_json(s->binds),
			       "LogConfig", "Type", "none", "Config", "AutoRemove", 0);
	json_t *b = json_pack("{s:s, s:o, s:o, s:{s:s, s:s, s:s}, s:b, s:b, s:b, s:b, s:b, s:b, s:o}",
			      "Image", s->image, "Cmd", gv_strv_json(s->argv), "Env", gv_strv_json(s->env),
			      "Labels", GV_LABEL_RUN, s->run_label, GV_LABEL_EXEC, exec_id, GV_LABEL_OWNER, owner,
			      "AttachStdin", 1, "AttachStdout", 1, "AttachStderr", 1, "Tty", 0, "OpenStdin", 1,
			      "NetworkDisabled", 1, "HostConfig", hc);
	/* Stdin is a pipe that loop_open() closes at once, never the host's
	 * /dev/null: without an open stdin containerd hands runsc the host's
	 * /dev/null as the container's fd 0, and runsc fchowns the
	 * container's stdio to the container user (runc skips /dev/null;
	 * runsc does not), which would leave the HOST's /dev/null owned by
	 * that user. StdinOnce: Docker closes the pipe when that attach ends,
	 * so the program reads EOF, as from /dev/null. */
	if (b)
		json_object_set_new(b, "StdinOnce", json_true());
	if (b && s->workdir)
		json_object_set_new(b, "WorkingDir", json_string(s->workdir));
	if (b && s->user)
		json_object_set_new(b, "User", json_string(s->user));
	return b;
}

static int container_create(const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o)
{
	_cleanup_json_ json_t *body = create_body(s, o->exec_id);
	if (!body)
		return -ENOMEM;
	long st;
	_cleanup_json_ json_t *reply = NULL;
	char err[384] = "";
	int r = gv_docker_call(d, "POST", "/containers/create", body, GV_LIFECYCLE_TIMEOUT_MS, &st, &reply, err,
			       sizeof err);
	if (r < 0) {
		agsbx_error_set(&o->err, GV_R_UNAVAILABLE, "%s", err);
		return r;
	}
	if (gv_created_id(st, reply, o->id) < 0) {
		agsbx_error_set(&o->err, st == 404 ? GV_R_IMAGE_MISSING : GV_R_EXEC_FAILED,
			 "cannot create a container on runtime '%s': %s", s->runtime, err);
		return -EIO;
	}
	return 0;
}

/* ---- kill / remove / verify ------------------------------------------ */

static int container_post(const struct gv_docker *d, const char *id, const char *what, long *st, char *err,
			  size_t err_size)
{
	_cleanup_free_ char *path = NULL;
	if (asprintf(&path, "/containers/%s/%s", id, what) < 0)
		return -ENOMEM;
	return gv_docker_call(d, "POST", path, NULL, GV_LIFECYCLE_TIMEOUT_MS, st, NULL, err, err_size);
}

static void container_inspect(const struct gv_docker *d, struct gv_run_out *o)
{
	_cleanup_free_ char *path = NULL;
	if (asprintf(&path, "/containers/%s/json", o->id) < 0)
		return;
	long st;
	_cleanup_json_ json_t *j = NULL;
	char err[256];
	if (gv_docker_call(d, "GET", path, NULL, 0, &st, &j, err, sizeof err) < 0 || st != 200)
		return;
	gv_inspect_runtime(j, o->runtime_seen, sizeof o->runtime_seen);
}

int gv_containers_with_label(const struct gv_docker *d, const char *key, const char *value, json_t **found,
			     struct agsbx_error *fail)
{
	if (found)
		*found = NULL;
	_cleanup_free_ char *label = NULL, *filters = NULL, *esc = NULL, *path = NULL;
	if ((value ? asprintf(&label, "%s=%s", key, value) : asprintf(&label, "%s", key)) < 0)
		return -ENOMEM;
	_cleanup_json_ json_t *f = json_pack("{s:[s]}", "label", label);
	filters = f ? json_dumps(f, JSON_COMPACT) : NULL;
	esc = filters ? gv_url_escape(filters) : NULL;
	if (!esc || asprintf(&path, "/containers/json?all=1&filters=%s", esc) < 0)
		return -ENOMEM;
	long st;
	_cleanup_json_ json_t *list = NULL;
	char err[384] = "";
	int r = gv_docker_call(d, "GET", path, NULL, 0, &st, &list, err, sizeof err);
	if (r < 0) {
		agsbx_error_set(fail, GV_R_UNAVAILABLE, "%s", err);
		return r;
	}
	if (st != 200 || !json_is_array(list)) {
		agsbx_error_set(fail, GV_R_UNAVAILABLE, "container list: HTTP %ld", st);
		return -EPROTO;
	}
	json_t *out = json_array();
	size_t i;
	json_t *c;
	json_array_foreach(list, i, c) {
		json_t *e = gv_container_entry(c);
		if (e)
			json_array_append_new(out, e);
	}
	int n = (int)json_array_size(out);
	if (found)
		*found = out;
	else
		json_decref(out);
	return n;
}

static void container_remove(const struct gv_docker *d, struct gv_run_out *o)
{
	char err[384] = "";
	_cleanup_free_ char *path = NULL;
	if (asprintf(&path, "/containers/%s?force=1&v=1", o->id) < 0) {
		o->cleanup_failed = true;
		return;
	}
	long st = 0;
	int r = 0;
	for (int attempt = 0; attempt < 3; attempt++) {
		r = gv_docker_call(d, "DELETE", path, NULL, GV_LIFECYCLE_TIMEOUT_MS, &st, NULL, err, sizeof err);
		if (r < 0)
			break;
		if (st == 204 || st == 404)
			break;
	}
	if (r < 0) {
		o->cleanup_failed = true;
		agsbx_error_set(&o->err, GV_R_UNAVAILABLE, "the Docker daemon went away before container %.12s was removed: %s",
			 o->id, err);
		return;
	}
	/* Docker's word is checked, not trusted: list by the label. */
	struct agsbx_error list_err = { 0 };
	int n = gv_containers_with_label(d, GV_LABEL_EXEC, o->exec_id, NULL, &list_err);
	if (n != 0) {
		o->cleanup_failed = true;
		agsbx_error_set(&o->err, n < 0 ? GV_R_UNAVAILABLE : GV_R_EXEC_FAILED,
			 "container %.12s may remain after removal: %s", o->id, n < 0 ? list_err.message : "still listed");
	}
}

static void container_cleanup(const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o)
{
	container_remove(d, o);
	/* A container that never started leaves nothing that will exit on
	 * its own: a short grace is enough there; but what its failed start
	 * leaks (a containerd shim, runsc) may still be appearing when the
	 * start call has returned, slower the busier the host: reap until
	 * nothing of it has been seen for a while. */
	int k = o->started ? gv_procs_reap(o->id, PROC_GRACE_MS, s->runsc_path)
			   : gv_procs_reap_settled(o->id, PROC_GRACE_SHORT_MS, PROC_SETTLE_MS, s->runsc_path);
	if (k > 0)
		o->leaked_killed = (unsigned)k;
	int left = gv_procs_matching(o->id, NULL);
	if (left != 0) {
		o->cleanup_failed = true;
		agsbx_error_set(&o->err, GV_R_EXEC_FAILED, "host processes of container %.12s remain%s", o->id,
			 left < 0 ? " (cannot scan /proc)" : "");
	}
}

/* ---- the attached run ----------------------------------------------- */

struct loop {
	CURLM *m;
	struct xfer att, wt, in;
	struct gv_demux demux;
};

bool gv_cancel_requested(int fd)
{
	/* An interrupted harness cancels every execution, ours included. */
	if (agsbx_runner_aborted())
		return true;
	if (fd < 0)
		return false;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
}

/* Waits until Docker has sent the headers of the three transfers, then
 * checks their status. */
static int loop_answered(struct loop *l, struct gv_run_out *o)
{
	uint64_t deadline = agsbx_now_us() + (uint64_t)GV_LIFECYCLE_TIMEOUT_MS * 1000;
	for (;;) {
		multi_step(l->m);
		if (l->att.headers_done && l->wt.headers_done && l->in.headers_done)
			break;
		if (l->att.done || l->wt.done || l->in.done || agsbx_now_us() > deadline) {
			bool gone = l->att.rc == CURLE_COULDNT_CONNECT || l->wt.rc == CURLE_COULDNT_CONNECT ||
				    l->in.rc == CURLE_COULDNT_CONNECT;
			agsbx_error_set(&o->err, gone ? GV_R_UNAVAILABLE : GV_R_EXEC_FAILED,
				 "cannot attach to container %.12s (attach/wait did not answer)", o->id);
			return -EIO;
		}
		curl_multi_poll(l->m, NULL, 0, 100, NULL);
	}
	long sa = xfer_status(&l->att), sw = xfer_status(&l->wt), si = xfer_status(&l->in);
	if ((sa != 200 && sa != 101) || (si != 200 && si != 101)) {
		agsbx_error_set(&o->err, GV_R_EXEC_FAILED, "attach to container %.12s refused (HTTP %ld/%ld)", o->id, sa, si);
		return -EIO;
	}
	if (sw != 200) {
		agsbx_error_set(&o->err, GV_R_EXEC_FAILED, "wait on container %.12s refused (HTTP %ld)", o->id, sw);
		return -EIO;
	}
	return 0;
}

/* Registers attach and wait, and an attach of stdin alone; returns once
 * Docker has answered all three (headers), so the start cannot outrun
 * them, and with the stdin attach closed (Docker then closes the
 * container's stdin: StdinOnce). */
static int loop_open(struct loop *l, const struct gv_docker *d, struct gv_run_out *o)
{
	_cleanup_free_ char *att = NULL, *wt = NULL, *in = NULL;
	if (asprintf(&att, "/containers/%s/attach?stream=1&stdout=1&stderr=1", o->id) < 0 ||
	    asprintf(&wt, "/containers/%s/wait?condition=next-exit", o->id) < 0 ||
	    asprintf(&in, "/containers/%s/attach?stream=1&stdin=1", o->id) < 0)
		return -ENOMEM;
	l->att.demux = &l->demux;
	l->m = curl_multi_init();
	if (!l->m || xfer_setup(&l->att, d, att, on_attach) < 0 || xfer_setup(&l->wt, d, wt, on_small) < 0 ||
	    xfer_setup(&l->in, d, in, on_small) < 0)
		return -ENOMEM;
	/* Its connection must close when we drop it, not wait in a cache. */
	curl_easy_setopt(l->in.e, CURLOPT_FORBID_REUSE, 1L);
	curl_multi_add_handle(l->m, l->att.e);
	curl_multi_add_handle(l->m, l->wt.e);
	curl_multi_add_handle(l->m, l->in.e);
	int r = loop_answered(l, o);
	/* Closing the stdin attach is what ends the container's stdin. */
	xfer_cleanup(l->m, &l->in);
	return r;
}

static void loop_close(struct loop *l)
{
	xfer_cleanup(l->m, &l->in);
	xfer_cleanup(l->m, &l->att);
	xfer_cleanup(l->m, &l->wt);
	if (l->m)
		curl_multi_cleanup(l->m);
	gv_demux_clear(&l->demux);
}

/* Drives the transfers until the wait answers (and the stream drains),
 * the deadline passes or cancel_fd fires. */
static void loop_run(struct loop *l, const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o,
		     uint64_t t0)
{
	uint64_t deadline = s->timeout_ms > 0 ? t0 + (uint64_t)s->timeout_ms * 1000 : UINT64_MAX;
	uint64_t give_up = UINT64_MAX, grace = UINT64_MAX;
	bool killed = false;
	for (;;) {
		multi_step(l->m);
		uint64_t now = agsbx_now_us();
		if (l->wt.done && l->att.done)
			break;
		if (l->wt.done && grace == UINT64_MAX)
			grace = now + ATTACH_GRACE_MS * 1000ULL;
		if (now >= grace || now >= give_up)
			break;
		if (!killed && (now >= deadline || gv_cancel_requested(s->cancel_fd))) {
			if (now >= deadline)
				o->run.timed_out = true;
			else
				o->run.cancelled = true;
			/* The whole sandbox goes with its init: detached
			 * descendants inside gVisor cannot outlive it. */
			gv_container_kill(d, o->id);
			killed = true;
			give_up = agsbx_now_us() + KILL_GRACE_MS * 1000ULL;
			continue;
		}
		int wait_ms = 100;
		if (!killed && deadline != UINT64_MAX) {
			uint64_t left_ms = (deadline - now) / 1000 + 1;
			if (left_ms < (uint64_t)wait_ms)
				wait_ms = (int)left_ms;
		}
		struct curl_waitfd extra[2];
		unsigned nextra = 0;
		if (!killed && s->cancel_fd >= 0)
			extra[nextra++] = (struct curl_waitfd){ .fd = s->cancel_fd, .events = CURL_WAIT_POLLIN };
		if (!killed && agsbx_runner_abort_fd() > 2)
			extra[nextra++] = (struct curl_waitfd){ .fd = agsbx_runner_abort_fd(), .events = CURL_WAIT_POLLIN };
		curl_multi_poll(l->m, nextra ? extra : NULL, nextra, wait_ms, NULL);
	}
}

static void loop_result(struct loop *l, struct gv_run_out *o)
{
	struct agsbx_run_result *r = &o->run;
	gv_demux_take(&l->demux, r);
	if (r->timed_out) {
		r->status = AGSBX_RUN_STATUS_TIMEOUT;
		return;
	}
	if (r->cancelled) {
		r->status = AGSBX_RUN_STATUS_CANCELLED;
		return;
	}
	_cleanup_json_ json_t *w = l->wt.done && l->wt.rc == CURLE_OK ?
		json_loads(l->wt.small, 0, NULL) : NULL;
	const char *werr;
	int code;
	int wr = gv_wait_answer(w, &code, &werr);
	if (wr == -ERANGE) {
		agsbx_error_set(&o->err, GV_R_EXEC_FAILED, "the Docker daemon reported an impossible exit status "
				"for container %.12s", o->id);
		return;
	}
	if (wr < 0) {
		agsbx_error_set(&o->err, GV_R_UNAVAILABLE, "lost the Docker daemon while container %.12s ran%s", o->id,
			 l->wt.done ? "" : " (no exit status)");
		return;
	}
	if (werr && *werr)
		agsbx_error_set(&o->err, GV_R_EXEC_FAILED, "waiting for container %.12s: %s", o->id, werr);
	r->exited = true;
	r->exit_code = code;
	r->status = r->exit_code;
}

static int container_start(const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o)
{
	long st;
	char err[384] = "";
	int r = container_post(d, o->id, "start", &st, err, sizeof err);
	if (r < 0 || (st != 204 && st != 304)) {
		agsbx_error_set(&o->err, r < 0 ? GV_R_UNAVAILABLE : GV_R_EXEC_FAILED,
			 "container did not start on runtime '%s': %s", s->runtime, err);
		return r < 0 ? r : -EIO;
	}
	o->started = true;
	return 0;
}

static int run_attached(const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o)
{
	struct loop l = { 0 };
	gv_demux_init(&l.demux, s->max_output);
	int r = loop_open(&l, d, o);
	if (r < 0) {
		loop_close(&l);
		return r;
	}
	uint64_t t0 = agsbx_now_us();
	r = container_start(d, s, o);
	if (r < 0) {
		loop_close(&l);
		return r;
	}
	loop_run(&l, d, s, o, t0);
	o->run.duration_us = agsbx_now_us() - t0;
	loop_result(&l, o);
	if (s->inspect)
		container_inspect(d, o);
	loop_close(&l);
	return o->err.reason ? -EIO : 0;
}

int gv_container_run(const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o)
{
	memset(o, 0, sizeof *o);
	const char *why = NULL;
	if (agsbx_curl_load(&why) < 0) {
		agsbx_error_set(&o->err, GV_R_UNAVAILABLE, "cannot load libcurl: %s", why);
		return -ENOPKG;
	}
	if (s->exec_id)
		snprintf(o->exec_id, sizeof o->exec_id, "%s", s->exec_id);
	else
		agsbx_random_hex(o->exec_id, 16);
	int r = container_create(d, s, o);
	if (r < 0)
		return r;
	r = run_attached(d, s, o);
	container_cleanup(d, s, o);
	if (!o->run.out)
		o->run.out = strdup("");
	if (!o->run.err)
		o->run.err = strdup("");
	if (o->err.reason && r == 0)
		r = -EIO;
	return r;
}

/* ---- a warm container for exec (exec.c) ------------------------------- */

int gv_container_start_idle(const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o)
{
	memset(o, 0, sizeof *o);
	snprintf(o->exec_id, sizeof o->exec_id, "%s", s->exec_id);
	/* OpenStdin gives it a stdin pipe nobody attaches (the idle program
	 * never reads it): the host's /dev/null is never handed to runsc. */
	int r = container_create(d, s, o);
	if (r < 0)
		return r;
	r = container_start(d, s, o);
	if (r < 0)
		container_cleanup(d, s, o);
	return r;
}

void gv_container_kill(const struct gv_docker *d, const char *id)
{
	long st;
	char err[256];
	container_post(d, id, "kill?signal=KILL", &st, err, sizeof err);
}

int gv_container_drop(const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o)
{
	gv_container_kill(d, o->id);
	container_cleanup(d, s, o);
	return o->cleanup_failed ? -EIO : 0;
}
