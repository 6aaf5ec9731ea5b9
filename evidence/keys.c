/* OpenSSH keys: public key lines ("ssh-ed25519 AAAA... comment"), the
 * unencrypted openssh-key-v1 private key format (PROTOCOL.key), and keygen. */
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/cleanup.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_MAGIC "openssh-key-v1"
#define PEM_BEGIN "-----BEGIN OPENSSH PRIVATE KEY-----"
#define PEM_END "-----END OPENSSH PRIVATE KEY-----"

void sshkey_clear(struct sshkey *k)
{
	free(k->blob);
	free(k->comment);
	memset(k, 0, sizeof *k);
}

int sshkey_parse_line(const char *s, struct sshkey *k)
{
	memset(k, 0, sizeof *k);
	s += strspn(s, " \t");
	size_t tlen = strcspn(s, " \t\r\n");
	if (tlen == 0 || tlen >= sizeof k->type)
		return -EINVAL;
	memcpy(k->type, s, tlen);
	k->type[tlen] = '\0';
	s += tlen;
	s += strspn(s, " \t");
	size_t blen = strcspn(s, " \t\r\n");
	if (blen == 0)
		return -EINVAL;
	k->blob = ev_b64_decode(s, blen, NULL, &k->blob_len);
	if (!k->blob)
		return errno == ENOMEM ? -ENOMEM : -EINVAL;
	struct sshrd rd = { k->blob, k->blob_len };
	if (sshrd_expect(&rd, k->type) < 0) {
		sshkey_clear(k);
		return -EINVAL;
	}
	s += blen;
	s += strspn(s, " \t");
	size_t clen = strcspn(s, "\r\n");
	while (clen > 0 && isspace((unsigned char)s[clen - 1]))
		clen--;
	if (clen > 0) {
		k->comment = strndup(s, clen);
		if (!k->comment) {
			sshkey_clear(k);
			return -ENOMEM;
		}
	}
	return 0;
}

void sshkey_ed25519_blob(struct sbuf *b, const uint8_t pk[ED25519_PK])
{
	sbuf_sshstr(b, "ssh-ed25519", 11);
	sbuf_sshstr(b, pk, ED25519_PK);
}

int sshkey_ed25519_raw(const uint8_t *blob, size_t n, const uint8_t **pk)
{
	struct sshrd rd = { blob, n };
	size_t len;
	if (sshrd_expect(&rd, "ssh-ed25519") < 0 || sshrd_str(&rd, pk, &len) < 0 || len != ED25519_PK ||
	    rd.left != 0)
		return -EINVAL;
	return 0;
}

void sshkey_fingerprint(const uint8_t *blob, size_t n, char out[64])
{
	uint8_t h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, blob, n);
	char b64[sodium_base64_ENCODED_LEN(crypto_hash_sha256_BYTES, sodium_base64_VARIANT_ORIGINAL_NO_PADDING)];
	sodium_bin2base64(b64, sizeof b64, h, sizeof h, sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
	snprintf(out, 64, "SHA256:%s", b64);
}

const char *sshkey_blob_type(const uint8_t *blob, size_t n, char out[64])
{
	struct sshrd rd = { blob, n };
	const uint8_t *t;
	size_t tn;
	strcpy(out, "?");
	if (sshrd_str(&rd, &t, &tn) < 0 || tn == 0 || tn >= 64)
		return out;
	for (size_t i = 0; i < tn; i++)
		if (t[i] <= ' ' || t[i] > '~')
			return out;
	memcpy(out, t, tn);
	out[tn] = '\0';
	return out;
}

char *sshkey_format(const char *type, const uint8_t *blob, size_t n, const char *comment)
{
	_cleanup_free_ char *b64 = ev_b64_encode(blob, n);
	if (!b64)
		return NULL;
	char *s = NULL;
	if (asprintf(&s, "%s %s%s%s", type, b64, comment && *comment ? " " : "", comment ? comment : "") < 0)
		return NULL;
	return s;
}

void ed25519_private_clear(struct ed25519_private *k)
{
	sodium_memzero(k->sk, sizeof k->sk);
	free(k->comment);
	k->comment = NULL;
}

/* The base64 body between the PEM lines, decoded. */
static uint8_t *pem_body(const char *text, size_t len, size_t *n)
{
	const char *b = memmem(text, len, PEM_BEGIN, strlen(PEM_BEGIN));
	if (!b)
		return NULL;
	b += strlen(PEM_BEGIN);
	const char *e = memmem(b, len - (size_t)(b - text), PEM_END, strlen(PEM_END));
	if (!e)
		return NULL;
	return ev_b64_decode(b, (size_t)(e - b), " \t\r\n", n);
}

static int parse_private_section(struct sshrd *rd, struct ed25519_private *k, char *err, size_t err_size)
{
	uint32_t c1, c2;
	const uint8_t *pk, *sk, *comment;
	size_t pkn, skn, cn;
	if (sshrd_u32(rd, &c1) < 0 || sshrd_u32(rd, &c2) < 0) {
		ev_set_err(err, err_size, "truncated private key");
		return -EINVAL;
	}
	if (c1 != c2) {
		ev_set_err(err, err_size, "private key check bytes differ (corrupt or wrongly decrypted)");
		return -EINVAL;
	}
	if (sshrd_expect(rd, "ssh-ed25519") < 0 || sshrd_str(rd, &pk, &pkn) < 0 || pkn != ED25519_PK ||
	    sshrd_str(rd, &sk, &skn) < 0 || skn != ED25519_SK || sshrd_str(rd, &comment, &cn) < 0) {
		ev_set_err(err, err_size, "malformed Ed25519 private key");
		return -EINVAL;
	}
	/* libsodium's secret key is seed || public key, as OpenSSH stores it. */
	if (memcmp(sk + 32, pk, ED25519_PK) != 0) {
		ev_set_err(err, err_size, "private and public halves of the key differ");
		return -EINVAL;
	}
	for (size_t i = 0; i < rd->left; i++) {
		if (rd->p[i] != (uint8_t)(i + 1)) {
			ev_set_err(err, err_size, "bad private key padding");
			return -EINVAL;
		}
	}
	memcpy(k->pk, pk, ED25519_PK);
	memcpy(k->sk, sk, ED25519_SK);
	k->comment = strndup((const char *)comment, cn);
	return k->comment ? 0 : -ENOMEM;
}

int openssh_private_parse(const char *text, size_t len, enum private_key_kind *kind,
			  struct ed25519_private *k, char *err, size_t err_size)
{
	memset(k, 0, sizeof *k);
	size_t n;
	_cleanup_free_ uint8_t *raw = pem_body(text, len, &n);
	if (!raw) {
		ev_set_err(err, err_size, "not an OpenSSH private key (openssh-key-v1 PEM)");
		return -EINVAL;
	}
	struct sshrd rd = { raw, n };
	const uint8_t *cipher, *kdf, *kdfopts, *pub, *priv;
	size_t cipher_n, kdf_n, kdfopts_n, pub_n, priv_n;
	uint32_t nkeys;
	if (n < sizeof KEY_MAGIC || memcmp(raw, KEY_MAGIC, sizeof KEY_MAGIC) != 0) {
		ev_set_err(err, err_size, "not an openssh-key-v1 private key");
		return -EINVAL;
	}
	rd.p += sizeof KEY_MAGIC;
	rd.left -= sizeof KEY_MAGIC;
	if (sshrd_str(&rd, &cipher, &cipher_n) < 0 || sshrd_str(&rd, &kdf, &kdf_n) < 0 ||
	    sshrd_str(&rd, &kdfopts, &kdfopts_n) < 0 || sshrd_u32(&rd, &nkeys) < 0 || nkeys != 1 ||
	    sshrd_str(&rd, &pub, &pub_n) < 0 || sshrd_str(&rd, &priv, &priv_n) < 0) {
		ev_set_err(err, err_size, "malformed openssh-key-v1 private key");
		return -EINVAL;
	}
	char type[64];
	sshkey_blob_type(pub, pub_n, type);
	memcpy(k->type, type, sizeof type);
	bool plain_cipher = cipher_n == 4 && memcmp(cipher, "none", 4) == 0;
	bool plain_kdf = kdf_n == 4 && memcmp(kdf, "none", 4) == 0;
	if (!plain_cipher || !plain_kdf) {
		*kind = PRIVKEY_ENCRYPTED;
		return 0;
	}
	const uint8_t *raw_pk;
	if (sshkey_ed25519_raw(pub, pub_n, &raw_pk) < 0) {
		*kind = PRIVKEY_OTHER_TYPE;
		return 0;
	}
	struct sshrd prd = { priv, priv_n };
	int r = parse_private_section(&prd, k, err, err_size);
	if (r < 0) {
		ed25519_private_clear(k);
		return r;
	}
	if (memcmp(raw_pk, k->pk, ED25519_PK) != 0) {
		ed25519_private_clear(k);
		ev_set_err(err, err_size, "public key does not match the private key");
		return -EINVAL;
	}
	*kind = PRIVKEY_ED25519;
	return 0;
}

char *openssh_private_format(const struct ed25519_private *k)
{
	struct sbuf pub = { 0 }, priv = { 0 }, raw = { 0 };
	sshkey_ed25519_blob(&pub, k->pk);
	uint32_t check = randombytes_random();
	sbuf_u32(&priv, check);
	sbuf_u32(&priv, check);
	sbuf_sshstr(&priv, "ssh-ed25519", 11);
	sbuf_sshstr(&priv, k->pk, ED25519_PK);
	sbuf_sshstr(&priv, k->sk, ED25519_SK);
	const char *comment = k->comment ? k->comment : "";
	sbuf_sshstr(&priv, comment, strlen(comment));
	for (uint8_t pad = 1; priv.len % 8 != 0; pad++)
		sbuf_putc(&priv, (char)pad);

	sbuf_put(&raw, KEY_MAGIC, sizeof KEY_MAGIC); /* with its NUL */
	sbuf_sshstr(&raw, "none", 4);
	sbuf_sshstr(&raw, "none", 4);
	sbuf_sshstr(&raw, "", 0);
	sbuf_u32(&raw, 1);
	sbuf_sshstr(&raw, pub.p, pub.len);
	sbuf_sshstr(&raw, priv.p, priv.len);

	char *pem = ev_armor(PEM_BEGIN "\n", &raw, PEM_END "\n", pub.oom || priv.oom);
	if (priv.p)
		sodium_memzero(priv.p, priv.len);
	if (raw.p)
		sodium_memzero(raw.p, raw.len);
	sbuf_clear(&pub);
	sbuf_clear(&priv);
	sbuf_clear(&raw);
	return pem;
}

/* Writes data under a temporary name and link(2)s it into place: the
 * target appears complete or not at all, and an existing target is never
 * replaced (EEXIST). */
static int write_exclusive(const char *path, const char *data, size_t len, mode_t mode)
{
	_cleanup_free_ char *tmp = NULL;
	char suffix[17];
	agsbx_random_hex(suffix, 8);
	if (asprintf(&tmp, "%s.tmp-%s", path, suffix) < 0)
		return -ENOMEM;
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	int r = 0;
	if (fchmod(fd, mode) < 0)
		r = -errno;
	for (size_t off = 0; r == 0 && off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			r = -errno;
		else
			off += (size_t)w;
	}
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && link(tmp, path) < 0)
		r = -errno;
	unlink(tmp);
	return r;
}

static int keygen_buf(const char *path, const char *comment, char fingerprint[64], char *err, size_t err_size)
{
	if (sodium_init() < 0)
		return -ENOMEM;
	_cleanup_free_ char *pub_path = NULL;
	if (asprintf(&pub_path, "%s.pub", path) < 0)
		return -ENOMEM;
	if (comment && strpbrk(comment, "\r\n")) {
		ev_set_err(err, err_size, "the key comment must be one line");
		return -EINVAL;
	}
	struct stat st;
	if (lstat(path, &st) == 0 || lstat(pub_path, &st) == 0) {
		ev_set_err(err, err_size, "%s: already exists; refusing to overwrite a key",
			lstat(path, &st) == 0 ? path : pub_path);
		return -EEXIST;
	}
	struct ed25519_private k = { .comment = strdup(comment ? comment : "") };
	if (!k.comment)
		return -ENOMEM;
	crypto_sign_keypair(k.pk, k.sk);
	_cleanup_free_ char *pem = openssh_private_format(&k);
	struct sbuf blob = { 0 };
	sshkey_ed25519_blob(&blob, k.pk);
	_cleanup_free_ char *line = blob.oom ? NULL : sshkey_format("ssh-ed25519", (uint8_t *)blob.p, blob.len,
								   k.comment);
	if (!blob.oom)
		sshkey_fingerprint((uint8_t *)blob.p, blob.len, fingerprint);
	sbuf_clear(&blob);
	ed25519_private_clear(&k);
	if (!pem || !line)
		return -ENOMEM;
	size_t pem_len = strlen(pem);
	int r = write_exclusive(path, pem, pem_len, 0600);
	sodium_memzero(pem, pem_len);
	if (r < 0) {
		ev_set_err(err, err_size, "%s: %s", path, strerror(-r));
		return r;
	}
	_cleanup_free_ char *pub_text = NULL;
	if (asprintf(&pub_text, "%s\n", line) < 0) {
		unlink(path);
		return -ENOMEM;
	}
	r = write_exclusive(pub_path, pub_text, strlen(pub_text), 0644);
	if (r < 0) {
		unlink(path); /* we created it a moment ago: no half pair */
		ev_set_err(err, err_size, "%s: %s", pub_path, strerror(-r));
		return r;
	}
	return 0;
}

int agsbx_keygen(const char *path, const char *comment, char fingerprint[64], struct agsbx_error *e)
{
	char err[512] = "";
	return ev_error(e, keygen_buf(path, comment, fingerprint, err, sizeof err), err);
}
