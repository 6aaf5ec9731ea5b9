/* libFuzzer target: any bytes through the bundle loader, and whatever loads
 * through canonicalisation, verification, report, diff and matrix.
 * Properties checked (a violation aborts):
 *  - the canonical form of a loaded bundle loads again and is a fixed point;
 *  - a bundle diffed with itself has no change and no regression;
 *  - renderers never fail on a loaded bundle; the JUnit report is
 *    well-formed XML (prolog, nesting, quoting, escapes, no forbidden
 *    control character) and the TAP report has only TAP lines;
 *  - the strict reader (evidence/parse.c) agrees with jansson's json_loadb:
 *    whatever it accepts jansson accepts as an equal value, and whatever
 *    jansson accepts that obeys the bundle rules (an object, integers
 *    within +-2^53, no -0, well within jq 1.6's nesting limit) it accepts too;
 *  - the canonical form the strict reader writes while parsing (verify's
 *    one pass) is, whenever it says it is complete, byte for byte the
 *    canonical form of the tree it built (with and without a skipped key),
 *    and it is complete for the tree's own canonical form;
 *  - verify's one pass without a tree (evidence/canon-stream.c) accepts
 *    exactly what the tree reader and the loader accept, writes the tree's
 *    canonical bytes (with and without the skipped signature) and their
 *    SHA-512, and verify's verdict, reason and messages are the same
 *    through either reader. */
#include "evidence/evidence.h"
#include "evidence/internal.h"
#include "tests/lib/bundle-errstr.h"

#include <ctype.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static FILE *sink(void)
{
	static FILE *f;
	if (!f)
		f = fopen("/dev/null", "we");
	if (!f)
		abort();
	return f;
}

static void check_canonical(const json_t *b)
{
	size_t len, len2;
	char *c = agsbx_bundle_canonical(b, &len);
	if (!c)
		abort(); /* a loaded bundle is always canonicalisable */
	json_t *again = NULL;
	struct agsbx_error err = { 0 };
	if (agsbx_bundle_parse(c, len, &again, &err) < 0)
		abort();
	char *c2 = agsbx_bundle_canonical(again, &len2);
	if (!c2 || len != len2 || memcmp(c, c2, len) != 0)
		abort();
	free(c2);
	json_decref(again);
	free(c);
}

static bool integers_only(const json_t *j, int depth, int *max_depth)
{
	if (depth > *max_depth)
		*max_depth = depth;
	if (json_is_real(j))
		return false;
	if (json_is_integer(j))
		return json_integer_value(j) <= AGSBX_JSON_INT_MAX && json_integer_value(j) >= -AGSBX_JSON_INT_MAX;
	const char *k;
	json_t *v;
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v) if (!integers_only(v, depth + 1, max_depth)) return false;
	}
	for (size_t i = 0; json_is_array(j) && i < json_array_size(j); i++)
		if (!integers_only(json_array_get(j, i), depth + 1, max_depth))
			return false;
	return true;
}

static bool has_negative_zero(const char *s, size_t len)
{
	bool in_str = false;
	for (size_t i = 0; i < len; i++) {
		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = false;
		} else if (s[i] == '"') {
			in_str = true;
		} else if (s[i] == '-' && i + 1 < len && s[i + 1] == '0') {
			return true;
		}
	}
	return false;
}

/* What the reader writes while parsing, against the tree's canonical form. */
static void streamed_canonical(const char *data, size_t size, const char *skip_key)
{
	struct sbuf b = { 0 };
	struct ev_canon_out canon = { .out = &b, .skip_key = skip_key };
	json_t *j = NULL;
	char err[512];
	if (ev_json_parse_strict(data, size, &j, &canon, err, sizeof err) == 0) {
		size_t len;
		char *c = agsbx_json_canonical(j, skip_key, &len);
		if (canon.complete && (!c || b.len != len || memcmp(b.p, c, len) != 0))
			abort();
		if (c && !skip_key) { /* sorted input: the streamed form must be complete */
			struct sbuf b2 = { 0 };
			struct ev_canon_out again = { .out = &b2 };
			json_t *j2 = NULL;
			if (ev_json_parse_strict(c, len, &j2, &again, err, sizeof err) < 0 || !again.complete ||
			    b2.len != len || memcmp(b2.p, c, len) != 0)
				abort();
			json_decref(j2);
			sbuf_clear(&b2);
		}
		free(c);
	} else if (canon.complete) {
		abort();
	}
	json_decref(j);
	sbuf_clear(&b);
}

/* The one pass against the tree: same acceptance, bytes and digest. */
static void stream_canonical(const char *data, size_t size, const char *skip_key)
{
	json_t *tree = NULL;
	char err[512];
	int tr = parse_str(data, size, &tree, err, sizeof err);
	struct ev_canon_stream o;
	int sr = ev_canon_stream(data, size, skip_key, &o);
	if (sr == -ENOMEM) { /* says nothing about the input */
		json_decref(tree);
		return;
	}
	if ((tr == 0) != (sr == 0))
		abort();
	if (tr == 0) {
		size_t len;
		uint8_t h[64];
		char *c = agsbx_json_canonical(tree, skip_key, &len);
		if (!c || len != o.len || memcmp(c, o.canonical, len) != 0)
			abort();
		crypto_hash_sha512(h, (const unsigned char *)c, len);
		if (memcmp(h, o.sha512, sizeof h) != 0)
			abort();
		free(c);
	}
	json_decref(tree);
	ev_canon_stream_clear(&o);
}

struct outcome {
	int load, verify;
	char err[512], verr[512];
	struct agsbx_verify_result res;
};

static void verify_through(const char *data, size_t size, bool stream, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	json_t *b = NULL;
	uint8_t sha[64];
	bool ok = false;
	o->load = stream ? parse_stream(data, size, &b, sha, &ok, o->err, sizeof o->err)
			 : parse_tree(data, size, &b, sha, &ok, o->err, sizeof o->err);
	if (o->load < 0)
		return;
	struct agsbx_verify_opts opts = { .canonical_sha512 = ok ? sha : NULL, .expect_challenge = "c" };
	o->verify = verify_str(b, &opts, &o->res, o->verr, sizeof o->verr);
	json_decref(b);
}

/* verify's verdict through the one pass and through the tree. */
static void stream_verdict(const char *data, size_t size)
{
	struct outcome s, t;
	verify_through(data, size, true, &s);
	verify_through(data, size, false, &t);
	if (s.load != t.load || strcmp(s.err, t.err) != 0 || s.verify != t.verify || strcmp(s.verr, t.verr) != 0 ||
	    memcmp(&s.res, &t.res, sizeof s.res) != 0)
		abort();
}

static void differential(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *ref = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	json_t *mine = NULL;
	char err[512];
	if (ev_json_parse_strict((const char *)data, size, &mine, NULL, err, sizeof err) == 0) {
		if (!ref || !json_equal(ref, mine))
			abort();
	} else {
		int depth = 0;
		if (strchr(err, '\n'))
			abort(); /* errors are one line */
		/* jansson stops at a NUL byte as if the input ended there (and
		 * may then accept a truncated document); we reject NUL bytes */
		if (ref && json_is_object(ref) && integers_only(ref, 0, &depth) && depth < 128 &&
		    !has_negative_zero((const char *)data, size) && !memchr(data, '\0', size))
			abort();
	}
	json_decref(ref);
	json_decref(mine);
}

/* ---- well-formedness of what the renderers write ---- */

static char *render_mem(const json_t *b, const char *format, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		abort();
	if (agsbx_report_render(b, format, f) < 0)
		abort();
	fclose(f);
	return buf;
}

/* XML 1.0 well-formedness as far as the JUnit writer uses it: one prolog,
 * elements nested properly, attribute values quoted without a raw '<', no
 * raw '<' or bare '&' in text, no control character XML forbids. */
static bool entity_ok(const char *p)
{
	static const char *const ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	for (size_t i = 0; i < sizeof ents / sizeof ents[0]; i++)
		if (strncmp(p, ents[i], strlen(ents[i])) == 0)
			return true;
	const char *q = p + 1;
	if (*q++ != '#')
		return false;
	bool hex = *q == 'x';
	q += hex;
	const char *digits = q;
	while (hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q))
		q++;
	return q > digits && *q == ';';
}

static const char *xml_text(const char *p, char stop)
{
	for (; *p && *p != stop; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || (*p == '<' && stop != '<') ||
		    (*p == '&' && !entity_ok(p)))
			abort();
	}
	return p;
}

static void check_xml(const char *x)
{
	static const char prolog[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
	if (strncmp(x, prolog, sizeof prolog - 1) != 0)
		abort();
	const char *p = x + sizeof prolog - 1;
	char stack[64][64];
	int depth = 0, roots = 0;
	while (*p) {
		p = xml_text(p, '<');
		if (!*p)
			break;
		bool close = p[1] == '/';
		const char *name = p + 1 + close, *e = name;
		while (isalnum((unsigned char)*e) || *e == '_' || *e == '-')
			e++;
		size_t nl = (size_t)(e - name);
		if (nl == 0 || nl >= 64)
			abort();
		while (*e && *e != '>' && !(e[0] == '/' && e[1] == '>')) {
			if (*e == '"')
				e = xml_text(e + 1, '"');
			if (!*e || *e == '<')
				abort();
			e++;
		}
		if (!*e)
			abort();
		bool empty = *e == '/';
		if (!close && depth == 0)
			roots++;
		if (close) {
			if (depth == 0 || strlen(stack[depth - 1]) != nl || strncmp(stack[depth - 1], name, nl) != 0)
				abort();
			depth--;
		} else if (!empty) {
			if (depth == 64)
				abort();
			memcpy(stack[depth], name, nl);
			stack[depth++][nl] = '\0';
		}
		p = e + (empty ? 2 : 1);
	}
	if (depth != 0 || roots != 1)
		abort();
}

/* TAP 13: the version, the plan, and then only test lines, comments and
 * YAML blocks indented under a test; a test line is one line. */
static void check_tap(const char *t)
{
	if (strncmp(t, "TAP version 13\n1..", 18) != 0)
		abort();
	for (const char *l = t; *l;) {
		const char *nl = strchr(l, '\n');
		if (!nl)
			abort(); /* every line ends */
		bool ok = strncmp(l, "ok ", 3) == 0 || strncmp(l, "not ok ", 7) == 0 || l[0] == '#' ||
			  strncmp(l, "  ", 2) == 0 || strncmp(l, "1..", 3) == 0 || strncmp(l, "TAP version", 11) == 0;
		if (!ok)
			abort();
		l = nl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	differential(data, size);
	streamed_canonical((const char *)data, size, NULL);
	streamed_canonical((const char *)data, size, "signature");
	stream_canonical((const char *)data, size, "signature");
	stream_canonical((const char *)data, size, NULL);
	stream_verdict((const char *)data, size);

	json_t *b = NULL;
	struct agsbx_error err = { 0 };
	if (agsbx_bundle_parse((const char *)data, size, &b, &err) < 0)
		return 0;
	check_canonical(b);

	struct agsbx_verify_result res;
	if (agsbx_bundle_verify(b, NULL, &res, &err) < 0)
		abort(); /* no trust source given: never a bad-input error */
	if (res.status == AGSBX_VERIFY_OK)
		abort(); /* nothing is trusted without an anchor */

	static const char *const formats[] = { "text", "markdown", "junit", "tap" };
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
		if (agsbx_report_render(b, formats[i], sink()) < 0)
			abort();
	size_t rlen;
	char *r = render_mem(b, "junit", &rlen);
	if (strlen(r) != rlen)
		abort(); /* no NUL inside */
	check_xml(r);
	free(r);
	r = render_mem(b, "tap", &rlen);
	check_tap(r);
	free(r);

	json_t *d = agsbx_bundle_diff(b, b);
	if (!d || json_integer_value(json_object_get(d, "changes")) != 0 ||
	    json_integer_value(json_object_get(d, "regressions")) != 0)
		abort();
	json_decref(d);
	json_t *empty = json_pack("{s:s}", "schema", AGSBX_BUNDLE_SCHEMA);
	d = agsbx_bundle_diff(empty, b);
	if (!d || agsbx_diff_render(d, "text", sink()) < 0 || agsbx_diff_render(d, "markdown", sink()) < 0)
		abort();
	json_decref(d);

	const json_t *bundles[] = { b, empty };
	const char *names[] = { "fuzz", "empty" };
	json_t *m = agsbx_matrix_build(bundles, names, 2);
	if (!m || agsbx_matrix_render(m, "markdown", sink()) < 0)
		abort();
	json_decref(m);
	json_decref(empty);
	json_decref(b);
	return 0;
}
