#include "cli/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
		if (*end || v <= 0)
			return -ENOENT;
		pw = getpwuid((uid_t)v);
		if (!pw)
			return -ENOENT;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

static const char *const helpers[] = { "agsbx-payload", "agsbx-landlock-exec", "agsbx-simulate" };

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
	for (size_t i = 0; i < sizeof helpers / sizeof helpers[0]; i++) {
		char *src = agsbx_path_join(hs->tool_dir, helpers[i]);
		char *dst = agsbx_path_join(dir, helpers[i]);
		int r = src && dst ? 0 : -ENOMEM;
		if (r == 0 && access(src, F_OK) == 0)
			r = copy_exec(src, dst);
		free(src);
		free(dst);
		if (r < 0)
			return r;
	}
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
	for (size_t i = 0; i < sizeof helpers / sizeof helpers[0]; i++) {
		char *p = agsbx_path_join(hs->staged_dir, helpers[i]);
		if (p)
			unlink(p);
		free(p);
	}
	agsbx_rm_tree(hs->staged_dir);
	free(hs->staged_dir);
	hs->staged_dir = NULL;
}

int agsbx_harness_init(struct agsbx_harness *hs, const char *cmd, const char *run_as, bool probe_host)
{
	memset(hs, 0, sizeof *hs);
	if (agsbx_self_dir(&hs->tool_dir) < 0) {
		agsbx_error("cannot locate the agsbx-evidence executable (/proc/self/exe)");
		return AGSBX_EXIT_INTERNAL;
	}
	hs->payload_path = agsbx_path_join(hs->tool_dir, "agsbx-payload");
	if (!hs->payload_path || access(hs->payload_path, X_OK) < 0) {
		agsbx_error("the payload %s is missing; the installation is incomplete", hs->payload_path);
		agsbx_hint("build everything with 'make build'; helpers live beside the agsbx-evidence binary");
		return AGSBX_EXIT_INTERNAL;
	}
	hs->ctx.tool_dir = hs->tool_dir;
	hs->ctx.payload_path = hs->payload_path;
	hs->ctx.probe_timeout_ms = 5000;
	if (run_as) {
		if (geteuid() != 0)
			return agsbx_usage_error(cmd, "--run-as needs root (it drops privileges to USER); you are already unprivileged");
		if (resolve_user(run_as, &hs->ctx.run_uid, &hs->ctx.run_gid) < 0)
			return agsbx_usage_error(cmd, "--run-as: no such user '%s'", run_as);
		if (hs->ctx.run_uid == 0)
			return agsbx_usage_error(cmd, "--run-as: '%s' is root; name an unprivileged user", run_as);
		hs->run_as_name = strdup(run_as);
		hs->ctx.run_as = true;
		hs->ctx.run_as_name = hs->run_as_name;
		int r = stage_helpers(hs);
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

void agsbx_harness_free(struct agsbx_harness *hs)
{
	unstage_helpers(hs);
	free(hs->tool_dir);
	free(hs->payload_path);
	free(hs->run_as_name);
	json_decref(hs->host);
	memset(hs, 0, sizeof *hs);
}
