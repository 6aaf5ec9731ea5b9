/* The public-key step of SSHSIG verification, for every key type
 * `ssh-keygen -Y sign` produces without hardware: Ed25519 (libsodium), RSA
 * with rsa-sha2-512/256 and ECDSA on P-256/384/521 (OpenSSL's libcrypto,
 * which libsodium does not replace: it has neither RSA nor the NIST curves).
 * Acceptance follows OpenSSH 9.2's sshsig.c and ssh-rsa.c / ssh-ecdsa.c:
 * an RSA signature must be rsa-sha2-512 or rsa-sha2-256 (sshsig.c
 * RSA_SIGN_ALLOWED; SHA-1 "ssh-rsa" is refused) over a modulus of at least
 * 1024 bits (SSH_RSA_MINIMUM_MODULUS_SIZE), a short signature is left-padded
 * to the modulus and a long one refused; an ECDSA signature's type must be
 * the key's own type, hashed with the curve's digest; trailing bytes
 * anywhere are refused. */
#include "evidence/internal.h"

#include <errno.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define RSA_MIN_BITS 1024
/* OpenSSH's SSHBUF_MAX_BIGNUM (16384 bits) plus a byte for the sign. */
#define RSA_MAX_BYTES (16384 / 8 + 1)

struct curve {
	const char *type, *name, *group;
	const char *digest;
};

static const struct curve curves[] = {
	{ "ecdsa-sha2-nistp256", "nistp256", "P-256", "SHA256" },
	{ "ecdsa-sha2-nistp384", "nistp384", "P-384", "SHA384" },
	{ "ecdsa-sha2-nistp521", "nistp521", "P-521", "SHA512" },
};

/* An SSH mpint read as OpenSSH's sshbuf_get_bignum2_bytes_direct() does:
 * a set sign bit is refused (negative), so is a value over 16 KiB bits
 * (one leading zero allowed for the sign), leading zeros are trimmed; the
 * magnitude at *v, *n. */
static int rd_mpint_pos(struct sshrd *rd, const uint8_t **v, size_t *n)
{
	if (sshrd_str(rd, v, n) < 0 || (*n && ((*v)[0] & 0x80)) || *n > RSA_MAX_BYTES ||
	    (*n == RSA_MAX_BYTES && (*v)[0] != 0))
		return -EINVAL;
	while (*n && (*v)[0] == 0) {
		(*v)++;
		(*n)--;
	}
	return 0;
}

static bool rd_is(struct sshrd *rd, const char *want)
{
	const uint8_t *s;
	size_t n;
	return sshrd_str(rd, &s, &n) == 0 && n == strlen(want) && memcmp(s, want, n) == 0;
}

static EVP_PKEY *pkey_from(const char *alg, OSSL_PARAM_BLD *bld)
{
	OSSL_PARAM *params = bld ? OSSL_PARAM_BLD_to_param(bld) : NULL;
	EVP_PKEY_CTX *ctx = params ? EVP_PKEY_CTX_new_from_name(NULL, alg, NULL) : NULL;
	EVP_PKEY *pkey = NULL;
	if (ctx && EVP_PKEY_fromdata_init(ctx) == 1)
		EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params);
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return pkey;
}

static EVP_PKEY *rsa_key(struct sshrd *rd)
{
	const uint8_t *e, *n;
	size_t en, nn;
	if (rd_mpint_pos(rd, &e, &en) < 0 || rd_mpint_pos(rd, &n, &nn) < 0 || rd->left != 0)
		return NULL;
	BIGNUM *bn_e = BN_bin2bn(e, (int)en, NULL), *bn_n = BN_bin2bn(n, (int)nn, NULL);
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	EVP_PKEY *pkey = NULL;
	if (bn_e && bn_n && bld && BN_num_bits(bn_n) >= RSA_MIN_BITS &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1 &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1)
		pkey = pkey_from("RSA", bld);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn_e);
	BN_free(bn_n);
	return pkey;
}

/* The point is decoded by libcrypto (on the curve or refused) and checked
 * as OpenSSH's sshkey_ec_validate_public does (EVP_PKEY_public_check). */
static EVP_PKEY *ec_key(struct sshrd *rd, const struct curve *c)
{
	const uint8_t *q;
	size_t qn;
	if (!rd_is(rd, c->name) || sshrd_str(rd, &q, &qn) < 0 || rd->left != 0)
		return NULL;
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	EVP_PKEY *pkey = NULL;
	if (bld && OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, c->group, 0) == 1 &&
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, q, qn) == 1)
		pkey = pkey_from("EC", bld);
	OSSL_PARAM_BLD_free(bld);
	EVP_PKEY_CTX *ctx = pkey ? EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL) : NULL;
	if (pkey && (!ctx || EVP_PKEY_public_check(ctx) != 1)) {
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
	EVP_PKEY_CTX_free(ctx);
	return pkey;
}

/* 1 good, 0 bad signature, -EINVAL when libcrypto could not judge. */
static int digest_verify(EVP_PKEY *pkey, const char *digest, const uint8_t *sig, size_t sig_n,
			 const uint8_t *data, size_t data_n)
{
	EVP_MD_CTX *mctx = EVP_MD_CTX_new();
	int r = -EINVAL;
	if (mctx && EVP_DigestVerifyInit_ex(mctx, NULL, digest, NULL, NULL, pkey, NULL) == 1)
		r = EVP_DigestVerify(mctx, sig, sig_n, data, data_n) == 1 ? 1 : 0;
	EVP_MD_CTX_free(mctx);
	return r;
}

static int verify_rsa(struct sshrd *key, const char *sigtype, const uint8_t *sig, size_t sig_n,
		      const uint8_t *data, size_t data_n)
{
	const char *digest = strcmp(sigtype, "rsa-sha2-512") == 0   ? "SHA512"
			     : strcmp(sigtype, "rsa-sha2-256") == 0 ? "SHA256"
								    : NULL;
	if (!digest)
		return -EINVAL;
	EVP_PKEY *pkey = rsa_key(key);
	if (!pkey)
		return -EINVAL;
	size_t mod = (size_t)EVP_PKEY_get_size(pkey);
	uint8_t *padded = sig_n <= mod ? calloc(1, mod) : NULL;
	int r = -EINVAL;
	if (padded) {
		memcpy(padded + (mod - sig_n), sig, sig_n);
		r = digest_verify(pkey, digest, padded, mod, data, data_n);
	}
	free(padded);
	EVP_PKEY_free(pkey);
	return r;
}

/* SSH's ECDSA signature is mpint r, mpint s; libcrypto wants DER. */
static int verify_ecdsa(struct sshrd *key, const struct curve *c, const char *sigtype, const uint8_t *sig,
			size_t sig_n, const uint8_t *data, size_t data_n)
{
	struct sshrd rd = { sig, sig_n };
	const uint8_t *rv, *sv;
	size_t rn, sn;
	if (strcmp(sigtype, c->type) != 0 || rd_mpint_pos(&rd, &rv, &rn) < 0 ||
	    rd_mpint_pos(&rd, &sv, &sn) < 0 || rd.left != 0)
		return -EINVAL;
	EVP_PKEY *pkey = ec_key(key, c);
	ECDSA_SIG *esig = ECDSA_SIG_new();
	BIGNUM *br = BN_bin2bn(rv, (int)rn, NULL), *bs = BN_bin2bn(sv, (int)sn, NULL);
	int r = -EINVAL;
	if (pkey && esig && br && bs && ECDSA_SIG_set0(esig, br, bs) == 1) {
		br = bs = NULL;
		unsigned char *der = NULL;
		int dn = i2d_ECDSA_SIG(esig, &der);
		if (dn > 0)
			r = digest_verify(pkey, c->digest, der, (size_t)dn, data, data_n);
		OPENSSL_free(der);
	}
	BN_free(br);
	BN_free(bs);
	ECDSA_SIG_free(esig);
	EVP_PKEY_free(pkey);
	return r;
}

static int verify_ed25519(const uint8_t *blob, size_t blob_n, const char *sigtype, const uint8_t *sig,
			  size_t sig_n, const uint8_t *data, size_t data_n)
{
	const uint8_t *pk;
	if (sshkey_ed25519_raw(blob, blob_n, &pk) < 0 || strcmp(sigtype, "ssh-ed25519") != 0 ||
	    sig_n != ED25519_SIG)
		return -EINVAL;
	return crypto_sign_verify_detached(sig, data, data_n, pk) == 0 ? 1 : 0;
}

int sshsig_verify_key(const uint8_t *blob, size_t blob_n, const char *sigtype, const uint8_t *sig,
		      size_t sig_n, const uint8_t *data, size_t data_n)
{
	struct sshrd rd = { blob, blob_n };
	const uint8_t *type;
	size_t type_n;
	if (sshrd_str(&rd, &type, &type_n) < 0)
		return -EINVAL;
	int r = -EINVAL;
	if (type_n == 11 && memcmp(type, "ssh-ed25519", 11) == 0)
		r = verify_ed25519(blob, blob_n, sigtype, sig, sig_n, data, data_n);
	else if (type_n == 7 && memcmp(type, "ssh-rsa", 7) == 0)
		r = verify_rsa(&rd, sigtype, sig, sig_n, data, data_n);
	for (size_t i = 0; i < sizeof curves / sizeof curves[0]; i++)
		if (type_n == strlen(curves[i].type) && memcmp(type, curves[i].type, type_n) == 0)
			r = verify_ecdsa(&rd, &curves[i], sigtype, sig, sig_n, data, data_n);
	return r < 0 ? r : r == 1 ? 0 : -EBADMSG;
}

bool sshkey_type_supported(const char *type)
{
	if (strcmp(type, "ssh-ed25519") == 0 || strcmp(type, "ssh-rsa") == 0)
		return true;
	for (size_t i = 0; i < sizeof curves / sizeof curves[0]; i++)
		if (strcmp(type, curves[i].type) == 0)
			return true;
	return false;
}
