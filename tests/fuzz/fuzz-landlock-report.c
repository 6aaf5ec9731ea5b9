/* libFuzzer target: the Landlock helper's probe report (JSON the helper
 * writes into a directory the run-as user owns) -> the probe's facts and
 * state. Properties: the facts always have a canonical form (the bundle
 * stays writable whatever the report says), and a report that is not a
 * proof of denial (no self-test denial, ABI < 1) never leaves the state
 * ready. */
#include "../../providers/landlock/landlock.c"

#include "evidence/evidence.h"

#include <sys/mman.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	if (fd < 0)
		fd = memfd_create("report", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	struct ll_state st;
	memset(&st, 0, sizeof st);
	json_t *facts = json_object();
	take_report(&st, facts, path);
	size_t len;
	char *c = agsbx_json_canonical(facts, NULL, &len);
	if (!c)
		abort();
	free(c);
	json_t *rep = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	const json_t *t = json_object_get(rep, "self_test");
	if (state_ready(&st) && !json_is_true(json_object_get(t, "fs_denied")))
		abort();
	json_decref(rep);
	json_decref(facts);
	return 0;
}
