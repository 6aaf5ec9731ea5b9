/* Helpers shared by the probe families (fact.c, mountinfo.c, tool.c).
 * Not part of the probes API: only the probes module (and its tests) include this.
 * Fact objects: base/fact.h. */
#ifndef AGSBX_PROBES_INTERNAL_H
#define AGSBX_PROBES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "base/fact.h"

/* ---- facts (base/fact.h, and the file readers in fact.c) ---- */

/* Facts read from one small file: the first line as a string, as a
 * decimal integer, or "Y"/"N"/"1"/"0" as a boolean. A missing or
 * unreadable file is an absent fact with the errno name; unparsable
 * content is absent with reason "unparsable" and the content as detail. */
json_t *agsbx_fact_file_line(const char *path);
json_t *agsbx_fact_file_int(const char *path);
json_t *agsbx_fact_file_bool(const char *path);

/* Whole small file (<= 1 MiB), NUL-terminated; 0 or -errno. */
int agsbx_probes_read(const char *path, char **data);
/* A status text's "Key:\t..." value: agsbx_status_field (base/proc.h). */

/* ---- executables (tool.c) ---- */

/* First executable regular file called name in $PATH (or a default PATH
 * when unset); malloc'd absolute path or NULL (errno ENOENT). */
char *agsbx_probes_find_in_path(const char *name);
/* A tool family's new object: "path" found in $PATH (*path set, malloc'd),
 * or, when name is not there, every fact in facts (NULL-terminated)
 * absent with reason "not_found_in_path" and *path NULL. NULL when out
 * of memory. */
json_t *agsbx_probes_tool_family(const char *name, const char *const *facts, char **path);

/* Runs argv (argv[0] absolute) through the bounded runner with timeout_ms
 * and a minimal environment; on success *out is its stdout (malloc'd) and
 * 0 is returned. On failure returns < 0 and *reason is a static reason
 * ("runner_unavailable", "timeout", "exit_status_nonzero", an errno name)
 * and *detail (malloc'd, may be NULL) holds stderr or the status. */
int agsbx_probes_run_tool(const char *const *argv, long timeout_ms, char **out,
			  const char **reason, char **detail);
/* Runs "PATH FLAG" (--help, --version) bounded: 0 with *out and *source
 * set to "PATH FLAG", or < 0 with *absent the fact that says why not (new
 * ref). *source and *out are the caller's to free either way. */
int agsbx_probes_run_flag(const char *path, const char *flag, long timeout_ms, char **source, char **out,
			  json_t **absent);

/* A --version fact pair from one run: "version" (the text after prefix on
 * the first line, or the whole first line when prefix does not match) and
 * "version_line" (the first line as printed). */
void agsbx_probes_version_facts(json_t *family, const char *path, const char *prefix,
				long timeout_ms);

/* ---- /proc/self/mountinfo (mountinfo.c) ---- */

struct agsbx_mount {
	char *root;          /* root of the mount within its filesystem */
	char *mountpoint;    /* unescaped */
	char *fstype;
	char *source;
	char *super_options;
};

/* Parses mountinfo text (as in /proc/self/mountinfo); 0 or -errno
 * (-EINVAL on a malformed line). */
/* The docker family's facts from a GET /info answer (any JSON value: the
 * daemon's). */
void agsbx_docker_info_facts(json_t *f, const json_t *info, const char *source);
int agsbx_mountinfo_parse(const char *text, struct agsbx_mount **mounts, size_t *n);
int agsbx_mountinfo_read(struct agsbx_mount **mounts, size_t *n);
void agsbx_mountinfo_free(struct agsbx_mount *mounts, size_t n);
/* The topmost mount at mountpoint (the last one listed), or NULL. */
const struct agsbx_mount *agsbx_mountinfo_find(const struct agsbx_mount *mounts, size_t n,
					       const char *mountpoint);

/* ---- parsers behind the families, fed recorded files by the tests ---- */

struct utsname;
/* The kernel family from a uname(2) result; u NULL: every fact absent with
 * err's name. New object. */
json_t *agsbx_probe_kernel_uts(const struct utsname *u, int err);
/* cap_eff, cap_prm, cap_bnd, cap_amb, no_new_privs, seccomp and
 * seccomp_filters from a /proc/PID/status file into family f. */
void agsbx_probe_status_facts(json_t *f, const char *path);
/* Container runtime words in the cgroup paths of a /proc/PID/cgroup file
 * ("N:controllers:/path" lines): a fact with the list of words found;
 * *fired set when any was. */
json_t *agsbx_probe_cgroup_markers(const char *path, bool *fired);
/* The cgroup family's version, hybrid, cgroup2_mount and v1_controllers
 * facts from the mount table; its self_cgroup2_path fact from a
 * /proc/PID/cgroup file (the "0::/path" line). */
void agsbx_cgroup_mount_facts(json_t *f, const struct agsbx_mount *m, size_t n);
json_t *agsbx_probe_cgroup_self_path(const char *path);
/* The apparmor family with every path read beneath root ("" for the host:
 * /sys, /proc and /etc/apparmor.d as they are). */
json_t *agsbx_probe_apparmor_at(const char *root);

/* A `TOOL --version` output (modified: cut at its first newline) as the
 * family's version (prefix removed) and version_line facts. */
void agsbx_probes_version_parse(json_t *family, char *out, const char *prefix, const char *source);
/* Which of the options we look for a `bwrap --help` text names: the
 * options fact. */
json_t *agsbx_bwrap_options_fact(const char *help, const char *source);
/* The docker family's version facts from a GET /version answer; false (and
 * nothing put) when it is no Docker Engine API's (no Version/ApiVersion
 * strings). */
bool agsbx_docker_version_facts(json_t *f, const json_t *ver, const char *source);

/* ---- versions (advisories.c) ---- */

/* "1.1.5+ds1", "1.0.0-rc93", "1.4.0-rc.3", "6.18.44-fc-v1098": up to four
 * numbers, then a release candidate number (-rcN or -rc.N; a release sorts
 * after its candidates). Anything else after the numbers is a local or
 * distribution suffix and is ignored. */
struct agsbx_version {
	long part[4];
	long rc; /* -1: not a candidate */
};
/* 0, or -1 when s does not start with a digit. */
int agsbx_version_parse(const char *s, struct agsbx_version *v);
int agsbx_version_cmp(const struct agsbx_version *a, const struct agsbx_version *b);

#endif
