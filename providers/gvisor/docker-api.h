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


/* GET /version on the socket and negotiate the API prefix. -errno with a
 * message in err when the endpoint is unreachable, not a Docker Engine
 * API, or too old. */
int gv_docker_open(struct gv_docker *d, const char *socket, long timeout_ms, char *err, size_t err_size);
void gv_docker_close(struct gv_docker *d);

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
};

void gv_demux_init(struct gv_demux *m, size_t cap);
/* Consumes n bytes; never fails (allocation failures set oom and drop). */
void gv_demux_feed(struct gv_demux *m, const char *data, size_t n);
/* Moves the captures into a runner result (out/err, totals, flags). */
void gv_demux_take(struct gv_demux *m, struct agsbx_run_result *r);
void gv_demux_clear(struct gv_demux *m);

#endif
