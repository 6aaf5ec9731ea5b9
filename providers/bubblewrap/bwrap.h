/* Internals of the bubblewrap provider, shared by its files and its tests.
 * Nothing outside providers/bubblewrap/ and tests/test-bubblewrap.c uses
 * these; the public face is agsbx_provider_bubblewrap. */
#ifndef AGSBX_PROVIDERS_BUBBLEWRAP_BWRAP_H
#define AGSBX_PROVIDERS_BUBBLEWRAP_BWRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "providers/provider.h"

/* ---- failure classifier (classify.c) ---------------------------------- */

/* The closed set of failure classes, NULL-terminated:
 * uid_map_denied, userns_disabled, userns_limit, mount_denied,
 * proc_mount_denied, netlink_denied, unknown_option, bind_refused,
 * exec_failed, other. */
extern const char *const agsbx_bwrap_classes[];

/* Class of a failed bwrap run from its stderr (any bytes, len may include
 * NULs). Never NULL: unmatched text is "other". */
const char *agsbx_bwrap_classify(const char *err, size_t len);
/* True for the classes that mean "the host blocks the user namespace or
 * what bwrap does inside it" (the first six). */
bool agsbx_bwrap_class_is_namespace(const char *cls);
/* The probe reason a class maps to: bwrap_user_namespace_blocked for the
 * namespace classes, bwrap_mechanism_failed otherwise. */
const char *agsbx_bwrap_class_reason(const char *cls);
/* Remedy for a class, informed by the host facts (agsbx_bwrap_host_facts;
 * may be NULL). Never recommends weakening host policy. malloc'd. */
char *agsbx_bwrap_class_hint(const char *cls, const json_t *host);
/* Which host layers the facts point at, as a new JSON array of names:
 * "seccomp" (the harness is filtered, Seccomp: 2), "apparmor" (userns
 * restriction on), "userns_limit" (max_user_namespaces 0),
 * "userns_clone" (Debian's unprivileged_userns_clone 0), "container". */
json_t *agsbx_bwrap_suspected_layers(const json_t *host);

/* ---- host facts (facts.c) --------------------------------------------- */

/* The read-only host facts that explain a userns failure, each
 * {"value", "source"} or {"absent": true, "reason", "source"} (new ref):
 * apparmor_restrict_unprivileged_userns, apparmor_restrict_unprivileged_unconfined,
 * max_user_namespaces, unprivileged_userns_clone, seccomp, no_new_privs,
 * dockerenv, containerenv, apparmor_label, apparmor_bwrap_profile. */
json_t *agsbx_bwrap_host_facts(void);
/* The "value" of a fact in that object, borrowed, NULL when absent. */
const json_t *agsbx_bwrap_fact(const json_t *host, const char *name);

/* ---- argv (argv.c) ----------------------------------------------------- */

struct agsbx_bwrap_spec {
	const char *bwrap;                /* absolute path of bwrap */
	bool share_net;                   /* config network: true */
	const char *const *env;           /* "KEY=VALUE" -> --setenv; may be NULL */
	const struct agsbx_grant *grant;  /* roots to bind; NULL for the probe */
	const char *chdir;                /* NULL: "/" */
	const char *const *argv;          /* the program inside, argv[0] a path */
	int seccomp_fd;                   /* > 2: --seccomp N (the fd bwrap gets); else no filter */
	bool setuid;                      /* a setuid-root bwrap: no --disable-userns (see argv.c) */
};

/* The whole bwrap argv, built from the spec and fixed system roots only.
 * -EINVAL for an unusable spec (relative or "/" root, env entry without
 * '=', empty argv). *out is NULL-terminated, free with agsbx_strv_free. */
int agsbx_bwrap_build_argv(const struct agsbx_bwrap_spec *s, char ***out);

/* bwrap on PATH (absolute entries only; the default PATH when unset).
 * 0 and a malloc'd path, or -ENOENT. */
int agsbx_bwrap_find(char **path);

#endif
