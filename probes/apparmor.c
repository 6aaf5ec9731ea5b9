/* apparmor: is it on, does it restrict unprivileged user namespaces (the
 * Ubuntu 23.10+ policy that breaks bwrap), what is our own label, and is
 * a bwrap profile installed that would let bwrap through. */
#include "probes/probes.h"
#include "probes/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/util.h"

#define PROFILE_DIR "/etc/apparmor.d"

/* root + path (root "" on the host); NULL on OOM. */
static char *at(const char *root, const char *path)
{
	char *p = NULL;
	return asprintf(&p, "%s%s", root, path) < 0 ? NULL : p;
}

/* A fact read from root + path by reader; ENOMEM when the path cannot be made. */
static json_t *fact_at(const char *root, const char *path, json_t *(*reader)(const char *))
{
	_cleanup_free_ char *p = at(root, path);
	return p ? reader(p) : agsbx_fact_errno(ENOMEM, path);
}

/* The LSM-specific file is right under stacking; attr/current is the
 * pre-5.1 interface (and may belong to another LSM, hence second). */
static json_t *label_fact(const char *root)
{
	static const char *const paths[] = { "/proc/self/attr/apparmor/current", "/proc/self/attr/current" };
	json_t *fact = NULL;
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		json_decref(fact);
		fact = fact_at(root, paths[i], agsbx_fact_file_line);
		json_t *reason = json_object_get(fact, "reason");
		if (!reason || strcmp(json_string_value(reason), "ENOENT") != 0)
			break;
	}
	return fact;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Profiles whose file name mentions bwrap, e.g. bwrap-userns-restrict
 * (Ubuntu 24.04+). Top-level files only; sorted for stable output. */
static json_t *bwrap_profile_fact(const char *root)
{
	_cleanup_free_ char *dir = at(root, PROFILE_DIR);
	if (!dir)
		return agsbx_fact_errno(ENOMEM, PROFILE_DIR);
	_cleanup_free_ char *src = NULL;
	if (asprintf(&src, "%s (names containing bwrap)", dir) < 0)
		return agsbx_fact_errno(ENOMEM, PROFILE_DIR);
	_cleanup_closedir_ DIR *d = opendir(dir);
	if (!d)
		return agsbx_fact_errno(errno, dir);
	char *names[256];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < sizeof names / sizeof names[0]) {
		if (e->d_name[0] == '.' || !strstr(e->d_name, "bwrap"))
			continue;
		names[n] = agsbx_path_join(dir, e->d_name);
		if (names[n])
			n++;
	}
	qsort(names, n, sizeof names[0], cmp_str);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		if (a)
			json_array_append_new(a, agsbx_json_string_sanitized(names[i], strlen(names[i])));
		free(names[i]);
	}
	return agsbx_fact_value(a, src);
}

/* Loaded profiles that concern bwrap (bwrap, unpriv_bwrap from Ubuntu's
 * bwrap-userns-restrict, or any other naming bwrap), from securityfs when
 * it is readable (often root only): loaded, not merely installed. */
static json_t *bwrap_loaded_fact(const char *root)
{
	_cleanup_free_ char *path = at(root, "/sys/kernel/security/apparmor/profiles");
	if (!path)
		return agsbx_fact_errno(ENOMEM, "/sys/kernel/security/apparmor/profiles");
	_cleanup_free_ char *data = NULL;
	int r = agsbx_probes_read(path, &data);
	if (r < 0)
		return agsbx_fact_errno(r, path);
	json_t *a = json_array();
	for (char *save = NULL, *line = strtok_r(data, "\n", &save); a && line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "bwrap"))
			json_array_append_new(a, agsbx_json_string_sanitized(line, strlen(line)));
	return agsbx_fact_value(a, path);
}

/* The profile Ubuntu ships (not loaded by default before 25.04): the
 * opt-in workflow step loads exactly this file. */
#define DISTRO_BWRAP_PROFILE "/usr/share/apparmor/extra-profiles/bwrap-userns-restrict"

/* The distro profile file, by access(2) beneath root. */
static json_t *distro_profile_fact(const char *root)
{
	_cleanup_free_ char *p = at(root, DISTRO_BWRAP_PROFILE);
	if (!p)
		return agsbx_fact_errno(ENOMEM, DISTRO_BWRAP_PROFILE);
	return access(p, R_OK) == 0 ? agsbx_fact_string(p, "access(2)") : agsbx_fact_errno(errno, p);
}

json_t *agsbx_probe_apparmor_at(const char *root)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	agsbx_fact_put(f, "enabled", fact_at(root, "/sys/module/apparmor/parameters/enabled", agsbx_fact_file_bool));
	agsbx_fact_put(f, "restrict_unprivileged_userns",
		       fact_at(root, "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", agsbx_fact_file_int));
	agsbx_fact_put(f, "restrict_unprivileged_unconfined",
		       fact_at(root, "/proc/sys/kernel/apparmor_restrict_unprivileged_unconfined", agsbx_fact_file_int));
	agsbx_fact_put(f, "label", label_fact(root));
	agsbx_fact_put(f, "bwrap_profile", bwrap_profile_fact(root));
	agsbx_fact_put(f, "bwrap_profiles_loaded", bwrap_loaded_fact(root));
	agsbx_fact_put(f, "distro_bwrap_profile", distro_profile_fact(root));
	return f;
}

json_t *agsbx_probe_apparmor(void)
{
	return agsbx_probe_apparmor_at("");
}
