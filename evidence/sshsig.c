/* OpenSSH SSHSIG (PROTOCOL.sshsig): the blob and its signed data; signing
 * with Ed25519 (libsodium), verification for every key type sshsig-pk.c
 * knows.
 *
 * Blob:        "SSHSIG" u32(1) string(pubkey) string(namespace)
 *              string(reserved) string(hash_alg) string(signature)
 * Signed data: "SSHSIG" string(namespace) string(reserved)
 *              string(hash_alg) string(H(message))
 * The armor wraps the base64 blob at 70 columns, as ssh-keygen does. */
#include "evidence/internal.h"

#include "base/cleanup.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define SIG_MAGIC "SSHSIG"
#define SIG_BEGIN "-----BEGIN SSH SIGNATURE-----\n"
#define SIG_END "-----END SSH SIGNATURE-----\n"

void sshsig_clear(struct sshsig *s)
{
	free(s->blob);
	memset(s, 0, sizeof *s);
}

static int copy_str(char *dst, size_t size, const uint8_t *src, size_t n)
{
	if (n >= size || memchr(src, '\0', n))
		return -EINVAL;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

/* Every line of the body is base64 followed by "\n"; nothing else. */
static bool armor_body_ok(const char *b, size_t n)
{
	if (n == 0 || b[n - 1] != '\n')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = b[i];
		bool b64 = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			   c == '+' || c == '/' || c == '=';
		if (!b64 && !(c == '\n' && i > 0 && b[i - 1] != '\n'))
			return false;
	}
	return true;
}

static int parse_blob(struct sshsig *s, char *err, size_t err_size)
{
	struct sshrd rd = { s->blob, s->blob_len };
	uint32_t version;
	const uint8_t *ns, *reserved, *hash, *sig;
	size_t ns_n, reserved_n, hash_n, sig_n;
	if (rd.left < 6 || memcmp(rd.p, SIG_MAGIC, 6) != 0) {
		ev_set_err(err, err_size, "signature: not an SSHSIG blob");
		return -EINVAL;
	}
	rd.p += 6;
	rd.left -= 6;
	if (sshrd_u32(&rd, &version) < 0 || version != 1) {
		ev_set_err(err, err_size, "signature: unsupported SSHSIG version");
		return -EINVAL;
	}
	if (sshrd_str(&rd, &s->pubkey, &s->pubkey_len) < 0 || sshrd_str(&rd, &ns, &ns_n) < 0 ||
	    sshrd_str(&rd, &reserved, &reserved_n) < 0 || sshrd_str(&rd, &hash, &hash_n) < 0 ||
	    sshrd_str(&rd, &sig, &sig_n) < 0 || rd.left != 0 ||
	    copy_str(s->namespace, sizeof s->namespace, ns, ns_n) < 0 ||
	    copy_str(s->hash, sizeof s->hash, hash, hash_n) < 0) {
		ev_set_err(err, err_size, "signature: malformed SSHSIG blob");
		return -EINVAL;
	}
	if (reserved_n != 0) {
		ev_set_err(err, err_size, "signature: reserved field not empty");
		return -EINVAL;
	}
	struct sshrd srd = { sig, sig_n };
	const uint8_t *type;
	size_t type_n;
	if (sshrd_str(&srd, &type, &type_n) < 0 || copy_str(s->sigtype, sizeof s->sigtype, type, type_n) < 0 ||
	    sshrd_str(&srd, &s->sig, &s->sig_len) < 0 || srd.left != 0) {
		ev_set_err(err, err_size, "signature: malformed signature field");
		return -EINVAL;
	}
	return 0;
}

int sshsig_parse_armored(const char *text, size_t len, struct sshsig *s, char *err, size_t err_size)
{
	memset(s, 0, sizeof *s);
	size_t bl = strlen(SIG_BEGIN), el = strlen(SIG_END);
	if (len < bl + el || memcmp(text, SIG_BEGIN, bl) != 0 || memcmp(text + len - el, SIG_END, el) != 0) {
		ev_set_err(err, err_size, "signature: not an armored SSH signature");
		return -EINVAL;
	}
	const char *body = text + bl;
	size_t body_len = len - bl - el;
	if (!armor_body_ok(body, body_len)) {
		ev_set_err(err, err_size, "signature: malformed armor");
		return -EINVAL;
	}
	s->blob = ev_b64_decode(body, body_len, "\n", &s->blob_len);
	if (!s->blob && errno == ENOMEM) {
		ev_set_err(err, err_size, "out of memory");
		return -ENOMEM;
	}
	if (!s->blob) {
		ev_set_err(err, err_size, "signature: invalid base64");
		return -EINVAL;
	}
	int r = parse_blob(s, err, err_size);
	if (r < 0)
		sshsig_clear(s);
	return r;
}

static int hash_message(const char *alg, const void *msg, size_t len, uint8_t *out, size_t *out_len)
{
	if (strcmp(alg, "sha512") == 0) {
		crypto_hash_sha512(out, msg, len);
		*out_len = crypto_hash_sha512_BYTES;
		return 0;
	}
	if (strcmp(alg, "sha256") == 0) {
		crypto_hash_sha256(out, msg, len);
		*out_len = crypto_hash_sha256_BYTES;
		return 0;
	}
	return -EINVAL;
}

static void signed_data(struct sbuf *b, const char *namespace, const char *alg, const uint8_t *h, size_t hn)
{
	sbuf_put(b, SIG_MAGIC, 6);
	sbuf_sshstr(b, namespace, strlen(namespace));
	sbuf_sshstr(b, "", 0);
	sbuf_sshstr(b, alg, strlen(alg));
	sbuf_sshstr(b, h, hn);
}

char *sshsig_sign_ed25519(const struct ed25519_private *k, const char *namespace, const void *msg, size_t len)
{
	uint8_t h[crypto_hash_sha512_BYTES];
	size_t hn;
	hash_message("sha512", msg, len, h, &hn);
	struct sbuf data = { 0 }, sigfield = { 0 }, pub = { 0 }, blob = { 0 };
	signed_data(&data, namespace, "sha512", h, hn);
	uint8_t sig[ED25519_SIG];
	if (!data.oom)
		crypto_sign_detached(sig, NULL, (const uint8_t *)data.p, data.len, k->sk);
	sbuf_sshstr(&sigfield, "ssh-ed25519", 11);
	sbuf_sshstr(&sigfield, sig, sizeof sig);
	sshkey_ed25519_blob(&pub, k->pk);

	sbuf_put(&blob, SIG_MAGIC, 6);
	sbuf_u32(&blob, 1);
	sbuf_sshstr(&blob, pub.p, pub.len);
	sbuf_sshstr(&blob, namespace, strlen(namespace));
	sbuf_sshstr(&blob, "", 0);
	sbuf_sshstr(&blob, "sha512", 6);
	sbuf_sshstr(&blob, sigfield.p, sigfield.len);

	char *armored = ev_armor(SIG_BEGIN, &blob, SIG_END, data.oom || sigfield.oom || pub.oom);
	sbuf_clear(&data);
	sbuf_clear(&sigfield);
	sbuf_clear(&pub);
	sbuf_clear(&blob);
	return armored;
}

int sshsig_verify_digest(const struct sshsig *s, const char *namespace, const uint8_t *h, size_t hn, char *err,
			 size_t err_size)
{
	if (strcmp(s->namespace, namespace) != 0) {
		ev_set_err(err, err_size, "signature namespace is \"%s\", expected \"%s\"", s->namespace, namespace);
		return -EBADMSG;
	}
	size_t want = strcmp(s->hash, "sha512") == 0 ? crypto_hash_sha512_BYTES
		      : strcmp(s->hash, "sha256") == 0 ? crypto_hash_sha256_BYTES
							: 0;
	if (want == 0 || hn != want) {
		ev_set_err(err, err_size, "unsupported signature hash \"%s\"", s->hash);
		return -EINVAL;
	}
	struct sbuf data = { 0 };
	signed_data(&data, namespace, s->hash, h, hn);
	if (data.oom) {
		sbuf_clear(&data);
		return -ENOMEM;
	}
	int r = sshsig_verify_key(s->pubkey, s->pubkey_len, s->sigtype, s->sig, s->sig_len,
				  (const uint8_t *)data.p, data.len);
	sbuf_clear(&data);
	if (r == -EBADMSG)
		ev_set_err(err, err_size, "signature does not match the bundle content");
	else if (r < 0) {
		char type[64];
		ev_set_err(err, err_size, "unsupported or malformed %s signature (%s key)", s->sigtype,
			   sshkey_blob_type(s->pubkey, s->pubkey_len, type));
	}
	return r;
}

int sshsig_verify(const struct sshsig *s, const char *namespace, const void *msg, size_t len, char *err,
		  size_t err_size)
{
	uint8_t h[crypto_hash_sha512_BYTES];
	size_t hn;
	if (hash_message(s->hash, msg, len, h, &hn) < 0) {
		ev_set_err(err, err_size, "unsupported signature hash \"%s\"", s->hash);
		return -EINVAL;
	}
	return sshsig_verify_digest(s, namespace, h, hn, err, err_size);
}
