/* What an adapter says reaches the bundle only in a shape the bundle can
 * hold. A bundle has integers only, within +-2^53 (evidence/canonical.c:
 * anything else has no jq-compatible canonical form and cannot be
 * written), and jq 1.6 reads at most 256 levels of it (evidence/parse.c),
 * so an adapter's real number, huge integer or deep nesting is that
 * adapter's protocol violation, found when its line is read -- never a
 * bundle the run cannot write or a signed one verify refuses. Size is
 * different: a large meta is the adapter's right, but not at the cost of
 * the other providers' evidence, so each piece is capped and all of it
 * shares a budget; the excess is replaced by a marker saying so. */
#include "providers/external/internal.h"

#include <string.h>

/* ---- shape ---- */

const char *ext_json_unconfined(const json_t *j, int depth)
{
	const char *key, *bad = NULL;
	json_t *v;
	size_t i;
	switch (json_typeof(j)) {
	case JSON_REAL:
		return "a number that is not an integer (the bundle holds integers only)";
	case JSON_INTEGER:
		if (json_integer_value(j) > EXT_INT_MAX || json_integer_value(j) < -EXT_INT_MAX)
			return "an integer beyond +-2^53 (the bundle's integer range)";
		return NULL;
	case JSON_OBJECT:
		if (depth > EXT_MAX_DEPTH)
			return "nested deeper than " EXT_MAX_DEPTH_STR " levels of arrays and objects";
		json_object_foreach((json_t *)j, key, v)
			if ((bad = ext_json_unconfined(v, depth + 1)))
				return bad;
		return NULL;
	case JSON_ARRAY:
		if (depth > EXT_MAX_DEPTH)
			return "nested deeper than " EXT_MAX_DEPTH_STR " levels of arrays and objects";
		json_array_foreach(j, i, v)
			if ((bad = ext_json_unconfined(v, depth + 1)))
				return bad;
		return NULL;
	default:
		return NULL;
	}
}

/* Before the line is parsed: jansson would build a tree of every value
 * (some 60 bytes each: a 16 MiB line of "0," took 430 MB), so the count
 * and the depth are enforced on the raw bytes, outside strings. Values
 * are counted by their separators and openers (an upper bound of one per
 * value). The grammar is jansson's to judge afterwards. */
const char *ext_line_unconfined(const char *line, size_t len)
{
	size_t values = 0;
	int depth = 0;
	bool in_string = false;
	for (size_t i = 0; i < len; i++) {
		char c = line[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
			continue;
		}
		if (c == '"')
			in_string = true;
		else if (c == '[' || c == '{') {
			if (++depth > EXT_MAX_DEPTH)
				return "nested deeper than " EXT_MAX_DEPTH_STR " levels of arrays and objects";
			values++;
		} else if (c == ']' || c == '}')
			depth--;
		else if (c == ',' || c == ':')
			values++;
		if (values > EXT_MAX_VALUES)
			return "more than " EXT_MAX_VALUES_STR " values in one line";
	}
	return NULL;
}

/* ---- size ---- */

/* A string as the writers print it: escapes, and non-ASCII at its worst
 * (the worker report is ASCII-only: \uXXXX, up to three bytes per byte). */
static size_t string_size(const char *s, size_t len)
{
	size_t n = 2;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		n += c >= 0x80 ? 3 : c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t' ? 2
			: c < 0x20 ? 6 : 1;
	}
	return n;
}

static size_t int_size(json_int_t v)
{
	size_t n = v < 0 ? 2 : 1;
	for (uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; u >= 10; u /= 10)
		n++;
	return n;
}

size_t ext_json_written_size(const json_t *j, int depth, size_t stop)
{
	/* Per member: newline, indent, separator (JSON_INDENT(2) in the bundle). */
	size_t n = 2, per = 2 + 2 * (size_t)(depth + 1);
	const char *key;
	json_t *v;
	size_t i;
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		json_object_foreach((json_t *)j, key, v) {
			if (n > stop)
				break;
			n += per + string_size(key, strlen(key)) + 2 + ext_json_written_size(v, depth + 1, stop - n);
		}
		return n + 1 + 2 * (size_t)depth;
	case JSON_ARRAY:
		json_array_foreach(j, i, v) {
			if (n > stop)
				break;
			n += per + ext_json_written_size(v, depth + 1, stop - n);
		}
		return n + 1 + 2 * (size_t)depth;
	case JSON_STRING:
		return string_size(json_string_value(j), json_string_length(j));
	case JSON_INTEGER:
		return int_size(json_integer_value(j));
	default:
		return 5; /* false, true, null */
	}
}

/* ---- the budget ---- */

size_t ext_supplied_share(void)
{
	size_t n = agsbx_external_count();
	return EXT_SUPPLIED_MAX / (n ? n : 1);
}

json_t *ext_supplied(struct ext_instance *in, const json_t *v, int depth, size_t cap, bool *truncated)
{
	size_t share = ext_supplied_share();
	size_t size = ext_json_written_size(v, depth, cap);
	pthread_mutex_lock(&in->lock);
	bool over_cap = size > cap, over_budget = !over_cap && in->supplied + size > share;
	if (!over_cap && !over_budget)
		in->supplied += size;
	if (over_cap || over_budget)
		in->supplied_truncated++;
	pthread_mutex_unlock(&in->lock);
	*truncated = over_cap || over_budget;
	if (!*truncated)
		return json_incref((json_t *)v);
	return json_pack("{s:b, s:s, s:I}", "truncated", 1, "why",
			 over_cap ? "larger than the cap for one piece of adapter-supplied JSON"
				  : "this provider's share of the bundle's budget for adapter-supplied JSON is spent",
			 "limit_bytes", (json_int_t)(over_cap ? cap : share));
}
