/* A small Docker Engine API client for the gvisor provider: unix sockets
 * only, a negotiated /v1.NN/ prefix, a timeout on every call, bounded
 * responses, and a demultiplexer for the attach stream that never keeps
 * more than the caller's cap per stream. Internal to providers/gvisor. */
#ifndef AGSBX_PROVIDERS_GVISOR_DOCKER_API_H
#define AGSBX_PROVIDERS_GVISOR_DOCKER_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "base/error.h"
#include "base/runner.h"

/* API versions we speak: wait?condition= needs 1.30; we use nothing newer
 * than 1.41 (Docker 20.10). */
#define GV_API_MIN_MINOR 30
#define GV_API_MAX_MINOR 41

/* Size caps for small JSON answers (/info, inspect, lists). */
#define GV_MAX_JSON_REPLY (4u << 20)

struct gv_docker {
	char *socket;                 /* unix socket path */
	char *endpoint;               /* "unix://<socket>", for facts */
	char prefix[16];              /* "/v1.41" */
	char api_version[16];         /* negotiated, "1.41" */
	char server_api_version[16];  /* what /version announced */
	char server_version[64];
	long timeout_ms;              /* per small call */
};


/* The reason of gv_docker_open's failures (the provider maps it to its
 * own). */
#define GV_DOCKER_UNREACHABLE "docker_unreachable"

/* GET /version on the socket and negotiate the API prefix. -errno with
 * fail set (GV_DOCKER_UNREACHABLE) when the endpoint is unreachable, not a
 * Docker Engine API, or too old. */
int gv_docker_open(struct gv_docker *d, const char *socket, long timeout_ms, struct agsbx_error *fail);
void gv_docker_close(struct gv_docker *d);
/* The negotiation step of gv_docker_open: GET /version's HTTP status and
 * JSON answer (any value: the daemon's) into d's prefix and versions (d's
 * strings valid UTF-8); -errno with fail as gv_docker_open. */
int gv_docker_version_accept(struct gv_docker *d, long status, const json_t *v, struct agsbx_error *fail);

/* ---- the daemon's answers, read (pure functions, fuzzed) -------------- */

/* POST /containers/create or /containers/ID/exec: 201 with a 64-digit
 * lowercase hex Id (it goes into later request paths) -> id; else -EPROTO. */
int gv_created_id(long status, const json_t *reply, char id[65]);
/* POST /containers/ID/wait's answer: 0 with the exit status (0-255) in
 * *code, *message the daemon's Error.Message (may be NULL); -ERANGE for an
 * integer StatusCode outside 0-255, -EPROTO for anything else. */
int gv_wait_answer(const json_t *w, int *code, const char **message);
/* GET /exec/EID/json: 1 still running, 0 exited with *code (0-255),
 * -EPROTO for anything else. */
int gv_exec_state_answer(long status, const json_t *j, int *code);
/* GET /containers/ID/json: HostConfig.Runtime into out (valid UTF-8,
 * "" when absent). */
void gv_inspect_runtime(const json_t *inspect, char *out, size_t size);
/* The provider's facts from GET /info (any JSON value): default_runtime,
 * security_options, cgroup_version, cgroup_driver, daemon_kernel_version,
 * info_server_version, each null when absent or not a value the bundle
 * can hold (a real, an integer beyond +-2^53, nesting deeper than 8). */
void gv_info_facts(const json_t *info, json_t *facts);

/* One API call below the version prefix (path starts with '/'). body (may
 * be NULL) is sent as JSON. *status is the HTTP status; *reply the parsed
 * JSON answer (new ref) or NULL for an empty/non-JSON body. A status >= 400
 * is not an error here, but its message is copied to err. Returns -errno
 * only for transport failures (-ECONNREFUSED/-ENOENT unreachable,
 * -ETIMEDOUT, -EFBIG, -EPROTO). timeout_ms <= 0: d->timeout_ms. */
int gv_docker_call(const struct gv_docker *d, const char *method, const char *path, const json_t *body,
		   long timeout_ms, long *status, json_t **reply, char *err, size_t err_size);

/* Percent-encodes s for a query string (malloc'd). */
char *gv_url_escape(const char *s);

/* ---- multiplexed stream demultiplexer -------------------------------- */

/* Docker's attach/logs framing when the container has no TTY: an 8-byte
 * header {stream, 0, 0, 0, size32be} then size bytes. Frames may be split
 * anywhere across reads. At most cap bytes of each stream are kept; the
 * rest is counted and dropped. */
struct gv_stream {
	char *buf;                    /* NUL-terminated, len <= cap */
	size_t len, alloc;
	uint64_t total;
	bool truncated;
};

struct gv_demux {
	size_t cap;
	unsigned char hdr[8];
	size_t hdr_len;
	uint32_t frame_left;
	int stream;                   /* 0 stdout, 1 stderr of the current frame */
	bool raw;                     /* framing broken: the rest counts as stdout */
	bool oom;
	struct gv_stream s[2];
	/* Set: each stream's bytes go to sink instead of s[] (the execution
	 * server's stream, framed once more inside, serve.c). */
	void (*sink)(void *ud, int stream, const char *data, size_t n);
	void *sink_ud;
};

void gv_demux_init(struct gv_demux *m, size_t cap);
/* Consumes n bytes; never fails (allocation failures set oom and drop). */
void gv_demux_feed(struct gv_demux *m, const char *data, size_t n);
/* n bytes of stream (0 stdout, 1 stderr) into its capped capture. */
void gv_demux_add(struct gv_demux *m, int stream, const char *data, size_t n);
/* Moves the captures into a runner result (out/err, totals, flags). */
void gv_demux_take(struct gv_demux *m, struct agsbx_run_result *r);
void gv_demux_clear(struct gv_demux *m);

#endif
