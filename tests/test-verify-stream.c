/* verify's one pass (evidence/canon-stream.c) against the tree reader, its
 * oracle: on every stored bundle (valid and invalid), on their key orders
 * reversed at every level, on every prefix of a signed bundle and on
 * generated inputs (deep nesting, escapes, surrogates, \u0000, big
 * numbers, duplicate keys, non-ASCII key order, ids, member types) the
 * stream accepts exactly what the tree reader and the loader accept,
 * writes the tree's canonical bytes and their SHA-512, and verify gives
 * the same verdict, messages and errors through either reader. */
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/cleanup.h"
#include "base/util.h"
#include "tests/lib/bundle-errstr.h"
#include "tests/lib/testlib.h"

#include <dirent.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



static char *tmp, *key, *pub;

static void setup(void)
{
	tmp = agsbx_test_tmpdir("agsbx-verify-stream");
	ck_assert_ptr_nonnull(tmp);
	key = agsbx_path_join(tmp, "k");
	ck_assert_ptr_nonnull(key);
	char fp[64];
	struct agsbx_error ke = { 0 };
	ck_assert_msg(agsbx_keygen(key, "stream@example.invalid", fp, &ke) == 0, "keygen: %s", ke.message);
	ck_assert_int_ge(asprintf(&pub, "%s.pub", key), 0);
}

static void teardown(void)
{
	agsbx_test_rmtree(tmp);
	free(tmp);
	free(key);
	free(pub);
	tmp = key = pub = NULL;
}

/* verify's outcome through one reader: the load's status and message, then
 * the verdict. */
struct outcome {
	int load, verify;
	char err[512], verr[512];
	struct agsbx_verify_result res;
	char created_at[128];
};

static void run(const char *data, size_t len, bool stream, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	json_t *b = NULL;
	uint8_t sha[AGSBX_BUNDLE_SHA512_BYTES];
	bool ok = false;
	o->load = stream ? parse_stream(data, len, &b, sha, &ok, o->err, sizeof o->err)
			 : parse_tree(data, len, &b, sha, &ok, o->err, sizeof o->err);
	if (o->load < 0)
		return;
	struct agsbx_verify_opts opts = { .key_path = pub, .canonical_sha512 = ok ? sha : NULL,
					  .expect_challenge = "nonce" };
	o->verify = verify_str(b, &opts, &o->res, o->verr, sizeof o->verr);
	snprintf(o->created_at, sizeof o->created_at, "%s", ev_jstr(b, "created_at") ? ev_jstr(b, "created_at") : "-");
	json_decref(b);
}

/* The same verdict through both readers. */
static void same_verdict(const char *data, size_t len, const char *what)
{
	struct outcome s, t;
	run(data, len, true, &s);
	run(data, len, false, &t);
	ck_assert_msg(s.load == t.load && strcmp(s.err, t.err) == 0, "%s: load: stream %d \"%s\", tree %d \"%s\"",
		      what, s.load, s.err, t.load, t.err);
	ck_assert_msg(s.verify == t.verify && strcmp(s.verr, t.verr) == 0, "%s: verify error differs", what);
	ck_assert_msg(s.res.status == t.res.status && strcmp(s.res.reason, t.res.reason) == 0,
		      "%s: verdict: stream %d \"%s\", tree %d \"%s\"", what, s.res.status, s.res.reason, t.res.status,
		      t.res.reason);
	ck_assert_msg(memcmp(&s.res, &t.res, sizeof s.res) == 0, "%s: verify results differ", what);
	ck_assert_str_eq(s.created_at, t.created_at);
}

/* The stream accepts what the tree reader accepts; then the same bytes
 * (with and without a skipped member), their SHA-512 and the view. */
static void same_canonical(const char *data, size_t len, const char *skip, const char *what)
{
	json_t *tree = NULL;
	char err[512] = "";
	int tr = parse_str(data, len, &tree, err, sizeof err);
	struct ev_canon_stream o;
	int sr = ev_canon_stream(data, len, skip, &o);
	ck_assert_msg(sr != -ENOMEM, "%s: out of memory", what);
	ck_assert_msg((tr == 0) == (sr == 0), "%s: tree %s (%s), stream %s", what, tr ? "refuses" : "accepts", err,
		      sr ? "refuses" : "accepts");
	if (tr == 0) {
		size_t clen;
		_cleanup_free_ char *c = agsbx_json_canonical(tree, skip, &clen);
		ck_assert_ptr_nonnull(c);
		ck_assert_msg(o.len == clen && memcmp(o.canonical, c, clen) == 0,
			      "%s (skip %s): canonical bytes differ:\n stream %.*s\n tree   %s", what, skip ? skip : "-",
			      (int)(o.len < 400 ? o.len : 400), o.canonical, c);
		uint8_t h[64];
		crypto_hash_sha512(h, (const unsigned char *)c, clen);
		ck_assert_msg(memcmp(h, o.sha512, sizeof h) == 0, "%s: digest differs", what);
		static const char *const top[] = { "created_at", "challenge" };
		for (size_t i = 0; i < AGSBX_ARRAY_SIZE(top); i++)
			ck_assert_msg(json_equal(json_object_get(o.view, top[i]), json_object_get(tree, top[i])) ||
					      (!json_object_get(o.view, top[i]) && !json_object_get(tree, top[i])),
				      "%s: view %s differs", what, top[i]);
		const json_t *ts = json_object_get(tree, "signature"), *vs = json_object_get(o.view, "signature");
		ck_assert_msg(!ts == !vs, "%s: view signature", what);
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)ts, k, v) if (json_is_string(v))
			ck_assert_msg(json_equal(v, json_object_get(vs, k)), "%s: view signature.%s", what, k);
	}
	json_decref(tree);
	ev_canon_stream_clear(&o);
}

static void oracle(const char *data, size_t len, const char *what)
{
	same_canonical(data, len, "signature", what);
	same_canonical(data, len, NULL, what);
	same_verdict(data, len, what);
}

/* Every object's keys in reverse order, at every level. */
static json_t *reversed(const json_t *j)
{
	if (json_is_array(j)) {
		json_t *a = json_array();
		for (size_t i = 0; i < json_array_size(j); i++)
			json_array_append_new(a, reversed(json_array_get(j, i)));
		return a;
	}
	if (!json_is_object(j))
		return json_deep_copy(j);
	size_t n = json_object_size(j), i = 0;
	const char **keys = calloc(n + 1, sizeof *keys);
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)j, k, v) keys[i++] = k;
	qsort(keys, n, sizeof *keys, (int (*)(const void *, const void *))strcmp);
	json_t *o = json_object();
	for (i = n; i-- > 0;) /* sorted, then backwards: the worst order */
		json_object_set_new(o, keys[i], reversed(json_object_get(j, keys[i])));
	free(keys);
	return o;
}

static void oracle_json(const json_t *j, size_t flags, const char *what)
{
	_cleanup_free_ char *text = json_dumps(j, flags);
	ck_assert_ptr_nonnull(text);
	oracle(text, strlen(text), what);
}

START_TEST(test_stored_bundles)
{
	static const char *const dirs[] = { "tests/data/bundles", "tests/data/bundles/invalid" };
	int files = 0;
	for (size_t d = 0; d < AGSBX_ARRAY_SIZE(dirs); d++) {
		_cleanup_free_ char *dir = agsbx_test_source_path(dirs[d]);
		DIR *dp = opendir(dir);
		ck_assert_msg(dp, "%s", dir);
		for (struct dirent *e; (e = readdir(dp));) {
			size_t nl = strlen(e->d_name);
			if (nl < 6 || strcmp(e->d_name + nl - 5, ".json") != 0)
				continue;
			_cleanup_free_ char *path = agsbx_path_join(dir, e->d_name), *data = NULL;
			size_t len;
			ck_assert_int_eq(agsbx_read_file(path, 1 << 26, &data, &len), 0);
			oracle(data, len, path);
			files++;
			json_t *b = json_loadb(data, len, 0, NULL);
			if (!json_is_object(b)) {
				json_decref(b);
				continue;
			}
			json_t *r = reversed(b); /* the same bundle, unsorted everywhere (still signed) */
			oracle_json(r, JSON_INDENT(1), path);
			oracle_json(r, JSON_COMPACT, path);
			json_decref(r);
			json_decref(b);
		}
		closedir(dp);
	}
	ck_assert_int_ge(files, 30);
}
END_TEST

/* Every prefix of a signed bundle is refused by both; the whole of it
 * verifies through both. */
START_TEST(test_prefixes)
{
	_cleanup_free_ char *path = agsbx_test_source_path("tests/data/bundles/minimal-signed.json"), *data = NULL;
	size_t len;
	ck_assert_int_eq(agsbx_read_file(path, 1 << 20, &data, &len), 0);
	for (size_t n = 0; n <= len; n++) {
		char what[64];
		snprintf(what, sizeof what, "prefix %zu of %zu", n, len);
		same_canonical(data, n, "signature", what);
		same_verdict(data, n, what);
	}
}
END_TEST

#define HEAD "{\"schema\": \"" AGSBX_BUNDLE_SCHEMA "\", "

/* Members after the schema; each case both readers agree on. */
static const char *const generated[] = {
	HEAD "\"host\": {\"b\": 1, \"a\": 2}}",
	HEAD "\"host\": {\"\\u00e9\": 1, \"z\": 2, \"e\": 3, \"\xc3\xa8\": 4}}",
	HEAD "\"host\": {\"\xc3\xa9\": 1, \"\\u00e9\": 2}}",               /* a duplicate through an escape */
	HEAD "\"host\": {\"\\n\": 1, \"A\": 2, \"\\\\\": 3, \"\\u007f\": 4, \"\\u001f\": 5, \"\x7f\": 6}}",
	HEAD "\"host\": {\"\\n\": 1, \"A\": 2, \"\\\\\": 3, \"\\u007f\": 4, \"\\u001f\": 5}}",
	HEAD "\"host\": {\"a\": {\"y\": [1, {\"d\": 1, \"c\": 2}], \"x\": 0}}}",
	HEAD "\"host\": {\"s\": \"\\ud83d\\ude00 \\u00e9 \\/ \\\"q\\\" \\u007f \x7f \\u2028 \\b\\f\\n\\r\\t\"}}",
	HEAD "\"host\": {\"s\": \"\\ud83d\"}}",
	HEAD "\"host\": {\"s\": \"\\ude00\"}}",
	HEAD "\"host\": {\"s\": \"\\ud83d\\u0041\"}}",
	HEAD "\"host\": {\"s\": \"\\u0000\"}}",
	HEAD "\"host\": {\"\\u0000\": 1}}",
	HEAD "\"host\": {\"s\": \"raw \x01 control\"}}",
	HEAD "\"host\": {\"s\": \"bad \xc3\x28 utf8\"}}",
	HEAD "\"host\": {\"n\": [9007199254740992, -9007199254740992, 0, -1, 10000000000000000]}}",
	HEAD "\"host\": {\"n\": 9007199254740993}}",
	HEAD "\"host\": {\"n\": -0}}",
	HEAD "\"host\": {\"n\": 1.0}}",
	HEAD "\"host\": {\"n\": 1e3}}",
	HEAD "\"host\": {\"n\": 01}}",
	HEAD "\"host\": {\"n\": -}}",
	HEAD "\"host\": {}, \"host\": {}}",
	HEAD "\"host\": {\"a\": 1, \"b\": 2, \"a\": 3}}",
	HEAD "\"host\": {\"b\": 1, \"a\": 2, \"b\": 3}}",
	HEAD "\"host\": {\"a\": [{\"x\": 1, \"x\": 1}]}}",
	HEAD "\"signature\": 1, \"signature\": 2}",
	HEAD "\"signature\": {\"format\": \"sshsig\", \"namespace\": \"n\", \"hash\": \"sha512\", \"armored\": \"a\", "
	     "\"public_key\": \"p\", \"fingerprint\": \"f\", \"x\": {\"b\": 1, \"a\": 2, \"b\": 3}}}",
	HEAD "\"signature\": {\"format\": \"sshsig\", \"namespace\": \"n\", \"hash\": \"sha512\", \"armored\": \"a\", "
	     "\"public_key\": \"p\", \"fingerprint\": \"f\", \"x\": {\"b\": 1, \"a\": 2}}}",
#define SIG "{\"format\": \"sshsig\", \"namespace\": \"n\", \"hash\": \"sha512\", \"armored\": \"a\", " \
	    "\"public_key\": \"p\", \"fingerprint\": \"f\"}"
	HEAD "\"signature\": " SIG ", \"signature\": " SIG "}",
	HEAD "\"signature\": " SIG ", \"host\": {}}",
	HEAD "\"signature\": {\"format\": \"sshsig\", \"namespace\": \"n\"}}",
	HEAD "\"signature\": \"sshsig\"}",
	HEAD "\"providers\": [{\"id\": \"a\"}, {\"id\": \"\\u0061\"}]}",
	HEAD "\"providers\": [{\"id\": \"b\"}, {\"id\": \"a\"}]}",
	HEAD "\"providers\": [{\"id\": \"A\"}]}",
	HEAD "\"providers\": [{\"id\": \"\"}]}",
	HEAD "\"providers\": [{\"id\": 1}]}",
	HEAD "\"providers\": [{\"verdict\": \"conformant\"}]}",
	HEAD "\"providers\": [\"a\"]}",
	HEAD "\"providers\": {}}",
	HEAD "\"providers\": [{\"id\": \"a\", \"verdict\": \"nope\"}]}",
	HEAD "\"providers\": [{\"id\": \"b\", \"checks\": [{\"id\": \"x\"}, {\"id\": \"x\"}]}]}",
	HEAD "\"providers\": [{\"id\": \"a\", \"checks\": [{\"id\": \"x\"}]}, {\"id\": \"b\", \"checks\": [{\"id\": \"x\"}]}]}",
	HEAD "\"providers\": [{\"id\": \"a\", \"checks\": [{\"id\": \"x\", \"observations\": [{\"role\": \"judge\"}]}]}]}",
	HEAD "\"providers\": [{\"id\": \"a\", \"checks\": [{\"id\": \"x\", \"observations\": [{\"exit_status\": \"0\"}]}]}]}",
	HEAD "\"providers\": [{\"id\": \"a\", \"checks\": [{\"id\": \"x\", \"observations\": [1]}]}]}",
	HEAD "\"providers\": [{\"checks\": [{\"id\": \"x\"}], \"id\": \"a\", \"x_new\": [{\"id\": \"x\"}, {\"id\": \"x\"}]}]}",
	HEAD "\"tool\": {\"name\": 1}}",
	HEAD "\"tool\": {\"name\": \"agsbx\"}, \"created_at\": \"2026\", \"challenge\": \"nonce\"}",
	HEAD "\"challenge\": 7}",
	HEAD "\"context\": {\"simulations\": [{\"providers\": [\"a\", 1]}]}}",
	HEAD "\"x_unknown\": {\"providers\": 1, \"id\": \"Q\"}}",
	"{\"created_at\": \"2026\"}",
	"{\"schema\": \"agsbx-evidence/v0\"}",
	"{\"schema\": 1}",
	"[" HEAD "\"host\": {}}]",
	HEAD "\"host\": {}} x",
	HEAD "\"host\": {}}\n \t\r",
	" \n" HEAD "\"host\" :\t{ \"a\" : [ 1 , 2 ] }\r\n}",
	HEAD "\"host\": {\"a\" 1}}",
	HEAD "\"host\": {\"a\": 1,}}",
	HEAD "\"host\": [1 2]}",
	HEAD "\"host\": tru}",
	HEAD "\"host\": \"\\x\"}",
	"",
	"{}",
};

START_TEST(test_generated)
{
	oracle(generated[_i], strlen(generated[_i]), generated[_i]);
}
END_TEST

/* Nesting around jq's limit, arrays and objects (an object and its key
 * count two), sorted and not. */
START_TEST(test_nesting)
{
	for (int k = 120; k <= 260; k++) {
		struct sbuf b = { 0 };
		sbuf_puts(&b, HEAD "\"host\": {\"z\": 1, \"d\": ");
		for (int i = 0; i < k; i++)
			sbuf_puts(&b, _i ? "{\"b\": 0, \"a\": " : "[");
		sbuf_puts(&b, "0");
		for (int i = 0; i < k; i++)
			sbuf_puts(&b, _i ? "}" : "]");
		sbuf_puts(&b, "}}");
		char what[64];
		snprintf(what, sizeof what, "%d nested %s", k, _i ? "objects" : "arrays");
		oracle(b.p, b.len, what);
		sbuf_clear(&b);
	}
}
END_TEST

/* Signed bundles: sorted (the streamed digest), unsorted (reordered, then
 * hashed) and big (past the hashing thread's ring many times), each valid
 * through both readers; a changed byte invalid through both. */
START_TEST(test_signed)
{
	_cleanup_free_ char *path = agsbx_test_source_path("tests/data/bundles/full.json");
	struct agsbx_error err = { 0 };
	_cleanup_json_ json_t *b = NULL;
	ck_assert_msg(agsbx_bundle_load(path, &b, &err) == 0, "%s", err.message);
	json_t *pad = json_array();
	for (size_t n = 1; n < (2u << 20); n = n * 3 / 2 + 1) {
		char *v = malloc(n + 1);
		memset(v, 'a' + (int)(n % 26), n);
		v[n] = '\0';
		v[n / 2] = n % 3 ? 0x7f : '"';
		json_array_append_new(pad, json_string(v));
		free(v);
	}
	json_object_set_new(b, "x_padding", pad);
	json_object_set_new(b, "challenge", json_string("nonce"));
	ck_assert_msg(agsbx_bundle_sign(b, key, &err) == 0, "sign: %s", err.message);
	_cleanup_json_ json_t *r = reversed(b);
	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *text = json_dumps(i ? r : b, i ? JSON_INDENT(2) : JSON_INDENT(2) | JSON_SORT_KEYS);
		size_t len = strlen(text);
		oracle(text, len, i ? "signed, unsorted" : "signed");
		struct outcome o;
		run(text, len, true, &o);
		ck_assert_int_eq(o.res.status, AGSBX_VERIFY_OK);
		char *x = strstr(text, "\"aaaa"); /* one byte of the signed content */
		ck_assert_ptr_nonnull(x);
		x[3] = 'b';
		same_verdict(text, len, "changed");
		run(text, len, true, &o);
		ck_assert_int_eq(o.res.status, AGSBX_VERIFY_INVALID);
	}
}
END_TEST

/* The stream decides only sha512 signatures; any other "hash" member
 * goes to the tree reader (the whole tree comes back), same verdict. */
START_TEST(test_other_hash_falls_back)
{
	_cleanup_free_ char *path = agsbx_test_source_path("tests/data/bundles/signed.json");
	struct agsbx_error err = { 0 };
	_cleanup_json_ json_t *b = NULL;
	ck_assert_msg(agsbx_bundle_load(path, &b, &err) == 0, "%s", err.message);
	json_object_set_new(json_object_get(b, "signature"), "hash", json_string("sha256"));
	_cleanup_free_ char *text = json_dumps(b, JSON_SORT_KEYS);
	oracle(text, strlen(text), "sha256");
	json_t *got = NULL;
	uint8_t sha[64];
	bool ok;
	ck_assert_int_eq(parse_stream(text, strlen(text), &got, sha, &ok, err.message, sizeof err.message), 0);
	ck_assert_ptr_nonnull(json_object_get(got, "providers")); /* the tree */
	json_decref(got);
	json_object_set_new(json_object_get(b, "signature"), "hash", json_string("sha512"));
	free(text);
	text = json_dumps(b, JSON_SORT_KEYS);
	ck_assert_int_eq(parse_stream(text, strlen(text), &got, sha, &ok, err.message, sizeof err.message), 0);
	ck_assert(ok);
	ck_assert_ptr_null(json_object_get(got, "providers")); /* the view */
	json_decref(got);
}
END_TEST

int main(void)
{
	if (!getenv("AGSBX_SOURCE_DIR"))
		setenv("AGSBX_SOURCE_DIR", ".", 0);
	if (sodium_init() < 0)
		return 1;
	Suite *s = suite_create("verify-stream");
	TCase *t = tcase_create("oracle");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_stored_bundles);
	tcase_add_test(t, test_prefixes);
	tcase_add_loop_test(t, test_generated, 0, (int)AGSBX_ARRAY_SIZE(generated));
	tcase_add_loop_test(t, test_nesting, 0, 2);
	tcase_add_test(t, test_signed);
	tcase_add_test(t, test_other_hash_falls_back);
	suite_add_tcase(s, t);
	return agsbx_test_run_suite(s);
}
