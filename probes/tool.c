/* Finding and asking executables (bwrap, runsc, sw_vers) about
 * themselves, always through the bounded runner. */
#include "probes/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/runner.h"
#include "base/util.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define TOOL_MAX_OUTPUT 65536

static bool is_executable_file(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	return faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0;
}

char *agsbx_probes_find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = DEFAULT_PATH;
	_cleanup_free_ char *copy = strdup(path);
	if (!copy)
		return NULL;
	char *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		/* A relative PATH entry would make the answer depend on our cwd:
		 * not a host fact, so skip it. */
		if (dir[0] != '/')
			continue;
		char *cand = agsbx_path_join(dir, name);
		if (!cand)
			return NULL;
		if (is_executable_file(cand))
			return cand;
		free(cand);
	}
	errno = ENOENT;
	return NULL;
}

json_t *agsbx_probes_tool_family(const char *name, const char *const *facts, char **path)
{
	*path = NULL;
	json_t *f = json_object();
	if (!f)
		return NULL;
	*path = agsbx_probes_find_in_path(name);
	if (*path) {
		agsbx_fact_put(f, "path", agsbx_fact_string(*path, "$PATH"));
		return f;
	}
	for (size_t i = 0; facts[i]; i++)
		agsbx_fact_put(f, facts[i], agsbx_fact_absent("not_found_in_path", "$PATH"));
	return f;
}

static char *status_detail(const struct agsbx_run_result *res)
{
	char *d = NULL;
	const char *err = res->err && res->err_len ? res->err : "";
	if (asprintf(&d, "status %d%s%.*s", res->status, *err ? ": " : "", 512, err) < 0)
		return NULL;
	return d;
}

int agsbx_probes_run_tool(const char *const *argv, long timeout_ms, char **out,
			  const char **reason, char **detail)
{
	static const char *const env[] = { "PATH=" DEFAULT_PATH, "LC_ALL=C", NULL };
	struct agsbx_run_opts o = {
		.argv = argv,
		.envp = env,
		.max_output_bytes = TOOL_MAX_OUTPUT,
		.timeout_ms = timeout_ms,
		.cancel_fd = -1,
	};
	struct agsbx_run_result res;
	memset(&res, 0, sizeof res);
	*out = NULL;
	*detail = NULL;
	int r = agsbx_run(&o, &res);
	if (r == -ENOSYS && !res.spawn_errno) {
		/* The placeholder runner: no process was started. */
		*reason = "runner_unavailable";
	} else if (r < 0) {
		*reason = agsbx_errno_name(res.spawn_errno ? res.spawn_errno : r);
	} else if (res.timed_out) {
		*reason = "timeout";
		r = -ETIMEDOUT;
	} else if (!res.exited || res.exit_code != 0) {
		*reason = "exit_status_nonzero";
		*detail = status_detail(&res);
		r = -EPROTO;
	} else {
		*out = res.out ? strndup(res.out, res.out_len) : strdup("");
		r = *out ? 0 : -ENOMEM;
		if (r < 0)
			*reason = "ENOMEM";
	}
	agsbx_run_result_clear(&res);
	return r;
}

int agsbx_probes_run_flag(const char *path, const char *flag, long timeout_ms, char **source, char **out,
			  json_t **absent)
{
	const char *argv[] = { path, flag, NULL };
	*absent = NULL;
	if (asprintf(source, "%s %s", path, flag) < 0)
		*source = NULL;
	_cleanup_free_ char *detail = NULL;
	const char *reason = NULL;
	if (agsbx_probes_run_tool(argv, timeout_ms, out, &reason, &detail) < 0) {
		*absent = agsbx_fact_detail(agsbx_fact_absent(reason, *source ? *source : flag), detail);
		return -1;
	}
	return 0;
}

void agsbx_probes_version_parse(json_t *family, char *out, const char *prefix, const char *source)
{
	out[strcspn(out, "\n")] = '\0';
	if (!*out) {
		agsbx_fact_put(family, "version", agsbx_fact_absent("empty_output", source));
		agsbx_fact_put(family, "version_line", agsbx_fact_absent("empty_output", source));
		return;
	}
	size_t plen = strlen(prefix);
	const char *v = strncmp(out, prefix, plen) == 0 && out[plen] ? out + plen : out;
	agsbx_fact_put(family, "version", agsbx_fact_string(v, source));
	agsbx_fact_put(family, "version_line", agsbx_fact_string(out, source));
}

void agsbx_probes_version_facts(json_t *family, const char *path, const char *prefix,
				long timeout_ms)
{
	_cleanup_free_ char *src = NULL, *out = NULL;
	json_t *why;
	if (agsbx_probes_run_flag(path, "--version", timeout_ms, &src, &out, &why) < 0) {
		agsbx_fact_put(family, "version", json_deep_copy(why));
		agsbx_fact_put(family, "version_line", why);
		return;
	}
	agsbx_probes_version_parse(family, out, prefix, src ? src : "--version");
}
