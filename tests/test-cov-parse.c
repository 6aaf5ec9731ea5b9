/* The bundle reader's own JSON parser (evidence/parse.c), one rule at a
 * time at its edges: each input breaks exactly one rule (a \u escape cut
 * short or not hex, each way a surrogate pair can be wrong, an escape
 * outside JSON's set, a control byte, invalid UTF-8, a number in each
 * non-canonical form, a key problem, a missing ':' or ',', a truncated
 * literal, input ending at each kind of place) and must be refused with the
 * message naming that rule; nothing is returned. The valid neighbours
 * (a pair at the top of the range, \u escapes of each length, 2^53, every
 * JSON whitespace byte) parse, so the refusals are not the parser refusing
 * everything near them. The text is not NUL-terminated where its end is
 * the point: the parser must stop at the given length. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/evidence.h"
#include "tests/lib/testlib.h"

/* JSON text only: the schema check after it is not what these test. */
static const char *json_error(const char *text, size_t n)
{
	static struct agsbx_error err;
	json_t *b = NULL;
	err = (struct agsbx_error){ 0 };
	char *copy = malloc(n ? n : 1); /* exactly n bytes: a read past the end is ASan's to see */
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, text, n);
	int r = agsbx_bundle_parse(copy, n, &b, &err);
	free(copy);
	ck_assert_int_lt(r, 0);
	ck_assert_ptr_null(b);
	return err.message;
}

static void refused(const char *text, const char *want)
{
	const char *err = json_error(text, strlen(text));
	ck_assert_msg(strstr(err, want), "%s: error '%s', want '%s'", text, err, want);
}

START_TEST(test_strings)
{
	refused("{\"a\":\"\\u12", "invalid \\u escape");
	refused("{\"a\":\"\\u12g4\"}", "invalid \\u escape");
	refused("{\"a\":\"\\uDC00\"}", "lone low surrogate \\uDC00");
	refused("{\"a\":\"\\uDFFF\"}", "lone low surrogate \\uDFFF");
	refused("{\"a\":\"\\uD800\"}", "lone high surrogate \\uD800");
	refused("{\"a\":\"\\uD800x\\uDC00\"}", "lone high surrogate");
	refused("{\"a\":\"\\uD800\\nDC00\"}", "lone high surrogate");
	refused("{\"a\":\"\\uD800\\uZZZZ\"}", "lone high surrogate");
	refused("{\"a\":\"\\uDBFF\\uDBFF\"}", "lone high surrogate \\uDBFF");
	refused("{\"a\":\"\\uD800\\uE000\"}", "lone high surrogate");
	refused("{\"a\":\"\\uD800\\uDC0", "lone high surrogate");
	refused("{\"a\":\"\\u0000\"}", "\\u0000 is not allowed");
	refused("{\"a\":\"\\x\"}", "invalid escape \\x");
	refused("{\"a\":\"\\\x01\"}", "invalid escape \\?");
	refused("{\"a\":\"\\", "premature end of input in a string");
	refused("{\"a\":\"abc", "premature end of input in a string");
	refused("{\"a\":\"a\tb\"}", "control character in a string");
	refused("{\"a\":\"\x7f\x1f\"}", "control character in a string");
	refused("{\"a\":\"\xc3\"}", "invalid UTF-8 in a string");
	refused("{\"a\":\"\xed\xa0\x80\"}", "invalid UTF-8 in a string");
	refused("{\"a\":\"\xf4\x90\x80\x80\"}", "invalid UTF-8 in a string");
	refused("{\"a\":\"\\n\xff\"}", "invalid UTF-8 in a string");
}
END_TEST

START_TEST(test_numbers)
{
	refused("{\"a\":-}", "invalid number");
	refused("{\"a\":-x}", "invalid number");
	refused("{\"a\":+1}", "invalid token");
	refused("{\"a\":01}", "invalid number (leading zero)");
	refused("{\"a\":-00}", "invalid number (leading zero)");
	refused("{\"a\":1.0}", "not an integer");
	refused("{\"a\":1e3}", "not an integer");
	refused("{\"a\":1E3}", "not an integer");
	refused("{\"a\":9007199254740993}", "integer out of range");
	refused("{\"a\":-9007199254740993}", "integer out of range");
	refused("{\"a\":123456789012345678901234567890}", "integer out of range");
	refused("{\"a\":-0}", "negative zero");
	refused("{\"a\":-", "invalid number");
}
END_TEST

START_TEST(test_structure)
{
	refused("{\"a\":1,\"a\":2}", "duplicate object key \"a\"");
	refused("{\"k\\u0001\":1,\"k\\u0001\":2}", "duplicate object key \"k?\"");
	refused("{\"a\" 1}", "':' expected");
	refused("{\"a\"", "':' expected");
	refused("{\"a\":1 \"b\":2}", "',' or '}' expected");
	refused("{\"a\":[1 2]}", "',' or ']' expected");
	refused("{\"a\":[1,", "premature end of input");
	refused("{\"a\":", "premature end of input");
	refused("{\"a\":1", "premature end of input");
	refused("{1:2}", "string or '}' expected");
	refused("{", "premature end of input");
	refused("{\"a\\u0000b\":1}", "\\u0000 is not allowed");
	refused("{\"a\":tru}", "invalid token");
	refused("{\"a\":nul", "invalid token");
	refused("{\"a\":falsey}", "',' or '}' expected");
	refused("{\"a\":@}", "invalid token");
	refused("{} x", "end of input expected");
	refused("", "empty input");
	refused(" \r\n\t", "empty input");
}
END_TEST

/* The accepted neighbours: the JSON is read (what follows is the schema's
 * verdict on a document that is no bundle, not a JSON error). */
static void json_ok(const char *text)
{
	const char *err = json_error(text, strlen(text));
	static const char *const json_errors[] = { "escape", "surrogate", "UTF-8", "number", "integer", "expected",
						   "premature", "token", "duplicate", "control" };
	for (size_t i = 0; i < sizeof json_errors / sizeof *json_errors; i++)
		ck_assert_msg(!strstr(err, json_errors[i]), "%s: a JSON error for valid JSON: %s", text, err);
}

START_TEST(test_valid_neighbours)
{
	json_ok("{\"a\":\"\\uD83D\\uDE00 \\uDBFF\\uDFFF \\u00e9 \\u20AC \\/ \\b\\f\\n\\r\\t \\\" \\\\\"}");
	json_ok("{\"a\":9007199254740992,\"b\":-9007199254740992,\"c\":0,\"d\":-1}");
	json_ok(" \r\n\t{ \"a\" :\t[ true , false , null ] ,\r\n\"b\" : { } }\n");
	json_ok("{\"caf\xc3\xa9\":\"\xf0\x9f\x98\x80 \xe2\x82\xac \xf4\x8f\xbf\xbf\"}");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cov-parse");
	TCase *t = tcase_create("parse");
	tcase_add_test(t, test_strings);
	tcase_add_test(t, test_numbers);
	tcase_add_test(t, test_structure);
	tcase_add_test(t, test_valid_neighbours);
	suite_add_tcase(s, t);
	return agsbx_test_run_suite(s);
}
