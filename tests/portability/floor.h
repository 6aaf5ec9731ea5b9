/* Force-included (-include) by tests/cli/portability.sh into every
 * translation unit: the API surface of jansson 2.13 and libcurl 7.81
 * (Ubuntu 22.04), the portability floor. The version macros are lowered
 * and everything newer is poisoned, so a direct use of a newer call is a
 * compile error; the version-guarded fallbacks in base/compat.h and
 * base/http.c are what compiles. (Uses inside macros the real headers
 * defined before the poison, e.g. curl's typecheck, are not affected.) */
#ifndef AGSBX_TESTS_FLOOR_H
#define AGSBX_TESTS_FLOOR_H

#include <jansson.h>
#include <curl/curl.h>

#undef JANSSON_VERSION_HEX
#define JANSSON_VERSION_HEX 0x020d01  /* 2.13.1 */
#undef JANSSON_MINOR_VERSION
#define JANSSON_MINOR_VERSION 13
/* jansson 2.14 */
#pragma GCC poison json_object_getn json_object_setn json_object_setn_nocheck json_object_setn_new
#pragma GCC poison json_object_setn_new_nocheck json_object_deln json_object_iter_key_len
#pragma GCC poison json_object_keylen_foreach json_object_keylen_foreach_safe

#undef LIBCURL_VERSION_NUM
#define LIBCURL_VERSION_NUM 0x075100  /* 7.81.0 */
/* libcurl 7.82 .. 8.x */
#pragma GCC poison CURLOPT_PROTOCOLS_STR CURLOPT_REDIR_PROTOCOLS_STR CURLOPT_CA_CACHE_TIMEOUT
#pragma GCC poison CURLOPT_QUICK_EXIT CURLOPT_SERVER_RESPONSE_TIMEOUT_MS CURLOPT_HAPROXY_CLIENT_IP
#pragma GCC poison CURLOPT_ECH CURLOPT_TCP_KEEPCNT CURLOPT_SSH_HOSTKEYFUNCTION CURLOPT_WS_OPTIONS
#pragma GCC poison CURLINFO_CAPATH CURLINFO_CAINFO CURLINFO_CONN_ID CURLINFO_XFER_ID CURLINFO_QUEUE_TIME_T
#pragma GCC poison curl_easy_header curl_easy_nextheader curl_ws_recv curl_ws_send curl_ws_meta

#endif
