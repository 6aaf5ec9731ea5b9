/* cgroup: which hierarchy the host uses and where cgroup2 is mounted.
 * Pure v2 hosts mount it at /sys/fs/cgroup; hybrid hosts (v1 controllers
 * plus an empty v2, like the CI host) at /sys/fs/cgroup/unified. */
#include "probes/probes.h"
#include "probes/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/util.h"

#define MOUNTINFO "/proc/self/mountinfo"

static const struct agsbx_mount *find_cgroup2(const struct agsbx_mount *m, size_t n)
{
	const struct agsbx_mount *first = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(m[i].fstype, "cgroup2") != 0)
			continue;
		if (strcmp(m[i].mountpoint, "/sys/fs/cgroup") == 0)
			return &m[i];
		/* A bind of a sub-tree (root != "/") is a worse answer than the
		 * whole hierarchy. */
		if (!first || (strcmp(first->root, "/") != 0 && strcmp(m[i].root, "/") == 0))
			first = &m[i];
	}
	return first;
}

/* cgroup v1's own mount options (kernel/cgroup/cgroup-v1.c), which share
 * the super options with the controller names; the "key=value" ones
 * (name=, release_agent=) are told apart by their '='. */
static bool v1_mount_option(const char *o)
{
	static const char *const own[] = { "rw", "ro", "none", "all", "noprefix", "clone_children",
					   "cpuset_v2_mode", "xattr", "favordynmods", "nofavordynmods" };
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (strcmp(o, own[i]) == 0)
			return true;
	return strchr(o, '=') != NULL;
}

/* v1 hierarchies by their super options (the controller names). */
static json_t *v1_controllers(const struct agsbx_mount *m, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++) {
		if (strcmp(m[i].fstype, "cgroup") != 0)
			continue;
		_cleanup_free_ char *opts = strdup(m[i].super_options);
		char *save = NULL;
		for (char *o = opts ? strtok_r(opts, ",", &save) : NULL; o; o = strtok_r(NULL, ",", &save)) {
			if (v1_mount_option(o))
				continue;
			/* compared as stored: a name that is not UTF-8 is stored
			 * sanitised, and its raw bytes never match that */
			json_t *name = agsbx_json_string_sanitized(o, strlen(o));
			bool dup = false;
			for (size_t k = 0; k < json_array_size(a); k++)
				dup |= json_equal(json_array_get(a, k), name);
			if (dup)
				json_decref(name);
			else
				json_array_append_new(a, name);
		}
	}
	return a;
}

json_t *agsbx_probe_cgroup_self_path(const char *path)
{
	_cleanup_free_ char *text = NULL;
	int r = agsbx_probes_read(path, &text);
	if (r < 0)
		return agsbx_fact_errno(r, path);
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(line, "0::", 3) == 0)
			return agsbx_fact_string(line + 3, path);
		line = nl ? nl + 1 : NULL;
	}
	return agsbx_fact_absent("no_cgroup2_entry", path);
}

void agsbx_cgroup_mount_facts(json_t *f, const struct agsbx_mount *m, size_t n)
{
	const struct agsbx_mount *c2 = find_cgroup2(m, n);
	json_t *v1 = v1_controllers(m, n);
	bool has_v1 = false;
	for (size_t i = 0; i < n; i++)
		has_v1 |= strcmp(m[i].fstype, "cgroup") == 0;
	bool unified = c2 && strcmp(c2->mountpoint, "/sys/fs/cgroup") == 0;
	if (unified || (c2 && !has_v1))
		agsbx_fact_put(f, "version", agsbx_fact_int(2, MOUNTINFO));
	else if (has_v1)
		agsbx_fact_put(f, "version", agsbx_fact_int(1, MOUNTINFO));
	else
		agsbx_fact_put(f, "version", agsbx_fact_absent("no_cgroup_mount", MOUNTINFO));
	agsbx_fact_put(f, "hybrid", agsbx_fact_bool(has_v1 && c2, MOUNTINFO));
	agsbx_fact_put(f, "cgroup2_mount", c2 ? agsbx_fact_string(c2->mountpoint, MOUNTINFO)
					      : agsbx_fact_absent("no_cgroup2_mount", MOUNTINFO));
	agsbx_fact_put(f, "v1_controllers", agsbx_fact_value(v1, MOUNTINFO));
}

json_t *agsbx_probe_cgroup(void)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	struct agsbx_mount *m = NULL;
	size_t n = 0;
	int r = agsbx_mountinfo_read(&m, &n);
	if (r < 0) {
		const char *names[] = { "version", "hybrid", "cgroup2_mount", "v1_controllers" };
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			agsbx_fact_put(f, names[i], agsbx_fact_errno(r, MOUNTINFO));
	} else {
		agsbx_cgroup_mount_facts(f, m, n);
		agsbx_mountinfo_free(m, n);
	}
	agsbx_fact_put(f, "self_cgroup2_path", agsbx_probe_cgroup_self_path("/proc/self/cgroup"));
	return f;
}
