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

/* Runs `git --no-pager --no-optional-locks -c core.fsmonitor=false
 * -c core.hooksPath=/dev/null [neutral...] -C path ARGS...`: read-only (no
 * index refresh writes) and running no program the repository names (no
 * fsmonitor hook, no hooks; neutral disables its filter drivers). 0 with
 * *out (first line, or the whole output when whole) or -EINVAL with the
 * first stderr line in err. */
static int git(const char *path, const json_t *neutral, const char *const *args, bool whole, char **out, char *err,
	       size_t err_size)
{
	size_t nargs = 0, nneutral = json_array_size(neutral);
	while (args[nargs])
		nargs++;
	_cleanup_free_ const char **argv = calloc(10 + 2 * nneutral + nargs, sizeof *argv);
	if (!argv)
		return -ENOMEM;
	size_t n = 0;
	static const char *const fixed[] = { "git", "--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
					     "-c", "core.hooksPath=/dev/null" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(fixed); i++)
		argv[n++] = fixed[i];
	for (size_t i = 0; i < nneutral; i++) {
		argv[n++] = "-c";
		argv[n++] = json_string_value(json_array_get(neutral, i));
	}
	argv[n++] = "-C";
	argv[n++] = path;
	for (size_t i = 0; i < nargs; i++)
		argv[n++] = args[i];
	struct agsbx_run_opts o = { .argv = argv, .timeout_ms = GIT_TIMEOUT_MS, .cancel_fd = -1,
				    .max_output_bytes = 1 << 20 };
	struct agsbx_run_result res;
	memset(&res, 0, sizeof res);
	int r = agsbx_run(&o, &res);
	if (r < 0) {
		ev_set_err(err, err_size, "cannot run git: %s", strerror(res.spawn_errno ? res.spawn_errno : -r));
		agsbx_run_result_clear(&res);
		return r;
	}
	if (res.status != 0) {
		const char *why = res.err && res.err_len ? res.err : "no message";
		ev_set_err(err, err_size, "git %s failed (status %d): %.*s", args[0], res.status,
			(int)strcspn(why, "\n"), why);
		agsbx_run_result_clear(&res);
		return res.status == 1 && !res.err_len ? -ENOENT : -EINVAL;
	}
	if (res.out_truncated) {
		/* status --porcelain over 1 MiB: dirty either way */
		*out = strdup("(truncated)");
	} else {
		/* whole output may hold NULs (-z): copied as bytes, plus a
		 * final NUL (and one more, ending a -z list) */
		const char *text = res.out ? res.out : "";
		size_t len = whole ? res.out_len : strcspn(text, "\n");
		*out = malloc(len + 2);
		if (*out) {
			memcpy(*out, text, len);
			(*out)[len] = (*out)[len + 1] = '\0';
		}
	}
	agsbx_run_result_clear(&res);
	return *out ? 0 : -ENOMEM;
}

/* `git status` reads changed files through the clean filter (or the
 * long-running process filter) the repository configures for them: a
 * program the repository controls. Every filter driver its configuration
 * names (filter.<name>.*, any scope, includes followed) is overridden on
 * the command line to nothing, so git reads the bytes as they are. A
 * JSON array of "filter.<name>.<key>=" settings (new reference). */
static json_t *filter_overrides(const char *path, char *err, size_t err_size)
{
	static const char *const list_args[] = { "config", "--name-only", "-z", "--get-regexp", "^filter\\.", NULL };
	_cleanup_free_ char *names = NULL;
	int r = git(path, NULL, list_args, true, &names, err, err_size);
	json_t *neutral = json_array();
	if (r == -ENOENT || !neutral) /* no filter configured */
		return neutral;
	if (r < 0) {
		json_decref(neutral);
		return NULL;
	}
	/* -z --name-only: "filter.<name>.<key>\0" each; truncated output has
	 * no such form and yields nothing usable, so refuse it */
	if (strcmp(names, "(truncated)") == 0) {
		ev_set_err(err, err_size, "too many git config entries");
		json_decref(neutral);
		return NULL;
	}
	json_decref(neutral);
	return ev_filter_settings(names);
}

json_t *ev_filter_settings(const char *names)
{
	json_t *neutral = json_array();
	for (const char *k = names; neutral && *k; k += strlen(k) + 1) {
		const char *dot = strrchr(k, '.');
		if (!dot || dot - k <= 7)
			continue;
		static const char *const keys[] = { "clean=", "smudge=", "process=", "required=false" };
		for (size_t i = 0; i < AGSBX_ARRAY_SIZE(keys); i++) {
			char *setting = NULL;
			if (asprintf(&setting, "%.*s.%s", (int)(dot - k), k, keys[i]) < 0)
				break;
			/* nocheck: git takes any bytes in a driver's name, and a
			 * name json_string refused (not UTF-8) would keep its
			 * filter; the array only becomes argv, never JSON text */
			json_array_append_new(neutral, json_string_nocheck(setting));
			free(setting);
		}
	}
	return neutral;
}

static json_t *subject_buf(const char *path, char *err, size_t err_size)
{
	char abs[PATH_MAX];
	if (!realpath(path, abs)) {
		ev_set_err(err, err_size, "%s: %s", path, strerror(errno));
		return NULL;
	}
	static const char *const top_args[] = { "rev-parse", "--show-toplevel", NULL };
	static const char *const branch_args[] = { "rev-parse", "--abbrev-ref", "HEAD", NULL };
	static const char *const commit_args[] = { "rev-parse", "--verify", "HEAD", NULL };
	/* submodules: only their recorded commit, never a `git status` inside
	 * them (their own configuration and filters) */
	static const char *const status_args[] = { "status", "--porcelain", "--ignore-submodules=dirty", NULL };
	_cleanup_free_ char *top = NULL, *branch = NULL, *commit = NULL, *status = NULL;
	char why[400];
	if (git(abs, NULL, top_args, false, &top, why, sizeof why) < 0) {
		ev_set_err(err, err_size, "%s: not a usable git checkout: %s", path, why);
		return NULL;
	}
	/* A repository without commits has no HEAD: branch and commit null. */
	bool born = git(abs, NULL, commit_args, false, &commit, why, sizeof why) == 0;
	if (born && git(abs, NULL, branch_args, false, &branch, why, sizeof why) < 0) {
		ev_set_err(err, err_size, "%s: %s", path, why);
		return NULL;
	}
	_cleanup_json_ json_t *neutral = filter_overrides(abs, why, sizeof why);
	if (!neutral || git(abs, neutral, status_args, true, &status, why, sizeof why) < 0) {
		ev_set_err(err, err_size, "%s: %s", path, why);
		return NULL;
	}
	return ev_subject_json(abs, branch, commit, status);
}

json_t *ev_subject_json(const char *top, const char *branch, const char *commit, const char *status)
{
	json_t *s = json_object();
	if (!s)
		return NULL;
	json_object_set_new(s, "path", agsbx_json_string_sanitized(top, strlen(top)));
	json_object_set_new(s, "branch", branch ? agsbx_json_string_sanitized(branch, strlen(branch)) : json_null());
	json_object_set_new(s, "commit", commit ? agsbx_json_string_sanitized(commit, strlen(commit)) : json_null());
	json_object_set_new(s, "dirty", json_boolean(status[0] != '\0'));
	return s;
}

json_t *agsbx_subject_from_repo(const char *path, struct agsbx_error *e)
{
	char err[512] = "";
	json_t *s = subject_buf(path, err, sizeof err);
	if (!s)
		ev_error(e, -EINVAL, err);
	return s;
}
