/* Private helpers shared by the files of evidence/ (not part of the API).
 * Loose functions carry the ev_ prefix; the sbuf_, sshrd_, sshkey_,
 * sshsig_, openssh_ and ed25519_ families are private by their family
 * name. Never agsbx_, which is cross-module API. */
#ifndef AGSBX_EVIDENCE_INTERNAL_H
#define AGSBX_EVIDENCE_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <jansson.h>

#include "evidence/bundle.h"

/* The largest magnitude jq 1.6 (which stores numbers as doubles) prints
 * exactly; the canonical form refuses anything beyond it. */
#define AGSBX_JSON_INT_MAX 9007199254740992LL

/* ---- growable byte buffer ------------------------------------------- */

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;                 /* sticky: one allocation failure fails the whole build */
	/* Optional: bytes are handed to sink in chunks of about SBUF_CHUNK
	 * instead of accumulating (hashing the canonical form without
	 * holding it). sbuf_flush_sink() passes on the rest. */
	void (*sink)(void *ud, const void *data, size_t n);
	void *sink_ud;
};
#define SBUF_CHUNK (32u << 10)

void sbuf_flush_sink(struct sbuf *b);
void sbuf_put(struct sbuf *b, const void *data, size_t n);
/* sbuf_put's common case in line, for byte-at-a-time writers (the
 * canonical form streamed by the parser): room in the buffer and below a
 * sink's chunk; anything else takes the call. */
static inline void sbuf_put_inline(struct sbuf *b, const void *data, size_t n)
{
	size_t need = b->len + n + 1;
	if (need > b->cap || b->oom || (b->sink && need > SBUF_CHUNK)) {
		sbuf_put(b, data, n);
		return;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}
void sbuf_puts(struct sbuf *b, const char *s);
void sbuf_putc(struct sbuf *b, char c);
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_u32(struct sbuf *b, uint32_t v);
/* SSH wire "string": uint32 length then bytes. */
void sbuf_sshstr(struct sbuf *b, const void *data, size_t n);
/* Hands the NUL-terminated contents over (NULL after OOM) and resets b. */
char *sbuf_take(struct sbuf *b, size_t *len);
/* j as indented JSON with sorted keys and a newline; -ENOMEM. */
int sbuf_json(struct sbuf *b, const json_t *j);
void sbuf_clear(struct sbuf *b);

/* ---- SSH wire reader ------------------------------------------------- */

struct sshrd {
	const uint8_t *p;
	size_t left;
};

int sshrd_u32(struct sshrd *r, uint32_t *v);
int sshrd_str(struct sshrd *r, const uint8_t **data, size_t *n);
/* A string that must equal want exactly. */
int sshrd_expect(struct sshrd *r, const char *want);

/* ---- base64 ------------------------------------------------------------ */

/* Standard base64 with padding, malloc'd NUL-terminated. */
char *ev_b64_encode(const void *data, size_t n);
/* Decodes standard base64 (padding required), ignoring the characters in
 * ignore (may be NULL). malloc'd; NULL when invalid (errno EINVAL) or
 * out of memory (errno ENOMEM). */
uint8_t *ev_b64_decode(const char *s, size_t slen, const char *ignore, size_t *n);
/* Wraps b64 text at width columns, each line ending in "\n". */
void ev_b64_wrapped(struct sbuf *b, const void *data, size_t n, size_t width);
/* The armour of an OpenSSH key or signature file: begin, body in base64
 * wrapped at 70 columns, end (malloc'd). NULL when oom (the parts that
 * made body ran out of memory), body's own oom, or out of memory here. */
char *ev_armor(const char *begin, const struct sbuf *body, const char *end, bool oom);

/* ---- keys ------------------------------------------------------------ */

#define ED25519_PK 32
#define ED25519_SK 64
#define ED25519_SIG 64

/* An OpenSSH public key as found in .pub, allowed_signers and .keys files:
 * the wire blob is what is compared; type and comment are for display. */
struct sshkey {
	char type[64];
	uint8_t *blob;
	size_t blob_len;
	char *comment;            /* may be NULL */
};
void sshkey_clear(struct sshkey *k);
/* Parses "TYPE BASE64 [COMMENT]" at s (leading blanks skipped). The blob's
 * inner type must match TYPE. -EINVAL when malformed. */
int sshkey_parse_line(const char *s, struct sshkey *k);
/* Ed25519 public key blob from the raw 32 bytes. */
void sshkey_ed25519_blob(struct sbuf *b, const uint8_t pk[ED25519_PK]);
/* Raw Ed25519 key from a blob: 0 or -EINVAL (another type). */
int sshkey_ed25519_raw(const uint8_t *blob, size_t n, const uint8_t **pk);
/* "SHA256:<base64 without padding>" of the blob (out >= 64 bytes). */
void sshkey_fingerprint(const uint8_t *blob, size_t n, char out[64]);
/* The key type a blob starts with into out ("?" when it has none or it is
 * not printable); returns out. */
const char *sshkey_blob_type(const uint8_t *blob, size_t n, char out[64]);
/* "TYPE BASE64[ COMMENT]" malloc'd. */
char *sshkey_format(const char *type, const uint8_t *blob, size_t n, const char *comment);

struct ed25519_private {
	uint8_t pk[ED25519_PK];
	uint8_t sk[ED25519_SK];
	char *comment;
	char type[64];            /* the file's public key type, every kind */
};
void ed25519_private_clear(struct ed25519_private *k);

enum private_key_kind {
	PRIVKEY_ED25519,          /* parsed: k is filled */
	PRIVKEY_ENCRYPTED,        /* bcrypt kdf / a cipher: needs ssh-keygen */
	PRIVKEY_OTHER_TYPE,       /* unencrypted but not Ed25519 (k->type says which) */
};
/* Parses an openssh-key-v1 PEM text. -EINVAL when it is not one. */
int openssh_private_parse(const char *text, size_t len, enum private_key_kind *kind,
			  struct ed25519_private *k, char *err, size_t err_size);
/* PEM text of an unencrypted openssh-key-v1 Ed25519 key. */
char *openssh_private_format(const struct ed25519_private *k);

/* ---- SSHSIG ---------------------------------------------------------- */

struct sshsig {
	uint8_t *blob;            /* the decoded armored blob, owns the pointers below */
	size_t blob_len;
	const uint8_t *pubkey;    /* public key blob */
	size_t pubkey_len;
	char namespace[128];
	char hash[16];            /* "sha256" | "sha512" */
	char sigtype[64];         /* signature algorithm, e.g. "ssh-ed25519" */
	const uint8_t *sig;       /* raw signature bytes */
	size_t sig_len;
};
void sshsig_clear(struct sshsig *s);
/* Parses "-----BEGIN SSH SIGNATURE-----\n...\n-----END SSH SIGNATURE-----\n"
 * strictly (only "\n" between lines). -EINVAL with err set. */
int sshsig_parse_armored(const char *text, size_t len, struct sshsig *s, char *err, size_t err_size);
/* The same check against a message already hashed with s->hash. */
int sshsig_verify_digest(const struct sshsig *s, const char *namespace, const uint8_t *digest, size_t digest_len,
			 char *err, size_t err_size);
/* Armored SSHSIG over msg with an Ed25519 key (malloc'd). */
char *sshsig_sign_ed25519(const struct ed25519_private *k, const char *namespace, const void *msg,
			  size_t len);
/* The public-key step: 0 when sig (of algorithm sigtype) is good over data
 * for the key blob (Ed25519, RSA rsa-sha2-256/512, ECDSA P-256/384/521, as
 * OpenSSH 9.2 accepts them); -EBADMSG bad signature, -EINVAL unsupported
 * or malformed key or signature. */
int sshsig_verify_key(const uint8_t *blob, size_t blob_n, const char *sigtype, const uint8_t *sig,
		      size_t sig_n, const uint8_t *data, size_t data_n);
/* Whether sshsig_verify_key knows keys of this type. */
bool sshkey_type_supported(const char *type);
/* 0 when the signature is a good signature over msg for namespace;
 * -EBADMSG bad signature, -EINVAL unsupported/malformed (err set). */
int sshsig_verify(const struct sshsig *s, const char *namespace, const void *msg, size_t len,
		  char *err, size_t err_size);

/* ---- display (render.c) ---------------------------------------------- */

enum esc_mode {
	ESC_TEXT,                 /* terminal, one line: controls as \xNN, newline as \n */
	ESC_MD,                   /* markdown table cell: also | * _ ` [ ] < > & \ escaped */
	ESC_MDCODE,               /* inside a markdown code span in a table cell */
	ESC_XML,                  /* XML text/attribute: & < > " ' and invalid XML chars */
	ESC_TAP,                  /* TAP description: one line, '#' escaped */
	ESC_YAML,                 /* YAML double-quoted scalar body, ASCII only */
};
/* Appends s escaped for mode; max_chars > 0 cuts at that many characters
 * and appends "...". NULL s appends "?". */
void ev_put_esc(struct sbuf *b, const char *s, enum esc_mode mode, size_t max_chars);
/* fmt with each "%s" or "%.Ns" (at most N characters) replaced by its
 * string argument escaped as ev_put_esc does, and "%%" by "%": a line of
 * fields, escaped alike, in one call. No other conversion exists. */
void ev_putf(struct sbuf *b, enum esc_mode mode, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A markdown code span (ids in tables). */
void ev_put_code(struct sbuf *b, const char *s, size_t max_chars);
/* A JSON value compactly, then escaped (for diff output). */
void ev_put_json_esc(struct sbuf *b, const json_t *v, enum esc_mode mode, size_t max_chars);
/* The icon report and matrix put before a provider verdict in markdown
 * (with its trailing space): conformant, defective, blocked, else. */
const char *ev_provider_icon(enum agsbx_provider_verdict v);
/* host.<family>.<fact>.value, borrowed or NULL. */
const json_t *ev_host_value(const json_t *bundle, const char *family, const char *fact);
/* "Linux 6.18.0 x86_64, Debian GNU/Linux 12" or "?" pieces. */
void ev_put_host_line(struct sbuf *b, const json_t *bundle, enum esc_mode mode);
/* Writes b to out when r == 0 and b is intact; frees b. */
int sbuf_flush(struct sbuf *b, int r, FILE *out);
/* One view of a document: its --format name and renderer (NULL: the
 * document itself as JSON, sbuf_json). Tables end with a NULL name. */
struct ev_format {
	const char *name;
	void (*render)(struct sbuf *b, const json_t *doc);
};
/* doc (an object) rendered as the formats entry called format, to out.
 * -EINVAL for a doc that is no object or a format not in the table. */
int ev_render_as(const json_t *doc, const char *format, const struct ev_format *formats, FILE *out);

/* Provenance (provenance.c) on one line, parts separated by sep; and the
 * blocked providers with their reasons. */
void ev_provenance_put(struct sbuf *b, const json_t *p, enum esc_mode m, const char *sep);
void ev_provenance_put_blocked(struct sbuf *b, const json_t *p, enum esc_mode m, const char *sep);

/* ---- canonical digest (canonical.c) -------------------------------------- */

/* sha512 / sha256 ("alg") of the canonical form of j without skip_key,
 * streamed: the canonical bytes are never held in full. 0, -EINVAL for an
 * unknown alg, or the canonical form's errors (-EDOM, -ERANGE, -EILSEQ). */
int ev_json_canonical_digest(const json_t *j, const char *skip_key, const char *alg, uint8_t *out,
				size_t *out_len);
/* One string in the canonical form's escaping: 0, or -EILSEQ (a NUL or
 * invalid UTF-8). */
int ev_canonical_put_string(struct sbuf *b, const char *s, size_t len);

/* SHA-512 of bytes put in order, hashed on a second thread (sha512-pipe.c).
 * put has an sbuf sink's signature; finish joins the thread, writes the
 * digest to out (NULL: discarded) and frees the pipe. start: NULL on
 * ENOMEM. */
struct ev_sha512_pipe *ev_sha512_pipe_start(void);
void ev_sha512_pipe_put(void *pipe, const void *data, size_t n);
void ev_sha512_pipe_finish(struct ev_sha512_pipe *p, uint8_t out[64]);

/* ---- strict JSON (parse.c) ---------------------------------------------- */

/* The canonical form written while parsing (see parse.c). */
struct ev_canon_out {
	struct sbuf *out;      /* the canonical bytes (a sink may take them) */
	const char *skip_key;  /* a top-level member left out, or NULL */
	bool complete;         /* set by the parser: out holds the whole canonical form */
};

/* Parses one JSON object with the bundle rules (no duplicate keys, integers
 * within +-2^53 only, no -0, valid UTF-8, no \u0000). -EINVAL with a
 * one-line reason and position in err. With canon (or NULL), also writes
 * the canonical form of what it read, as far as the keys come in order
 * (canon->complete). */
int ev_json_parse_strict(const char *data, size_t len, json_t **out, struct ev_canon_out *canon, char *err,
			 size_t err_size);

/* ---- verify's one pass (canon-stream.c) ------------------------------- */

/* A bundle read without a tree: its canonical form (the bytes
 * agsbx_json_canonical writes for the tree without skip_key), their
 * SHA-512 (hashed while produced) and the members verify reads (view:
 * created_at, challenge and the signature's string members). 0; -EINVAL
 * when the tree reader or the loader would refuse the bundle (no message:
 * read it with them for that); -ENOMEM. */
struct ev_canon_stream {
	char *canonical;
	size_t len;
	uint8_t sha512[64];
	bool unsorted;         /* some object's keys were out of order (reordered) */
	json_t *view;
};
int ev_canon_stream(const char *data, size_t len, const char *skip_key, struct ev_canon_stream *o);
void ev_canon_stream_clear(struct ev_canon_stream *o);

/* ---- the bundle's member table (load.c) ------------------------------ */

enum {
	EV_T_OBJ = 1 << 0,
	EV_T_ARR = 1 << 1,
	EV_T_STR = 1 << 2,
	EV_T_INT = 1 << 3,
	EV_T_BOOL = 1 << 4,
	EV_T_NULL = 1 << 5,
};

/* One known member: its allowed types, and for objects / arrays of objects
 * the members inside. Unknown members are tolerated (bundles from a newer
 * tool version); the JSON Schema is the exhaustive contract. */
struct ev_field {
	const char *key;
	unsigned types;
	bool required;
	const char *const *values;       /* allowed string values, NULL: any */
	const struct ev_field *members;  /* object members, NULL-key terminated */
	unsigned items;                  /* array element types, 0: any */
	const struct ev_field *item_members;
};

/* The top-level members, as the loader checks them (NULL-key terminated). */
extern const struct ev_field *const ev_bundle_fields;
/* A provider or check id: [a-z0-9_.:-]+ (n bytes). */
bool ev_bundle_id_ok(const char *id, size_t n);

/* ---- misc ------------------------------------------------------------ */

void ev_set_err(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
struct agsbx_error;
/* r (< 0) and its one-line reason msg into e for evidence.h's callers,
 * replacing what e held; returns r. r >= 0: nothing recorded. */
int ev_error(struct agsbx_error *e, int r, const char *msg);
struct agsbx_verify_opts;
struct agsbx_verify_result;
/* agsbx_bundle_verify with its reason in a buffer (verify.c). */
int ev_bundle_verify(const json_t *bundle, const struct agsbx_verify_opts *opts, struct agsbx_verify_result *res,
		     char *err, size_t err_size);
/* Borrowed string member or NULL. */
const char *ev_jstr(const json_t *obj, const char *key);
/* OpenSSH-style pattern lists: "a*,b?,!c", as match.c:match_pattern_list:
 * 1 a positive match, -1 a negated one (it wins), 0 neither, and 0 too
 * when a subpattern of 1023 bytes or more is reached. */
bool ev_match_pattern(const char *s, const char *pattern);
int ev_match_pattern_list(const char *s, const char *list);

/* ---- allowed_signers (signers.c) ------------------------------------ */

struct ev_signer {
	struct sshkey key;        /* blob: canonical, for comparing keys */
	char *principals;         /* pattern list, quotes removed as OpenSSH does */
	char *namespaces;         /* namespaces="..." or NULL */
	uint64_t valid_after, valid_before; /* 0: no such option */
	bool cert_authority;
};
void ev_signer_clear(struct ev_signer *s);
/* One line as getline() gives it (its '\n' kept) read as OpenSSH 9.2p1's
 * sshsig.c reads it: 1 a signer, 0 a blank or comment line, -EINVAL with
 * OpenSSH's reason in why, -ENOMEM; s is to be cleared in every case. */
int ev_signer_parse(const char *line, struct ev_signer *s, char *why, size_t why_size);

/* --subject-repo's parsing of git's answers (subject.c). The
 * "filter.<name>.<key>" list of `git config --name-only -z` (NUL-separated,
 * ending in an empty name) as the settings that override every filter
 * driver it names (a new array); the subject from the `rev-parse` lines
 * (branch, commit NULL: unborn) and the `status --porcelain` output. */
json_t *ev_filter_settings(const char *names);
json_t *ev_subject_json(const char *top, const char *branch, const char *commit, const char *status);

#endif
