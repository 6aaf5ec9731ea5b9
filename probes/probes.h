/* Read-only host facts. Nothing here writes: no sysctl, no file, no
 * mount. Each family returns a new JSON object whose facts carry where they
 * came from ("source") and, when unavailable, "absent": true with a
 * "reason" — an absent fact is a fact, never an error.
 *
 * Shape of one fact (see schemas/host-probe.schema.json):
 *   {"value": <any>, "source": "/proc/sys/user/max_user_namespaces"}
 *   {"absent": true, "reason": "ENOENT", "source": "..."}                 */
#ifndef AGSBX_PROBES_PROBES_H
#define AGSBX_PROBES_PROBES_H

#include "base/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define AGSBX_HOST_PROBE_SCHEMA "agsbx-evidence/host-probe/v1"

struct agsbx_probe_opts {
	const char *docker_host;      /* NULL: $DOCKER_HOST or unix:///var/run/docker.sock */
	long docker_timeout_ms;       /* <= 0: 2000 */
};

/* The whole host object (what `probe --json` prints), new reference:
 * {"schema": "agsbx-evidence/host-probe/v1", "kernel", "os", "privilege",
 *  "container", "userns", "apparmor", "landlock", "cgroup", "bubblewrap",
 *  "runsc", "docker", "macos", "hardening", "runtimes", "advisories"} */
json_t *agsbx_probe_host(const struct agsbx_probe_opts *opts);

/* Families (each a new reference). */
json_t *agsbx_probe_kernel(void);       /* uname: sysname, release, version, machine */
json_t *agsbx_probe_os(void);           /* /etc/os-release: id, version_id, pretty_name */
json_t *agsbx_probe_privilege(void);    /* uid, euid, gid, egid, sudo (SUDO_*), cap_eff, no_new_privs, seccomp */
json_t *agsbx_probe_container(void);    /* markers (/.dockerenv, /run/.containerenv, cgroup, mountinfo), detected, privileged_hints */
json_t *agsbx_probe_userns(void);       /* unprivileged_userns_clone, max_user_namespaces */
json_t *agsbx_probe_apparmor(void);     /* enabled, restrict_unprivileged_userns, restrict_unprivileged_unconfined, label, bwrap_profile */
json_t *agsbx_probe_landlock(void);     /* abi, errata, newer_than_known (via the syscall only) */
json_t *agsbx_probe_cgroup(void);       /* version, cgroup2_mount */
json_t *agsbx_probe_bubblewrap(void);   /* path, version, setuid, options */
json_t *agsbx_probe_runsc(void);        /* path, version */
json_t *agsbx_probe_docker(const struct agsbx_probe_opts *opts); /* endpoint, reachable, version, api_version, runtimes, default_runtime, security_options, cgroup_version */
json_t *agsbx_probe_macos(void);        /* sw_vers, sandbox_exec */
json_t *agsbx_probe_hardening(void);    /* /proc/sys knobs of the kernel attack surface (read only) */
json_t *agsbx_probe_runtimes(void);     /* runc, crun, containerd versions on PATH */
/* Advice from the other families (kernel, runtimes, hardening, userns):
 * upstream_ranges (each advisory of probes/advisories.json with the
 * observed version and "in_range" / "fixed" / "before_introduced" /
 * "not_observed"), hardening (each knob "exposed" / "restricted"),
 * table_updated. Never a verdict. */
json_t *agsbx_probe_advisories(const json_t *host);

/* Value of a fact inside a probe object, by family and name: borrowed,
 * NULL when absent. e.g. agsbx_probe_value(host, "userns", "max_user_namespaces"). */
const json_t *agsbx_probe_value(const json_t *host, const char *family, const char *name);

/* Docker endpoint resolution: from DOCKER_HOST (unix:// only) or the
 * default socket. Returns 0 and a malloc'd socket path, or -EINVAL with
 * err (may be NULL) set for anything but unix:// (agsbx_dockerhost_socket). */
int agsbx_docker_socket_path(const char *docker_host, char **path, struct agsbx_error *err);

/* ---- additions (probes module) ---- */

/* One family of the host object; the table in host.c, in output order.
 * probe returns a new reference (NULL only on out-of-memory). */
struct agsbx_probe_family {
	const char *name;
	json_t *(*probe)(const struct agsbx_probe_opts *opts);
	/* instead of probe: facts derived from the families before it */
	json_t *(*derive)(const json_t *host);
};
const struct agsbx_probe_family *agsbx_probe_families(size_t *n);

#endif
