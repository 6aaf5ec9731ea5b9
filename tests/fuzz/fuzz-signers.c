/* libFuzzer target: allowed_signers and public-key files (verify's trust
 * anchors), read through agsbx_bundle_verify exactly as `verify
 * --allowed-signers F [--identity ID]` / `--key F` read them. The first
 * input byte picks the mode, the rest is the file.
 * Properties (a violation aborts): the answer is 0 or -EINVAL (bad input,
 * with a one-line reason); a trusted result has a valid signature and a
 * one-line identity, the one asked for with --identity. */
#include "evidence/evidence.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *bundle;
static int fd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* the fixture bundle signed by tests/data/bundles/keys/fixture_ed25519 */
	const char *src = getenv("AGSBX_SOURCE_DIR");
	char file[4096], err[512];
	snprintf(file, sizeof file, "%s/tests/data/bundles/signed.json", src ? src : ".");
	if (agsbx_bundle_load(file, &bundle, err, sizeof err) < 0) {
		fprintf(stderr, "fuzz-signers: %s (set AGSBX_SOURCE_DIR)\n", err);
		abort();
	}
	/* a regular file in memory: the loader refuses FIFOs and devices */
	fd = memfd_create("allowed_signers", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
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
	char err[512] = "";
	int r = agsbx_bundle_verify(bundle, &o, &res, err, sizeof err);
	if (r != 0 && r != -EINVAL && r != -ENOMEM)
		abort();
	if (r < 0) {
		if (!err[0] || strchr(err, '\n'))
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
