/* privilege: who we run as. ids from getres[ug]id(2); capabilities,
 * NoNewPrivs and Seccomp from /proc/self/status; SUDO_* from environ. */
#include "probes/probes.h"
#include "probes/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/proc.h"
#include "base/util.h"

#define STATUS "/proc/self/status"

static const char *const sudo_vars[] = { "SUDO_USER", "SUDO_UID", "SUDO_GID", "SUDO_COMMAND", "SUDO_HOME" };

/* The real, effective and saved user (group) ids, or -errno. getres[ug]id(2)
 * are Linux's; elsewhere the saved id is not reported separately and is
 * taken as the effective one. */
static int res_ids(bool group, long long id[3])
{
	uid_t u[3];
	gid_t g[3];
#ifdef __linux__
	if ((group ? getresgid(&g[0], &g[1], &g[2]) : getresuid(&u[0], &u[1], &u[2])) < 0)
		return -errno;
#else
	u[0] = getuid();
	u[1] = u[2] = geteuid();
	g[0] = getgid();
	g[1] = g[2] = getegid();
#endif
	for (int i = 0; i < 3; i++)
		id[i] = group ? (long long)g[i] : (long long)u[i];
	return 0;
}

/* One getres[ug]id(2) call as the facts named (NULL-terminated, at most
 * three: real, effective, saved), each its errno when the call failed. */
static void put_res(json_t *f, bool group, const char *const *names)
{
	const char *source = group ? "getresgid(2)" : "getresuid(2)";
	long long id[3];
	int r = res_ids(group, id);
	for (int i = 0; i < 3 && names[i]; i++)
		agsbx_fact_put(f, names[i], r < 0 ? agsbx_fact_errno(-r, source) : agsbx_fact_int(id[i], source));
}

static void put_ids(json_t *f)
{
	put_res(f, false, (const char *const[]){ "uid", "euid", "suid", NULL });
	put_res(f, true, (const char *const[]){ "gid", "egid", NULL });
}

static json_t *groups_fact(void)
{
	int n = getgroups(0, NULL);
	if (n < 0)
		return agsbx_fact_errno(errno, "getgroups(2)");
	_cleanup_free_ gid_t *g = calloc((size_t)n + 1, sizeof *g);
	if (!g)
		return agsbx_fact_errno(ENOMEM, "getgroups(2)");
	/* getgroups(0, g) would return the count without filling g. */
	n = n > 0 ? getgroups(n, g) : 0;
	if (n < 0)
		return agsbx_fact_errno(errno, "getgroups(2)");
	json_t *a = json_array();
	for (int i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer(g[i]));
	return agsbx_fact_value(a, "getgroups(2)");
}

static void put_sudo(json_t *f)
{
	json_t *o = json_object();
	bool under = false;
	for (size_t i = 0; o && i < sizeof sudo_vars / sizeof sudo_vars[0]; i++) {
		const char *v = getenv(sudo_vars[i]);
		if (!v)
			continue;
		json_object_set_new(o, sudo_vars[i], agsbx_json_string_sanitized(v, strlen(v)));
		if (strcmp(sudo_vars[i], "SUDO_HOME") != 0)
			under = true;
	}
	agsbx_fact_put(f, "sudo", agsbx_fact_value(o, "environ:SUDO_*"));
	agsbx_fact_put(f, "under_sudo", agsbx_fact_bool(under, "environ:SUDO_USER,SUDO_UID,SUDO_GID,SUDO_COMMAND"));
}

/* One "Key:" of a /proc/PID/status text as a string (hex masks) or integer. */
static json_t *status_fact(const char *path, const char *status, int err, const char *key, bool integer)
{
	char src[512];
	snprintf(src, sizeof src, "%s:%s", path, key);
	if (!status)
		return agsbx_fact_errno(err, src);
	_cleanup_free_ char *v = agsbx_status_field(status, key);
	if (!v)
		return agsbx_fact_absent("not_reported", src);
	if (!integer)
		return agsbx_fact_string(v, src);
	char *end = NULL;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (errno || end == v || *end)
		return agsbx_fact_detail(agsbx_fact_absent("unparsable", src), v);
	return agsbx_fact_int(n, src);
}

void agsbx_probe_status_facts(json_t *f, const char *path)
{
	_cleanup_free_ char *status = NULL;
	int r = agsbx_probes_read(path, &status);
	agsbx_fact_put(f, "cap_eff", status_fact(path, status, r, "CapEff", false));
	agsbx_fact_put(f, "cap_prm", status_fact(path, status, r, "CapPrm", false));
	agsbx_fact_put(f, "cap_bnd", status_fact(path, status, r, "CapBnd", false));
	agsbx_fact_put(f, "cap_amb", status_fact(path, status, r, "CapAmb", false));
	agsbx_fact_put(f, "no_new_privs", status_fact(path, status, r, "NoNewPrivs", true));
	agsbx_fact_put(f, "seccomp", status_fact(path, status, r, "Seccomp", true));
	agsbx_fact_put(f, "seccomp_filters", status_fact(path, status, r, "Seccomp_filters", true));
}

json_t *agsbx_probe_privilege(void)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	put_ids(f);
	agsbx_fact_put(f, "groups", groups_fact());
	put_sudo(f);
	agsbx_probe_status_facts(f, STATUS);
	agsbx_fact_put(f, "cap_last_cap", agsbx_fact_file_int("/proc/sys/kernel/cap_last_cap"));
	return f;
}
