/* HTTP/1.1 over a unix socket (the Docker Engine API) or a URL (keys files),
 * with libcurl: a timeout on every call and bounded response bodies. */
#ifndef AGSBX_BASE_HTTP_H
#define AGSBX_BASE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agsbx_http_request {
	const char *unix_socket;      /* NULL: plain URL (http/https) */
	const char *method;           /* "GET" (default), "POST", "DELETE" */
	const char *url;              /* full URL; with unix_socket: "http://docker/v1.41/info" */
	const char *content_type;     /* for a body */
	const void *body;             /* request body, may be NULL */
	size_t body_len;
	/* Streamed request body (e.g. a tar written on the fly); used when
	 * body is NULL and read_cb non-NULL. Returns bytes written, 0 at EOF. */
	size_t (*read_cb)(char *buf, size_t size, void *userdata);
	void *read_userdata;
	long timeout_ms;              /* whole transfer; <= 0: 10000 */
	long connect_timeout_ms;      /* <= 0: 2000 */
	size_t max_response;          /* <= 0: 8 MiB; larger bodies fail with -EFBIG */
};

struct agsbx_http_response {
	long status;                  /* HTTP status, 0 if none */
	char *body;                   /* NUL-terminated */
	size_t len;
	char error[256];              /* curl's message on failure */
};

/* 0 when an HTTP response arrived (any status); -ECONNREFUSED/-ENOENT when
 * the endpoint is unreachable, -ETIMEDOUT, -EFBIG (response over the cap),
 * -EPROTO for other transfer errors (error holds curl's text). */
int agsbx_http(const struct agsbx_http_request *req, struct agsbx_http_response *resp);
void agsbx_http_response_clear(struct agsbx_http_response *resp);

/* Restricts a curl easy handle (CURL *) to the comma-separated protocols
 * ("http", "https"; redirects: for followed redirects): CURLOPT_PROTOCOLS_STR
 * from libcurl 7.85, the CURLPROTO_* bitmask before (the floor is 7.81).
 * 0, or -EINVAL for an unknown protocol name. */
int agsbx_curl_set_protocols(void *curl, const char *list, bool redirects);
/* The bitmask fallback itself (always compiled; tested on every libcurl). */
int agsbx_curl_set_protocols_mask(void *curl, const char *list, bool redirects);

#endif
