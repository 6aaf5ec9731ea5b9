/* Docker Engine API over a unix socket: endpoint resolution, version
 * negotiation, bounded JSON calls, and the attach-stream demultiplexer. */
#include "providers/gvisor/docker-api.h"
#include "providers/gvisor/gvisor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/http.h"
#include "base/util.h"


static void transport_message(int r, const struct gv_docker *d, const char *what, const char *curl_err,
			      char *err, size_t err_size)
{
	const char *sock = d->socket ? d->socket : "?";
	switch (r) {
	case -ECONNREFUSED:
	case -ENOENT:
		snprintf(err, err_size, "cannot reach the Docker daemon at unix://%s (%s): %s", sock, what,
			 curl_err && *curl_err ? curl_err : "connection refused");
		break;
	case -ETIMEDOUT:
		snprintf(err, err_size, "Docker daemon at unix://%s timed out (%s)", sock, what);
		break;
	case -EFBIG:
		snprintf(err, err_size, "Docker daemon answer too large (%s)", what);
		break;
	default:
		snprintf(err, err_size, "Docker API transfer failed (%s): %s", what,
			 curl_err && *curl_err ? curl_err : strerror(-r));
	}
}

/* "1.41" -> 41; -EINVAL for anything else. */
static int api_minor(const char *v)
{
	int major, minor;
	char tail;
	if (!v || sscanf(v, "%d.%d%c", &major, &minor, &tail) != 2 || major != 1 || minor < 0)
		return -EINVAL;
	return minor;
}

int gv_docker_open(struct gv_docker *d, const char *socket, long timeout_ms, struct agsbx_error *fail)
{
	memset(d, 0, sizeof *d);
	d->timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
	d->socket = strdup(socket);
	if (!d->socket || asprintf(&d->endpoint, "unix://%s", socket) < 0) {
		d->endpoint = NULL;
		gv_docker_close(d);
		return -ENOMEM;
	}
	long status = 0;
	_cleanup_json_ json_t *v = NULL;
	char cerr[256] = "";
	int r = gv_docker_call(d, "GET", "/version", NULL, 0, &status, &v, cerr, sizeof cerr);
	if (r < 0) {
		agsbx_error_set(fail, GV_DOCKER_UNREACHABLE, "%s", cerr);
		return r;
	}
	return gv_docker_version_accept(d, status, v, fail);
}

/* src (valid UTF-8: jansson checked it) cut to fit size at a character
 * boundary, so the copy is still a JSON string. */
static void copy_utf8(char *dst, size_t size, const char *src)
{
	size_t n = 0, l;
	const unsigned char *u = (const unsigned char *)src;
	while ((l = agsbx_utf8_seq_len(u + n, strnlen(src + n, 4))) && n + l < size)
		n += l;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int gv_docker_version_accept(struct gv_docker *d, long status, const json_t *v, struct agsbx_error *fail)
{
	const char *api = json_string_value(json_object_get(v, "ApiVersion"));
	const char *ver = json_string_value(json_object_get(v, "Version"));
	const char *socket = d->socket ? d->socket : "?";
	if (status != 200 || !json_is_object(v) || !api) {
		agsbx_error_set(fail, GV_DOCKER_UNREACHABLE,
			"unix://%s answered GET /version with HTTP %ld but not as a Docker Engine API "
			 "(no ApiVersion)", socket, status);
		return -EPROTO;
	}
	int minor = api_minor(api);
	if (minor < 0) {
		agsbx_error_set(fail, GV_DOCKER_UNREACHABLE, "unix://%s: unparsable ApiVersion '%.32s'", socket, api);
		return -EPROTO;
	}
	if (minor < GV_API_MIN_MINOR) {
		agsbx_error_set(fail, GV_DOCKER_UNREACHABLE, "Docker Engine API %s at unix://%s is older than 1.%d",
				api, socket, GV_API_MIN_MINOR);
		return -EPROTONOSUPPORT;
	}
	if (minor > GV_API_MAX_MINOR)
		minor = GV_API_MAX_MINOR;
	snprintf(d->prefix, sizeof d->prefix, "/v1.%d", minor);
	snprintf(d->api_version, sizeof d->api_version, "1.%d", minor);
	copy_utf8(d->server_api_version, sizeof d->server_api_version, api);
	copy_utf8(d->server_version, sizeof d->server_version, ver ? ver : "unknown");
	return 0;
}

void gv_docker_close(struct gv_docker *d)
{
	free(d->socket);
	free(d->endpoint);
	memset(d, 0, sizeof *d);
}

/* Docker's error answers are {"message": "..."}. */
static void status_message(const struct agsbx_http_response *resp, const json_t *reply, char *err,
			   size_t err_size)
{
	const char *m = json_string_value(json_object_get(reply, "message"));
	if (m) {
		snprintf(err, err_size, "%s", m);
		return;
	}
	int n = (int)(resp->len > 200 ? 200 : resp->len);
	snprintf(err, err_size, "HTTP %ld: %.*s", resp->status, n, resp->body ? resp->body : "");
}

int gv_docker_call(const struct gv_docker *d, const char *method, const char *path, const json_t *body,
		   long timeout_ms, long *status, json_t **reply, char *err, size_t err_size)
{
	*status = 0;
	if (reply)
		*reply = NULL;
	_cleanup_free_ char *url = NULL;
	/* /version is fetched before negotiation: d->prefix is "" then. */
	if (asprintf(&url, "http://docker%s%s", d->prefix, path) < 0)
		return -ENOMEM;
	_cleanup_free_ char *payload = body ? json_dumps(body, JSON_COMPACT) : NULL;
	if (body && !payload)
		return -ENOMEM;
	struct agsbx_http_request req = {
		.unix_socket = d->socket,
		.method = method,
		.url = url,
		.content_type = payload ? "application/json" : NULL,
		.body = payload,
		.body_len = payload ? strlen(payload) : 0,
		.timeout_ms = timeout_ms > 0 ? timeout_ms : d->timeout_ms,
		.connect_timeout_ms = 2000,
		.max_response = GV_MAX_JSON_REPLY,
	};
	struct agsbx_http_response resp;
	int r = agsbx_http(&req, &resp);
	if (r < 0) {
		char what[160];
		snprintf(what, sizeof what, "%s %s", method, path);
		transport_message(r, d, what, resp.error, err, err_size);
		agsbx_http_response_clear(&resp);
		return r;
	}
	*status = resp.status;
	json_t *j = resp.len ? json_loadb(resp.body, resp.len, JSON_REJECT_DUPLICATES, NULL) : NULL;
	if (resp.status >= 400)
		status_message(&resp, j, err, err_size);
	if (reply)
		*reply = j;
	else
		json_decref(j);
	agsbx_http_response_clear(&resp);
	return 0;
}

char *gv_url_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *o = malloc(3 * n + 1);
	if (!o)
		return NULL;
	char *p = o;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    *c == '-' || *c == '_' || *c == '.' || *c == '~') {
			*p++ = (char)*c;
		} else {
			*p++ = '%';
			*p++ = hex[*c >> 4];
			*p++ = hex[*c & 15];
		}
	}
	*p = '\0';
	return o;
}

/* ---- the daemon's answers -------------------------------------------- */

static bool is_container_id(const char *s)
{
	return s && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

int gv_created_id(long status, const json_t *reply, char id[65])
{
	const char *s = json_string_value(json_object_get(reply, "Id"));
	if (status != 201 || !is_container_id(s))
		return -EPROTO;
	memcpy(id, s, 65);
	return 0;
}

/* An exit status as Linux has them; anything else is no exit (a value
 * cast to int could read as 0, success). */
static int exit_status(const json_t *c, int *code)
{
	if (!json_is_integer(c))
		return -EPROTO;
	json_int_t v = json_integer_value(c);
	if (v < 0 || v > 255)
		return -ERANGE;
	*code = (int)v;
	return 0;
}

json_t *gv_container_entry(const json_t *c)
{
	const char *id = json_string_value(json_object_get(c, "Id"));
	json_t *labels = json_object_get(c, "Labels");
	const char *ex = json_string_value(json_object_get(labels, GV_LABEL_EXEC));
	const char *ow = json_string_value(json_object_get(labels, GV_LABEL_OWNER));
	if (!is_container_id(id))
		return NULL;
	return json_pack("{s:s, s:s?, s:s?}", "id", id, "exec", ex, "owner", ow);
}

int gv_wait_answer(const json_t *w, int *code, const char **message)
{
	json_t *c = json_object_get(w, "StatusCode");
	*message = json_string_value(json_object_get(json_object_get(w, "Error"), "Message"));
	return exit_status(c, code);
}

int gv_exec_state_answer(long status, const json_t *j, int *code)
{
	json_t *running = json_object_get(j, "Running"), *ec = json_object_get(j, "ExitCode");
	if (status != 200 || !json_is_boolean(running))
		return -EPROTO;
	if (json_is_true(running))
		return 1;
	return exit_status(ec, code) < 0 ? -EPROTO : 0;
}

void gv_inspect_runtime(const json_t *inspect, char *out, size_t size)
{
	const char *rt = json_string_value(json_object_get(json_object_get(inspect, "HostConfig"), "Runtime"));
	copy_utf8(out, size, rt ? rt : "");
}

/* How deep an /info value may nest (SecurityOptions is a list of
 * strings: 1). */
#define GV_INFO_FACT_DEPTH 8

void gv_info_facts(const json_t *info, json_t *facts)
{
	static const struct { const char *from, *to; } keys[] = {
		{ "DefaultRuntime", "default_runtime" }, { "SecurityOptions", "security_options" },
		{ "CgroupVersion", "cgroup_version" }, { "CgroupDriver", "cgroup_driver" },
		{ "KernelVersion", "daemon_kernel_version" }, { "ServerVersion", "info_server_version" },
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		json_t *val = json_object_get(info, keys[i].from);
		/* a value the bundle cannot hold (a real, a huge integer, deep
		 * nesting) would make the whole bundle unwritable: left out */
		bool ok = val && !agsbx_json_unbundlable(val, 1, GV_INFO_FACT_DEPTH);
		json_object_set_new(facts, keys[i].to, ok ? json_deep_copy(val) : json_null());
	}
}

/* ---- demultiplexer ----------------------------------------------------- */

void gv_demux_init(struct gv_demux *m, size_t cap)
{
	memset(m, 0, sizeof *m);
	m->cap = cap ? cap : AGSBX_RUN_DEFAULT_MAX_OUTPUT;
}

static void stream_add(struct gv_demux *m, struct gv_stream *s, const char *data, size_t n)
{
	s->total += n;
	size_t room = m->cap - s->len;
	size_t keep = n < room ? n : room;
	if (keep < n)
		s->truncated = true;
	if (keep == 0)
		return;
	/* Geometric growth but never past cap + 1: a flood costs at most cap
	 * bytes of memory per stream. keep <= cap - len, so it fits. */
	if (agsbx_buf_reserve(&s->buf, &s->alloc, s->len + keep + 1, 4096, m->cap + 1) < 0) {
		m->oom = true;
		s->truncated = true;
		return;
	}
	memcpy(s->buf + s->len, data, keep);
	s->len += keep;
	s->buf[s->len] = '\0';
}

void gv_demux_add(struct gv_demux *m, int stream, const char *data, size_t n)
{
	if (m->sink)
		m->sink(m->sink_ud, stream, data, n);
	else
		stream_add(m, &m->s[stream ? 1 : 0], data, n);
}

void gv_demux_feed(struct gv_demux *m, const char *data, size_t n)
{
	while (n > 0) {
		if (m->raw) {
			gv_demux_add(m, 0, data, n);
			return;
		}
		if (m->frame_left == 0) {
			size_t take = 8 - m->hdr_len;
			if (take > n)
				take = n;
			memcpy(m->hdr + m->hdr_len, data, take);
			m->hdr_len += take;
			data += take;
			n -= take;
			if (m->hdr_len < 8)
				return;
			m->hdr_len = 0;
			if (m->hdr[0] > 2 || m->hdr[1] || m->hdr[2] || m->hdr[3]) {
				/* Not Docker framing (a TTY stream, or garbage):
				 * keep the bytes, as stdout, rather than lose them. */
				m->raw = true;
				gv_demux_add(m, 0, (const char *)m->hdr, 8);
				continue;
			}
			m->stream = m->hdr[0] == 2 ? 1 : 0;
			m->frame_left = (uint32_t)m->hdr[4] << 24 | (uint32_t)m->hdr[5] << 16 |
					(uint32_t)m->hdr[6] << 8 | (uint32_t)m->hdr[7];
			continue;
		}
		size_t take = n < m->frame_left ? n : m->frame_left;
		gv_demux_add(m, m->stream, data, take);
		m->frame_left -= (uint32_t)take;
		data += take;
		n -= take;
	}
}

static void stream_take(struct gv_stream *s, char **buf, size_t *len, uint64_t *total, bool *trunc)
{
	*buf = s->buf ? s->buf : strdup("");
	*len = s->len;
	*total = s->total;
	*trunc = s->truncated;
	s->buf = NULL;
	s->len = s->alloc = 0;
}

void gv_demux_take(struct gv_demux *m, struct agsbx_run_result *r)
{
	free(r->out);
	free(r->err);
	stream_take(&m->s[0], &r->out, &r->out_len, &r->out_total, &r->out_truncated);
	stream_take(&m->s[1], &r->err, &r->err_len, &r->err_total, &r->err_truncated);
}

void gv_demux_clear(struct gv_demux *m)
{
	free(m->s[0].buf);
	free(m->s[1].buf);
	m->s[0].buf = m->s[1].buf = NULL;
}
