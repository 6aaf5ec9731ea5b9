/* container: are we inside a container, and a privileged one? Markers
 * only; each is recorded with where it came from, and "detected" says
 * whether any fired ("markers" lists which). */
#include "probes/probes.h"
#include "probes/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/proc.h"

static const char *const cgroup_words[] = { "docker", "kubepods", "lxc", "libpod" };

#define CAP_SYS_ADMIN_BIT 21

/* A marker file: present (true), missing (false), or unknowable (absent). */
static json_t *file_marker(const char *path, bool *fired)
{
	struct stat st;
	if (lstat(path, &st) == 0) {
		*fired = true;
		return agsbx_fact_bool(true, path);
	}
	if (errno == ENOENT || errno == ENOTDIR)
		return agsbx_fact_bool(false, path);
	return agsbx_fact_errno(errno, path);
}

json_t *agsbx_probe_cgroup_markers(const char *path, bool *fired)
{
	_cleanup_free_ char *text = NULL;
	int r = agsbx_probes_read(path, &text);
	if (r < 0)
		return agsbx_fact_errno(r, path);
	json_t *found = json_array();
	for (size_t i = 0; found && i < sizeof cgroup_words / sizeof cgroup_words[0]; i++) {
		for (const char *line = text; line && *line;) {
			const char *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);
			const char *colon = memchr(line, ':', len);
			colon = colon ? memchr(colon + 1, ':', len - (size_t)(colon + 1 - line)) : NULL;
			if (colon && memmem(colon + 1, len - (size_t)(colon + 1 - line), cgroup_words[i],
					    strlen(cgroup_words[i]))) {
				json_array_append_new(found, json_string(cgroup_words[i]));
				*fired = true;
				break;
			}
			line = nl ? nl + 1 : NULL;
		}
	}
	return agsbx_fact_value(found, path);
}

static void put_root_fs(json_t *f, bool *fired)
{
	struct agsbx_mount *m = NULL;
	size_t n = 0;
	int r = agsbx_mountinfo_read(&m, &n);
	if (r < 0) {
		agsbx_fact_put(f, "root_fstype", agsbx_fact_errno(r, "/proc/self/mountinfo"));
		agsbx_fact_put(f, "overlay_root", agsbx_fact_errno(r, "/proc/self/mountinfo"));
		return;
	}
	const struct agsbx_mount *root = agsbx_mountinfo_find(m, n, "/");
	if (root) {
		bool overlay = strcmp(root->fstype, "overlay") == 0 || strcmp(root->fstype, "fuse-overlayfs") == 0 ||
			       strcmp(root->fstype, "aufs") == 0;
		*fired = overlay;
		agsbx_fact_put(f, "root_fstype", agsbx_fact_string(root->fstype, "/proc/self/mountinfo"));
		agsbx_fact_put(f, "overlay_root", agsbx_fact_bool(overlay, "/proc/self/mountinfo"));
	} else {
		agsbx_fact_put(f, "root_fstype", agsbx_fact_absent("no_root_mount", "/proc/self/mountinfo"));
		agsbx_fact_put(f, "overlay_root", agsbx_fact_absent("no_root_mount", "/proc/self/mountinfo"));
	}
	agsbx_mountinfo_free(m, n);
}

/* CapEff as a mask, or false when unreadable. */
static bool cap_eff(unsigned long long *mask)
{
	_cleanup_free_ char *status = NULL;
	if (agsbx_probes_read("/proc/self/status", &status) < 0)
		return false;
	_cleanup_free_ char *v = agsbx_status_field(status, "CapEff");
	if (!v)
		return false;
	char *end = NULL;
	errno = 0;
	*mask = strtoull(v, &end, 16);
	return errno == 0 && end != v && *end == '\0';
}

static bool full_caps(unsigned long long mask)
{
	_cleanup_free_ char *s = NULL;
	if (agsbx_probes_read("/proc/sys/kernel/cap_last_cap", &s) < 0)
		return false;
	int last = atoi(s);
	if (last <= 0 || last > 63)
		return false;
	unsigned long long all = last == 63 ? ~0ULL : (1ULL << (last + 1)) - 1;
	return (mask & all) == all;
}

/* Hints that a container (if we are in one) is privileged: what a default
 * Docker/Podman container does not have. access(2) only, never open. */
static json_t *privileged_hints(bool *strong)
{
	json_t *h = json_array();
	unsigned long long mask = 0;
	*strong = false;
	if (h && cap_eff(&mask)) {
		if (full_caps(mask)) {
			json_array_append_new(h, json_string("cap_eff_full"));
			*strong = true;
		}
		if (mask & (1ULL << CAP_SYS_ADMIN_BIT)) {
			json_array_append_new(h, json_string("cap_sys_admin"));
			*strong = true;
		}
	}
	if (h && faccessat(AT_FDCWD, "/dev/kmsg", R_OK, AT_EACCESS) == 0)
		json_array_append_new(h, json_string("dev_kmsg_readable"));
	/* Runtimes mount /proc/sys read-only in unprivileged containers
	 * (access(2) then says EROFS even to root). */
	if (h && faccessat(AT_FDCWD, "/proc/sys/kernel/core_pattern", W_OK, AT_EACCESS) == 0)
		json_array_append_new(h, json_string("proc_sys_writable"));
	return h;
}

static void note(json_t *by, bool fired, const char *name)
{
	if (fired && by)
		json_array_append_new(by, json_string(name));
}

json_t *agsbx_probe_container(void)
{
	json_t *f = json_object();
	json_t *by = json_array();
	if (!f || !by) {
		json_decref(f);
		json_decref(by);
		return NULL;
	}
	bool fired = false;
	agsbx_fact_put(f, "dockerenv", file_marker("/.dockerenv", &fired));
	note(by, fired, "dockerenv");
	fired = false;
	agsbx_fact_put(f, "containerenv", file_marker("/run/.containerenv", &fired));
	note(by, fired, "containerenv");
	const char *env = getenv("container");
	agsbx_fact_put(f, "container_env", env ? agsbx_fact_string(env, "environ:container")
					       : agsbx_fact_absent("not_set", "environ:container"));
	note(by, env && *env, "container_env");
	fired = false;
	agsbx_fact_put(f, "cgroup_markers", agsbx_probe_cgroup_markers("/proc/self/cgroup", &fired));
	note(by, fired, "cgroup_markers");
	fired = false;
	agsbx_fact_put(f, "init_cgroup_markers", agsbx_probe_cgroup_markers("/proc/1/cgroup", &fired));
	note(by, fired, "init_cgroup_markers");
	fired = false;
	put_root_fs(f, &fired);
	note(by, fired, "overlay_root");

	bool detected = json_array_size(by) > 0, strong = false;
	const char *derived = "derived:dockerenv,containerenv,container_env,cgroup_markers,init_cgroup_markers,overlay_root";
	agsbx_fact_put(f, "detected", agsbx_fact_bool(detected, derived));
	agsbx_fact_put(f, "markers", agsbx_fact_value(by, derived));
	agsbx_fact_put(f, "privileged_hints",
		       agsbx_fact_value(privileged_hints(&strong),
					"/proc/self/status:CapEff,/proc/sys/kernel/cap_last_cap,access(/dev/kmsg),access(/proc/sys/kernel/core_pattern)"));
	agsbx_fact_put(f, "privileged", agsbx_fact_bool(detected && strong, "derived:detected,privileged_hints"));
	return f;
}
