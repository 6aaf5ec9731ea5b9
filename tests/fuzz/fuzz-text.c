/* libFuzzer target: the small text parsers of outside input that had no
 * target of their own. The first byte picks the parser, the rest is the
 * input:
 *  0: an --attach-command's output -> its summary (the bundle member must
 *     have a canonical form: the bundle stays writable);
 *  1: a command line as --attach-command, --adapter and --wrap take it
 *     (agsbx_split_words) -> argv ("" is an empty word; each word
 *     no longer than the line);
 *  2: an OpenSSH private key file (the --sign-key parser): an Ed25519 key
 *     it fills has matching halves;
 *  3: a public key line (.pub, allowed_signers, keys URL): the blob starts
 *     with the type it names;
 *  4: an SSHSIG public-key step (key blob, signature type, signature,
 *     data) for every key type: never a crash, never "good" for a
 *     signature of the wrong algorithm family;
 *  5: /proc/PID/status text -> a field (never beyond its line);
 *  6: os-release text -> a value (unquoted, never beyond its line);
 *  7: a version string (kernel release, runc --version) -> the order is
 *     a total order on what parses, and advisories derive from a host
 *     with that kernel and runc version. */
#include "base/proc.h"
#include "evidence/evidence.h"
#include "evidence/internal.h"
#include "probes/internal.h"
#include "probes/probes.h"

/* os_release_get is file-local: the target includes its translation unit */
#include "../../probes/os.c"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void summary(const char *d, size_t n)
{
	json_t *s = agsbx_attachment_summary(d, n);
	if (!s)
		return;
	size_t len;
	char *c = agsbx_json_canonical(s, NULL, &len);
	if (!c)
		abort();
	free(c);
	json_decref(s);
}

static void cmdline(const char *s)
{
	char **argv = NULL;
	if (agsbx_split_cmdline(s, &argv, NULL) < 0)
		return;
	size_t total = strlen(s);
	for (size_t i = 0; argv && argv[i]; i++) {
		if (strlen(argv[i]) > total)
			abort();
		free(argv[i]);
	}
	free(argv);
}

static void private_key(const char *d, size_t n)
{
	enum private_key_kind kind;
	struct ed25519_private k;
	char err[256];
	if (openssh_private_parse(d, n, &kind, &k, err, sizeof err) < 0)
		return;
	if (kind == PRIVKEY_ED25519 && memcmp(k.sk + 32, k.pk, ED25519_PK) != 0)
		abort();
	ed25519_private_clear(&k);
}

static void public_line(const char *s)
{
	struct sshkey k;
	if (sshkey_parse_line(s, &k) < 0)
		return;
	char type[64];
	if (strcmp(sshkey_blob_type(k.blob, k.blob_len, type), k.type) != 0 && strcmp(type, "?") != 0)
		abort();
	sshkey_clear(&k);
}

/* Four length-prefixed (one byte each) fields: key blob, signature type,
 * signature, data. */
static void pk_verify(const uint8_t *d, size_t n)
{
	const uint8_t *f[4];
	size_t fl[4];
	for (int i = 0; i < 4; i++) {
		if (n < 1)
			return;
		fl[i] = d[0];
		if (n - 1 < fl[i])
			return;
		f[i] = d + 1;
		d += 1 + fl[i];
		n -= 1 + fl[i];
	}
	char sigtype[64];
	if (fl[1] >= sizeof sigtype || memchr(f[1], 0, fl[1]))
		return;
	memcpy(sigtype, f[1], fl[1]);
	sigtype[fl[1]] = '\0';
	int r = sshsig_verify_key(f[0], fl[0], sigtype, f[2], fl[2], f[3], fl[3]);
	char type[64];
	sshkey_blob_type(f[0], fl[0], type);
	/* a good signature needs an algorithm of the key's own family */
	if (r == 0 && strncmp(type, "ssh-rsa", 7) == 0 && strncmp(sigtype, "rsa-sha2-", 9) != 0)
		abort();
	if (r == 0 && strncmp(type, "ecdsa-", 6) == 0 && strcmp(type, sigtype) != 0)
		abort();
}

static void field_of(const char *s, char *(*get)(const char *, const char *), const char *key)
{
	char *v = get(s, key);
	if (v && (strchr(v, '\n') || strlen(v) > strlen(s)))
		abort();
	free(v);
}

static void versions(const char *s)
{
	struct agsbx_version a, b, c;
	if (agsbx_version_parse(s, &a) < 0)
		return;
	agsbx_version_parse("1.1.12", &b);
	agsbx_version_parse("6.1.170", &c);
	if (agsbx_version_cmp(&a, &a) != 0 || agsbx_version_cmp(&a, &b) != -agsbx_version_cmp(&b, &a))
		abort();
	if (agsbx_version_cmp(&a, &b) < 0 && agsbx_version_cmp(&b, &c) < 0 && agsbx_version_cmp(&a, &c) >= 0)
		abort();
	json_t *host = json_pack("{s:{s:{s:s,s:s},s:{s:s,s:s}},s:{s:{s:s,s:s}}}", "kernel", "release", "value", s,
				 "source", "f", "version", "value", s, "source", "f", "runtimes", "runc_version",
				 "value", s, "source", "f");
	if (!host)
		return;
	json_t *adv = agsbx_probe_advisories(host);
	size_t len;
	char *canon = adv ? agsbx_json_canonical(adv, NULL, &len) : NULL;
	if (adv && !canon)
		abort();
	free(canon);
	json_decref(adv);
	json_decref(host);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *d = (const char *)data + 1;
	size_t n = size - 1;
	char *s = strndup(d, n); /* the NUL-terminated readers see up to the first NUL */
	if (!s)
		return 0;
	switch (data[0] % 8) {
	case 0: summary(d, n); break;
	case 1: cmdline(s); break;
	case 2: private_key(d, n); break;
	case 3: public_line(s); break;
	case 4: pk_verify(data + 1, n); break;
	case 5: field_of(s, agsbx_status_field, "CapEff"); break;
	case 6: field_of(s, os_release_get, "VERSION_ID"); break;
	default: versions(s); break;
	}
	free(s);
	return 0;
}
