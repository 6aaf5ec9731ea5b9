/* A strict JSON reader for bundles, building jansson values.
 *
 * Why not json_loadb(): it lexes one character at a time through a stream
 * callback and a growing buffer, ~10 ms per MiB here, which dominated
 * `verify`. This reader scans string runs in bulk and enforces the bundle
 * rules while it parses, so no second walk is needed:
 *  - RFC 8259 grammar, whitespace only between tokens, nothing after the
 *    top-level value, which must be an object;
 *  - duplicate keys rejected (JSON_REJECT_DUPLICATES);
 *  - strings valid UTF-8, no raw control characters, no \u0000, no lone
 *    surrogates (what jansson rejects too);
 *  - integers only, within +-2^53, and no "-0" (jq would print -0, jansson
 *    reads 0: the canonical forms would differ);
 *  - nested no deeper than jq 1.6 reads (JQ_MAX_DEPTH).
 * The fuzz target checks it against json_loadb() on every input.
 *
 * Optionally it also writes the canonical form (canonical.c) as it reads,
 * for verify: a bundle is written with its keys sorted (by this tool, jq
 * -S, or any sorting serializer), and then the canonical form is the input
 * with whitespace dropped and strings re-escaped the way jq escapes them,
 * so it needs no second walk over the tree. Where an object's keys are not
 * in order, the output is abandoned and the caller canonicalises the tree;
 * the fuzz target checks that both give the same bytes. */
#include "base/compat.h"
#include "base/util.h"
#include "evidence/internal.h"
#include "evidence/jparse.h"

#include "base/cleanup.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void emit(struct parser *ps, const char *s, size_t n)
{
	if (ps->canon && !ps->mute)
		sbuf_put_inline(ps->canon->out, s, n);
}

static void emit_c(struct parser *ps, char c) { emit(ps, &c, 1); }

/* A decoded string. Raw from the input when it had no escapes: the scan
 * let through no control character, quote or backslash and checked the
 * UTF-8, so only DEL is left for jq to escape. */
static void emit_string(struct parser *ps, const char *s, size_t n, bool raw)
{
	if (!ps->canon || ps->mute)
		return;
	if (raw && !memchr(s, 0x7f, n)) {
		emit_c(ps, '"');
		emit(ps, s, n);
		emit_c(ps, '"');
	} else if (ev_canonical_put_string(ps->canon->out, s, n) < 0) {
		ps->canon = NULL; /* the tree's canonical form fails the same way */
	}
}

/* Keys must arrive in the order the canonical form sorts them (bytewise,
 * a prefix first); otherwise the streamed output is given up. */
static void key_order(struct parser *ps, const char *prev, size_t plen, const char *key, size_t klen)
{
	if (!ps->canon || !prev)
		return;
	int c = memcmp(prev, key, plen < klen ? plen : klen);
	if (c > 0 || (c == 0 && plen > klen))
		ps->canon = NULL;
}

void ev_jp_fail(struct parser *ps, const char *at, const char *fmt, ...)
{
	if (ps->failed)
		return;
	ps->failed = true;
	if (!ps->err_size) /* a reader that wants no message (canon-stream.c) */
		return;
	int line = 1, col = 1;
	for (const char *s = ps->start; s < at && s < ps->end; s++) {
		if (*s == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	char what[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	ev_set_err(ps->err, ps->err_size, "not valid bundle JSON: %s (line %d, column %d)", what, line, col);
}

static int hex4(const char *s, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		*v = *v << 4 | d;
	}
	return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* One \uXXXX escape (and its low surrogate) at s ("\u..."): the code point
 * and the bytes consumed, or 0 when invalid. */
static size_t unicode_escape(struct parser *ps, const char *s, uint32_t *cp)
{
	unsigned hi, lo;
	if (ps->end - s < 6 || hex4(s + 2, &hi) < 0) {
		ev_jp_fail(ps, s, "invalid \\u escape");
		return 0;
	}
	if (hi >= 0xDC00 && hi <= 0xDFFF) {
		ev_jp_fail(ps, s, "lone low surrogate \\u%04X", hi);
		return 0;
	}
	if (hi >= 0xD800 && hi <= 0xDBFF) {
		if (ps->end - s < 12 || s[6] != '\\' || s[7] != 'u' || hex4(s + 8, &lo) < 0 || lo < 0xDC00 ||
		    lo > 0xDFFF) {
			ev_jp_fail(ps, s, "lone high surrogate \\u%04X", hi);
			return 0;
		}
		*cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
		return 12;
	}
	if (hi == 0) {
		ev_jp_fail(ps, s, "\\u0000 is not allowed in a bundle");
		return 0;
	}
	*cp = hi;
	return 6;
}

/* Decodes the string whose opening quote is at ps->p. On success *s (maybe
 * into *owned, which the caller frees) and *n; ps->p is past the closing
 * quote. Plain runs are only scanned, not copied. */
/* Whether 8 bytes hold none of what ends a plain run: a control character,
 * '"', '\\' or a non-ASCII byte (the "hasless"/"haszero" bit tricks: exact
 * for "is there any"). A bundle is mostly long plain strings: this takes
 * them a word at a time instead of a byte. */
static inline bool plain8(const char *p)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t w, q, b;
	memcpy(&w, p, 8);
	q = w ^ (ones * '"');
	b = w ^ (ones * '\\');
	return ((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b) | w) & high) == 0;
}

/* The common case, no escapes: advances *pp to the first '"', '\\' or
 * control character (or the end), checking the UTF-8 on the way. */
static int scan_plain(struct parser *ps, const char **pp)
{
	static const unsigned char stop[256] = {
		[0x00 ... 0x1F] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xFF] = 1,
	};
	const char *p = *pp, *end = ps->end;
	while (p < end) {
		while (end - p >= 8 && plain8(p))
			p += 8;
		while (p < end && !stop[(unsigned char)*p])
			p++;
		if (p == end)
			break;
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\' || c < 0x20)
			break;
		uint32_t cp;
		size_t k = agsbx_utf8_decode((const unsigned char *)p, (size_t)(end - p), &cp);
		if (k == 0) {
			ev_jp_fail(ps, p, "invalid UTF-8 in a string");
			return -EINVAL;
		}
		p += k;
	}
	*pp = p;
	return 0;
}

/* One backslash escape at p, decoded into o + *w: the bytes consumed, 0
 * on error (reported). */
static size_t decode_escape(struct parser *ps, const char *p, char *o, size_t *w)
{
	if (ps->end - p < 2) {
		ev_jp_fail(ps, p, "premature end of input in a string");
		return 0;
	}
	char e = p[1];
	const char *simple = strchr("\"\\/bfnrt", e);
	if (e && simple) {
		static const char decoded[] = "\"\\/\b\f\n\r\t";
		o[(*w)++] = decoded[simple - "\"\\/bfnrt"];
		return 2;
	}
	if (e == 'u') {
		uint32_t cp;
		size_t k = unicode_escape(ps, p, &cp);
		if (k)
			*w += put_utf8(o + *w, cp);
		return k;
	}
	ev_jp_fail(ps, p, "invalid escape \\%c", e >= 0x20 && e < 0x7f ? e : '?');
	return 0;
}

/* From p (past the plain prefix already in o[0..*w)) to the closing quote:
 * the quote's position, or NULL on error (reported). */
static const char *decode_rest(struct parser *ps, const char *p, char *o, size_t *w)
{
	const char *end = ps->end;
	while (p < end && *p != '"') {
		unsigned char c = (unsigned char)*p;
		size_t k = 1;
		if (c < 0x20) {
			ev_jp_fail(ps, p, "control character in a string");
			return NULL;
		}
		if (c >= 0x80) {
			uint32_t cp;
			if ((k = agsbx_utf8_decode((const unsigned char *)p, (size_t)(end - p), &cp)) == 0) {
				ev_jp_fail(ps, p, "invalid UTF-8 in a string");
				return NULL;
			}
			memcpy(o + *w, p, k);
			*w += k;
		} else if (c != '\\')
			o[(*w)++] = (char)c;
		else if ((k = decode_escape(ps, p, o, w)) == 0)
			return NULL;
		p += k;
	}
	if (p >= end) {
		ev_jp_fail(ps, p, "premature end of input in a string");
		return NULL;
	}
	return p;
}

/* The bytes from p to the string's closing quote (one not escaped), or to
 * the end: what a decoded copy needs at most (escapes only shrink). */
static size_t string_extent(const char *p, const char *end)
{
	for (const char *q = p; (q = memchr(q, '"', (size_t)(end - q))); q++) {
		size_t bs = 0;
		while (q - bs > p && q[-1 - (ptrdiff_t)bs] == '\\')
			bs++;
		if (!(bs & 1))
			return (size_t)(q - p);
	}
	return (size_t)(end - p);
}

int ev_jp_string(struct parser *ps, const char **s, size_t *n, char **owned)
{
	const char *p = ++ps->p, *end = ps->end;
	*owned = NULL;
	if (scan_plain(ps, &p) < 0)
		return -EINVAL;
	if (p < end && *p == '"') {
		*s = ps->p;
		*n = (size_t)(p - ps->p);
		ps->p = p + 1;
		return 0;
	}
	/* escapes: decode into a copy (never longer than the source; not the
	 * rest of the input, which cost an mmap and munmap per string) */
	char *o = malloc(string_extent(ps->p, end) + 1);
	if (!o)
		return -ENOMEM;
	size_t w = (size_t)(p - ps->p);
	memcpy(o, ps->p, w);
	if (!(p = decode_rest(ps, p, o, &w))) {
		free(o);
		return -EINVAL;
	}
	o[w] = '\0';
	*s = o;
	*n = w;
	*owned = o;
	ps->p = p + 1;
	return 0;
}

bool ev_jp_number(struct parser *ps, int64_t *out)
{
	const char *s = ps->p, *p = s;
	bool neg = p < ps->end && *p == '-';
	if (neg)
		p++;
	if (p >= ps->end || *p < '0' || *p > '9') {
		ev_jp_fail(ps, s, "invalid number");
		return false;
	}
	int64_t v = 0;
	const char *digits = p;
	for (; p < ps->end && *p >= '0' && *p <= '9'; p++) {
		if (v > AGSBX_JSON_INT_MAX) /* keep going to find the end; reported below */
			continue;
		v = v * 10 + (*p - '0');
	}
	if (*digits == '0' && p - digits > 1) {
		ev_jp_fail(ps, s, "invalid number (leading zero)");
		return false;
	}
	if (p < ps->end && (*p == '.' || *p == 'e' || *p == 'E')) {
		ev_jp_fail(ps, s, "not an integer (bundles hold integers only)");
		return false;
	}
	if (v > AGSBX_JSON_INT_MAX) {
		ev_jp_fail(ps, s, "integer out of range (|n| <= 2^53)");
		return false;
	}
	if (neg && v == 0) {
		ev_jp_fail(ps, s, "negative zero is not a canonical integer");
		return false;
	}
	ps->p = p;
	*out = neg ? -v : v;
	return true;
}

static json_t *parse_number(struct parser *ps)
{
	const char *s = ps->p;
	int64_t v;
	if (!ev_jp_number(ps, &v))
		return NULL;
	emit(ps, s, (size_t)(ps->p - s)); /* no sign but '-', no leading zero: as jq prints it */
	json_t *j = json_integer(v);
	if (!j)
		ev_jp_fail(ps, s, "out of memory");
	return j;
}

static json_t *parse_value(struct parser *ps);

/* After a member or element: 1 on ',' (another follows), 0 on the
 * closing bracket, -1 on anything else (reported). Consumes it. */
int ev_jp_separator(struct parser *ps, char close)
{
	ev_jp_skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ',') {
		ps->p++;
		return 1;
	}
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	if (ps->p >= ps->end)
		ev_jp_fail(ps, ps->p, "premature end of input");
	else
		ev_jp_fail(ps, ps->p, "',' or '%c' expected", close);
	return -1;
}

/* An empty object or array: its closing bracket right after the opening
 * one (consumed). */
bool ev_jp_closes_at_once(struct parser *ps, char close)
{
	ev_jp_skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return true;
	}
	return false;
}

static void fail_duplicate(struct parser *ps, const char *kpos, const char *key, size_t klen)
{
	char shown[41];
	size_t i = 0;
	for (; i < klen && i < sizeof shown - 1; i++) /* one printable line */
		shown[i] = key[i] >= 0x20 && key[i] < 0x7f ? key[i] : '?';
	shown[i] = '\0';
	ev_jp_fail(ps, kpos, "duplicate object key \"%s\"", shown);
}

/* An object's members so far, for the canonical output: the previous key
 * written (into the input, or a copy when it had escapes); once there is
 * one, the next member needs a comma. */
struct members {
	const char *prev;
	size_t prev_len;
	char *prev_owned;
};

/* The member's key into the canonical output, unless it is the skipped
 * top-level member (then its value is muted too): whether it was skipped.
 * What is left out has no place in the order. */
static bool emit_key(struct parser *ps, struct members *m, const char *key, size_t klen, bool raw)
{
	if (!ps->canon || ps->mute)
		return false;
	const char *skip = ps->canon->skip_key;
	if (ps->depth == 2 && skip && strlen(skip) == klen && memcmp(skip, key, klen) == 0) {
		ps->mute++;
		return true;
	}
	key_order(ps, m->prev, m->prev_len, key, klen);
	if (!ps->canon)
		return false;
	if (m->prev)
		emit_c(ps, ',');
	emit_string(ps, key, klen, raw);
	emit_c(ps, ':');
	return false;
}

static void remember_key(struct members *m, const char *key, size_t klen, char **owned)
{
	free(m->prev_owned);
	m->prev_owned = *owned;
	*owned = NULL;
	m->prev = key;
	m->prev_len = klen;
}

/* "key": value into obj; -1 on error (reported). */
static int parse_member(struct parser *ps, json_t *obj, struct members *m)
{
	ev_jp_skip_ws(ps);
	if (ps->p >= ps->end || *ps->p != '"') {
		ev_jp_fail(ps, ps->p, ps->p >= ps->end ? "premature end of input" : "string or '}' expected");
		return -1;
	}
	const char *kpos = ps->p, *key;
	size_t klen;
	_cleanup_free_ char *owned = NULL;
	if (ev_jp_string(ps, &key, &klen, &owned) < 0) {
		ev_jp_fail(ps, kpos, "out of memory");
		return -1;
	}
	ev_jp_skip_ws(ps);
	if (ps->p >= ps->end || *ps->p != ':') {
		ev_jp_fail(ps, ps->p, "':' expected");
		return -1;
	}
	ps->p++;
	bool skipped = emit_key(ps, m, key, klen, !owned);
	json_t *v = parse_value(ps);
	if (skipped)
		ps->mute--;
	else
		remember_key(m, key, klen, &owned);
	if (!v)
		return -1;
	/* A duplicate is seen by the size not growing (setn replaces): one
	 * hash lookup per member instead of a get before the set. */
	size_t size = json_object_size(obj);
	if (agsbx_json_setn_new_nocheck(obj, key, klen, v) < 0) {
		/* EILSEQ: a NUL in a key, which jansson < 2.14 cannot hold */
		ev_jp_fail(ps, kpos, errno == EILSEQ ? "object key contains NUL" : "out of memory");
		return -1;
	}
	if (json_object_size(obj) == size) {
		fail_duplicate(ps, kpos, key, klen);
		return -1;
	}
	return 0;
}

static json_t *parse_object(struct parser *ps)
{
	const char *open = ps->p++;
	json_t *obj = json_object();
	if (!obj) {
		ev_jp_fail(ps, open, "out of memory");
		return NULL;
	}
	emit_c(ps, '{');
	if (ev_jp_closes_at_once(ps, '}')) {
		emit_c(ps, '}');
		return obj;
	}
	struct members m = { 0 };
	int more;
	do
		more = parse_member(ps, obj, &m) < 0 ? -1 : ev_jp_separator(ps, '}');
	while (more == 1);
	free(m.prev_owned);
	emit_c(ps, '}');
	if (more == 0)
		return obj;
	json_decref(obj);
	return NULL;
}

static json_t *parse_array(struct parser *ps)
{
	const char *open = ps->p++;
	json_t *arr = json_array();
	if (!arr) {
		ev_jp_fail(ps, open, "out of memory");
		return NULL;
	}
	emit_c(ps, '[');
	if (ev_jp_closes_at_once(ps, ']')) {
		emit_c(ps, ']');
		return arr;
	}
	int more;
	do {
		if (json_array_size(arr))
			emit_c(ps, ',');
		json_t *v = parse_value(ps);
		if (!v || json_array_append_new(arr, v) < 0) {
			ev_jp_fail(ps, ps->p, "out of memory");
			more = -1;
		} else
			more = ev_jp_separator(ps, ']');
	} while (more == 1);
	emit_c(ps, ']');
	if (more == 0)
		return arr;
	json_decref(arr);
	return NULL;
}

static json_t *literal(struct parser *ps, const char *word, json_t *value)
{
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) {
		ev_jp_fail(ps, ps->p, "invalid token");
		return NULL;
	}
	ps->p += n;
	emit(ps, word, n);
	return value;
}

static json_t *parse_value(struct parser *ps)
{
	ev_jp_skip_ws(ps);
	if (ps->p >= ps->end) {
		ev_jp_fail(ps, ps->p, "premature end of input");
		return NULL;
	}
	json_t *v;
	const char *at = ps->p;
	switch (*ps->p) {
	case '{':
	case '[': {
		if (ps->depth >= JQ_MAX_DEPTH) {
			ev_jp_fail(ps, ps->p, "nested too deeply (as jq reads it: %d levels, an object's key counting as one)",
			     JQ_MAX_DEPTH);
			v = NULL;
			break;
		}
		int weight = *ps->p == '{' ? 2 : 1; /* an object and its key */
		ps->depth += weight;
		v = weight == 2 ? parse_object(ps) : parse_array(ps);
		ps->depth -= weight;
		break;
	}
	case '"': {
		const char *s;
		size_t n;
		char *owned;
		if (ev_jp_string(ps, &s, &n, &owned) < 0) {
			ev_jp_fail(ps, at, "out of memory");
			v = NULL;
			break;
		}
		v = json_stringn_nocheck(s, n); /* validated above */
		emit_string(ps, s, n, !owned);
		free(owned);
		if (!v)
			ev_jp_fail(ps, at, "out of memory");
		break;
	}
	case 't':
		v = literal(ps, "true", json_true());
		break;
	case 'f':
		v = literal(ps, "false", json_false());
		break;
	case 'n':
		v = literal(ps, "null", json_null());
		break;
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			v = parse_number(ps);
		else {
			ev_jp_fail(ps, ps->p, "invalid token");
			v = NULL;
		}
	}
	return v;
}

int ev_json_parse_strict(const char *data, size_t len, json_t **out, struct ev_canon_out *canon, char *err,
			 size_t err_size)
{
	struct parser ps = {
		.start = data, .p = data, .end = data + len, .err = err, .err_size = err_size, .canon = canon,
	};
	*out = NULL;
	if (canon)
		canon->complete = false;
	ev_jp_skip_ws(&ps);
	if (ps.p < ps.end && *ps.p == '[') {
		ev_set_err(err, err_size, "not a bundle: top level is not an object");
		return -EINVAL;
	}
	if (ps.p >= ps.end || *ps.p != '{') {
		ev_jp_fail(&ps, ps.p, ps.p >= ps.end ? "empty input" : "'{' expected");
		return -EINVAL;
	}
	json_t *j = parse_value(&ps);
	if (!j)
		return -EINVAL;
	ev_jp_skip_ws(&ps);
	if (ps.p != ps.end) {
		ev_jp_fail(&ps, ps.p, "end of input expected");
		json_decref(j);
		return -EINVAL;
	}
	if (canon)
		canon->complete = ps.canon && !canon->out->oom;
	*out = j;
	return 0;
}
