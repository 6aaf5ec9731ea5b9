#include "base/http.h"
#include "base/http-curl.h"
#include "base/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX (8u << 20)

struct sink {
	char *buf;
	size_t len, cap, max;
	bool overflow, nomem;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct sink *s = ud;
	size_t n = size * nmemb;
	if (s->len + n > s->max) {
		s->overflow = true;
		return 0; /* aborts the transfer: never buffer past the cap */
	}
	if (agsbx_buf_append(&s->buf, &s->len, &s->cap, ptr, n) < 0) {
		s->nomem = true;
		return 0;
	}
	return n;
}

/* curl_slist_append returns NULL on failure and the list is then lost:
 * keep it (to free it) and remember the failure. */
static bool header_add(struct curl_slist **list, const char *h)
{
	struct curl_slist *n = curl_slist_append(*list, h);
	if (!n)
		return false;
	*list = n;
	return true;
}

struct agsbx_curl_api agsbx_curl;
static int curl_ready;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static const char *curl_why;

static void curl_load_once(void)
{
	/* The soname of Debian's libcurl4 (the package the tool depends on). */
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		curl_why = dlerror();
		return;
	}
	static const char *const names[] = {
		"curl_global_init", "curl_easy_init", "curl_easy_setopt", "curl_easy_getinfo",
		"curl_easy_perform", "curl_easy_cleanup", "curl_easy_strerror", "curl_slist_append",
		"curl_slist_free_all", "curl_multi_init", "curl_multi_add_handle", "curl_multi_remove_handle",
		"curl_multi_perform", "curl_multi_poll", "curl_multi_info_read", "curl_multi_cleanup",
	};
	void *fns[sizeof names / sizeof names[0]];
	_Static_assert(sizeof fns == sizeof agsbx_curl, "one name per member of agsbx_curl_api");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (!(fns[i] = dlsym(h, names[i]))) {
			curl_why = "libcurl.so.4 lacks a needed function (too old?)";
			return; /* never unloaded: the process may already hold it */
		}
	}
	memcpy(&agsbx_curl, fns, sizeof agsbx_curl);
	if (agsbx_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		curl_why = "curl_global_init failed";
		return;
	}
	curl_why = NULL;
	__atomic_store_n(&curl_ready, 1, __ATOMIC_RELEASE);
}

int agsbx_curl_load(const char **why)
{
	pthread_once(&curl_once, curl_load_once);
	if (__atomic_load_n(&curl_ready, __ATOMIC_ACQUIRE))
		return 0;
	if (why)
		*why = curl_why ? curl_why : "libcurl.so.4 not loaded";
	return -ENOPKG;
}

/* Transport options: where, how long, where the body goes, which
 * protocols (https only for redirects, none over a unix socket). */
static void http_set_transport(CURL *c, const struct agsbx_http_request *req, struct sink *s)
{
	if (req->unix_socket)
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, req->unix_socket);
	curl_easy_setopt(c, CURLOPT_URL, req->url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : 10000L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, req->connect_timeout_ms > 0 ? req->connect_timeout_ms : 2000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	agsbx_curl_set_protocols(c, "http,https", false);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, req->unix_socket ? 0L : 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	agsbx_curl_set_protocols(c, "https", true);
}

/* Method, body and headers. false when a header could not be added: a
 * request without its headers is another request. */
static bool http_set_request(CURL *c, const struct agsbx_http_request *req, struct curl_slist **hdrs)
{
	bool ok = true;
	const char *method = req->method ? req->method : "GET";
	if (req->content_type) {
		char h[256];
		snprintf(h, sizeof h, "Content-Type: %s", req->content_type);
		ok &= header_add(hdrs, h);
	}
	if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		if (req->body) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		} else if (req->read_cb) {
			curl_easy_setopt(c, CURLOPT_READFUNCTION, req->read_cb);
			curl_easy_setopt(c, CURLOPT_READDATA, req->read_userdata);
			ok &= header_add(hdrs, "Transfer-Encoding: chunked");
		} else {
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
		}
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	}
	/* Docker answers 100-continue slowly for streamed bodies; skip it. */
	ok &= header_add(hdrs, "Expect:");
	if (ok)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdrs);
	return ok;
}

static int http_transfer_errno(CURLcode rc, const struct sink *s)
{
	if (s->overflow)
		return -EFBIG;
	if (s->nomem)
		return -ENOMEM;
	if (rc == CURLE_COULDNT_CONNECT)
		return -ECONNREFUSED;
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return -ETIMEDOUT;
	return -EPROTO;
}

int agsbx_http(const struct agsbx_http_request *req, struct agsbx_http_response *resp)
{
	memset(resp, 0, sizeof *resp);
	const char *why = NULL;
	if (agsbx_curl_load(&why) < 0) {
		snprintf(resp->error, sizeof resp->error, "cannot load libcurl: %s", why);
		return -EPROTO;
	}
	CURL *c = curl_easy_init();
	if (!c)
		return -ENOMEM;
	struct sink s = { .max = req->max_response ? req->max_response : DEFAULT_MAX };
	struct curl_slist *hdrs = NULL;
	http_set_transport(c, req, &s);
	int r = 0;
	if (!http_set_request(c, req, &hdrs)) {
		snprintf(resp->error, sizeof resp->error, "out of memory");
		r = -ENOMEM;
	} else {
		CURLcode rc = curl_easy_perform(c);
		if (rc != CURLE_OK) {
			snprintf(resp->error, sizeof resp->error, "%s", s.nomem ? "out of memory" : curl_easy_strerror(rc));
			r = http_transfer_errno(rc, &s);
			free(s.buf);
		} else {
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
			resp->body = s.buf ? s.buf : strdup("");
			resp->len = s.len;
			if (!resp->body)
				r = -ENOMEM;
		}
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	return r;
}

void agsbx_http_response_clear(struct agsbx_http_response *resp)
{
	if (!resp)
		return;
	free(resp->body);
	resp->body = NULL;
}

int agsbx_curl_set_protocols_mask(void *curl, const char *list, bool redirects)
{
	long mask = 0;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == 4 && strncmp(p, "http", 4) == 0)
			mask |= CURLPROTO_HTTP;
		else if (n == 5 && strncmp(p, "https", 5) == 0)
			mask |= CURLPROTO_HTTPS;
		else
			return -EINVAL;
		p += n + (p[n] == ',');
	}
	/* Deprecated from 7.85 (the _STR options replace them) but still
	 * honoured: this is the path for older libcurl. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	CURLcode r = curl_easy_setopt(curl, redirects ? CURLOPT_REDIR_PROTOCOLS : CURLOPT_PROTOCOLS, mask);
#pragma GCC diagnostic pop
	return r == CURLE_OK ? 0 : -EINVAL;
}

int agsbx_curl_set_protocols(void *curl, const char *list, bool redirects)
{
#if LIBCURL_VERSION_NUM >= 0x075500
	CURLcode r = curl_easy_setopt(curl, redirects ? CURLOPT_REDIR_PROTOCOLS_STR : CURLOPT_PROTOCOLS_STR, list);
	return r == CURLE_OK ? 0 : -EINVAL;
#else
	return agsbx_curl_set_protocols_mask(curl, list, redirects);
#endif
}
