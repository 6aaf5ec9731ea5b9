/* Evidence bundles: load (strict), canonical form, SSHSIG signing and
 * verification, renderers (report/diff/matrix), context capture for
 * collect (subject repo, attachments). */
#ifndef AGSBX_EVIDENCE_EVIDENCE_H
#define AGSBX_EVIDENCE_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "base/error.h"

#define AGSBX_BUNDLE_SCHEMA "agsbx-evidence/v1"
#define AGSBX_SSHSIG_NAMESPACE "agsbx-evidence"
#define AGSBX_BUNDLE_MAX_BYTES (64u << 20)

/* Errors: a function that can fail for a reason worth a line takes a
 * struct agsbx_error *err (base/error.h) and, when it fails, sets its
 * message (one line, what the buffers held before) and a reason
 * (out_of_memory, invalid_input, system_error), replacing what err held:
 * each call reports its own failure. err may be NULL. */

/* Loads a bundle file strictly: size cap, valid JSON, no duplicate keys,
 * object, known schema. 0, or -EINVAL (bad input; err holds a one-line
 * reason), -EFBIG (over the cap), -errno (I/O). *bundle: new reference. */
int agsbx_bundle_load(const char *path, json_t **bundle, struct agsbx_error *err);

/* agsbx_bundle_load, and the SHA-512 of the bundle's canonical form
 * (agsbx_bundle_canonical) hashed while reading it, for verify: one pass
 * instead of a second walk over the tree. *sha512_ok is false where that
 * was not possible (an object's keys out of order); verify then hashes the
 * tree. */
#define AGSBX_BUNDLE_SHA512_BYTES 64
int agsbx_bundle_load_digest(const char *path, json_t **bundle, uint8_t sha512[AGSBX_BUNDLE_SHA512_BYTES],
			     bool *sha512_ok, struct agsbx_error *err);
/* The same for a bundle already in memory. */
int agsbx_bundle_parse_digest(const char *data, size_t len, json_t **bundle,
			      uint8_t sha512[AGSBX_BUNDLE_SHA512_BYTES], bool *sha512_ok, struct agsbx_error *err);

/* agsbx_bundle_load_digest for verify, without a tree (canon-stream.c):
 * *bundle holds only what verify reads (created_at, challenge, signature)
 * and *sha512_ok is true. Where the one pass cannot decide (any error, a
 * signature hash other than sha512), the tree reader's result, errors and
 * messages: the same verdict either way. */
int agsbx_bundle_load_verify(const char *path, json_t **bundle, uint8_t sha512[AGSBX_BUNDLE_SHA512_BYTES],
			     bool *sha512_ok, struct agsbx_error *err);
int agsbx_bundle_parse_verify(const char *data, size_t len, json_t **bundle,
			      uint8_t sha512[AGSBX_BUNDLE_SHA512_BYTES], bool *sha512_ok, struct agsbx_error *err);

/* The canonical bytes: the bundle without "signature", keys sorted,
 * compact, integers only, UTF-8 — byte-identical to
 * `jq -cjS 'del(.signature)'`. malloc'd; NULL on error. */
char *agsbx_bundle_canonical(const json_t *bundle, size_t *len);

/* Signs in place: sets "signature" {format, namespace, hash, armored,
 * public_key, fingerprint}. Built-in for unencrypted OpenSSH Ed25519 keys,
 * `ssh-keygen -Y sign` for RSA/ECDSA keys, encrypted keys and agent keys. */
int agsbx_bundle_sign(json_t *bundle, const char *key_path, struct agsbx_error *err);
/* The key is one agsbx_bundle_sign can use: loaded, of a supported type,
 * and (unless encrypted) a trial signature made and verified. Run before
 * the matrix so that a bad key costs no run. */
int agsbx_bundle_sign_check(const char *key_path, struct agsbx_error *err);

/* Writes the bundle (indented, sorted keys) atomically: temp name + rename;
 * no partial file on failure. */
int agsbx_bundle_write(const char *path, const json_t *bundle);

/* The formats agsbx_report_render, agsbx_diff_render and
 * agsbx_matrix_render take (view "report", "diff", "matrix"), in the order
 * the help lists them, NULL-terminated; NULL for another view. */
const char *const *agsbx_render_formats(const char *view);
/* Renders one bundle: format "text" | "markdown" | "junit" | "tap".
 * -EINVAL for an unknown format. */
int agsbx_report_render(const json_t *bundle, const char *format, FILE *out);
/* The axis view: per provider and isolation axis (agsbx_view_axes, NULL
 * ended: the five flags, then "network"), what the bundle shows. */
enum agsbx_axis_view {
	AGSBX_AXIS_VIEW_EVIDENCED,     /* claimed, and the checks observed it */
	AGSBX_AXIS_VIEW_REFUTED,       /* claimed, and the checks did not observe it */
	AGSBX_AXIS_VIEW_INCONCLUSIVE,  /* claimed; its evidence was inconclusive on this host */
	AGSBX_AXIS_VIEW_UNCLAIMED,     /* observed but not claimed */
	AGSBX_AXIS_VIEW_NOT_OBSERVED,
};
extern const char *const agsbx_view_axes[];
enum agsbx_axis_view agsbx_axis_view_of(const json_t *provider, const char *axis);
const char *agsbx_axis_view_name(enum agsbx_axis_view v);

/* Subject of the evidence: {path, branch, commit, dirty} via git
 * (new reference) or NULL with err set. */
json_t *agsbx_subject_from_repo(const char *path, struct agsbx_error *err);

/* Runs a contributor's command line (split into argv without a shell,
 * honouring simple quotes) through the bounded runner and returns the
 * attachment object {argv, exit_status, duration_us, summary, stdout_tail,
 * stderr_tail, ...} (new reference), or NULL with err set (bad command). */
json_t *agsbx_attachment_run(const char *cmdline, int64_t timeout_ms, size_t max_tail, struct agsbx_error *err);

/* ---- loading, signing and checking bundles ---------------------------- */

/* The canonical serializer behind agsbx_bundle_canonical, for any value:
 * skip_key (may be NULL) is left out of the top-level object. NULL with
 * errno EDOM (a real), ERANGE (|integer| > 2^53), EILSEQ (invalid UTF-8 or
 * NUL in a string) or ENOMEM. */
char *agsbx_json_canonical(const json_t *j, const char *skip_key, size_t *len);

/* Parses and checks a bundle already in memory (what agsbx_bundle_load does
 * after reading): same return values. */
int agsbx_bundle_parse(const char *data, size_t len, json_t **bundle, struct agsbx_error *err);

/* Writes a new Ed25519 key pair: path (mode 0600, unencrypted
 * openssh-key-v1, readable by ssh-keygen) and path.pub, commented with
 * comment (NULL: none), its "SHA256:..." fingerprint into fingerprint.
 * Refuses to replace either file (-EEXIST). Both files appear complete or
 * not at all. */
int agsbx_keygen(const char *path, const char *comment, char fingerprint[64], struct agsbx_error *err);

/* Trust anchors for verification; at most one of key_path, allowed_signers
 * and keys_url. */
struct agsbx_verify_opts {
	const char *key_path;          /* a .pub / authorized_keys-style file: any key in it */
	const char *allowed_signers;   /* OpenSSH allowed_signers */
	const char *identity;          /* with allowed_signers: the principal required */
	const char *keys_url;          /* e.g. https://github.com/USER.keys */
	bool allow_insecure_url;       /* accept a plain http:// keys_url */
	const char *expect_challenge;  /* NULL: not checked */
	int64_t now;                   /* unix time for valid-after/valid-before; 0: time(NULL) */
	/* The SHA-512 of this same bundle's canonical form, from
	 * agsbx_bundle_load_digest; NULL: verify computes it. */
	const uint8_t *canonical_sha512;
};

enum agsbx_verify_status {
	AGSBX_VERIFY_OK,               /* signature valid, signer trusted, challenge ok */
	AGSBX_VERIFY_UNSIGNED,
	AGSBX_VERIFY_INVALID,          /* malformed or bad signature, or content changed */
	AGSBX_VERIFY_UNTRUSTED,        /* good signature by a key no anchor trusts */
	AGSBX_VERIFY_NO_ANCHOR,        /* good signature, no trust anchor given */
	AGSBX_VERIFY_CHALLENGE,        /* good and trusted, but the challenge differs */
};

struct agsbx_verify_result {
	enum agsbx_verify_status status;
	bool signature_valid;
	bool trusted;
	char key_type[64];
	char fingerprint[64];          /* "SHA256:..." of the signing key ("" when unsigned) */
	char identity[256];            /* principal / key comment / URL the key matched */
	char trust_source[64];         /* "key file" | "allowed_signers" | "keys URL" | "" */
	bool challenge_checked;
	bool challenge_ok;
	char reason[512];              /* one line: why status is not OK */
};

/* Verifies a loaded bundle. 0 with res filled (any status), or -EINVAL for
 * bad input in a trust source (unreadable or malformed allowed_signers or
 * key file, keys URL answering non-200 or no key; err set), -EIO when the
 * keys URL cannot be fetched, -errno otherwise. */
int agsbx_bundle_verify(const json_t *bundle, const struct agsbx_verify_opts *opts,
			struct agsbx_verify_result *res, struct agsbx_error *err);
const char *agsbx_verify_status_name(enum agsbx_verify_status s);

/* s made safe to print as one terminal line (bundle strings are hostile):
 * control characters, newline included, as \xNN / \n, at most max_chars
 * characters (0: no limit) then "...". NULL s gives "?". malloc'd; NULL
 * on ENOMEM. */
char *agsbx_text_oneline(const char *s, size_t max_chars);
/* Whether v is an advisory list (an array of objects with "status"), and
 * that list in one line: the findings worth a look by id or knob
 * ("CVE-2024-21626 in_range, kptr_restrict exposed"), or "none of N
 * flagged" (malloc'd; NULL when out of memory). */
bool agsbx_is_findings(const json_t *v);
char *agsbx_findings_text(const json_t *list);

/* Differences OLD -> NEW as a JSON object (new reference):
 * {"host": [{family, fact, old, new}], "providers": [{id, old, new, regression,
 *  host_change}], "checks": [{provider, id, old, new, regression, host_change}],
 *  "claims": [...], "versions": [...], "regressions": N, "host_changes": N,
 *  "changes": N}. Regressions (lost evidence: a check newly failing, pass ->
 * skip/not_claimed, a check or provider gone, a provider newly defective or
 * conformant -> skipped, a claim true -> false/gone) come first, then host
 * changes (pass -> blocked, conformant -> blocked), then the rest. */
json_t *agsbx_bundle_diff(const json_t *old_bundle, const json_t *new_bundle);
/* format "text" | "markdown" | "json"; -EINVAL for another. */
int agsbx_diff_render(const json_t *diff, const char *format, FILE *out);

/* One row per bundle: {"file", "host", "created_at", "tool_version",
 * "providers": {id: {verdict, failing_checks}}} — missing members are "?".
 * names[i] labels bundles[i]. New reference. */
json_t *agsbx_matrix_build(const json_t *const *bundles, const char *const *names, size_t n);
/* format "markdown" | "json" | "badge" (a shields.io endpoint JSON);
 * -EINVAL for another. Rows may carry "provenance" (agsbx_bundle_provenance),
 * listed under the markdown table. */
int agsbx_matrix_render(const json_t *matrix, const char *format, FILE *out);
/* Adds each row's "provenance" (agsbx_bundle_provenance of bundles[i]);
 * with trust anchors also "trusted_only": true, and the badge then counts
 * only bundles whose signature verifies and whose signer is trusted,
 * naming how many it left out. 0 or -ENOMEM. */
int agsbx_matrix_add_provenance(json_t *matrix, const json_t *const *bundles, size_t n,
				const struct agsbx_verify_opts *trust);

/* Shipped JSON Schemas, embedded at build time: the text of schema name
 * ("evidence-bundle", "host-probe", ...) or NULL. */
const char *agsbx_schema_get(const char *name, size_t *len);
/* NULL-terminated list of the embedded schema names. */
const char *const *agsbx_schema_names(void);

/* ---- attestation ---------------------------------------------------------- */

#define AGSBX_INTOTO_STATEMENT "https://in-toto.io/Statement/v1"
#define AGSBX_INTOTO_TEST_RESULT "https://in-toto.io/attestation/test-result/v0.1"

struct agsbx_attest_opts {
	const char *bundle_name;       /* subject name (the file's base name); NULL: "_" */
	const char *bundle_sha256;     /* hex sha256 of the bundle file's bytes */
	const char *url;               /* the CI run, or NULL */
};

/* An in-toto Statement v1 with the test-result v0.1 predicate: result
 * FAILED (a defective provider or a failing check) / WARNED (a blocked or
 * skipped provider or check) / PASSED; passedTests / warnedTests /
 * failedTests as "provider/check" (not_claimed checks in none);
 * configuration = the collecting tool and the sha256 of its check
 * catalogue. New reference, or NULL with err set. */
json_t *agsbx_bundle_attest(const json_t *bundle, const struct agsbx_attest_opts *o, struct agsbx_error *err);

/* ---- provenance for maintainer views ---------------------------------- */

/* {signature: "none"|"good"|"invalid"|"unknown", fingerprint, trusted
 * (null without a trust anchor), signer, trust_error?, representative,
 * representative_reasons, simulations [names], challenge, subject {commit,
 * branch, dirty} | null, tool {version, git_commit}, blocked [{id, reason,
 * detail, hint}]}. trust may be NULL (integrity only). New reference. */
json_t *agsbx_bundle_provenance(const json_t *bundle, const struct agsbx_verify_opts *trust);
/* A "provenance" block for diff: one entry per bundle (labels[i] names
 * provs[i]). format "text" | "markdown". */
int agsbx_provenance_render(const json_t *const *provs, const char *const *labels, size_t n, const char *format,
			    FILE *out);
/* One line per bundle that is a labelled simulation, naming it. */
int agsbx_provenance_notes(const json_t *const *provs, const char *const *labels, size_t n, const char *format,
			   FILE *out);

/* Parses a test summary out of command output: {format, passed, failed,
 * skipped} with format "pytest" | "ctest" | "plain" | "none" (new ref). */
json_t *agsbx_attachment_summary(const char *out, size_t len);
/* Splits a command line into argv without a shell, as agsbx_split_words
 * (base/util.h) does for --adapter and --wrap: blanks separate words,
 * '...' is literal, "..." honours \\, \", \$, \` and \<newline>, a backslash
 * escapes the next character. -EINVAL (err set) for an unterminated quote,
 * a trailing backslash or an empty line.
 * *argv is NULL-terminated, free with agsbx_strv_free (base/strv.h). */
int agsbx_split_cmdline(const char *cmdline, char ***argv, struct agsbx_error *err);

#endif
