/* libcurl, loaded on first use (dlopen of libcurl.so.4): commands that never
 * speak HTTP (verify without --keys-url, report, diff, matrix) start without
 * libcurl's ~35 shared libraries. Private to the HTTP code (base/http.c and
 * the Engine API streaming in providers/gvisor/container.c): the only place
 * curl's header is included. The call sites keep curl's names; they resolve
 * to the loaded table. libcurl4 stays a package dependency. */
#ifndef AGSBX_BASE_HTTP_CURL_H
#define AGSBX_BASE_HTTP_CURL_H

/* Plain prototypes: the type-checking macros would call the real symbols. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

struct agsbx_curl_api {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	CURLcode (*easy_perform)(CURL *curl);
	void (*easy_cleanup)(CURL *curl);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *e);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *e);
	CURLMcode (*multi_perform)(CURLM *m, int *running);
	CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd extra[], unsigned n, int timeout_ms, int *numfds);
	CURLMsg *(*multi_info_read)(CURLM *m, int *left);
	CURLMcode (*multi_cleanup)(CURLM *m);
};

/* Loads libcurl.so.4 and runs curl_global_init, once per process
 * (thread-safe). 0, or -ENOPKG when it cannot be loaded (why: dlerror). */
int agsbx_curl_load(const char **why);
/* Valid after agsbx_curl_load() returned 0. */
extern struct agsbx_curl_api agsbx_curl;

/* curl.h may define some of these names as macros of themselves. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#undef curl_share_setopt

#define curl_global_init (*agsbx_curl.global_init)
#define curl_easy_init (*agsbx_curl.easy_init)
#define curl_easy_setopt (*agsbx_curl.easy_setopt)
#define curl_easy_getinfo (*agsbx_curl.easy_getinfo)
#define curl_easy_perform (*agsbx_curl.easy_perform)
#define curl_easy_cleanup (*agsbx_curl.easy_cleanup)
#define curl_easy_strerror (*agsbx_curl.easy_strerror)
#define curl_slist_append (*agsbx_curl.slist_append)
#define curl_slist_free_all (*agsbx_curl.slist_free_all)
#define curl_multi_init (*agsbx_curl.multi_init)
#define curl_multi_add_handle (*agsbx_curl.multi_add_handle)
#define curl_multi_remove_handle (*agsbx_curl.multi_remove_handle)
#define curl_multi_perform (*agsbx_curl.multi_perform)
#define curl_multi_poll (*agsbx_curl.multi_poll)
#define curl_multi_info_read (*agsbx_curl.multi_info_read)
#define curl_multi_cleanup (*agsbx_curl.multi_cleanup)

#endif
