/* The --attach-command summary parser and tails on output the other suites
 * never feed it: escapes that are not CSI (ESC + one character, an ESC at
 * the very end), a ctest line whose counts contradict each other, counts
 * that would overflow the bundle's integer range, a count word glued to
 * letters, pytest's " in " without a duration, and a tail cut in the
 * middle of a UTF-8 character (it starts on the next character). */
#include "base/cleanup.h"
#include "base/runner.h"
#include "base/util.h"
#include "evidence/evidence.h"
#include "evidence/internal.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *name, *text;
	const char *format;
	long long passed, failed, skipped;
} cases[] = {
	{ "ESC + one character (not CSI) is dropped with its character", "\033= 3 passed, 1 failed in 0.5s\n", "pytest", 3,
	  1, 0 },
	{ "an ESC at the very end is dropped", "2 passed, 0 failed\033", "plain", 2, 0, 0 },
	{ "ctest: more failed than tests is no ctest summary", "50% tests passed, 5 tests failed out of 3\n", "none", 0, 0,
	  0 },
	{ "counts saturate at the bundle's largest integer",
	  "9007199254740000 passed, 9007199254740000 passed, 1 failed\n", "plain", AGSBX_JSON_INT_MAX, 1, 0 },
	{ "a count word glued to letters is not that word", "3 passedx, 1 failed\n", "plain", 0, 1, 0 },
	{ "pytest's ' in ' without a number: a plain line", "3 passed, 1 failed in total\n", "plain", 3, 1, 0 },
	{ "pytest's ' in N' without 's': a plain line", "3 passed, 1 failed in 12\n", "plain", 3, 1, 0 },
	{ "pytest: errors count as failures", "=== 4 passed, 2 errors, 1 error, 3 skipped in 1.25s ===\n", "pytest", 4, 3,
	  3 },
	{ "the last summary line wins", "1 passed, 1 failed\nnoise\n7 passed, 0 failed\n", "plain", 7, 0, 0 },
};

START_TEST(summary_cases)
{
	const char *t = cases[_i].text;
	_cleanup_json_ json_t *s = agsbx_attachment_summary(t, strlen(t));
	ck_assert_ptr_nonnull(s);
	const char *f = json_string_value(json_object_get(s, "format"));
	ck_assert_msg(f && strcmp(f, cases[_i].format) == 0, "%s: format %s, want %s", cases[_i].name, f,
		      cases[_i].format);
	long long p = json_integer_value(json_object_get(s, "passed")), fl = json_integer_value(json_object_get(s, "failed")),
		  sk = json_integer_value(json_object_get(s, "skipped"));
	ck_assert_msg(p == cases[_i].passed && fl == cases[_i].failed && sk == cases[_i].skipped,
		      "%s: %lld/%lld/%lld, want %lld/%lld/%lld", cases[_i].name, p, fl, sk, cases[_i].passed,
		      cases[_i].failed, cases[_i].skipped);
}
END_TEST

/* "xé€" is 78 c3 a9 e2 82 ac: the last 4 bytes start inside "é", so the
 * tail starts at "€"; the last 3 bytes are "€" whole. */
START_TEST(tail_on_a_character)
{
	ck_assert_int_eq(agsbx_runner_init(), 0);
	static const struct {
		size_t max;
		const char *want;
		bool cut;
	} t[] = { { 4, "\xe2\x82\xac", true }, { 3, "\xe2\x82\xac", true }, { 6, "x\xc3\xa9\xe2\x82\xac", false } };
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct agsbx_error e = { 0 };
		_cleanup_json_ json_t *a = agsbx_attachment_run("printf x\xc3\xa9\xe2\x82\xac", 10000, t[i].max, &e);
		ck_assert_msg(a, "attachment_run: %s", e.message);
		const char *tail = json_string_value(json_object_get(a, "stdout_tail"));
		ck_assert_msg(tail && strcmp(tail, t[i].want) == 0, "max %zu: tail '%s', want '%s'", t[i].max, tail,
			      t[i].want);
		ck_assert_msg(json_is_true(json_object_get(a, "stdout_truncated")) == t[i].cut, "max %zu: truncated", t[i].max);
		ck_assert_int_eq(json_integer_value(json_object_get(a, "exit_status")), 0);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cov2-attach");
	TCase *t = tcase_create("attach");
	tcase_add_loop_test(t, summary_cases, 0, sizeof cases / sizeof cases[0]);
	tcase_add_test(t, tail_on_a_character);
	suite_add_tcase(s, t);
	return agsbx_test_run_suite(s);
}
