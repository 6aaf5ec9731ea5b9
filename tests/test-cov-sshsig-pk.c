/* evidence/sshsig-pk.c: the public-key step of signature verification for
 * RSA and ECDSA keys, on keys libcrypto really generates and signatures it
 * really makes. A good signature verifies; a bad one is -EBADMSG; every
 * malformed key or signature blob (OpenSSH's refusals: negative or
 * oversized mpints, trailing bytes, the wrong curve, a point off the
 * curve, a short RSA modulus, a signature longer than the modulus, an
 * algorithm that does not fit the key) is -EINVAL, never a pass. */
#include "evidence/internal.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>

static const char msg[] = "the signed data";

struct blob {
	uint8_t *p;
	size_t n;
};

static struct blob take(struct sbuf *b)
{
	struct blob r;
	r.p = (uint8_t *)sbuf_take(b, &r.n);
	ck_assert_ptr_nonnull(r.p);
	return r;
}

/* An SSH mpint of a positive BIGNUM: big-endian, a leading zero when the
 * top bit is set. */
static void put_mpint(struct sbuf *b, const BIGNUM *bn)
{
	int n = BN_num_bytes(bn);
	uint8_t *buf = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	BN_bn2bin(bn, buf + 1);
	size_t off = (n > 0 && (buf[1] & 0x80)) ? 0 : 1;
	sbuf_sshstr(b, buf + off, (size_t)n + 1 - off);
	free(buf);
}

static BIGNUM *get_bn(EVP_PKEY *k, const char *name)
{
	BIGNUM *bn = NULL;
	ck_assert_int_eq(EVP_PKEY_get_bn_param(k, name, &bn), 1);
	return bn;
}

static uint8_t *sign_raw(EVP_PKEY *k, const char *digest, size_t *n)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(EVP_DigestSignInit_ex(c, NULL, digest, NULL, NULL, k, NULL), 1);
	ck_assert_int_eq(EVP_DigestSign(c, NULL, n, (const uint8_t *)msg, sizeof msg), 1);
	uint8_t *sig = malloc(*n);
	ck_assert_ptr_nonnull(sig);
	ck_assert_int_eq(EVP_DigestSign(c, sig, n, (const uint8_t *)msg, sizeof msg), 1);
	EVP_MD_CTX_free(c);
	return sig;
}

static int verify(struct blob key, const char *sigtype, struct blob sig)
{
	return sshsig_verify_key(key.p, key.n, sigtype, sig.p, sig.n, (const uint8_t *)msg, sizeof msg);
}

/* ---- RSA ---------------------------------------------------------------- */

static EVP_PKEY *rsa_gen(unsigned bits)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
	ck_assert_ptr_nonnull(k);
	return k;
}

static struct blob rsa_blob(EVP_PKEY *k)
{
	struct sbuf b = { 0 };
	BIGNUM *e = get_bn(k, OSSL_PKEY_PARAM_RSA_E), *n = get_bn(k, OSSL_PKEY_PARAM_RSA_N);
	sbuf_sshstr(&b, "ssh-rsa", 7);
	put_mpint(&b, e);
	put_mpint(&b, n);
	BN_free(e);
	BN_free(n);
	return take(&b);
}

START_TEST(test_rsa_good_and_bad)
{
	EVP_PKEY *k = rsa_gen(2048);
	struct blob key = rsa_blob(k);
	struct blob s256, s512;
	s256.p = sign_raw(k, "SHA256", &s256.n);
	s512.p = sign_raw(k, "SHA512", &s512.n);
	ck_assert_int_eq(verify(key, "rsa-sha2-256", s256), 0);
	ck_assert_int_eq(verify(key, "rsa-sha2-512", s512), 0);
	/* the wrong digest for the signature, a flipped bit: bad, not malformed */
	ck_assert_int_eq(verify(key, "rsa-sha2-512", s256), -EBADMSG);
	s256.p[s256.n / 2] ^= 1;
	ck_assert_int_eq(verify(key, "rsa-sha2-256", s256), -EBADMSG);
	/* SHA-1 ("ssh-rsa" signatures) and unknown names: OpenSSH 9 refuses */
	ck_assert_int_eq(verify(key, "ssh-rsa", s512), -EINVAL);
	ck_assert_int_eq(verify(key, "rsa-sha2-384", s512), -EINVAL);
	/* a signature longer than the modulus */
	struct blob longer = { calloc(1, s512.n + 1), s512.n + 1 };
	ck_assert_ptr_nonnull(longer.p);
	memcpy(longer.p + 1, s512.p, s512.n);
	ck_assert_int_eq(verify(key, "rsa-sha2-512", longer), -EINVAL);
	/* a shorter one is left-padded with zeros, as OpenSSH does: verifies
	 * only when its leading byte really was zero, else it is bad */
	struct blob shorter = { s512.p + 1, s512.n - 1 };
	int r = verify(key, "rsa-sha2-512", shorter);
	ck_assert_int_eq(r, s512.p[0] == 0 ? 0 : -EBADMSG);
	free(longer.p);
	free(s256.p);
	free(s512.p);
	free(key.p);
	EVP_PKEY_free(k);
}
END_TEST

/* Keys OpenSSH's sshkey_from_blob refuses. */
START_TEST(test_rsa_malformed_keys)
{
	EVP_PKEY *k = rsa_gen(2048);
	struct blob sig;
	sig.p = sign_raw(k, "SHA256", &sig.n);
	BIGNUM *e = get_bn(k, OSSL_PKEY_PARAM_RSA_E), *n = get_bn(k, OSSL_PKEY_PARAM_RSA_N);
	uint8_t nbin[256];
	ck_assert_int_eq(BN_bn2bin(n, nbin), 256);
	ck_assert(nbin[0] & 0x80);

	struct sbuf b = { 0 };
	/* trailing bytes after n */
	sbuf_sshstr(&b, "ssh-rsa", 7);
	put_mpint(&b, e);
	put_mpint(&b, n);
	sbuf_putc(&b, 0);
	struct blob trailing = take(&b);
	ck_assert_int_eq(verify(trailing, "rsa-sha2-256", sig), -EINVAL);
	/* n without its sign byte reads as negative */
	sbuf_sshstr(&b, "ssh-rsa", 7);
	put_mpint(&b, e);
	sbuf_sshstr(&b, nbin, sizeof nbin);
	struct blob negative = take(&b);
	ck_assert_int_eq(verify(negative, "rsa-sha2-256", sig), -EINVAL);
	/* n truncated (the blob ends inside it) */
	sbuf_sshstr(&b, "ssh-rsa", 7);
	put_mpint(&b, e);
	sbuf_u32(&b, 257);
	sbuf_put(&b, "\0", 1);
	sbuf_put(&b, nbin, 100);
	struct blob cut = take(&b);
	ck_assert_int_eq(verify(cut, "rsa-sha2-256", sig), -EINVAL);
	/* an mpint over 16384 bits */
	size_t big_n = 16384 / 8 + 2;
	uint8_t *big = calloc(1, big_n);
	ck_assert_ptr_nonnull(big);
	big[1] = 1;
	sbuf_sshstr(&b, "ssh-rsa", 7);
	put_mpint(&b, e);
	sbuf_sshstr(&b, big, big_n);
	struct blob huge = take(&b);
	ck_assert_int_eq(verify(huge, "rsa-sha2-256", sig), -EINVAL);
	/* exactly 16384 bits plus a sign byte that is not zero */
	big[0] = 0x01;
	sbuf_sshstr(&b, "ssh-rsa", 7);
	put_mpint(&b, e);
	sbuf_sshstr(&b, big, big_n - 1);
	struct blob edge = take(&b);
	ck_assert_int_eq(verify(edge, "rsa-sha2-256", sig), -EINVAL);
	/* leading zeros are trimmed: the same key with three of them verifies */
	sbuf_sshstr(&b, "ssh-rsa", 7);
	put_mpint(&b, e);
	uint8_t padded[259] = { 0 };
	memcpy(padded + 3, nbin, sizeof nbin);
	sbuf_sshstr(&b, padded, sizeof padded);
	struct blob zeros = take(&b);
	ck_assert_int_eq(verify(zeros, "rsa-sha2-256", sig), 0);
	/* a type string alone */
	sbuf_sshstr(&b, "ssh-rsa", 7);
	struct blob bare = take(&b);
	ck_assert_int_eq(verify(bare, "rsa-sha2-256", sig), -EINVAL);
	free(big);
	free(trailing.p);
	free(negative.p);
	free(cut.p);
	free(huge.p);
	free(edge.p);
	free(zeros.p);
	free(bare.p);
	BN_free(e);
	BN_free(n);
	free(sig.p);
	EVP_PKEY_free(k);
}
END_TEST

/* Below 1024 bits OpenSSH refuses the key (SSH_RSA_MINIMUM_MODULUS_SIZE),
 * even with a signature libcrypto would accept. */
START_TEST(test_rsa_short_modulus)
{
	EVP_PKEY *k = rsa_gen(768);
	struct blob key = rsa_blob(k);
	struct blob sig;
	sig.p = sign_raw(k, "SHA256", &sig.n);
	ck_assert_int_eq(verify(key, "rsa-sha2-256", sig), -EINVAL);
	free(sig.p);
	free(key.p);
	EVP_PKEY_free(k);
}
END_TEST

/* ---- ECDSA -------------------------------------------------------------- */

static const struct ec_case {
	const char *type, *name, *group, *digest;
} ec_cases[] = {
	{ "ecdsa-sha2-nistp256", "nistp256", "P-256", "SHA256" },
	{ "ecdsa-sha2-nistp384", "nistp384", "P-384", "SHA384" },
	{ "ecdsa-sha2-nistp521", "nistp521", "P-521", "SHA512" },
};

static struct blob ec_blob(const char *type, const char *name, const uint8_t *q, size_t qn)
{
	struct sbuf b = { 0 };
	sbuf_sshstr(&b, type, strlen(type));
	sbuf_sshstr(&b, name, strlen(name));
	sbuf_sshstr(&b, q, qn);
	return take(&b);
}

/* DER (what libcrypto makes) to SSH's mpint r, mpint s. */
static struct blob ec_sig(EVP_PKEY *k, const char *digest)
{
	size_t dn;
	uint8_t *der = sign_raw(k, digest, &dn);
	const uint8_t *p = der;
	ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)dn);
	ck_assert_ptr_nonnull(es);
	struct sbuf b = { 0 };
	put_mpint(&b, ECDSA_SIG_get0_r(es));
	put_mpint(&b, ECDSA_SIG_get0_s(es));
	ECDSA_SIG_free(es);
	free(der);
	return take(&b);
}

START_TEST(test_ecdsa_curves)
{
	const struct ec_case *c = &ec_cases[_i];
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", c->group);
	ck_assert_ptr_nonnull(k);
	uint8_t q[200];
	size_t qn = 0;
	ck_assert_int_eq(EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, q, sizeof q, &qn), 1);
	struct blob key = ec_blob(c->type, c->name, q, qn);
	struct blob sig = ec_sig(k, c->digest);
	ck_assert_int_eq(verify(key, c->type, sig), 0);
	/* the signature type must be the key's own */
	const char *other = ec_cases[(_i + 1) % 3].type;
	ck_assert_int_eq(verify(key, other, sig), -EINVAL);
	/* trailing bytes after s, and a signature without s */
	struct sbuf b = { 0 };
	sbuf_put(&b, sig.p, sig.n);
	sbuf_putc(&b, 0);
	struct blob sig_trailing = take(&b);
	ck_assert_int_eq(verify(key, c->type, sig_trailing), -EINVAL);
	uint32_t rlen = (uint32_t)sig.p[0] << 24 | (uint32_t)sig.p[1] << 16 | (uint32_t)sig.p[2] << 8 | sig.p[3];
	struct blob r_only = { sig.p, 4 + rlen };
	ck_assert_int_eq(verify(key, c->type, r_only), -EINVAL);
	/* a negative r (sign bit set, no leading zero) */
	sbuf_sshstr(&b, "\x80\x01", 2);
	sbuf_put(&b, sig.p + 4 + rlen, sig.n - 4 - rlen);
	struct blob neg = take(&b);
	ck_assert_int_eq(verify(key, c->type, neg), -EINVAL);
	/* a tampered signature over the same key is bad, not malformed */
	size_t last = sig.n - 1;
	sig.p[last] ^= 1;
	ck_assert_int_eq(verify(key, c->type, sig), -EBADMSG);
	sig.p[last] ^= 1;
	/* the curve name in the key must match its type */
	struct blob wrong_curve = ec_blob(c->type, ec_cases[(_i + 1) % 3].name, q, qn);
	ck_assert_int_eq(verify(wrong_curve, c->type, sig), -EINVAL);
	/* a point off the curve: the last coordinate byte changed */
	q[qn - 1] ^= 1;
	struct blob off_curve = ec_blob(c->type, c->name, q, qn);
	ck_assert_int_eq(verify(off_curve, c->type, sig), -EINVAL);
	q[qn - 1] ^= 1;
	/* trailing bytes after the point */
	sbuf_put(&b, key.p, key.n);
	sbuf_putc(&b, 7);
	struct blob key_trailing = take(&b);
	ck_assert_int_eq(verify(key_trailing, c->type, sig), -EINVAL);
	/* the point missing */
	struct sbuf kb = { 0 };
	sbuf_sshstr(&kb, c->type, strlen(c->type));
	sbuf_sshstr(&kb, c->name, strlen(c->name));
	struct blob no_point = take(&kb);
	ck_assert_int_eq(verify(no_point, c->type, sig), -EINVAL);
	free(no_point.p);
	free(key_trailing.p);
	free(off_curve.p);
	free(wrong_curve.p);
	free(neg.p);
	free(sig_trailing.p);
	free(sig.p);
	free(key.p);
	EVP_PKEY_free(k);
}
END_TEST

/* ---- any key ------------------------------------------------------------ */

START_TEST(test_unknown_and_truncated)
{
	struct blob sig = { (uint8_t *)"x", 1 };
	struct sbuf b = { 0 };
	sbuf_sshstr(&b, "ssh-dss", 7);
	struct blob dss = take(&b);
	ck_assert_int_eq(verify(dss, "ssh-dss", sig), -EINVAL);
	/* a length prefix past the end of the blob */
	uint8_t cut[] = { 0, 0, 0, 11, 's', 's', 'h' };
	struct blob truncated = { cut, sizeof cut };
	ck_assert_int_eq(verify(truncated, "ssh-ed25519", sig), -EINVAL);
	struct blob empty = { cut, 0 };
	ck_assert_int_eq(verify(empty, "ssh-ed25519", sig), -EINVAL);
	/* an Ed25519 key with a signature of the wrong length or type */
	uint8_t pk[32] = { 1 };
	sshkey_ed25519_blob(&b, pk);
	struct blob ed = take(&b);
	uint8_t sig64[64] = { 0 };
	struct blob s63 = { sig64, 63 }, s64 = { sig64, 64 };
	ck_assert_int_eq(verify(ed, "ssh-ed25519", s63), -EINVAL);
	ck_assert_int_eq(verify(ed, "rsa-sha2-256", s64), -EINVAL);
	ck_assert_int_eq(verify(ed, "ssh-ed25519", s64), -EBADMSG);
	ck_assert(sshkey_type_supported("ecdsa-sha2-nistp384"));
	ck_assert(sshkey_type_supported("ssh-rsa"));
	ck_assert(!sshkey_type_supported("ssh-dss"));
	ck_assert(!sshkey_type_supported("ecdsa-sha2-nistp224"));
	free(dss.p);
	free(ed.p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cov-sshsig-pk");
	TCase *t = tcase_create("pk");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_rsa_good_and_bad);
	tcase_add_test(t, test_rsa_malformed_keys);
	tcase_add_test(t, test_rsa_short_modulus);
	tcase_add_loop_test(t, test_ecdsa_curves, 0, 3);
	tcase_add_test(t, test_unknown_and_truncated);
	suite_add_tcase(s, t);
	return agsbx_test_run_suite(s);
}
