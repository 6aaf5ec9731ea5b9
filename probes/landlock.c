/* landlock: the system ABI and errata, via landlock_create_ruleset(2) only
 * (never /sys: the syscall is what a sandbox will actually get, and it
 * also reflects a seccomp filter or an LSM boot parameter). */
#include "probes/probes.h"
#include "probes/internal.h"

#include <errno.h>

#ifdef __linux__
#include "base/landlock.h"
#else
#define AGSBX_LL_ABI_KNOWN 7 /* as in base/landlock.h (Linux-only header) */
/* Landlock is a Linux LSM: elsewhere the syscall does not exist. */
static int agsbx_ll_abi(void) { return -ENOSYS; }
static int agsbx_ll_errata(void) { return -ENOSYS; }
#endif

#define SRC_ABI "landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)"
#define SRC_ERRATA "landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_ERRATA)"

static const char *landlock_reason(int err)
{
#ifndef __linux__
	(void)err;
	return "not_linux";
#endif
	switch (err) {
	case -ENOSYS:
		return "kernel_does_not_support_landlock";
	case -EOPNOTSUPP:
		return "landlock_disabled";
	default:
		return agsbx_errno_name(err);
	}
}

json_t *agsbx_probe_landlock(void)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	int abi = agsbx_ll_abi();
	agsbx_fact_put(f, "known_abi", agsbx_fact_int(AGSBX_LL_ABI_KNOWN, "agsbx-evidence (base/landlock.h)"));
	if (abi < 0) {
		const char *reason = landlock_reason(abi);
		agsbx_fact_put(f, "abi", agsbx_fact_absent(reason, SRC_ABI));
		agsbx_fact_put(f, "errata", agsbx_fact_absent(reason, SRC_ERRATA));
		agsbx_fact_put(f, "newer_than_known", agsbx_fact_absent(reason, SRC_ABI));
		return f;
	}
	agsbx_fact_put(f, "abi", agsbx_fact_int(abi, SRC_ABI));
	agsbx_fact_put(f, "newer_than_known", agsbx_fact_bool(abi > AGSBX_LL_ABI_KNOWN, SRC_ABI));
	int errata = agsbx_ll_errata();
	if (errata >= 0)
		agsbx_fact_put(f, "errata", agsbx_fact_int(errata, SRC_ERRATA));
	else if (errata == -EINVAL)
		/* Kernels before the errata interface reject the flag. */
		agsbx_fact_put(f, "errata", agsbx_fact_absent("errata_interface_unsupported", SRC_ERRATA));
	else
		agsbx_fact_put(f, "errata", agsbx_fact_absent(landlock_reason(errata), SRC_ERRATA));
	return f;
}
