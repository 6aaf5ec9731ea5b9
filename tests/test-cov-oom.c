/* Out of memory in evidence/: parsing, canonical form, rendering, diff,
 * matrix and verification under a real allocation limit. Each step forks
 * a child that lowers its own RLIMIT_DATA (the kernel then refuses brk and
 * private mappings past it, so malloc really returns NULL) to its current
 * data size plus a headroom, and runs one operation; the headroom grows a
 * page a step, so the refusal lands at a different allocation each time.
 * Whatever the step, the operation either gives exactly what it gives
 * without a limit or fails cleanly (-ENOMEM, NULL, or an "out of memory"
 * error): never a crash, never a partial or different result passed off
 * as a success, never another error (a valid bundle called invalid). The
 * sweep must see both outcomes, or it tested nothing. */
#include "base/cleanup.h"
#include "base/util.h"
#include "base/escape.h"
#include "base/strv.h"
#include "evidence/evidence.h"
#include "probes/internal.h"
#include "probes/probes.h"
#include "tests/lib/oom-inject.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

enum { OUT_SAME = 0, OUT_CLEAN_FAIL = 1, OUT_WRONG = 2, OUT_SAME_UNINJECTED = 4 };

/* The second injector (tests/lib/oom-inject.c): the Nth allocation of the
 * operation fails, once. The kernel's limit above only bites where the
 * heap must grow; this one reaches every allocation site in turn. malloc,
 * calloc and realloc are this executable's, passing through to glibc's own
 * (the __libc_ entry points glibc exports for exactly this); only a child
 * arms them. */
static bool quiet; /* set by the parent: enough examples printed */

#define STEP 4096
#define MAX_STEPS 1500
#define SETTLED 12 /* successes in a row that end a sweep */
#define NTH_EVERY 2000 /* every allocation up to this one, then a stride */

static char *full, *minimal, *signed_text;
static size_t full_n, minimal_n, signed_n;
static json_t *full_b, *minimal_b, *signed_b;
static char *pub_key, *signers_path, *priv_key, *full_path, *signed_path;

static char *read_data(const char *rel, size_t *n)
{
	_cleanup_free_ char *path = agsbx_test_source_path(rel);
	char *text = NULL;
	ck_assert_int_eq(agsbx_read_file(path, 1 << 20, &text, n), 0);
	return text;
}

static json_t *parse_ok(const char *text, size_t n)
{
	json_t *b = NULL;
	struct agsbx_error err = { 0 };
	ck_assert_msg(agsbx_bundle_parse(text, n, &b, &err) == 0, "fixture: %s", err.message);
	return b;
}

static void setup(void)
{
	full = read_data("tests/data/bundles/full.json", &full_n);
	minimal = read_data("tests/data/bundles/minimal.json", &minimal_n);
	signed_text = read_data("tests/data/bundles/signed.json", &signed_n);
	full_b = parse_ok(full, full_n);
	minimal_b = parse_ok(minimal, minimal_n);
	signed_b = parse_ok(signed_text, signed_n);
	pub_key = agsbx_test_source_path("tests/data/bundles/keys/fixture_ed25519.pub");
	signers_path = agsbx_test_source_path("tests/data/bundles/keys/allowed_signers");
	priv_key = agsbx_test_source_path("tests/data/bundles/keys/fixture_ed25519");
	full_path = agsbx_test_source_path("tests/data/bundles/full.json");
	signed_path = agsbx_test_source_path("tests/data/bundles/signed.json");
}

static void teardown(void)
{
	json_decref(full_b);
	json_decref(minimal_b);
	json_decref(signed_b);
	free(full);
	free(minimal);
	free(signed_text);
	free(pub_key);
	free(signers_path);
	free(priv_key);
	free(full_path);
	free(signed_path);
}

static long vm_data_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmData: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* An operation under test: writes what it produced to out (a fixed
 * buffer, no allocation of its own) and returns 0, or returns < 0 with a
 * reason in why. */
struct op {
	const char *name;
	int (*run)(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n);
	const void *arg;
	/* known to degrade silently when an allocation fails (listed in the
	 * report for fixing): differences are printed, fail only under
	 * AGSBX_OOM_STRICT=1. Never a crash, for any op. */
	bool lenient;
};

static bool clean_failure(int r, const char *why)
{
	return r == -ENOMEM || strstr(why, "out of memory") != NULL || strstr(why, strerror(ENOMEM)) != NULL;
}

/* Runs op once in a child: under RLIMIT_DATA of its size plus headroom
 * (limited), or with allocation number nth failing (nth > 0); OUT_* or
 * 128+signal. */
static int run_child(const struct op *op, rlim_t headroom, bool limited, long nth, const char *ref, size_t ref_n)
{
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t cap = ref_n + 65536;
		char *out = malloc(cap);
		char why[512] = "";
		size_t len = 0;
		if (!out)
			_exit(3);
		mallopt(M_TOP_PAD, 0);
		mallopt(M_MMAP_THRESHOLD, 64 * 1024);
		malloc_trim(0);
		struct rlimit old, lim;
		getrlimit(RLIMIT_DATA, &old);
		long now = vm_data_bytes();
		if (now < 0)
			_exit(3);
		lim.rlim_cur = (rlim_t)now + headroom;
		lim.rlim_max = old.rlim_max;
		if (limited && setrlimit(RLIMIT_DATA, &lim) < 0)
			_exit(3);
		agsbx_oom_arm(nth);
		int r = op->run(op->arg, out, cap, &len, why, sizeof why);
		agsbx_oom_disarm();
		/* the counters (--coverage) and stdio need memory at exit */
		setrlimit(RLIMIT_DATA, &old);
		int code = OUT_SAME;
		if (r < 0 && clean_failure(r, why))
			code = OUT_CLEAN_FAIL;
		else if (r < 0) {
			if (!quiet)
				fprintf(stderr, "%s at +%lu/#%ld: unexpected failure %d: %s\n", op->name, (unsigned long)headroom, nth, r,
				why);
			code = OUT_WRONG;
		} else if (len != ref_n || memcmp(out, ref, len) != 0) {
			if (!quiet)
				fprintf(stderr, "%s at +%lu/#%ld: a success with a different result (%zu bytes, want %zu)\n",
				op->name, (unsigned long)headroom, nth, len, ref_n);
			if (getenv("COV_OOM_DEBUG"))
				fprintf(stderr, "got:\n%.*s\nwant:\n%.*s\n", (int)len, out, (int)ref_n, ref);
			code = OUT_WRONG;
		}
		exit(code == OUT_SAME && nth && !agsbx_oom_injected() ? OUT_SAME_UNINJECTED : code);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void sweep(const struct op *op)
{
	/* the reference: the same operation without a limit, in the same way */
	size_t cap = 4u << 20, ref_n = 0;
	char *ref = malloc(cap);
	char why[512] = "";
	ck_assert_ptr_nonnull(ref);
	ck_assert_msg(op->run(op->arg, ref, cap, &ref_n, why, sizeof why) == 0, "%s: %s", op->name, why);
	ck_assert_int_eq(run_child(op, 0, false, 0, ref, ref_n), OUT_SAME);
	int fails = 0, sames = 0, run = 0;
	for (int k = 0; k < MAX_STEPS && run < SETTLED; k++) {
		int o = run_child(op, (rlim_t)k * STEP, true, 0, ref, ref_n);
		ck_assert_msg(o == OUT_SAME || o == OUT_CLEAN_FAIL || (op->lenient && o == OUT_WRONG),
			      "%s at +%d pages: outcome %d%s", op->name, k, o, o > 128 ? " (killed by a signal)" : "");
		fails += o == OUT_CLEAN_FAIL;
		sames += o == OUT_SAME;
		run = o == OUT_SAME ? run + 1 : 0;
	}
	/* the heap may hold enough free space for the whole operation: that
	 * this sweep injected something is not required, the next one's is */
	ck_assert_msg(run >= SETTLED, "%s: never succeeded under a limit (%d successes, %d failures)", op->name, sames,
		      fails);
	/* every allocation in turn (a stride past the first few thousand).
	 * Never a crash. A result that differs or an error that does not say
	 * "out of memory" fails the test, except for a lenient op (see struct
	 * op) where it is printed and counted. */
	bool strict = !op->lenient || (getenv("AGSBX_OOM_STRICT") && strcmp(getenv("AGSBX_OOM_STRICT"), "1") == 0);
	int wrong = 0, rlimit_fails = fails;
	fails = 0;
	long nth = 1;
	for (;; nth += nth < NTH_EVERY ? 1 : nth / NTH_EVERY) {
		int o = run_child(op, 0, false, nth, ref, ref_n);
		ck_assert_msg(o == OUT_SAME || o == OUT_CLEAN_FAIL || o == OUT_SAME_UNINJECTED || o == OUT_WRONG,
			      "%s with allocation #%ld failing: outcome %d%s", op->name, nth, o,
			      o > 128 ? " (killed by a signal)" : "");
		ck_assert_msg(!strict || o != OUT_WRONG, "%s with allocation #%ld failing: a different result or error",
			      op->name, nth);
		fails += o == OUT_CLEAN_FAIL;
		wrong += o == OUT_WRONG;
		quiet = wrong >= 3;
		if (o == OUT_SAME_UNINJECTED)
			break;
	}
	if (wrong)
		fprintf(stderr, "%s: %d of %ld failed allocations gave a different result or error (see above)\n",
			op->name, wrong, nth - 1);
	quiet = false;
	ck_assert_msg(fails > 0, "%s: no failed allocation made it fail (%ld allocations; %d under the limit)",
		      op->name, nth, rlimit_fails);
	free(ref);
}

/* ---- the operations ----------------------------------------------------- */

/* Into a fixed buffer: fmemopen without stdio's own buffer. It may itself
 * run out of memory under the limit (NULL: the op fails cleanly). */
static FILE *fixed_stream(char *out, size_t cap)
{
	FILE *f = fmemopen(out, cap, "w");
	if (f)
		setvbuf(f, NULL, _IONBF, 0);
	return f;
}

#define STREAM_OR_ENOMEM(f, why, why_n)                                  \
	do {                                                             \
		if (!(f)) {                                              \
			snprintf(why, why_n, "out of memory (test stream)"); \
			return -ENOMEM;                                  \
		}                                                        \
	} while (0)

static int finish_stream(FILE *f, int r, size_t *len, char *why, size_t why_n)
{
	long pos = ftell(f);
	fclose(f);
	*len = pos > 0 ? (size_t)pos : 0;
	if (r < 0)
		snprintf(why, why_n, "%s", strerror(-r));
	return r;
}

static int op_parse(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	(void)arg;
	json_t *b = NULL;
	struct agsbx_error e = { 0 };
	int r = agsbx_bundle_parse(full, full_n, &b, &e);
	if (e.reason) /* the evidence.h record, into the harness's buffer */
		snprintf(why, why_n, "%s", e.message);
	if (r < 0)
		return r;
	/* the parsed bundle, as its canonical form */
	size_t n = 0;
	char *c = agsbx_json_canonical(b, NULL, &n);
	json_decref(b);
	if (!c) {
		snprintf(why, why_n, "out of memory (canonical)");
		return -ENOMEM;
	}
	*len = n < cap ? n : cap;
	memcpy(out, c, *len);
	free(c);
	return 0;
}

static int op_canonical(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	size_t n = 0;
	char *c = agsbx_json_canonical((const json_t *)arg, "signature", &n);
	if (!c) {
		snprintf(why, why_n, "%s", strerror(errno));
		return -errno;
	}
	*len = n < cap ? n : cap;
	memcpy(out, c, *len);
	free(c);
	return 0;
}

static int op_report(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	FILE *f = fixed_stream(out, cap);
	STREAM_OR_ENOMEM(f, why, why_n);
	return finish_stream(f, agsbx_report_render(full_b, (const char *)arg, f), len, why, why_n);
}

static int op_diff(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	json_t *d = agsbx_bundle_diff(minimal_b, full_b);
	if (!d) {
		snprintf(why, why_n, "out of memory (diff)");
		return -ENOMEM;
	}
	FILE *f = fixed_stream(out, cap);
	if (!f)
		json_decref(d);
	STREAM_OR_ENOMEM(f, why, why_n);
	int r = agsbx_diff_render(d, (const char *)arg, f);
	json_decref(d);
	return finish_stream(f, r, len, why, why_n);
}

static int op_matrix(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	const json_t *bundles[] = { full_b, minimal_b, signed_b };
	const char *names[] = { "full.json", "minimal.json", "signed.json" };
	json_t *m = agsbx_matrix_build(bundles, names, 3);
	if (!m) {
		snprintf(why, why_n, "out of memory (matrix)");
		return -ENOMEM;
	}
	int r = agsbx_matrix_add_provenance(m, bundles, 3, NULL);
	FILE *f = fixed_stream(out, cap);
	if (!f)
		json_decref(m);
	STREAM_OR_ENOMEM(f, why, why_n);
	if (r == 0)
		r = agsbx_matrix_render(m, (const char *)arg, f);
	json_decref(m);
	return finish_stream(f, r, len, why, why_n);
}

static int op_verify(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	(void)arg;
	struct agsbx_verify_opts o = { .key_path = pub_key, .now = 1700000000 };
	struct agsbx_verify_result res;
	memset(&res, 0, sizeof res);
	struct agsbx_error e = { 0 };
	int r = agsbx_bundle_verify(signed_b, &o, &res, &e);
	if (e.reason) /* the evidence.h record, into the harness's buffer */
		snprintf(why, why_n, "%s", e.message);
	if (r < 0)
		return r;
	/* an allocation failure must not read as a verdict about the bundle */
	*len = (size_t)snprintf(out, cap, "%s %d %d %s %s", agsbx_verify_status_name(res.status),
				res.signature_valid, res.trusted, res.fingerprint, res.reason);
	if (strstr(res.reason, "out of memory")) {
		snprintf(why, why_n, "%s", res.reason);
		return -ENOMEM;
	}
	return 0;
}

/* A trust anchor from allowed_signers, with the principal required. */
static int op_verify_signers(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	(void)arg;
	struct agsbx_verify_opts o = { .allowed_signers = signers_path, .identity = "fixture@agsbx-evidence.invalid",
				       .expect_challenge = "maintainer-nonce-42", .now = 1700000000 };
	struct agsbx_verify_result res;
	memset(&res, 0, sizeof res);
	struct agsbx_error e = { 0 };
	int r = agsbx_bundle_verify(signed_b, &o, &res, &e);
	if (e.reason) /* the evidence.h record, into the harness's buffer */
		snprintf(why, why_n, "%s", e.message);
	if (r < 0)
		return r;
	*len = (size_t)snprintf(out, cap, "%s %d %d %s %s %s %s", agsbx_verify_status_name(res.status),
				res.signature_valid, res.trusted, res.identity, res.trust_source, res.fingerprint,
				res.reason);
	return 0;
}

/* From the file, with the canonical digest hashed on a second thread (its
 * stack is memory too: the fallback without the thread must agree). */
static int op_load_digest(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	const char *path = *(char *const *)arg;
	json_t *b = NULL;
	uint8_t sha[AGSBX_BUNDLE_SHA512_BYTES];
	bool sha_ok = false; /* false under pressure only means verify hashes again */
	struct agsbx_error e = { 0 };
	int r = agsbx_bundle_load_digest(path, &b, sha, &sha_ok, &e);
	if (e.reason) /* the evidence.h record, into the harness's buffer */
		snprintf(why, why_n, "%s", e.message);
	if (r < 0)
		return r;
	size_t n = 0;
	char *c = agsbx_json_canonical(b, NULL, &n);
	json_decref(b);
	if (!c) {
		snprintf(why, why_n, "out of memory (canonical)");
		return -ENOMEM;
	}
	*len = n < cap ? n : cap;
	memcpy(out, c, *len);
	free(c);
	return 0;
}

static int op_attest(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	(void)arg;
	struct agsbx_attest_opts o = { .bundle_name = "full.json",
				       .bundle_sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				       .url = "https://ci.invalid/run/1" };
	struct agsbx_error e = { 0 };
	json_t *a = agsbx_bundle_attest(full_b, &o, &e);
	if (e.reason) /* the evidence.h record, into the harness's buffer */
		snprintf(why, why_n, "%s", e.message);
	if (!a)
		return -ENOMEM;
	size_t n = 0;
	char *c = agsbx_json_canonical(a, NULL, &n);
	json_decref(a);
	if (!c) {
		snprintf(why, why_n, "out of memory (canonical)");
		return -ENOMEM;
	}
	*len = n < cap ? n : cap;
	memcpy(out, c, *len);
	free(c);
	return 0;
}

static int op_provenance(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	json_t *p[2] = { agsbx_bundle_provenance(minimal_b, NULL), agsbx_bundle_provenance(signed_b, NULL) };
	const char *labels[] = { "old", "new" };
	FILE *f = p[0] && p[1] ? fixed_stream(out, cap) : NULL;
	if (!f) {
		json_decref(p[0]);
		json_decref(p[1]);
	}
	STREAM_OR_ENOMEM(f, why, why_n);
	const json_t *const pc[2] = { p[0], p[1] };
	int r = agsbx_provenance_render(pc, labels, 2, (const char *)arg, f);
	if (r == 0)
		r = agsbx_provenance_notes(pc, labels, 2, (const char *)arg, f);
	json_decref(p[0]);
	json_decref(p[1]);
	return finish_stream(f, r, len, why, why_n);
}

/* Signing is deterministic (Ed25519 over the canonical digest): the signed
 * bundle is the same bytes every time it succeeds. */
static int op_sign(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	(void)arg;
	const char *key = priv_key;
	json_t *b = json_deep_copy(full_b);
	if (!b) {
		snprintf(why, why_n, "out of memory (copy)");
		return -ENOMEM;
	}
	struct agsbx_error e = { 0 };
	int r = agsbx_bundle_sign(b, key, &e);
	if (e.reason) /* the evidence.h record, into the harness's buffer */
		snprintf(why, why_n, "%s", e.message);
	size_t n = 0;
	char *c = r == 0 ? agsbx_json_canonical(json_object_get(b, "signature"), NULL, &n) : NULL;
	json_decref(b);
	if (r < 0)
		return r;
	if (!c) {
		snprintf(why, why_n, "out of memory (canonical)");
		return -ENOMEM;
	}
	*len = n < cap ? n : cap;
	memcpy(out, c, *len);
	free(c);
	return 0;
}

/* ---- base and probes ----------------------------------------------------- */

/* A JSON result as its canonical bytes; a fact that records the failed
 * allocation itself (errno ENOMEM) is a truthful failure, not a lie. */
static int put_json(json_t *j, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	if (!j) {
		snprintf(why, why_n, "out of memory (NULL)");
		return -ENOMEM;
	}
	size_t n = 0;
	char *c = agsbx_json_canonical(j, NULL, &n);
	json_decref(j);
	if (!c) {
		snprintf(why, why_n, "out of memory (canonical)");
		return -ENOMEM;
	}
	*len = n < cap ? n : cap;
	memcpy(out, c, *len);
	bool enomem = strstr(c, "ENOMEM") != NULL;
	free(c);
	if (enomem) {
		snprintf(why, why_n, "out of memory (a fact records ENOMEM)");
		return -ENOMEM;
	}
	return 0;
}

typedef json_t *(*probe_fn)(void);

static int op_probe(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	return put_json(((probe_fn)arg)(), out, cap, len, why, why_n);
}

static char *mountinfo_text;

static int op_mountinfo(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	(void)arg;
	struct agsbx_mount *m = NULL;
	size_t n = 0;
	int r = agsbx_mountinfo_parse(mountinfo_text, &m, &n);
	if (r < 0) {
		snprintf(why, why_n, "%s", strerror(-r));
		return r;
	}
	size_t off = 0;
	for (size_t i = 0; i < n && off < cap; i++)
		off += (size_t)snprintf(out + off, cap - off, "%s|%s|%s|%s|%s\n", m[i].root, m[i].mountpoint,
					m[i].fstype, m[i].source, m[i].super_options);
	agsbx_mountinfo_free(m, n);
	*len = off < cap ? off : cap;
	return 0;
}

static int op_words(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	char **v = NULL;
	int n = agsbx_split_words((const char *)arg, &v);
	if (n < 0) {
		snprintf(why, why_n, "%s", strerror(-n));
		return n;
	}
	size_t off = 0;
	for (int i = 0; i < n && off < cap; i++)
		off += (size_t)snprintf(out + off, cap - off, "[%s]", v[i]);
	agsbx_strv_free(v);
	*len = off < cap ? off : cap;
	return 0;
}

static int op_escape(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	const char *in = (const char *)arg;
	char *e = agsbx_term_escape(in, 0);
	json_t *j = agsbx_json_string_sanitized(in, strlen(in));
	char *o = agsbx_text_oneline(in, 40);
	int r = 0;
	if (!e || !j || !o) {
		snprintf(why, why_n, "out of memory");
		r = -ENOMEM;
	} else {
		*len = (size_t)snprintf(out, cap, "%s\n%s\n%s", e, json_string_value(j), o);
	}
	free(e);
	json_decref(j);
	free(o);
	return r;
}

START_TEST(test_oom_base_probes)
{
	_cleanup_free_ char *mi = NULL;
	ck_assert_int_eq(agsbx_read_file("/proc/self/mountinfo", 1 << 22, &mi, NULL), 0);
	mountinfo_text = mi;
	static const char hostile[] = "caf\xc3\xa9 \x1b[31mred\x1b[0m \xff\xfe bad\tutf8 \xe2\x80\xae rtl \x01\x7f end";
	/* the probes drop a fact whose allocation failed (a shorter family,
	 * not an ENOMEM fact); the mountinfo parser calls a failed allocation
	 * a malformed line (-EINVAL) */
	const struct op ops[] = {
		{ "probe kernel", op_probe, (const void *)agsbx_probe_kernel, true },
		{ "probe os", op_probe, (const void *)agsbx_probe_os, true },
		{ "probe privilege", op_probe, (const void *)agsbx_probe_privilege, true },
		{ "probe userns", op_probe, (const void *)agsbx_probe_userns, true },
		{ "probe apparmor", op_probe, (const void *)agsbx_probe_apparmor, true },
		{ "probe landlock", op_probe, (const void *)agsbx_probe_landlock, true },
		{ "probe cgroup", op_probe, (const void *)agsbx_probe_cgroup, true },
		{ "probe container", op_probe, (const void *)agsbx_probe_container, true },
		{ "mountinfo", op_mountinfo, NULL, true },
		{ "split words", op_words, "a 'b c' \"d\\\"e\" f\\ g 'h'\"i\"j \\$k", false },
		{ "escape", op_escape, hostile, false },
	};
	sweep(&ops[_i]);
	mountinfo_text = NULL;
}
END_TEST

/* keygen: a failure leaves neither file behind (no partial output). The
 * path is made in the child, without allocating. */
static char *keygen_dir;

static int op_keygen(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	(void)arg;
	char path[512], pub[520];
	snprintf(path, sizeof path, "%s/k%ld", keygen_dir, (long)getpid());
	snprintf(pub, sizeof pub, "%s.pub", path);
	char fp[64] = "";
	struct agsbx_error e = { 0 };
	int r = agsbx_keygen(path, "oom@test", fp, &e);
	if (e.reason) /* the evidence.h record, into the harness's buffer */
		snprintf(why, why_n, "%s", e.message);
	bool priv_left = access(path, F_OK) == 0, pub_left = access(pub, F_OK) == 0;
	unlink(path);
	unlink(pub);
	if (r < 0 && (priv_left || pub_left)) {
		/* a result that cannot match the reference: a partial output */
		*len = (size_t)snprintf(out, cap, "failed (%s) but left%s%s", why, priv_left ? " the key" : "",
					pub_left ? " the .pub" : "");
		return 0;
	}
	if (r < 0)
		return r;
	*len = (size_t)snprintf(out, cap, "%s %s", priv_left && pub_left ? "both files" : "missing file",
				strncmp(fp, "SHA256:", 7) == 0 ? "fingerprint" : "no fingerprint");
	return 0;
}

START_TEST(test_oom_keygen)
{
	keygen_dir = agsbx_test_tmpdir("oom-keygen");
	sweep(&(struct op){ "keygen", op_keygen, NULL, false });
	agsbx_test_rmtree(keygen_dir);
	free(keygen_dir);
}
END_TEST

/* Test-runner summaries parsed out of a command's output. */
static int op_summary(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	const char *text = (const char *)arg;
	return put_json(agsbx_attachment_summary(text, strlen(text)), out, cap, len, why, why_n);
}

/* A real command run as an attachment: its summary and tails (the
 * duration differs run to run and is left out). */
static int op_attach_run(const void *arg, char *out, size_t cap, size_t *len, char *why, size_t why_n)
{
	struct agsbx_error e = { 0 };
	json_t *a = agsbx_attachment_run((const char *)arg, 10000, 64, &e);
	if (e.reason) /* the evidence.h record, into the harness's buffer */
		snprintf(why, why_n, "%s", e.message);
	if (!a)
		return strstr(why, "out of memory") || strstr(why, strerror(ENOMEM)) ? -ENOMEM : -EINVAL;
	json_object_del(a, "duration_us");
	return put_json(a, out, cap, len, why, why_n);
}

START_TEST(test_oom_attach)
{
	/* all lenient: a line whose copy fails is skipped (another summary
	 * wins), and a failed split leaves the run's error message empty */
	const struct op ops[] = {
		{ "summary pytest", op_summary,
		  "\033[31m= 1 failed, 3 passed, 2 skipped, 1 error in 0.12s =\033[0m\nrerun\n== 2 passed in 0.1s ==\n", true },
		{ "summary ctest", op_summary,
		  "83% tests passed, 2 tests failed out of 12\n\nThe following tests did not run:\n\t  3 - a (Skipped)\n"
		  "Errors while running CTest\n", true },
		{ "attach run", op_attach_run, "printf '%s\\n' '7 passed, 1 failed' tail-line", true },
	};
	sweep(&ops[_i]);
}
END_TEST

START_TEST(test_oom_parse)
{
	sweep(&(struct op){ "parse", op_parse, NULL, false });
}
END_TEST

START_TEST(test_oom_canonical)
{
	sweep(&(struct op){ "canonical", op_canonical, full_b, false });
}
END_TEST

START_TEST(test_oom_report)
{
	const char *const *formats = agsbx_render_formats("report");
	ck_assert_ptr_nonnull(formats);
	ck_assert_ptr_nonnull(formats[_i]);
	char name[64];
	snprintf(name, sizeof name, "report %s", formats[_i]);
	/* text names a provider "?" when escaping its id runs out of memory */
	sweep(&(struct op){ name, op_report, formats[_i], strcmp(formats[_i], "text") == 0 });
}
END_TEST

START_TEST(test_oom_diff)
{
	const char *const *formats = agsbx_render_formats("diff");
	ck_assert_ptr_nonnull(formats[_i]);
	char name[64];
	snprintf(name, sizeof name, "diff %s", formats[_i]);
	/* entries whose allocation failed go missing from the diff */
	sweep(&(struct op){ name, op_diff, formats[_i], true });
}
END_TEST

START_TEST(test_oom_matrix)
{
	const char *const *formats = agsbx_render_formats("matrix");
	ck_assert_ptr_nonnull(formats[_i]);
	char name[64];
	snprintf(name, sizeof name, "matrix %s", formats[_i]);
	/* rows and provenance members whose allocation failed go missing */
	sweep(&(struct op){ name, op_matrix, formats[_i], true });
}
END_TEST

START_TEST(test_oom_verify)
{
	sweep(&(struct op){ "verify", op_verify, NULL, false });
}
END_TEST

START_TEST(test_oom_more)
{
	const struct op ops[] = {
		/* signers.c reads a failed allocation as "invalid key" */
		{ "verify allowed_signers", op_verify_signers, NULL, true },
		{ "load full.json", op_load_digest, &full_path, false },
		{ "load signed.json", op_load_digest, &signed_path, false },
		/* a test name or the catalogue digest comes out different */
		{ "attest", op_attest, NULL, true },
		/* members whose allocation failed go missing */
		{ "provenance text", op_provenance, "text", true },
		{ "provenance markdown", op_provenance, "markdown", true },
		/* the key's comment is dropped; a failed allocation in the
		 * private-key reader reads as "not an OpenSSH private key" */
		{ "sign", op_sign, NULL, true },
	};
	sweep(&ops[_i]);
}
END_TEST

static int count(const char *view)
{
	int n = 0;
	for (const char *const *f = agsbx_render_formats(view); f && *f; f++)
		n++;
	return n;
}

int main(void)
{
	const char *why = agsbx_oom_unavailable();
	if (why)
		agsbx_test_skip("out-of-memory injection", false, why);
	Suite *s = suite_create("cov-oom");
	TCase *t = tcase_create("oom");
	tcase_set_timeout(t, 600);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_oom_parse);
	tcase_add_test(t, test_oom_canonical);
	tcase_add_loop_test(t, test_oom_report, 0, count("report"));
	tcase_add_loop_test(t, test_oom_diff, 0, count("diff"));
	tcase_add_loop_test(t, test_oom_matrix, 0, count("matrix"));
	tcase_add_test(t, test_oom_verify);
	tcase_add_loop_test(t, test_oom_more, 0, 7);
	tcase_add_loop_test(t, test_oom_base_probes, 0, 11);
	tcase_add_test(t, test_oom_keygen);
	tcase_add_loop_test(t, test_oom_attach, 0, 3);
	suite_add_tcase(s, t);
	return agsbx_test_run_suite(s);
}
