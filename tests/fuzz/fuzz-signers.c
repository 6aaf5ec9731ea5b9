/* libFuzzer target: allowed_signers and public-key files (verify's trust
 * anchors), read through agsbx_bundle_verify exactly as `verify
 * --allowed-signers F [--identity ID]` / `--key F` read them. The first
 * input byte picks the mode, the rest is the file.
 * Properties (a violation aborts): the answer is 0 or -EINVAL (bad input,
 * with a one-line reason); a trusted result has a valid signature and a
 * one-line identity, the one asked for with --identity.
 * Differential oracle, where ssh-keygen is on PATH (mode 0, --identity):
 * whatever verify trusts, `ssh-keygen -Y verify` (OpenSSH's own reading of
 * the same file, at the same verify time) trusts too; and when verify
 * found every line well-formed, what ssh-keygen trusts verify trusts. Only
 * inputs that verify trusts or that hold the signing key's base64 ask
 * ssh-keygen (a fork and exec each): the others cannot be trusted by it. */
#include "evidence/evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *bundle;
static int fd = -1;
static char path[64];
#define IDENTITY "fixture@agsbx-evidence.invalid"
/* the oracle: the canonical bytes and the signature as files, the key's
 * base64 (NULL: no ssh-keygen, no oracle) */
static char canon_path[64], sig_path[64];
static char *key_b64;

static void memfile(const char *name, const void *data, size_t n, char out[64])
{
	int f = memfd_create(name, 0);
	if (f < 0 || write(f, data, n) != (ssize_t)n)
		abort();
	/* ssh-keygen opens it: not /proc/self, which is ssh-keygen's own */
	snprintf(out, 64, "/proc/%d/fd/%d", (int)getpid(), f);
}

/* ssh-keygen -Y verify's verdict on the file at path: true when trusted */
static bool ssh_keygen_trusts(void)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, canon_path, O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *argv[] = { "ssh-keygen", "-Y", "verify", "-f", path, "-I", IDENTITY, "-n", "agsbx-evidence",
			 "-s", sig_path, "-O", "verify-time=20260101Z", NULL };
	pid_t pid, w;
	int st;
	if (posix_spawnp(&pid, "ssh-keygen", &fa, NULL, argv, environ) != 0)
		abort();
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR) /* libFuzzer's timeout alarm */
		;
	if (w != pid)
		abort();
	posix_spawn_file_actions_destroy(&fa);
	if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 255))
		abort(); /* neither a verdict nor a refusal */
	return WEXITSTATUS(st) == 0;
}

/* whether ssh-keygen is there, and the files it needs */
static void oracle_init(void)
{
	if (system("command -v ssh-keygen >/dev/null 2>&1") != 0) {
		fprintf(stderr, "fuzz-signers: no ssh-keygen: the differential oracle is off\n");
		return;
	}
	size_t len;
	char *canon = agsbx_bundle_canonical(bundle, &len);
	const char *pub = json_string_value(json_object_get(json_object_get(bundle, "signature"), "public_key"));
	const char *arm = json_string_value(json_object_get(json_object_get(bundle, "signature"), "armored"));
	if (!canon || !pub || !arm || !strchr(pub, ' '))
		abort();
	memfile("canon", canon, len, canon_path);
	memfile("sig", arm, strlen(arm), sig_path);
	free(canon);
	const char *b = strchr(pub, ' ') + 1;
	key_b64 = strndup(b, strcspn(b, " \n"));
}

/* data holds the key's base64 (the only way ssh-keygen can trust it,
 * bar re-encodings of the same key, which the corpus test covers) */
static bool holds_key(const uint8_t *data, size_t size)
{
	return key_b64 && memmem(data, size, key_b64, strlen(key_b64));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* the fixture bundle signed by tests/data/bundles/keys/fixture_ed25519 */
	const char *src = getenv("AGSBX_SOURCE_DIR");
	char file[4096];
	struct agsbx_error err = { 0 };
	snprintf(file, sizeof file, "%s/tests/data/bundles/signed.json", src ? src : ".");
	if (agsbx_bundle_load(file, &bundle, &err) < 0) {
		fprintf(stderr, "fuzz-signers: %s (set AGSBX_SOURCE_DIR)\n", err.message);
		abort();
	}
	/* a regular file in memory: the loader refuses FIFOs and devices */
	fd = memfd_create("allowed_signers", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)getpid(), fd);
	oracle_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || ftruncate(fd, 0) < 0)
		return 0;
	if (size > 1 && pwrite(fd, data + 1, size - 1, 0) != (ssize_t)(size - 1))
		abort();
	struct agsbx_verify_opts o = { .now = 1767225600 }; /* 2026-01-01 */
	switch (data[0] % 3) {
	case 0: o.allowed_signers = path; o.identity = "fixture@agsbx-evidence.invalid"; break;
	case 1: o.allowed_signers = path; break;
	default: o.key_path = path; break;
	}
	struct agsbx_verify_result res;
	struct agsbx_error err = { 0 };
	int r = agsbx_bundle_verify(bundle, &o, &res, &err);
	if (r != 0 && r != -EINVAL && r != -ENOMEM)
		abort();
	bool ours = r == 0 && res.status == AGSBX_VERIFY_OK;
	/* a malformed line stops verify where ssh-keygen skips it: then only
	 * "verify trusts => ssh-keygen trusts" holds */
	if (key_b64 && data[0] % 3 == 0 && (ours || (r == 0 && holds_key(data + 1, size - 1)))) {
		bool theirs = ssh_keygen_trusts();
		if (ours != theirs) {
			fprintf(stderr, "fuzz-signers: verify %s, ssh-keygen %s\n", ours ? "trusts" : "refuses",
				theirs ? "trusts" : "refuses");
			abort();
		}
	}
	if (r < 0) {
		if (!err.message[0] || strchr(err.message, '\n'))
			abort(); /* bad input is said in one line */
		return 0;
	}
	if (res.status != AGSBX_VERIFY_OK && res.status != AGSBX_VERIFY_UNTRUSTED)
		abort(); /* the signature is good; only trust can vary */
	if (res.status == AGSBX_VERIFY_OK && (!res.trusted || !res.signature_valid || strchr(res.identity, '\n')))
		abort();
	/* with --identity, what is reported trusted is that identity */
	if (res.status == AGSBX_VERIFY_OK && o.identity && strcmp(res.identity, o.identity) != 0)
		abort();
	return 0;
}
