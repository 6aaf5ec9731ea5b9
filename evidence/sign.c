/* Signing a bundle: built in for unencrypted OpenSSH Ed25519 keys; through
 * `ssh-keygen -Y sign` (run by the bounded runner) for encrypted keys and
 * for keys held by an ssh-agent (KEY is the .pub file, SSH_AUTH_SOCK set). */
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
	_cleanup_free_ char *pub = sshkey_format("ssh-ed25519", s.pubkey, s.pubkey_len, comment);
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

static bool looks_public(const char *text)
{
	struct sshkey k;
	if (sshkey_parse_line(text, &k) < 0)
		return false;
	sshkey_clear(&k);
	return true;
}

int agsbx_bundle_sign(json_t *bundle, const char *key_path, char *err, size_t err_size)
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
	_cleanup_free_ char *text = NULL;
	size_t tlen;
	int r = agsbx_read_file(key_path, KEY_FILE_MAX, &text, &tlen);
	if (r < 0) {
		ev_set_err(err, err_size, "%s: %s", key_path, agsbx_file_strerror(r));
		return r;
	}
	if (looks_public(text)) {
		if (!getenv("SSH_AUTH_SOCK")) {
			ev_set_err(err, err_size, "%s is a public key and SSH_AUTH_SOCK is not set (no ssh-agent to sign with)",
				key_path);
			return -EINVAL;
		}
		_cleanup_free_ char *armored = NULL;
		r = sign_with_ssh_keygen(key_path, canon, clen, &armored, err, err_size);
		if (r < 0)
			return r;
		_cleanup_free_ char *comment = key_comment(key_path, true);
		return set_signature(bundle, armored, canon, clen, comment, err, err_size);
	}
	enum private_key_kind kind;
	struct ed25519_private k;
	r = openssh_private_parse(text, tlen, &kind, &k, err, err_size);
	sodium_memzero(text, tlen);
	if (r < 0)
		return r;
	if (kind == PRIVKEY_OTHER_TYPE) {
		ev_set_err(err, err_size, "%s: only Ed25519 keys are supported", key_path);
		return -EINVAL;
	}
	_cleanup_free_ char *armored = NULL;
	_cleanup_free_ char *comment = NULL;
	if (kind == PRIVKEY_ENCRYPTED) {
		r = sign_with_ssh_keygen(key_path, canon, clen, &armored, err, err_size);
		if (r < 0)
			return r;
		comment = key_comment(key_path, false);
	} else {
		armored = sshsig_sign_ed25519(&k, AGSBX_SSHSIG_NAMESPACE, canon, clen);
		/* the private key's own comment, else the .pub file's */
		comment = k.comment && *k.comment ? strdup(k.comment) : key_comment(key_path, false);
		ed25519_private_clear(&k);
		if (!armored)
			return -ENOMEM;
	}
	return set_signature(bundle, armored, canon, clen, comment, err, err_size);
}
