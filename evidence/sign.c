/* Signing a bundle: built in for unencrypted OpenSSH Ed25519 keys; through
 * `ssh-keygen -Y sign` (run by the bounded runner) for RSA and ECDSA keys,
 * encrypted keys and keys held by an ssh-agent (KEY is the .pub file,
 * SSH_AUTH_SOCK set). Every signature is verified in process before it is
 * stored, whoever made it. */
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/cleanup.h"
#include "base/runner.h"
#include "base/util.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY_FILE_MAX (64u << 10)
#define SSH_KEYGEN_TIMEOUT_MS 120000

/* Builds the "signature" member from an armored SSHSIG after checking it
 * really signs canonical (whoever produced it). */
static int set_signature(json_t *bundle, const char *armored, const char *canon, size_t clen,
			 const char *comment, char *err, size_t err_size)
{
	struct sshsig s;
	int r = sshsig_parse_armored(armored, strlen(armored), &s, err, err_size);
	if (r < 0)
		return r;
	r = sshsig_verify(&s, AGSBX_SSHSIG_NAMESPACE, canon, clen, err, err_size);
	if (r < 0) {
		sshsig_clear(&s);
		return r == -EBADMSG ? -EINVAL : r;
	}
	char fp[64];
	sshkey_fingerprint(s.pubkey, s.pubkey_len, fp);
	char type[64];
	_cleanup_free_ char *pub = sshkey_format(sshkey_blob_type(s.pubkey, s.pubkey_len, type), s.pubkey,
						 s.pubkey_len, comment);
	/* a key comment is arbitrary bytes: keep the member valid UTF-8 */
	json_t *sig = pub ? json_pack("{s:s, s:s, s:s, s:s, s:o, s:s}", "format", "sshsig", "namespace",
				      AGSBX_SSHSIG_NAMESPACE, "hash", s.hash, "armored", armored, "public_key",
				      agsbx_json_string_sanitized(pub, strlen(pub)), "fingerprint", fp)
			  : NULL;
	sshsig_clear(&s);
	if (!sig)
		return -ENOMEM;
	return json_object_set_new(bundle, "signature", sig) == 0 ? 0 : -ENOMEM;
}

/* Comment of the public key next to (or at) key_path, for display. */
static char *key_comment(const char *key_path, bool is_pub)
{
	_cleanup_free_ char *pub_path = NULL;
	if (!is_pub && asprintf(&pub_path, "%s.pub", key_path) < 0)
		return NULL;
	_cleanup_free_ char *text = NULL;
	if (agsbx_read_file(is_pub ? key_path : pub_path, KEY_FILE_MAX, &text, NULL) < 0)
		return NULL;
	struct sshkey k;
	if (sshkey_parse_line(text, &k) < 0)
		return NULL;
	char *c = TAKE_PTR(k.comment);
	sshkey_clear(&k);
	return c;
}

static void rm_tmp(char **dir)
{
	if (!*dir)
		return;
	_cleanup_free_ char *msg = agsbx_path_join(*dir, "bundle");
	_cleanup_free_ char *sig = agsbx_path_join(*dir, "bundle.sig");
	if (msg)
		unlink(msg);
	if (sig)
		unlink(sig);
	rmdir(*dir);
	free(*dir);
}

/* ssh-keygen reads the message from a file (the runner's stdin is
 * /dev/null) and writes FILE.sig next to it, in a private temp dir. */
static int sign_with_ssh_keygen(const char *key_path, const char *canon, size_t clen, char **armored,
				char *err, size_t err_size)
{
	const char *tmpbase = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	__attribute__((cleanup(rm_tmp))) char *dir = NULL;
	if (asprintf(&dir, "%s/agsbx-sign-XXXXXX", tmpbase) < 0)
		return -ENOMEM;
	if (!mkdtemp(dir)) {
		int e = errno;
		free(dir);
		dir = NULL;
		ev_set_err(err, err_size, "cannot create a temporary directory in %s: %s", tmpbase, strerror(e));
		return -e;
	}
	_cleanup_free_ char *msg = agsbx_path_join(dir, "bundle");
	_cleanup_free_ char *sig = agsbx_path_join(dir, "bundle.sig");
	if (!msg || !sig)
		return -ENOMEM;
	int r = agsbx_write_file_atomic(msg, canon, clen, 0600);
	if (r < 0) {
		ev_set_err(err, err_size, "%s: %s", msg, strerror(-r));
		return r;
	}
	const char *argv[] = { "ssh-keygen", "-q", "-Y", "sign", "-f", key_path, "-n", AGSBX_SSHSIG_NAMESPACE,
			       msg, NULL };
	struct agsbx_run_opts o = { .argv = argv, .timeout_ms = SSH_KEYGEN_TIMEOUT_MS, .cancel_fd = -1,
				    .max_output_bytes = 4096 };
	struct agsbx_run_result res;
	r = agsbx_run(&o, &res);
	if (r < 0) {
		agsbx_run_result_clear(&res);
		ev_set_err(err, err_size, "cannot run ssh-keygen: %s", strerror(-r));
		return r;
	}
	if (res.status != 0) {
		const char *why = res.err_len ? res.err : "no message";
		size_t wl = strcspn(why, "\n");
		ev_set_err(err, err_size, "ssh-keygen -Y sign failed (status %d): %.*s", res.status, (int)wl, why);
		agsbx_run_result_clear(&res);
		return -EINVAL;
	}
	agsbx_run_result_clear(&res);
	r = agsbx_read_file(sig, KEY_FILE_MAX, armored, NULL);
	if (r < 0)
		ev_set_err(err, err_size, "ssh-keygen wrote no signature: %s", strerror(-r));
	return r;
}

static bool looks_public(const char *text, char type[64])
{
	struct sshkey k;
	if (sshkey_parse_line(text, &k) < 0)
		return false;
	memcpy(type, k.type, sizeof k.type);
	sshkey_clear(&k);
	return true;
}

/* How a key signs: built in (an unencrypted Ed25519 key, k filled) or
 * through ssh-keygen (an agent's key named by its .pub file, an encrypted
 * key, an RSA or ECDSA key: ssh-keygen is the reference signer for them and
 * keeps their private-key formats out of this code). */
struct signer {
	bool builtin, is_pub, encrypted;
	char type[64];
	struct ed25519_private k;
};

static void signer_clear(struct signer *sg)
{
	ed25519_private_clear(&sg->k);
}

static int unsupported_type(const char *key_path, const char *type, char *err, size_t err_size)
{
	ev_set_err(err, err_size, "%s: %s keys cannot sign bundles (Ed25519, RSA and ECDSA P-256/384/521 can)",
		   key_path, type);
	return -EINVAL;
}

static int signer_load(const char *key_path, struct signer *sg, char *err, size_t err_size)
{
	memset(sg, 0, sizeof *sg);
	_cleanup_free_ char *text = NULL;
	size_t tlen;
	int r = agsbx_read_file(key_path, KEY_FILE_MAX, &text, &tlen);
	if (r < 0) {
		ev_set_err(err, err_size, "%s: %s", key_path, agsbx_file_strerror(r));
		return r;
	}
	if (looks_public(text, sg->type)) {
		sg->is_pub = true;
		if (!sshkey_type_supported(sg->type))
			return unsupported_type(key_path, sg->type, err, err_size);
		if (!getenv("SSH_AUTH_SOCK")) {
			ev_set_err(err, err_size, "%s is a public key and SSH_AUTH_SOCK is not set (no ssh-agent to sign with)",
				key_path);
			return -EINVAL;
		}
		return 0;
	}
	enum private_key_kind kind;
	r = openssh_private_parse(text, tlen, &kind, &sg->k, err, err_size);
	sodium_memzero(text, tlen);
	if (r < 0)
		return r;
	memcpy(sg->type, sg->k.type, sizeof sg->type);
	if (!sshkey_type_supported(sg->type)) {
		signer_clear(sg);
		return unsupported_type(key_path, sg->type, err, err_size);
	}
	sg->builtin = kind == PRIVKEY_ED25519;
	sg->encrypted = kind == PRIVKEY_ENCRYPTED;
	return 0;
}

static int signer_sign(const struct signer *sg, const char *key_path, const char *canon, size_t clen,
		       char **armored, char *err, size_t err_size)
{
	if (!sg->builtin)
		return sign_with_ssh_keygen(key_path, canon, clen, armored, err, err_size);
	*armored = sshsig_sign_ed25519(&sg->k, AGSBX_SSHSIG_NAMESPACE, canon, clen);
	return *armored ? 0 : -ENOMEM;
}

/* The signature's own check (set_signature) on a fixed message, so that a
 * key ssh-keygen or the agent cannot use fails before the matrix runs. An
 * encrypted key is only parsed: a trial would ask for its passphrase twice. */
static int sign_check_buf(const char *key_path, char *err, size_t err_size)
{
	if (sodium_init() < 0)
		return -ENOMEM;
	struct signer sg;
	int r = signer_load(key_path, &sg, err, err_size);
	if (r < 0 || sg.encrypted) {
		signer_clear(&sg);
		return r;
	}
	static const char probe[] = "agsbx-evidence: signing key check";
	_cleanup_free_ char *armored = NULL;
	r = signer_sign(&sg, key_path, probe, sizeof probe - 1, &armored, err, err_size);
	signer_clear(&sg);
	if (r < 0)
		return r;
	_cleanup_json_ json_t *scratch = json_object();
	if (!scratch)
		return -ENOMEM;
	return set_signature(scratch, armored, probe, sizeof probe - 1, NULL, err, err_size);
}

static int sign_buf(json_t *bundle, const char *key_path, char *err, size_t err_size)
{
	if (sodium_init() < 0)
		return -ENOMEM;
	size_t clen;
	_cleanup_free_ char *canon = agsbx_bundle_canonical(bundle, &clen);
	if (!canon) {
		int e = errno;
		ev_set_err(err, err_size, "bundle has no canonical form: %s", strerror(e));
		return -e;
	}
	struct signer sg;
	int r = signer_load(key_path, &sg, err, err_size);
	_cleanup_free_ char *armored = NULL;
	if (r == 0)
		r = signer_sign(&sg, key_path, canon, clen, &armored, err, err_size);
	/* the private key's own comment, else the .pub file's */
	_cleanup_free_ char *comment = r < 0			       ? NULL
				       : sg.builtin && sg.k.comment && *sg.k.comment ? strdup(sg.k.comment)
										      : key_comment(key_path, sg.is_pub);
	signer_clear(&sg);
	if (r < 0)
		return r;
	return set_signature(bundle, armored, canon, clen, comment, err, err_size);
}

int agsbx_bundle_sign_check(const char *key_path, struct agsbx_error *e)
{
	char err[512] = "";
	return ev_error(e, sign_check_buf(key_path, err, sizeof err), err);
}

int agsbx_bundle_sign(json_t *bundle, const char *key_path, struct agsbx_error *e)
{
	char err[512] = "";
	return ev_error(e, sign_buf(bundle, key_path, err, sizeof err), err);
}
