/* providers/external/confine.c: what of an adapter's JSON the bundle can
 * hold (integers within +-2^53, no reals, at most EXT_MAX_DEPTH levels), and
 * the size estimate the caps and the budget rest on, which must never be
 * below what the writers really print (the bundle indented, the worker
 * report compact and ASCII-escaped), wherever in the bundle the value sits.
 * Plus the writer's own guard: never a bundle over 64 MiB. */
#include "evidence/evidence.h"
#include "providers/external/internal.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *nested(int levels, json_t *inner)
{
	json_t *v = inner;
	for (int i = 0; i < levels; i++)
		v = i % 2 ? json_pack("[o]", v) : json_pack("{s:o}", "k", v);
	return v;
}

static const char *unconfined_line(const char *text)
{
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	ck_assert_ptr_nonnull(j);
	const char *why = ext_json_unconfined(j, 1);
	json_decref(j);
	return why;
}

START_TEST(test_shape)
{
	ck_assert_ptr_null(unconfined_line("{\"id\":1,\"a\":[9007199254740992,-9007199254740992,0,true,null,\"s\"]}"));
	ck_assert_ptr_nonnull(unconfined_line("{\"id\":1,\"a\":1.5}"));
	ck_assert_ptr_nonnull(unconfined_line("{\"id\":1,\"a\":1.0}"));
	ck_assert_ptr_nonnull(unconfined_line("{\"id\":1,\"a\":{\"b\":[1e3]}}"));
	ck_assert_ptr_nonnull(unconfined_line("{\"id\":1,\"a\":9007199254740993}"));
	ck_assert_ptr_nonnull(unconfined_line("{\"id\":1,\"a\":[-9007199254740993]}"));
	/* The line's own object is level 1: 31 more are allowed, 32 more are not. */
	json_t *ok = json_pack("{s:o}", "a", nested(EXT_MAX_DEPTH - 1, json_integer(1)));
	json_t *deep = json_pack("{s:o}", "a", nested(EXT_MAX_DEPTH, json_integer(1)));
	ck_assert_ptr_null(ext_json_unconfined(ok, 1));
	ck_assert_ptr_nonnull(strstr(ext_json_unconfined(deep, 1), "nested deeper"));
	json_decref(ok);
	json_decref(deep);
}
END_TEST

START_TEST(test_line_prescan)
{
	char line[4096];
	/* Brackets, separators and escaped quotes inside strings do not count. */
	const char *quoted = "{\"a\":\"\\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[,,,:\\\\\",\"b\":1}";
	ck_assert_ptr_null(ext_line_unconfined(quoted, strlen(quoted)));
	json_t *parsed = json_loads(quoted, 0, NULL); /* and it is the JSON meant */
	ck_assert_int_eq(json_integer_value(json_object_get(parsed, "b")), 1);
	json_decref(parsed);
	for (int d = EXT_MAX_DEPTH; d <= EXT_MAX_DEPTH + 1; d++) {
		size_t n = 0;
		n += (size_t)snprintf(line + n, sizeof line - n, "{\"id\":1,\"a\":");
		for (int i = 1; i < d; i++)
			line[n++] = '[';
		for (int i = 1; i < d; i++)
			line[n++] = ']';
		line[n++] = '}';
		const char *why = ext_line_unconfined(line, n);
		if (d == EXT_MAX_DEPTH)
			ck_assert_ptr_null(why);
		else
			ck_assert_ptr_nonnull(strstr(why, "nested deeper"));
	}
	/* {"a":[0,0,...]}: the object, its key, the array, then one per comma. */
	for (size_t zeros = EXT_MAX_VALUES - 2; zeros <= EXT_MAX_VALUES - 1; zeros++) {
		size_t n = 0, cap = zeros * 2 + 16;
		char *big = malloc(cap);
		n += (size_t)snprintf(big, cap, "{\"a\":[0");
		for (size_t i = 1; i < zeros; i++) {
			big[n++] = ',';
			big[n++] = '0';
		}
		big[n++] = ']';
		big[n++] = '}';
		const char *why = ext_line_unconfined(big, n);
		if (zeros == EXT_MAX_VALUES - 2)
			ck_assert_ptr_null(why);
		else
			ck_assert_ptr_nonnull(strstr(why, "values in one line"));
		free(big);
	}
}
END_TEST

/* ---- the size bound, on random values ---- */

static unsigned long long rng = 88172645463325252ULL;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static json_t *random_string(void)
{
	static const char *const pieces[] = { "a", "\"", "\\", "\n", "\t", "\x01", "\x1f", "\x7f", "/", "\xc3\xa9",
					      "\xe2\x80\xa8", "\xf0\x9f\x98\x80", "zz" };
	char buf[256] = "";
	for (unsigned i = 0, n = rnd(12); i < n; i++)
		strcat(buf, pieces[rnd(sizeof pieces / sizeof *pieces)]);
	return json_string(buf);
}

static json_t *random_value(int depth)
{
	unsigned kind = depth > 6 ? rnd(4) : rnd(6);
	switch (kind) {
	case 0: return random_string();
	case 1: return json_integer((json_int_t)rnd(2000000000) * (rnd(2) ? -4194304 : 1));
	case 2: return rnd(2) ? json_true() : json_null();
	case 3: return json_integer(0);
	case 4: {
		json_t *a = json_array();
		for (unsigned i = 0, n = rnd(5); i < n; i++)
			json_array_append_new(a, random_value(depth + 1));
		return a;
	}
	default: {
		json_t *o = json_object();
		for (unsigned i = 0, n = rnd(5); i < n; i++) {
			json_t *k = random_string();
			json_object_set_new(o, json_string_value(k), random_value(depth + 1));
			json_decref(k);
		}
		return o;
	}
	}
}

/* The bytes v adds to a document where it sits `levels` objects deep. */
static size_t written_delta(json_t *v, int levels, size_t flags)
{
	json_t *with = json_incref(v), *without = json_null();
	for (int i = 0; i < levels; i++) {
		with = json_pack("{s:o}", "key", with);
		without = json_pack("{s:o}", "key", without);
	}
	char *a = json_dumps(with, flags), *b = json_dumps(without, flags);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	size_t d = strlen(a) - strlen(b) + 4; /* "null" is what v replaced */
	free(a);
	free(b);
	json_decref(with);
	json_decref(without);
	return d;
}

START_TEST(test_size_bound)
{
	for (int i = 0; i < 3000; i++) {
		json_t *v = random_value(0);
		int levels = 1 + (int)rnd(12);
		size_t est = ext_json_written_size(v, levels, SIZE_MAX / 2);
		size_t indented = written_delta(v, levels, JSON_INDENT(2) | JSON_SORT_KEYS);
		size_t compact = written_delta(v, levels, JSON_COMPACT | JSON_ENSURE_ASCII);
		if (est < indented || est < compact) {
			char *s = json_dumps(v, JSON_ENCODE_ANY);
			ck_abort_msg("estimate %zu < written %zu / %zu at depth %d: %s", est, indented, compact, levels, s);
		}
		json_decref(v);
	}
}
END_TEST

START_TEST(test_size_stops)
{
	/* Counting stops soon after stop: a 1 MiB array is not walked whole. */
	json_t *a = json_array();
	for (int i = 0; i < 100000; i++)
		json_array_append_new(a, json_string("0123456789"));
	size_t full = ext_json_written_size(a, 0, SIZE_MAX / 2), capped = ext_json_written_size(a, 0, 1000);
	ck_assert_uint_gt(full, 1000000);
	ck_assert_uint_gt(capped, 1000);
	ck_assert_uint_lt(capped, 2000);
	json_decref(a);
}
END_TEST

START_TEST(test_bundle_write_cap)
{
	char *dir = agsbx_test_tmpdir("confine");
	char path[512];
	snprintf(path, sizeof path, "%s/big.json", dir);
	size_t n = AGSBX_BUNDLE_MAX_BYTES;
	char *s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	memset(s, 'x', n);
	s[n] = '\0';
	json_t *b = json_pack("{s:s, s:s%}", "schema", "agsbx-evidence/v1", "pad", s, n);
	free(s);
	ck_assert_int_eq(agsbx_bundle_write(path, b), -EFBIG);
	ck_assert_int_ne(access(path, F_OK), 0); /* no partial file either */
	json_decref(b);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("external-confine");
	TCase *tc = tcase_create("confine");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_shape);
	tcase_add_test(tc, test_line_prescan);
	tcase_add_test(tc, test_size_bound);
	tcase_add_test(tc, test_size_stops);
	tcase_add_test(tc, test_bundle_write_cap);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
