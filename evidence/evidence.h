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

#define AGSBX_BUNDLE_SCHEMA "agsbx-evidence/v1"
#define AGSBX_SSHSIG_NAMESPACE "agsbx-evidence"
#define AGSBX_BUNDLE_MAX_BYTES (64u << 20)

/* Loads a bundle file strictly: size cap, valid JSON, no duplicate keys,
 * object, known schema. 0, or -EINVAL (bad input; err holds a one-line
 * reason), -EFBIG (over the cap), -errno (I/O). *bundle: new reference. */
int agsbx_bundle_load(const char *path, json_t **bundle, char *err, size_t err_size);

/* The canonical bytes: the bundle without "signature", keys sorted,
 * compact, integers only, UTF-8 — byte-identical to
 * `jq -cjS 'del(.signature)'`. malloc'd; NULL on error. */
char *agsbx_bundle_canonical(const json_t *bundle, size_t *len);

/* Signs in place: sets "signature" {format, namespace, hash, armored,
 * public_key, fingerprint}. Built-in for unencrypted OpenSSH Ed25519 keys,
 * `ssh-keygen -Y sign` for encrypted keys / agent keys. */
int agsbx_bundle_sign(json_t *bundle, const char *key_path, char *err, size_t err_size);

/* Writes the bundle (indented, sorted keys) atomically: temp name + rename;
 * no partial file on failure. */
int agsbx_bundle_write(const char *path, const json_t *bundle);

/* Renders one bundle: format "text" | "markdown" | "junit" | "tap".
 * -EINVAL for an unknown format. */
int agsbx_report_render(const json_t *bundle, const char *format, FILE *out);

/* Subject of the evidence: {path, branch, commit, dirty} via git
 * (new reference) or NULL with err set. */
json_t *agsbx_subject_from_repo(const char *path, char *err, size_t err_size);

/* Runs a contributor's command line (split into argv without a shell,
 * honouring simple quotes) through the bounded runner and returns the
 * attachment object {argv, exit_status, duration_us, summary, stdout_tail,
 * stderr_tail, ...} (new reference), or NULL with err set (bad command). */
json_t *agsbx_attachment_run(const char *cmdline, int64_t timeout_ms, size_t max_tail, char *err,
			     size_t err_size);

#endif
