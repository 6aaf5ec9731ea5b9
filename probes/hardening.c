/* hardening: the kernel knobs that open or close the attack surface the
 * common sandbox escapes and LPEs need, read from /proc/sys (never
 * written). runtimes: the container runtimes on PATH and their versions.
 * Both feed the advisories (advisories.c); neither is a verdict. */
#include "probes/probes.h"
#include "probes/internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/defaults.h"


static const struct {
	const char *name, *path;
} knobs[] = {
	{ "unprivileged_bpf_disabled", "/proc/sys/kernel/unprivileged_bpf_disabled" },
	{ "perf_event_paranoid", "/proc/sys/kernel/perf_event_paranoid" },
	{ "kptr_restrict", "/proc/sys/kernel/kptr_restrict" },
	{ "dmesg_restrict", "/proc/sys/kernel/dmesg_restrict" },
	{ "yama_ptrace_scope", "/proc/sys/kernel/yama/ptrace_scope" },
	{ "io_uring_disabled", "/proc/sys/kernel/io_uring_disabled" },
	{ "unprivileged_userfaultfd", "/proc/sys/vm/unprivileged_userfaultfd" },
	{ "route_localnet", "/proc/sys/net/ipv4/conf/all/route_localnet" },
	{ "protected_symlinks", "/proc/sys/fs/protected_symlinks" },
	{ "protected_hardlinks", "/proc/sys/fs/protected_hardlinks" },
	{ "protected_fifos", "/proc/sys/fs/protected_fifos" },
	{ "protected_regular", "/proc/sys/fs/protected_regular" },
	{ "suid_dumpable", "/proc/sys/fs/suid_dumpable" },
};

json_t *agsbx_probe_hardening(void)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
		agsbx_fact_put(f, knobs[i].name, agsbx_fact_file_int(knobs[i].path));
	return f;
}

/* The version in a --version first line: its first word that starts with a
 * digit ("runc version 1.1.5+ds1", "crun version 1.8.1", "containerd
 * github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3"). */
static json_t *version_word(char *out, const char *source)
{
	out[strcspn(out, "\n")] = '\0';
	for (char *save = NULL, *w = strtok_r(out, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		if (w[0] >= '0' && w[0] <= '9')
			return agsbx_fact_string(w, source);
	return agsbx_fact_absent("no_version_in_output", source);
}

static json_t *tool_version(const char *name)
{
	_cleanup_free_ char *path = agsbx_probes_find_in_path(name);
	if (!path)
		return agsbx_fact_absent("not_found_in_path", "$PATH");
	_cleanup_free_ char *src = NULL, *out = NULL;
	json_t *why;
	if (agsbx_probes_run_flag(path, "--version", AGSBX_PROBE_TIMEOUT_MS, &src, &out, &why) < 0)
		return why;
	return version_word(out, src ? src : "--version");
}

json_t *agsbx_probe_runtimes(void)
{
	static const char *const tools[] = { "runc", "crun", "containerd" };
	json_t *f = json_object();
	if (!f)
		return NULL;
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
		char name[32];
		snprintf(name, sizeof name, "%s_version", tools[i]);
		agsbx_fact_put(f, name, tool_version(tools[i]));
	}
	return f;
}
