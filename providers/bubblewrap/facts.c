/* The host facts that explain a bwrap failure, read directly and
 * read-only (the probes module records the same families for the whole
 * host; these are the ones the classifier's hints depend on, kept next to
 * the failure so one provider entry is self-explaining). */
#include "providers/bubblewrap/bwrap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/compat.h"
#include "base/fact.h"
#include "base/proc.h"
#include "base/util.h"

static json_t *absent(const char *source, int err)
{
	return agsbx_fact_errno(err, source);
}

static json_t *present(const char *source, json_t *value)
{
	return agsbx_fact_value(value, source);
}

/* An integer sysctl-style file: one number on one line. */
static json_t *int_file(const char *path)
{
	_cleanup_free_ char *line = agsbx_read_line(path);
	if (!line)
		return absent(path, errno);
	char *end = NULL;
	errno = 0;
	long long v = strtoll(line, &end, 10);
	if (errno || end == line)
		return json_pack("{s:b, s:s, s:s, s:o}", "absent", 1, "reason", "unparsable", "source", path,
				 "raw", agsbx_json_string_sanitized(line, strlen(line)));
	return present(path, json_integer(v));
}

static json_t *exists(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0)
		return present(path, json_true());
	if (errno == ENOENT)
		return present(path, json_false());
	return absent(path, errno);
}

/* "Seccomp:\t<mode>" from /proc/self/status: 2 means a filter sits on the
 * harness itself (a container's profile), which blocks bwrap before any
 * sysctl or LSM gets a say. */
static json_t *seccomp_mode(void)
{
	const char *src = "/proc/self/status";
	_cleanup_free_ char *data = NULL;
	int r = agsbx_proc_status(0, &data);
	if (r < 0)
		return absent(src, -r);
	_cleanup_free_ char *v = agsbx_status_field(data, "Seccomp");
	if (!v)
		return absent(src, ENOENT);
	return present(src, json_integer(strtol(v, NULL, 10)));
}

static json_t *apparmor_label(void)
{
	/* The AppArmor-specific file first; the generic one answers for
	 * whichever LSM owns it (EINVAL when none does). */
	static const char *const paths[] = { "/proc/self/attr/apparmor/current", "/proc/self/attr/current" };
	int last = ENOENT;
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(paths); i++) {
		_cleanup_free_ char *line = agsbx_read_line(paths[i]);
		if (line)
			return present(paths[i], agsbx_json_string_sanitized(line, strlen(line)));
		last = errno;
		if (last != ENOENT)
			return absent(paths[i], last);
	}
	return absent(paths[1], last);
}

json_t *agsbx_bwrap_host_facts(void)
{
	json_t *h = json_object();
	json_object_set_new(h, "apparmor_restrict_unprivileged_userns",
			    int_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"));
	json_object_set_new(h, "apparmor_restrict_unprivileged_unconfined",
			    int_file("/proc/sys/kernel/apparmor_restrict_unprivileged_unconfined"));
	json_object_set_new(h, "max_user_namespaces", int_file("/proc/sys/user/max_user_namespaces"));
	json_object_set_new(h, "unprivileged_userns_clone", int_file("/proc/sys/kernel/unprivileged_userns_clone"));
	json_object_set_new(h, "seccomp", seccomp_mode());
#ifdef __linux__
	json_object_set_new(h, "no_new_privs",
			    present("prctl(PR_GET_NO_NEW_PRIVS)", json_integer(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0))));
#else
	json_object_set_new(h, "no_new_privs", absent("prctl(PR_GET_NO_NEW_PRIVS)", ENOSYS));
#endif
	json_object_set_new(h, "dockerenv", exists("/.dockerenv"));
	json_object_set_new(h, "containerenv", exists("/run/.containerenv"));
	json_object_set_new(h, "apparmor_label", apparmor_label());
	json_object_set_new(h, "apparmor_bwrap_profile", exists("/etc/apparmor.d/bwrap-userns-restrict"));
	return h;
}

const json_t *agsbx_bwrap_fact(const json_t *host, const char *name)
{
	const json_t *f = host ? json_object_get(host, name) : NULL;
	return f ? json_object_get(f, "value") : NULL;
}
