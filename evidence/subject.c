/* The subject of the evidence: which code was under test (branch, commit,
 * dirty flag of a git checkout), asked of git through the bounded runner. */
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/cleanup.h"
#include "base/runner.h"
#include "base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define GIT_TIMEOUT_MS 30000

/* Runs `git --no-optional-locks -C path ARGS...` (read-only: no index
 * refresh writes, fsmonitor hooks off). 0 with *out (first line, or the
 * whole output when whole) or -EINVAL with the first stderr line in err. */
static int git(const char *path, const char *const *args, bool whole, char **out, char *err, size_t err_size)
{
	const char *argv[16] = { "git", "--no-optional-locks", "-c", "core.fsmonitor=false", "-C", path };
	size_t n = 6;
	for (size_t i = 0; args[i] && n < AGSBX_ARRAY_SIZE(argv) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	struct agsbx_run_opts o = { .argv = argv, .timeout_ms = GIT_TIMEOUT_MS, .cancel_fd = -1,
				    .max_output_bytes = 1 << 20 };
	struct agsbx_run_result res;
	memset(&res, 0, sizeof res);
	int r = agsbx_run(&o, &res);
	if (r < 0) {
		set_err(err, err_size, "cannot run git: %s", strerror(res.spawn_errno ? res.spawn_errno : -r));
		agsbx_run_result_free(&res);
		return r;
	}
	if (res.status != 0) {
		const char *why = res.err && res.err_len ? res.err : "no message";
		set_err(err, err_size, "git %s failed (status %d): %.*s", args[0], res.status,
			(int)strcspn(why, "\n"), why);
		agsbx_run_result_free(&res);
		return -EINVAL;
	}
	if (res.out_truncated) {
		/* status --porcelain over 1 MiB: dirty either way */
		*out = strdup("(truncated)");
	} else {
		*out = strndup(res.out ? res.out : "", whole ? res.out_len : strcspn(res.out ? res.out : "", "\n"));
	}
	agsbx_run_result_free(&res);
	return *out ? 0 : -ENOMEM;
}

json_t *agsbx_subject_from_repo(const char *path, char *err, size_t err_size)
{
	char abs[PATH_MAX];
	if (!realpath(path, abs)) {
		set_err(err, err_size, "%s: %s", path, strerror(errno));
		return NULL;
	}
	static const char *const top_args[] = { "rev-parse", "--show-toplevel", NULL };
	static const char *const branch_args[] = { "rev-parse", "--abbrev-ref", "HEAD", NULL };
	static const char *const commit_args[] = { "rev-parse", "--verify", "HEAD", NULL };
	static const char *const status_args[] = { "status", "--porcelain", NULL };
	_cleanup_free_ char *top = NULL, *branch = NULL, *commit = NULL, *status = NULL;
	char why[400];
	if (git(abs, top_args, false, &top, why, sizeof why) < 0) {
		set_err(err, err_size, "%s: not a usable git checkout: %s", path, why);
		return NULL;
	}
	/* A repository without commits has no HEAD: branch and commit null. */
	bool born = git(abs, commit_args, false, &commit, why, sizeof why) == 0;
	if (born && git(abs, branch_args, false, &branch, why, sizeof why) < 0) {
		set_err(err, err_size, "%s: %s", path, why);
		return NULL;
	}
	if (git(abs, status_args, true, &status, why, sizeof why) < 0) {
		set_err(err, err_size, "%s: %s", path, why);
		return NULL;
	}
	json_t *s = json_object();
	if (!s)
		return NULL;
	json_object_set_new(s, "path", agsbx_json_string_sanitized(abs, strlen(abs)));
	json_object_set_new(s, "branch", branch ? agsbx_json_string_sanitized(branch, strlen(branch)) : json_null());
	json_object_set_new(s, "commit", commit ? agsbx_json_string_sanitized(commit, strlen(commit)) : json_null());
	json_object_set_new(s, "dirty", json_boolean(status[0] != '\0'));
	return s;
}
