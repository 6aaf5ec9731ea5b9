/* bubblewrap: where bwrap is, its version, whether it is setuid (then it
 * does not need unprivileged user namespaces, and is a bigger target),
 * and which options this build knows (from --help: options arrived over
 * releases, e.g. --disable-userns in 0.8, --size in 0.5). */
#include "probes/probes.h"
#include "probes/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/defaults.h"


static const char *const bwrap_options[] = {
	"--add-seccomp-fd", "--assert-userns-disabled", "--bind-fd", "--cap-drop", "--chdir", "--chmod",
	"--clearenv", "--die-with-parent", "--disable-userns", "--json-status-fd", "--new-session",
	"--overlay", "--perms", "--ro-bind", "--seccomp", "--share-net", "--size", "--unshare-all",
	"--unshare-net", "--unshare-pid", "--unshare-user",
};

/* "--opt" as a whole word in the --help text (so --bind is not found in
 * --bind-try). */
static bool help_has(const char *help, const char *opt)
{
	size_t len = strlen(opt);
	for (const char *p = strstr(help, opt); p; p = strstr(p + 1, opt)) {
		bool start = p == help || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n' || p[-1] == ',';
		char after = p[len];
		bool end = after == '\0' || after == ' ' || after == '\t' || after == '\n' || after == '=' ||
			   after == ',';
		if (start && end)
			return true;
	}
	return false;
}

json_t *agsbx_bwrap_options_fact(const char *help, const char *source)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < sizeof bwrap_options / sizeof bwrap_options[0]; i++)
		json_object_set_new(o, bwrap_options[i], json_boolean(help_has(help, bwrap_options[i])));
	return agsbx_fact_value(o, source);
}

static json_t *options_fact(const char *path)
{
	_cleanup_free_ char *src = NULL, *out = NULL;
	json_t *why;
	if (agsbx_probes_run_flag(path, "--help", AGSBX_PROBE_TIMEOUT_MS, &src, &out, &why) < 0)
		return why;
	return agsbx_bwrap_options_fact(out, src ? src : "bwrap --help");
}

/* The distribution package that owns bwrap and its exact version (Debian
 * and Ubuntu ship security fixes as "0.9.0-1ubuntu0.2", whose wording and
 * behaviour differ from bubblewrap's own 0.9.0 release). dpkg first, then rpm. */
static json_t *package_fact(void)
{
	static const struct { const char *tool; const char *const args[6]; } q[] = {
		{ "dpkg-query", { "-W", "-f", "${Package} ${Version}", "bubblewrap", NULL } },
		{ "rpm", { "-q", "--qf", "%{NAME} %{VERSION}-%{RELEASE}", "bubblewrap", NULL } },
	};
	const char *last = "no_package_manager";
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		_cleanup_free_ char *tool = agsbx_probes_find_in_path(q[i].tool);
		if (!tool)
			continue;
		const char *argv[7] = { tool };
		for (size_t j = 0; q[i].args[j]; j++)
			argv[j + 1] = q[i].args[j];
		_cleanup_free_ char *out = NULL, *detail = NULL;
		const char *reason = NULL;
		if (agsbx_probes_run_tool(argv, AGSBX_PROBE_TIMEOUT_MS, &out, &reason, &detail) < 0) {
			last = "not_installed_as_package";
			continue;
		}
		out[strcspn(out, "\n")] = '\0';
		return agsbx_fact_string(out, q[i].tool);
	}
	return agsbx_fact_absent(last, "dpkg-query -W bubblewrap / rpm -q bubblewrap");
}

json_t *agsbx_probe_bubblewrap(void)
{
	static const char *const facts[] = { "path", "setuid", "version", "version_line", "options", "package", NULL };
	_cleanup_free_ char *path = NULL;
	json_t *f = agsbx_probes_tool_family("bwrap", facts, &path);
	if (!path)
		return f;
	struct stat st;
	if (stat(path, &st) == 0)
		agsbx_fact_put(f, "setuid", agsbx_fact_bool((st.st_mode & S_ISUID) != 0, path));
	else
		agsbx_fact_put(f, "setuid", agsbx_fact_errno(errno, path));
	agsbx_probes_version_facts(f, path, "bubblewrap ", AGSBX_PROBE_TIMEOUT_MS);
	agsbx_fact_put(f, "options", options_fact(path));
	agsbx_fact_put(f, "package", package_fact());
	return f;
}
