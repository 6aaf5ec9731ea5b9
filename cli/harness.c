#include "cli/harness.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
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
	}
	if (probe_host) {
		hs->host = agsbx_probe_host(NULL);
		hs->ctx.host = hs->host;
	}
	return 0;
}

void agsbx_harness_free(struct agsbx_harness *hs)
{
	free(hs->tool_dir);
	free(hs->payload_path);
	free(hs->run_as_name);
	json_decref(hs->host);
	memset(hs, 0, sizeof *hs);
}
