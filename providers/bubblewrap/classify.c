/* Why did bwrap fail? Its stderr is the only witness, and the symptom
 * strings of one root cause vary by host (AppArmor's userns restriction
 * shows up as a uid_map EACCES on one machine and a netlink error on
 * another). The classes are a closed set so evidence from different hosts
 * can be compared; the text itself is kept in the facts alongside. */
#include "providers/bubblewrap/bwrap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const agsbx_bwrap_classes[] = {
	"uid_map_denied", "userns_disabled", "userns_limit", "mount_denied",
	"proc_mount_denied", "netlink_denied", "unknown_option", "bind_refused", "exec_failed", "other", NULL,
};

struct signature {
	const char *needle;
	const char *cls;
};

/* First match wins, in this order: option parsing happens before any
 * namespace work, so an unknown option explains everything after it;
 * then the steps in the order bwrap performs them. */
static const struct signature signatures[] = {
	{ "Unknown option", "unknown_option" },
	/* AppArmor (Ubuntu 23.10+): the userns is created, the map write is denied. */
	{ "setting up uid map: Permission denied", "uid_map_denied" },
	{ "setting up gid map: Permission denied", "uid_map_denied" },
	/* clone(CLONE_NEWUSER) -> EPERM (bwrap 0.8 wording, and the one
	 * codex matches), or EINVAL (no userns support). */
	{ "No permissions to create new namespace", "userns_disabled" },
	/* bubblewrap 0.4-0.11.0 wording (grammar fixed in 0.11.1). */
	{ "No permissions to creating new namespace", "userns_disabled" },
	{ "No permissions to create a new namespace", "userns_disabled" },
	{ "Creating new namespace failed, likely because the kernel does not support user namespaces",
	  "userns_disabled" },
	/* setuid bwrap reports EPERM through die_with_error. */
	{ "Creating new namespace failed: Operation not permitted", "userns_disabled" },
	/* ENOSPC: nesting depth or a max_*_namespaces limit. */
	{ "max_*_namespaces exceeded", "userns_limit" },
	{ "(ENOSPC)", "userns_limit" },
	{ "Creating new namespace failed: No space left on device", "userns_limit" },
	{ "Failed to make / slave", "mount_denied" },
	/* Both proc wordings: "on /newroot/proc" (<= 0.11) and "on /proc"
	 * (0.12): the needle stops before the path on purpose. */
	{ "Can't mount proc", "proc_mount_denied" },
	{ "Can't mkdir parents for", "mount_denied" },
	{ "fchdir to oldroot", "mount_denied" },
	/* Ubuntu's security update of 0.9 refuses bind sources with symlinks. */
	{ "Can't resolve ", "bind_refused" },
	{ "RTM_NEWADDR", "netlink_denied" },
	{ "RTM_NEWLINK", "netlink_denied" },
	/* The sandbox was built; the program in it could not be executed. */
	{ "bwrap: execvp ", "exec_failed" },
};

const char *agsbx_bwrap_classify(const char *err, size_t len)
{
	if (!err)
		return "other";
	for (size_t i = 0; i < sizeof signatures / sizeof signatures[0]; i++) {
		const char *n = signatures[i].needle;
		if (memmem(err, len, n, strlen(n)))
			return signatures[i].cls;
	}
	return "other";
}

bool agsbx_bwrap_class_is_namespace(const char *cls)
{
	static const char *const ns[] = { "uid_map_denied", "userns_disabled", "userns_limit",
					  "mount_denied", "proc_mount_denied", "netlink_denied" };
	for (size_t i = 0; cls && i < sizeof ns / sizeof ns[0]; i++)
		if (strcmp(cls, ns[i]) == 0)
			return true;
	return false;
}

const char *agsbx_bwrap_class_reason(const char *cls)
{
	return agsbx_bwrap_class_is_namespace(cls) ? "bwrap_user_namespace_blocked" : "bwrap_mechanism_failed";
}

static bool fact_true(const json_t *host, const char *name)
{
	const json_t *v = agsbx_bwrap_fact(host, name);
	return json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
}

/* The remedies deliberately keep host policy as it is: the maintainers
 * asked for evidence gathered without weakening the host, so a hint only
 * points at a distribution-provided profile, a different vantage point
 * (outside the container) or a different provider. */
#define AA_PROFILE \
	"load the AppArmor profile your distribution ships for bwrap (Ubuntu 24.04: " \
	"/usr/share/apparmor/extra-profiles/bwrap-userns-restrict from the apparmor package, " \
	"in /etc/apparmor.d from 25.04 on, which grants user namespaces to /usr/bin/bwrap only)"
#define LANDLOCK "or use the landlock provider, which needs no user namespace"

static long long fact_int(const json_t *host, const char *name, long long dflt)
{
	const json_t *v = agsbx_bwrap_fact(host, name);
	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

json_t *agsbx_bwrap_suspected_layers(const json_t *host)
{
	json_t *a = json_array();
	if (fact_int(host, "seccomp", 0) == 2)
		json_array_append_new(a, json_string("seccomp"));
	if (fact_true(host, "apparmor_restrict_unprivileged_userns"))
		json_array_append_new(a, json_string("apparmor"));
	if (fact_int(host, "max_user_namespaces", -1) == 0)
		json_array_append_new(a, json_string("userns_limit"));
	if (fact_int(host, "unprivileged_userns_clone", -1) == 0)
		json_array_append_new(a, json_string("userns_clone"));
	if (fact_true(host, "dockerenv") || fact_true(host, "containerenv"))
		json_array_append_new(a, json_string("container"));
	return a;
}

/* One sentence naming what the host facts point at, or "". */
static const char *layer_note(const json_t *host)
{
	if (fact_int(host, "seccomp", 0) == 2)
		return "the harness itself runs under a seccomp filter (Seccomp: 2), as container runtimes "
		       "install by default; ";
	if (fact_true(host, "apparmor_restrict_unprivileged_userns"))
		return "AppArmor restricts unprivileged user namespaces on this host; ";
	if (fact_int(host, "max_user_namespaces", -1) == 0)
		return "max_user_namespaces is 0 in the namespace the harness runs in; ";
	return "";
}

char *agsbx_bwrap_class_hint(const char *cls, const json_t *host)
{
	bool container = fact_true(host, "dockerenv") || fact_true(host, "containerenv");
	bool aa_restrict = fact_true(host, "apparmor_restrict_unprivileged_userns");
	const char *where = container ? "run the harness outside the container, " : "";
	char *s = NULL;
	int n = -1;

	if (!cls || strcmp(cls, "other") == 0)
		n = asprintf(&s, "bwrap's own message is in facts.stderr; rerun facts.sandbox_probe.argv "
			     "as the same user to reproduce it, %s", LANDLOCK);
	else if (strcmp(cls, "bind_refused") == 0)
		n = asprintf(&s, "this bwrap refuses a bind source whose path goes through a symlink (Ubuntu's "
			     "security update of 0.9); the provider binds only canonical grant roots, so the "
			     "symlink is in a system root: facts.stderr names it, %s", LANDLOCK);
	else if (strcmp(cls, "exec_failed") == 0)
		n = asprintf(&s, "bwrap built the sandbox but could not execute the program in it "
			     "(facts.stderr names it); the program or its loader is outside the bound roots");
	else if (strcmp(cls, "unknown_option") == 0)
		n = asprintf(&s, "this bwrap is older than the options the provider uses; install a "
			     "current bubblewrap package from your distribution, %s", LANDLOCK);
	else if (strcmp(cls, "uid_map_denied") == 0 || strcmp(cls, "netlink_denied") == 0 ||
		 (strcmp(cls, "userns_disabled") == 0 && aa_restrict))
		n = asprintf(&s, "the host's AppArmor policy lets bwrap start a user namespace but takes "
			     "its rights away; %s%s, %s", where, AA_PROFILE, LANDLOCK);
	else if (strcmp(cls, "userns_disabled") == 0)
		n = asprintf(&s, "%sthis %s does not let the harness user create user namespaces; %s"
			     "use a distribution-provided AppArmor profile for bwrap where AppArmor is "
			     "the cause, %s", layer_note(host), container ? "container" : "host", where, LANDLOCK);
	else if (strcmp(cls, "userns_limit") == 0)
		n = asprintf(&s, "%sthe user-namespace limit of the namespace the harness runs in is used "
			     "up (nested namespace or container); run the harness from the host's own "
			     "namespace, %s", layer_note(host), LANDLOCK);
	else if (strcmp(cls, "mount_denied") == 0 || strcmp(cls, "proc_mount_denied") == 0)
		n = asprintf(&s, "%sbwrap may not mount inside its namespace (a container's seccomp or "
			     "LSM policy, a masked /proc, or a Landlock domain around the harness); %s%s",
			     layer_note(host), container ? "run the harness outside the container, " : "", LANDLOCK);
	else
		n = asprintf(&s, "%s", LANDLOCK);
	return n < 0 ? NULL : s;
}
