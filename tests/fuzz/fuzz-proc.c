/* libFuzzer target: the /proc and /sys files the probes read (other than
 * mountinfo, fuzz-mountinfo's). The file is the fuzz input, read through a
 * memfd as /proc/self/fd/N, by the very function that reads the host's;
 * the first byte picks it:
 *  0: /proc/PID/cgroup -> the container runtime words found (fired when
 *     and only when there are any);
 *  1: /proc/PID/status -> the privilege family's capability, NoNewPrivs
 *     and Seccomp facts;
 *  2: a one-integer file (/proc/sys/kernel/cap_last_cap, the AppArmor
 *     restrict_* switches) -> agsbx_fact_file_int;
 *  3: a Y/N file (/sys/module/apparmor/parameters/enabled) and a label
 *     file (/proc/self/attr/current) -> agsbx_fact_file_bool and _line;
 *  4: the whole apparmor family beneath a scratch root: the input split at
 *     NUL bytes into the enabled flag, the two restrict switches, the two
 *     label files and securityfs's profiles list (a missing part: no file);
 *  5: a mountinfo text that parses -> the cgroup family's version, hybrid,
 *     cgroup2_mount and v1_controllers (each controller once);
 *  6: /proc/PID/cgroup -> the cgroup family's self_cgroup2_path.
 * Every fact must be one the bundle can hold (canonical form, integers
 * within +-2^53). */
#include "base/util.h"
#include "evidence/evidence.h"
#include "probes/internal.h"
#include "probes/probes.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void bundlable(const json_t *facts)
{
	size_t len;
	char *c = agsbx_json_canonical(facts, NULL, &len);
	if (!c || agsbx_json_unbundlable(facts, 1, 32))
		abort();
	free(c);
}

/* The memfd holding the current input, by path. */
static const char *as_file(const uint8_t *d, size_t n)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz-proc", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (n && pwrite(fd, d, n, 0) != (ssize_t)n))
		abort();
	return path;
}

static void markers(const char *path)
{
	bool fired = false;
	json_t *f = json_object();
	agsbx_fact_put(f, "m", agsbx_probe_cgroup_markers(path, &fired));
	bundlable(f);
	if (fired != (json_array_size(json_object_get(json_object_get(f, "m"), "value")) > 0))
		abort();
	json_decref(f);
}

static void one(json_t *fact)
{
	json_t *f = json_object();
	agsbx_fact_put(f, "x", fact);
	bundlable(f);
	json_decref(f);
}

static void status(const char *path)
{
	json_t *f = json_object();
	agsbx_probe_status_facts(f, path);
	bundlable(f);
	json_decref(f);
}

/* ---- the apparmor family beneath a scratch root ------------------------ */

static const char *const aa_files[] = {
	"/sys/module/apparmor/parameters/enabled",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_unconfined",
	"/proc/self/attr/apparmor/current",
	"/proc/self/attr/current",
	"/sys/kernel/security/apparmor/profiles",
};

static void mkdirs(const char *root, const char *file)
{
	char p[512];
	snprintf(p, sizeof p, "%s%s", root, file);
	for (char *s = strchr(p + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
}

static char root[256];

static int rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(p) < 0 ? -1 : 0;
}

static void aa_root_remove(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *aa_root(void)
{
	if (root[0])
		return root;
	const char *tmp = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/fuzz-proc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		abort();
	atexit(aa_root_remove);
	for (size_t i = 0; i < sizeof aa_files / sizeof aa_files[0]; i++)
		mkdirs(root, aa_files[i]);
	mkdirs(root, "/etc/apparmor.d/x");
	return root;
}

static void apparmor(const uint8_t *d, size_t n)
{
	aa_root();
	size_t off = 0;
	for (size_t i = 0; i < sizeof aa_files / sizeof aa_files[0]; i++) {
		char p[512];
		snprintf(p, sizeof p, "%s%s", root, aa_files[i]);
		unlink(p);
		if (off > n)
			continue;
		const uint8_t *end = memchr(d + off, '\0', n - off);
		size_t len = end ? (size_t)(end - (d + off)) : n - off;
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || (len && write(fd, d + off, len) != (ssize_t)len))
			abort();
		close(fd);
		off += len + 1;
	}
	json_t *f = agsbx_probe_apparmor_at(root);
	if (!f)
		abort();
	bundlable(f);
	json_decref(f);
}

static void cgroup_mounts(const uint8_t *d, size_t n)
{
	char *text = strndup((const char *)d, n);
	struct agsbx_mount *m = NULL;
	size_t nm = 0;
	if (text && agsbx_mountinfo_parse(text, &m, &nm) == 0) {
		json_t *f = json_object();
		agsbx_cgroup_mount_facts(f, m, nm);
		bundlable(f);
		const json_t *v1 = json_object_get(json_object_get(f, "v1_controllers"), "value");
		for (size_t i = 0; i < json_array_size(v1); i++)
			for (size_t k = i + 1; k < json_array_size(v1); k++)
				if (json_equal(json_array_get(v1, i), json_array_get(v1, k)))
					abort();
		json_decref(f);
		agsbx_mountinfo_free(m, nm);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *d = data + 1;
	size_t n = size - 1;
	switch (data[0] % 7) {
	case 0: markers(as_file(d, n)); break;
	case 1: status(as_file(d, n)); break;
	case 2: one(agsbx_fact_file_int(as_file(d, n))); break;
	case 3: {
		const char *p = as_file(d, n);
		one(agsbx_fact_file_bool(p));
		one(agsbx_fact_file_line(p));
		break;
	}
	case 4: apparmor(d, n); break;
	case 5: cgroup_mounts(d, n); break;
	default: one(agsbx_probe_cgroup_self_path(as_file(d, n))); break;
	}
	return 0;
}
