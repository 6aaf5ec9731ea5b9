/* base/compat.h and the curl protocol fallback: the code paths taken on the
 * portability floor (jansson 2.13, libcurl 7.81) run here on any host and
 * must agree with the newer API where that exists. */
#include "base/compat.h"
#include "base/http.h"
#include "base/http-curl.h" /* libcurl as the tool loads it: dlopen on first use */
#include "evidence/evidence.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_getn_fallback)
{
	json_t *o = json_pack("{s:i, s:i}", "abc", 1, "ab", 2);
	const char buf[] = "abcdef"; /* keys are slices, not C strings */
	ck_assert_int_eq(json_integer_value(agsbx_json_getn_fallback(o, buf, 3)), 1);
	ck_assert_int_eq(json_integer_value(agsbx_json_getn_fallback(o, buf, 2)), 2);
	ck_assert_ptr_null(agsbx_json_getn_fallback(o, buf, 4));
	ck_assert_ptr_null(agsbx_json_getn_fallback(o, "ab\0c", 4));
	ck_assert_ptr_eq(agsbx_json_getn_fallback(o, buf, 3), agsbx_json_getn(o, buf, 3));
	ck_assert_ptr_eq(agsbx_json_getn_fallback(o, buf, 1), agsbx_json_getn(o, buf, 1));
	json_decref(o);
}
END_TEST

START_TEST(test_setn_fallback)
{
	json_t *o = json_object();
	ck_assert_int_eq(agsbx_json_setn_new_nocheck_fallback(o, "keyXYZ", 3, json_integer(7)), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "key")), 7);
	ck_assert_ptr_null(json_object_get(o, "keyXYZ"));
	errno = 0;
	/* the value is consumed on failure too (LeakSanitizer checks) */
	ck_assert_int_eq(agsbx_json_setn_new_nocheck_fallback(o, "a\0b", 3, json_integer(1)), -1);
	ck_assert_int_eq(errno, EILSEQ);
	ck_assert_uint_eq(json_object_size(o), 1);
	json_decref(o);
}
END_TEST

START_TEST(test_iter_key_len_fallback)
{
	json_t *o = json_pack("{s:i, s:i}", "", 1, "four", 2);
	for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it))
		ck_assert_uint_eq(agsbx_json_iter_key_len_fallback(it), agsbx_json_iter_key_len(it));
	json_decref(o);
}
END_TEST

/* The parser on either path: duplicate keys found, NUL keys never reach a
 * loaded bundle. */
START_TEST(test_parser_on_compat)
{
	struct agsbx_error err = { 0 };
	json_t *b = NULL;
	const char dup[] = "{\"schema\":\"agsbx-evidence/v1\",\"a\":1,\"a\":2}";
	ck_assert_int_eq(agsbx_bundle_parse(dup, strlen(dup), &b, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "duplicate object key"));
	const char nul[] = "{\"schema\":\"agsbx-evidence/v1\",\"a\\u0000b\":1}";
	b = NULL;
	ck_assert_int_lt(agsbx_bundle_parse(nul, strlen(nul), &b, &err), 0);
	ck_assert_ptr_null(b);
}
END_TEST

/* Both ways of restricting protocols refuse what is not listed, before any
 * connection (the URL is loopback anyway). */
static CURLcode fetch_with(int (*set)(void *, const char *, bool), const char *list, const char *url)
{
	CURL *c = curl_easy_init();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(set(c, list, false), 0);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 500L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	CURLcode r = curl_easy_perform(c);
	curl_easy_cleanup(c);
	return r;
}

START_TEST(test_curl_protocols)
{
	int (*const impl[])(void *, const char *, bool) = { agsbx_curl_set_protocols, agsbx_curl_set_protocols_mask };
	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(fetch_with(impl[i], "https", "http://127.0.0.1:9/"), CURLE_UNSUPPORTED_PROTOCOL);
		ck_assert_int_eq(fetch_with(impl[i], "http,https", "file:///etc/hostname"), CURLE_UNSUPPORTED_PROTOCOL);
		/* listed: the transfer is attempted (port 9 on loopback: refused) */
		ck_assert_int_ne(fetch_with(impl[i], "http", "http://127.0.0.1:9/"), CURLE_UNSUPPORTED_PROTOCOL);
	}
	CURL *c = curl_easy_init();
	ck_assert_int_eq(agsbx_curl_set_protocols_mask(c, "gopher", false), -EINVAL);
	ck_assert_int_eq(agsbx_curl_set_protocols_mask(c, "http,", false), 0);
	curl_easy_cleanup(c);
}
END_TEST

int main(void)
{
	const char *why = NULL;
	if (agsbx_curl_load(&why) < 0) {
		fprintf(stderr, "cannot load libcurl: %s\n", why);
		return 1;
	}
	Suite *s = suite_create("compat");
	TCase *tc = tcase_create("compat");
	tcase_add_test(tc, test_getn_fallback);
	tcase_add_test(tc, test_setn_fallback);
	tcase_add_test(tc, test_iter_key_len_fallback);
	tcase_add_test(tc, test_parser_on_compat);
	tcase_add_test(tc, test_curl_protocols);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
