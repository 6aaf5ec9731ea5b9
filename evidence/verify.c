/* Verifying a bundle: the SSHSIG over the canonical bytes, then trust (a
 * key file, an OpenSSH allowed_signers file, or a keys URL), then the
 * maintainer's challenge. */
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/cleanup.h"
#include "base/http.h"
#include "base/util.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRUST_FILE_MAX (1u << 20)
#define KEYS_URL_MAX (256u << 10)

const char *agsbx_verify_status_name(enum agsbx_verify_status s)
{
	switch (s) {
	case AGSBX_VERIFY_OK: return "valid";
	case AGSBX_VERIFY_UNSIGNED: return "unsigned";
	case AGSBX_VERIFY_INVALID: return "invalid";
	case AGSBX_VERIFY_UNTRUSTED: return "untrusted";
	case AGSBX_VERIFY_NO_ANCHOR: return "signer not checked";
	case AGSBX_VERIFY_CHALLENGE: return "wrong challenge";
	}
	return "?";
}

/* ---- trust anchors ---------------------------------------------------- */

struct anchor {
	struct ev_signer s;       /* key files and keys URLs: only s.key */
	int line;
};

struct anchors {
	struct anchor *v;
	size_t n;
	const char *kind;         /* for messages */
	const char *source;       /* path or URL */
};

static void anchors_free(struct anchors *a)
{
	for (size_t i = 0; i < a->n; i++)
		ev_signer_clear(&a->v[i].s);
	free(a->v);
	memset(a, 0, sizeof *a);
}

static struct anchor *anchors_add(struct anchors *a)
{
	struct anchor *v = realloc(a->v, (a->n + 1) * sizeof *v);
	if (!v)
		return NULL;
	a->v = v;
	memset(&v[a->n], 0, sizeof *v);
	return &v[a->n++];
}

/* One line: 1 an anchor, 0 nothing (blank, comment), < 0 malformed. An
 * allowed_signers line is read with its line end, as OpenSSH's getline()
 * hands it over (a '\r' is a separator there, see signers.c). */
static int parse_anchor_line(struct anchor *an, const char *line, size_t n, bool signers, char *why,
			     size_t why_size)
{
	_cleanup_free_ char *text = strndup(line, n);
	if (!text)
		return -ENOMEM;
	if (signers)
		return ev_signer_parse(text, &an->s, why, why_size);
	text[strcspn(text, "\r\n")] = '\0';
	const char *s = text + strspn(text, " \t");
	if (!*s || *s == '#')
		return 0;
	int r = sshkey_parse_line(s, &an->s.key);
	return r == -ENOMEM ? r : r < 0 ? -EINVAL : 1;
}

/* Lines of a key file / allowed_signers / keys URL body. Blank and '#'
 * lines are skipped; any malformed line makes the whole source bad input
 * (silently ignoring a line could silently drop a trusted or revoked key). */
static int parse_anchors(struct anchors *a, const char *text, bool signers, char *err, size_t err_size)
{
	int lineno = 0;
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		if (p[n] == '\n')
			n++;
		lineno++;
		struct anchor *an = anchors_add(a);
		if (!an)
			return -ENOMEM;
		an->line = lineno;
		char why[256] = "malformed public key";
		int r = parse_anchor_line(an, p, n, signers, why, sizeof why);
		p += n;
		if (r == 0) {
			ev_signer_clear(&an->s);
			a->n--;
			continue;
		}
		if (r < 0) {
			ev_set_err(err, err_size, "%s line %d: %s", a->source, lineno, r == -ENOMEM ? "out of memory" : why);
			return r == -ENOMEM ? r : -EINVAL;
		}
	}
	if (a->n == 0) {
		ev_set_err(err, err_size, "%s: no keys", a->source);
		return -EINVAL;
	}
	return 0;
}

static int load_file_anchors(struct anchors *a, const char *path, bool signers, char *err, size_t err_size)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = agsbx_read_file(path, TRUST_FILE_MAX, &text, &len);
	if (r < 0) {
		ev_set_err(err, err_size, "%s: %s", path, agsbx_file_strerror(r));
		return -EINVAL;
	}
	/* the lines are read as a C string: whatever follows a NUL would be
	 * silently dropped */
	if (memchr(text, '\0', len)) {
		ev_set_err(err, err_size, "%s: binary file (NUL byte)", path);
		return -EINVAL;
	}
	/* the commonest slip: the private half where the public one goes */
	if (!signers && strstr(text, "PRIVATE KEY-----")) {
		ev_set_err(err, err_size, "%s is a private key; --key takes the public key (%s.pub, or ssh-keygen -y -f %s)",
			   path, path, path);
		return -EINVAL;
	}
	a->source = path;
	return parse_anchors(a, text, signers, err, err_size);
}

static int load_url_anchors(struct anchors *a, const char *url, bool allow_http, char *err, size_t err_size)
{
	if (strncmp(url, "https://", 8) != 0 && strncmp(url, "http://", 7) != 0) {
		ev_set_err(err, err_size, "%s: only http:// and https:// keys URLs", url);
		return -EINVAL;
	}
	/* Whoever sits on the path of a plain http fetch chooses the keys we
	 * trust: refused unless asked for (e.g. a loopback test server). */
	if (strncmp(url, "http://", 7) == 0 && !allow_http) {
		ev_set_err(err, err_size, "%s: plain http keys URL refused (use https, or --allow-insecure-keys-url)", url);
		return -EINVAL;
	}
	struct agsbx_http_request req = { .url = url, .timeout_ms = 15000, .connect_timeout_ms = 5000,
					   .max_response = KEYS_URL_MAX };
	struct agsbx_http_response resp;
	int r = agsbx_http(&req, &resp);
	if (r == -EFBIG) {
		ev_set_err(err, err_size, "%s: response larger than %u KiB", url, KEYS_URL_MAX >> 10);
		return -EINVAL;
	}
	if (r < 0) {
		ev_set_err(err, err_size, "%s: %s", url, resp.error[0] ? resp.error : strerror(-r));
		return -EIO;
	}
	if (resp.status != 200) {
		ev_set_err(err, err_size, "%s: HTTP status %ld", url, resp.status);
		agsbx_http_response_clear(&resp);
		return -EINVAL;
	}
	if (memchr(resp.body, '\0', resp.len)) {
		ev_set_err(err, err_size, "%s: binary response", url);
		agsbx_http_response_clear(&resp);
		return -EINVAL;
	}
	a->source = url;
	r = parse_anchors(a, resp.body, false, err, err_size);
	agsbx_http_response_clear(&resp);
	return r;
}

static bool same_key(const struct sshkey *k, const uint8_t *blob, size_t n)
{
	return k->blob_len == n && memcmp(k->blob, blob, n) == 0;
}

/* The trust of one allowed_signers line, in sshsig.c:check_allowed_keys_line()'s
 * order: NULL when it trusts the signature, else why not. */
static const char *signer_refuses(const struct ev_signer *sg, const char *identity, int64_t now)
{
	/* parse_principals_key_and_options: a match is exactly 1 (a negated
	 * principal is -1) */
	if (identity && ev_match_pattern_list(identity, sg->principals) != 1)
		return "key listed, but not for this identity";
	if (sg->namespaces && ev_match_pattern_list(AGSBX_SSHSIG_NAMESPACE, sg->namespaces) != 1)
		return "key listed, but its namespaces= does not allow " AGSBX_SSHSIG_NAMESPACE;
	if ((sg->valid_after && (uint64_t)now < sg->valid_after) ||
	    (sg->valid_before && (uint64_t)now > sg->valid_before))
		return "key listed, but outside its valid-after/valid-before window";
	return NULL;
}

/* Decides trust; fills res->trusted/identity/reason. */
static void check_anchors(const struct anchors *a, const struct agsbx_verify_opts *o, const uint8_t *blob,
			  size_t n, struct agsbx_verify_result *res)
{
	int64_t now = o->now ? o->now : (int64_t)time(NULL);
	const char *last_why = NULL;
	snprintf(res->trust_source, sizeof res->trust_source, "%s", a->kind);
	for (size_t i = 0; i < a->n; i++) {
		const struct ev_signer *sg = &a->v[i].s;
		/* a cert-authority line names a CA key, which only a
		 * certificate can match: never a plain signing key */
		if (sg->cert_authority || !same_key(&sg->key, blob, n))
			continue;
		if (!sg->principals) { /* key file or keys URL */
			snprintf(res->identity, sizeof res->identity, "%s",
				 sg->key.comment ? sg->key.comment : a->source);
			res->trusted = true;
			return;
		}
		const char *why = signer_refuses(sg, o->identity, now);
		if (why) {
			last_why = why;
			continue;
		}
		snprintf(res->identity, sizeof res->identity, "%s", o->identity ? o->identity : sg->principals);
		res->trusted = true;
		return;
	}
	snprintf(res->reason, sizeof res->reason, "%s (%s %s)",
		 last_why ? last_why : "signing key not found", a->kind, a->source);
}

static int load_anchors(const struct agsbx_verify_opts *o, struct anchors *a, char *err, size_t err_size)
{
	int given = !!o->key_path + !!o->allowed_signers + !!o->keys_url;
	if (given > 1) {
		ev_set_err(err, err_size, "give one of --key, --allowed-signers, --keys-url");
		return -EINVAL;
	}
	if (o->identity && !o->allowed_signers) {
		ev_set_err(err, err_size, "--identity needs --allowed-signers");
		return -EINVAL;
	}
	if (o->key_path) {
		a->kind = "key file";
		return load_file_anchors(a, o->key_path, false, err, err_size);
	}
	if (o->allowed_signers) {
		a->kind = "allowed_signers";
		return load_file_anchors(a, o->allowed_signers, true, err, err_size);
	}
	if (o->keys_url) {
		a->kind = "keys URL";
		return load_url_anchors(a, o->keys_url, o->allow_insecure_url, err, err_size);
	}
	return 0;
}

/* ---- the signature ---------------------------------------------------- */

static bool member_is(const json_t *sig, const char *key, const char *want)
{
	const char *v = ev_jstr(sig, key);
	return v && strcmp(v, want) == 0;
}

/* The digest the signature must cover: the loader's when it hashed the
 * canonical form as it read (sha512, what ssh-keygen -Y sign uses), else
 * hashed here from the tree, as it is produced: never held in full. */
static int canonical_digest(const json_t *bundle, const char *alg, const uint8_t *loaded_sha512, uint8_t *digest,
			    size_t *dlen)
{
	if (loaded_sha512 && strcmp(alg, "sha512") == 0) {
		memcpy(digest, loaded_sha512, AGSBX_BUNDLE_SHA512_BYTES);
		*dlen = AGSBX_BUNDLE_SHA512_BYTES;
		return 0;
	}
	return ev_json_canonical_digest(bundle, "signature", alg, digest, dlen);
}

static int check_signature(const json_t *bundle, const json_t *sig, const uint8_t *loaded_sha512,
			   struct agsbx_verify_result *res, struct sshsig *s)
{
	char *why = res->reason;
	size_t wsz = sizeof res->reason;
	if (!json_is_object(sig) || !member_is(sig, "format", "sshsig") ||
	    !member_is(sig, "namespace", AGSBX_SSHSIG_NAMESPACE)) {
		ev_set_err(why, wsz, "signature is not an sshsig in namespace %s", AGSBX_SSHSIG_NAMESPACE);
		return -EINVAL;
	}
	const char *armored = ev_jstr(sig, "armored");
	if (!armored)
		return -EINVAL;
	int pr = sshsig_parse_armored(armored, strlen(armored), s, why, wsz);
	if (pr < 0)
		return pr == -ENOMEM ? pr : -EINVAL;
	if (!member_is(sig, "hash", s->hash)) {
		ev_set_err(why, wsz, "signature: \"hash\" member differs from the signature's (%s)", s->hash);
		return -EINVAL;
	}
	struct sshkey pub;
	const char *pub_text = ev_jstr(sig, "public_key");
	int kr = pub_text ? sshkey_parse_line(pub_text, &pub) : -EINVAL;
	if (kr == -ENOMEM)
		return kr;
	if (kr < 0) {
		ev_set_err(why, wsz, "signature: malformed public_key");
		return -EINVAL;
	}
	bool same = same_key(&pub, s->pubkey, s->pubkey_len);
	snprintf(res->key_type, sizeof res->key_type, "%s", pub.type);
	sshkey_clear(&pub);
	if (!same) {
		ev_set_err(why, wsz, "signature: public_key is not the key that signed");
		return -EINVAL;
	}
	sshkey_fingerprint(s->pubkey, s->pubkey_len, res->fingerprint);
	if (!member_is(sig, "fingerprint", res->fingerprint)) {
		ev_set_err(why, wsz, "signature: fingerprint member is not the signing key's");
		return -EINVAL;
	}
	uint8_t digest[64];
	size_t dlen;
	int r = canonical_digest(bundle, s->hash, loaded_sha512, digest, &dlen);
	if (r < 0) {
		ev_set_err(why, wsz, "bundle has no canonical form: %s", strerror(-r));
		return r == -ENOMEM ? r : -EINVAL;
	}
	return sshsig_verify_digest(s, AGSBX_SSHSIG_NAMESPACE, digest, dlen, why, wsz);
}

/* A good signature's verdict: trusted by an anchor or not, and the
 * challenge it must carry. */
static void judge_trust(const json_t *bundle, const struct agsbx_verify_opts *o, const struct anchors *a,
			const struct sshsig *s, struct agsbx_verify_result *res)
{
	if (a->n == 0) {
		res->status = AGSBX_VERIFY_NO_ANCHOR;
		ev_set_err(res->reason, sizeof res->reason,
			"signature is good but no trust anchor was given (--key, --allowed-signers or --keys-url)");
	} else {
		check_anchors(a, o, s->pubkey, s->pubkey_len, res);
		res->status = res->trusted ? AGSBX_VERIFY_OK : AGSBX_VERIFY_UNTRUSTED;
	}
	if (res->status == AGSBX_VERIFY_OK && res->challenge_checked && !res->challenge_ok) {
		res->status = AGSBX_VERIFY_CHALLENGE;
		const char *c = ev_jstr(bundle, "challenge");
		ev_set_err(res->reason, sizeof res->reason, "challenge is %s%.64s%s, expected \"%.64s\"",
			c ? "\"" : "", c ? c : "absent", c ? "\"" : "", o->expect_challenge);
	}
}

int ev_bundle_verify(const json_t *bundle, const struct agsbx_verify_opts *opts,
			struct agsbx_verify_result *res, char *err, size_t err_size)
{
	static const struct agsbx_verify_opts none = { 0 };
	const struct agsbx_verify_opts *o = opts ? opts : &none;
	memset(res, 0, sizeof *res);
	if (sodium_init() < 0)
		return -ENOMEM;
	struct anchors a = { 0 };
	int r = load_anchors(o, &a, err, err_size);
	if (r < 0) {
		anchors_free(&a);
		return r;
	}
	const json_t *sig = json_object_get(bundle, "signature");
	if (o->expect_challenge) {
		const char *c = ev_jstr(bundle, "challenge");
		res->challenge_checked = true;
		res->challenge_ok = c && strcmp(c, o->expect_challenge) == 0;
	}
	if (!sig) {
		res->status = AGSBX_VERIFY_UNSIGNED;
		ev_set_err(res->reason, sizeof res->reason, "bundle is not signed");
		anchors_free(&a);
		return 0;
	}
	struct sshsig s = { 0 };
	r = check_signature(bundle, sig, o->canonical_sha512, res, &s);
	/* running out of memory says nothing about the signature: an error,
	 * never an "invalid" verdict on a bundle that may be good */
	if (r == -ENOMEM) {
		ev_set_err(err, err_size, "out of memory");
		memset(res, 0, sizeof *res);
		sshsig_clear(&s);
		anchors_free(&a);
		return r;
	}
	if (r < 0) {
		res->status = AGSBX_VERIFY_INVALID;
		sshsig_clear(&s);
		anchors_free(&a);
		return 0;
	}
	res->signature_valid = true;
	judge_trust(bundle, o, &a, &s, res);
	sshsig_clear(&s);
	anchors_free(&a);
	return 0;
}

int agsbx_bundle_verify(const json_t *bundle, const struct agsbx_verify_opts *opts, struct agsbx_verify_result *res,
			struct agsbx_error *e)
{
	char err[512] = "";
	return ev_error(e, ev_bundle_verify(bundle, opts, res, err, sizeof err), err);
}
