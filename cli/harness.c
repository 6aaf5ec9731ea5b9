#include "cli/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* AGSBX_HELPER_LIST: the helper programs, ':'-separated, generated from
 * CMake's agsbx_add_helper() calls (what the install step puts into
 * libexec). */
#include "agsbx-helpers.h"
#include "base/cleanup.h"
#include "base/defaults.h"
#include "base/log.h"
#include "base/rundir.h"
#include "base/util.h"
#include "cli/commands.h"
#include "probes/probes.h"

static int resolve_user(const char *name, uid_t *uid, gid_t *gid)
{
	struct passwd *pw = getpwnam(name);
	if (!pw) {
		char *end;
		long v = strtol(name, &end, 10);
		/* uid 0 resolves (to root) so the caller refuses it as root,
		 * not as an unknown user */
		if (end == name || *end || v < 0)
			return -ENOENT;
		pw = getpwuid((uid_t)v);
		if (!pw)
			return -ENOENT;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

/* bindir -> libexec/agsbx-evidence, relative (GNUInstallDirs at configure). */
#ifndef AGSBX_LIBEXEC_RELDIR
#define AGSBX_LIBEXEC_RELDIR "../libexec/agsbx-evidence"
#endif

/* Calls fn for each helper name; stops at the first negative return. */
static int each_helper(int (*fn)(void *ud, const char *name), void *ud)
{
	const char *p = AGSBX_HELPER_LIST;
	while (*p) {
		size_t n = strcspn(p, ":");
		char name[256];
		if (n > 0 && n < sizeof name) {
			memcpy(name, p, n);
			name[n] = '\0';
			int r = fn(ud, name);
			if (r < 0)
				return r;
		}
		p += n + (p[n] == ':');
	}
	return 0;
}

static int copy_exec(const char *src, const char *dst)
{
	char *data = NULL;
	size_t len = 0;
	int r = agsbx_read_file(src, 64u << 20, &data, &len);
	if (r == 0)
		r = agsbx_write_file_atomic(dst, data, len, 0755);
	free(data);
	return r;
}

static int stage_one(void *ud, const char *name)
{
	struct agsbx_harness *hs = ud;
	_cleanup_free_ char *src = agsbx_path_join(hs->tool_dir, name);
	_cleanup_free_ char *dst = agsbx_path_join(hs->staged_dir, name);
	if (!src || !dst)
		return -ENOMEM;
	return access(src, F_OK) == 0 ? copy_exec(src, dst) : 0;
}

static int unstage_one(void *ud, const char *name)
{
	_cleanup_free_ char *p = agsbx_path_join(ud, name);
	if (p)
		unlink(p);
	return 0;
}

/* The programs a dropped-privilege sandbox executes must be reachable by
 * that user, but the tool may live under a private home (a clone in
 * /root). Copy them into a fresh world-traversable directory instead of
 * loosening any host permission. */
static int stage_helpers(struct agsbx_harness *hs)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = NULL;
	if (asprintf(&dir, "%s/agsbx-tools-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0 || !mkdtemp(dir)) {
		free(dir);
		return -errno;
	}
	hs->staged_dir = dir;
	if (chmod(dir, 0755) < 0)
		return -errno;
	int rc = agsbx_rundir_claim(dir);   /* a killed run's copies are found by `cleanup` */
	if (rc < 0)
		return rc;
	int r = each_helper(stage_one, hs);
	if (r < 0)
		return r;
	free(hs->payload_path);
	hs->payload_path = agsbx_path_join(dir, "agsbx-payload");
	hs->ctx.tool_dir = dir;
	hs->ctx.payload_path = hs->payload_path;
	return hs->payload_path ? 0 : -ENOMEM;
}

static void unstage_helpers(struct agsbx_harness *hs)
{
	if (!hs->staged_dir)
		return;
	each_helper(unstage_one, hs->staged_dir);
	agsbx_rm_tree(hs->staged_dir);   /* the owner record too */
	free(hs->staged_dir);
	hs->staged_dir = NULL;
}

int agsbx_helper_dir(char **dir)
{
	const char *env = getenv("AGSBX_LIBEXEC_DIR");
	if (env && *env) {
		*dir = strdup(env);
		return *dir ? 0 : -ENOMEM;
	}
	_cleanup_free_ char *self = NULL;
	int r = agsbx_self_dir(&self);
	if (r < 0)
		return r;
	/* The build tree keeps every program in one directory. */
	_cleanup_free_ char *beside = agsbx_path_join(self, "agsbx-payload");
	if (!beside)
		return -ENOMEM;
	if (access(beside, F_OK) == 0) {
		*dir = TAKE_PTR(self);
		return 0;
	}
	_cleanup_free_ char *rel = agsbx_path_join(self, AGSBX_LIBEXEC_RELDIR);
	if (!rel)
		return -ENOMEM;
	/* Canonical when it exists, so recorded helper paths read plainly. */
	char *real = realpath(rel, NULL);
	*dir = real ? real : TAKE_PTR(rel);
	return 0;
}

static int harness_init(struct agsbx_harness *hs, const char *cmd, const char *run_as, bool probe_host)
{
	int r = agsbx_helper_dir(&hs->tool_dir);
	if (r < 0) {
		agsbx_error_errno(r, "cannot locate the helper programs");
		return AGSBX_EXIT_INTERNAL;
	}
	hs->payload_path = agsbx_path_join(hs->tool_dir, "agsbx-payload");
	if (!hs->payload_path || access(hs->payload_path, X_OK) < 0) {
		agsbx_error("the payload %s is missing; the installation is incomplete", hs->payload_path);
		agsbx_hint("helpers live beside the binary (build tree), in " AGSBX_LIBEXEC_RELDIR
			   " relative to it (installed), or in $AGSBX_LIBEXEC_DIR");
		return AGSBX_EXIT_INTERNAL;
	}
	hs->ctx.tool_dir = hs->tool_dir;
	hs->ctx.payload_path = hs->payload_path;
	hs->ctx.probe_timeout_ms = AGSBX_PROBE_TIMEOUT_MS;
	if (run_as) {
		if (geteuid() != 0)
			return agsbx_usage_error(cmd, "--run-as needs root (it drops privileges to USER); you are already unprivileged");
		if (resolve_user(run_as, &hs->ctx.run_uid, &hs->ctx.run_gid) < 0)
			return agsbx_usage_error(cmd, "--run-as: no such user '%s'", run_as);
		if (hs->ctx.run_uid == 0)
			return agsbx_usage_error(cmd, "--run-as: '%s' is root; name an unprivileged user", run_as);
		agsbx_rundir_set_run_uid(hs->ctx.run_uid);   /* claims name whose processes the run starts */
		hs->run_as_name = strdup(run_as);
		hs->ctx.run_as = true;
		hs->ctx.run_as_name = hs->run_as_name;
		r = stage_helpers(hs);
		if (r < 0) {
			unstage_helpers(hs);
			agsbx_error_errno(r, "cannot stage the helper programs for --run-as %s", run_as);
			return AGSBX_EXIT_INTERNAL;
		}
	}
	if (probe_host) {
		hs->host = agsbx_probe_host(NULL);
		hs->ctx.host = hs->host;
	}
	return 0;
}

int agsbx_harness_init(struct agsbx_harness *hs, const char *cmd, const char *run_as, bool probe_host)
{
	memset(hs, 0, sizeof *hs);
	int rc = harness_init(hs, cmd, run_as, probe_host);
	if (rc)
		agsbx_harness_clear(hs); /* callers return at once: nothing may leak */
	return rc;
}

void agsbx_harness_clear(struct agsbx_harness *hs)
{
	if (!hs)
		return;
	unstage_helpers(hs);
	free(hs->tool_dir);
	free(hs->payload_path);
	free(hs->run_as_name);
	json_decref(hs->host);
	memset(hs, 0, sizeof *hs);
}
