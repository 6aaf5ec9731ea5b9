/* Probe parsers on inputs the host of a test run never shows: cgroup
 * layouts (hybrid with duplicate and named v1 hierarchies, cgroup2 only
 * under another mount point with a sub-tree bind first, none at all), the
 * process's cgroup file without a "0::" line, bwrap --help text where an
 * option is a word only at some boundaries, and version strings at the
 * edges of the advisory table's parser. Each case asserts the fact a
 * bundle would record. */
#include "base/cleanup.h"
#include "base/util.h"
#include "probes/internal.h"
#include "probes/probes.h"
#include "base/runner.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- cgroup mount layouts ------------------------------------------------ */

#define MI(id, root, mp, fstype, super) #id " 1 0:" #id " " root " " mp " rw,nosuid - " fstype " " fstype " " super "\n"

static const struct {
	const char *name, *text;
	int version;          /* 0: absent */
	bool hybrid;
	const char *c2;       /* NULL: absent */
	const char *v1;       /* the controllers as compact JSON */
} layouts[] = {
	{ "hybrid: v1 controllers, an empty v2 at unified, a duplicate and a named hierarchy",
	  MI(21, "/", "/", "ext4", "rw") MI(22, "/", "/sys/fs/cgroup/unified", "cgroup2", "rw,nsdelegate")
		  MI(23, "/", "/sys/fs/cgroup/cpu,cpuacct", "cgroup", "rw,cpu,cpuacct")
			  MI(24, "/", "/sys/fs/cgroup/memory", "cgroup", "ro,memory")
				  MI(25, "/", "/sys/fs/cgroup/systemd", "cgroup", "rw,xattr,name=systemd")
					  MI(26, "/", "/mnt/cpu-again", "cgroup", "rw,cpu"),
	  1, true, "/sys/fs/cgroup/unified", "[\"cpu\",\"cpuacct\",\"memory\"]" },
	{ "cgroup2 only, elsewhere: the whole hierarchy wins over a sub-tree bind seen first",
	  MI(31, "/job", "/run/job-cgroup", "cgroup2", "rw") MI(32, "/", "/mnt/c2", "cgroup2", "rw")
		  MI(33, "/other", "/mnt/c2-sub", "cgroup2", "rw"),
	  2, false, "/mnt/c2", "[]" },
	{ "cgroup2 only, one sub-tree bind: still the answer",
	  MI(41, "/job", "/run/job-cgroup", "cgroup2", "rw"), 2, false, "/run/job-cgroup", "[]" },
	{ "pure v2: /sys/fs/cgroup wins over any other cgroup2 mount",
	  MI(51, "/", "/mnt/c2", "cgroup2", "rw") MI(52, "/", "/sys/fs/cgroup", "cgroup2", "rw"), 2, false,
	  "/sys/fs/cgroup", "[]" },
	{ "v1 only", MI(61, "/", "/sys/fs/cgroup/pids", "cgroup", "rw,pids"), 1, false, NULL, "[\"pids\"]" },
	{ "no cgroup mount at all", MI(71, "/", "/", "ext4", "rw"), 0, false, NULL, "[]" },
};

static const json_t *value_of(const json_t *f, const char *k)
{
	return json_object_get(json_object_get(f, k), "value");
}

static bool absent_for(const json_t *f, const char *k, const char *reason)
{
	const json_t *fact = json_object_get(f, k);
	return json_is_true(json_object_get(fact, "absent")) &&
	       strcmp(json_string_value(json_object_get(fact, "reason")) ?: "", reason) == 0;
}

START_TEST(cgroup_layouts)
{
	struct agsbx_mount *m = NULL;
	size_t n = 0;
	ck_assert_int_eq(agsbx_mountinfo_parse(layouts[_i].text, &m, &n), 0);
	ck_assert_uint_gt(n, 0);
	_cleanup_json_ json_t *f = json_object();
	agsbx_cgroup_mount_facts(f, m, n);
	const char *name = layouts[_i].name;
	if (layouts[_i].version)
		ck_assert_msg(json_integer_value(value_of(f, "version")) == layouts[_i].version, "%s: version", name);
	else
		ck_assert_msg(absent_for(f, "version", "no_cgroup_mount"), "%s: version not absent", name);
	ck_assert_msg(json_is_boolean(value_of(f, "hybrid")) && json_is_true(value_of(f, "hybrid")) == layouts[_i].hybrid,
		      "%s: hybrid", name);
	if (layouts[_i].c2)
		ck_assert_msg(strcmp(json_string_value(value_of(f, "cgroup2_mount")) ?: "", layouts[_i].c2) == 0,
			      "%s: cgroup2_mount %s", name, json_string_value(value_of(f, "cgroup2_mount")));
	else
		ck_assert_msg(absent_for(f, "cgroup2_mount", "no_cgroup2_mount"), "%s: cgroup2_mount not absent", name);
	_cleanup_free_ char *v1 = json_dumps(value_of(f, "v1_controllers"), JSON_COMPACT | JSON_ENCODE_ANY);
	ck_assert_msg(v1 && strcmp(v1, layouts[_i].v1) == 0, "%s: v1_controllers %s, want %s", name, v1, layouts[_i].v1);
	agsbx_mountinfo_free(m, n);
}
END_TEST

/* ---- /proc/self/cgroup ----------------------------------------------------- */

START_TEST(cgroup_self_path)
{
	_cleanup_free_ char *dir = agsbx_test_tmpdir("cov2-cg");
	char path[512];
	static const struct {
		const char *text, *want; /* want NULL: absent no_cgroup2_entry */
	} cases[] = {
		{ "12:cpu,cpuacct:/a\n1:name=systemd:/b\n0::/user.slice/x.scope\n", "/user.slice/x.scope" },
		{ "0::/last-line-without-newline", "/last-line-without-newline" },
		{ "12:cpu,cpuacct:/a\n1:name=systemd:/b\n", NULL },
		{ "", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(path, sizeof path, "%s/cgroup-%zu", dir, i);
		FILE *f = fopen(path, "we");
		ck_assert_ptr_nonnull(f);
		fputs(cases[i].text, f);
		ck_assert_int_eq(fclose(f), 0);
		_cleanup_json_ json_t *fact = agsbx_probe_cgroup_self_path(path);
		ck_assert_ptr_nonnull(fact);
		if (cases[i].want)
			ck_assert_str_eq(json_string_value(json_object_get(fact, "value")) ?: "?", cases[i].want);
		else
			ck_assert_msg(json_is_true(json_object_get(fact, "absent")) &&
					      strcmp(json_string_value(json_object_get(fact, "reason")) ?: "", "no_cgroup2_entry") == 0,
				      "case %zu: not absent no_cgroup2_entry", i);
	}
	snprintf(path, sizeof path, "%s/missing", dir);
	_cleanup_json_ json_t *missing = agsbx_probe_cgroup_self_path(path);
	ck_assert_ptr_nonnull(missing);
	ck_assert_ptr_null(json_object_get(missing, "value"));
	ck_assert_msg(json_is_true(json_object_get(missing, "absent")), "a missing file is an absent fact");
	agsbx_test_rmtree(dir);
}
END_TEST

/* ---- bwrap --help --------------------------------------------------------- */

START_TEST(bwrap_option_words)
{
	/* A word at the start of the text, after a tab, a comma, a newline or
	 * a blank; ended by '=', ',', a tab, a newline, a blank or the end. A
	 * longer option, or one glued to a letter, is not the option. */
	static const char help[] = "--ro-bind SRC DEST\n"
				   "\t--chdir=DIR\n"
				   "  -x,--seccomp,FD\n"
				   "  --perms\tOCTAL\n"
				   "  x--share-net\n"
				   "  --unshare-pid-extra\n"
				   "  --size-x --clearenv\n"
				   "  --overlay-src DIR\n"
				   "  --new-session";
	_cleanup_json_ json_t *f = agsbx_bwrap_options_fact(help, "test --help");
	const json_t *v = json_object_get(f, "value");
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(json_string_value(json_object_get(f, "source")), "test --help");
	static const struct {
		const char *opt;
		bool want;
	} want[] = {
		{ "--ro-bind", true },      { "--chdir", true },       { "--seccomp", true },    { "--perms", true },
		{ "--clearenv", true },     { "--new-session", true }, { "--share-net", false }, { "--unshare-pid", false },
		{ "--size", false },        { "--overlay", false },    { "--cap-drop", false },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const json_t *b = json_object_get(v, want[i].opt);
		ck_assert_msg(json_is_boolean(b), "%s not recorded", want[i].opt);
		ck_assert_msg(json_is_true(b) == want[i].want, "%s: %s, want %s", want[i].opt, json_is_true(b) ? "true" : "false",
			      want[i].want ? "true" : "false");
	}
}
END_TEST

/* ---- version strings ------------------------------------------------------ */

START_TEST(version_edges)
{
	struct agsbx_version v;
	/* five parts: the fifth is ignored */
	ck_assert_int_eq(agsbx_version_parse("1.2.3.4.5", &v), 0);
	ck_assert_int_eq(v.part[0], 1);
	ck_assert_int_eq(v.part[3], 4);
	ck_assert_int_eq(v.rc, -1);
	/* a trailing dot, or a dot before a non-digit, ends the number */
	ck_assert_int_eq(agsbx_version_parse("7.", &v), 0);
	ck_assert_int_eq(v.part[0], 7);
	ck_assert_int_eq(v.part[1], 0);
	ck_assert_int_eq(agsbx_version_parse("1.x", &v), 0);
	ck_assert_int_eq(v.part[0], 1);
	ck_assert_int_eq(v.part[1], 0);
	/* "-rc" without a number is not a candidate number */
	ck_assert_int_eq(agsbx_version_parse("1.0.0-rc", &v), 0);
	ck_assert_int_eq(v.rc, -1);
	ck_assert_int_eq(agsbx_version_parse("1.0.0-rc.", &v), 0);
	ck_assert_int_eq(v.rc, -1);
	ck_assert_int_eq(agsbx_version_parse("1.0.0-rc7", &v), 0);
	ck_assert_int_eq(v.rc, 7);
	/* not a version */
	ck_assert_int_lt(agsbx_version_parse("", &v), 0);
	ck_assert_int_lt(agsbx_version_parse(NULL, &v), 0);
	ck_assert_int_lt(agsbx_version_parse(".1", &v), 0);
}
END_TEST

/* ---- the Docker daemon's /info and /version answers ---------------------- */

START_TEST(docker_info_shapes)
{
	/* a runtime without a path, one whose runtimeArgs is not an array,
	 * one with non-string args (left out); SecurityOptions not an array;
	 * DefaultRuntime a number: each is absent or left out, never a guess */
	_cleanup_json_ json_t *info = json_loads("{\"Runtimes\": {\"runc\": {\"path\": \"runc\"},"
						 " \"runsc\": {\"path\": \"/usr/bin/runsc\", \"runtimeArgs\": [\"--net\", 7, null, \"x\"]},"
						 " \"odd\": {\"runtimeArgs\": \"--flag\"}},"
						 " \"DefaultRuntime\": 3, \"SecurityOptions\": \"name=seccomp\","
						 " \"CgroupVersion\": \"2\", \"KernelVersion\": \"6.1.0\"}",
						 0, NULL);
	ck_assert_ptr_nonnull(info);
	_cleanup_json_ json_t *f = json_object();
	agsbx_docker_info_facts(f, info, "test /info");
	_cleanup_free_ char *rt = json_dumps(value_of(f, "runtimes"), JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(rt, "{\"odd\":{},\"runc\":{\"path\":\"runc\"},\"runsc\":{\"path\":\"/usr/bin/runsc\","
			     "\"runtimeArgs\":[\"--net\",\"x\"]}}");
	ck_assert_msg(absent_for(f, "default_runtime", "not_reported"), "DefaultRuntime 3 recorded");
	ck_assert_msg(absent_for(f, "security_options", "not_reported"), "a string SecurityOptions recorded");
	ck_assert_msg(absent_for(f, "server_version", "not_reported"), "a missing ServerVersion recorded");
	ck_assert_str_eq(json_string_value(value_of(f, "cgroup_version")), "2");

	/* no Runtimes object at all, SecurityOptions an array with a number */
	_cleanup_json_ json_t *info2 = json_loads("{\"Runtimes\": [], \"SecurityOptions\": [\"name=seccomp\", 1]}", 0, NULL);
	ck_assert_ptr_nonnull(info2);
	_cleanup_json_ json_t *f2 = json_object();
	agsbx_docker_info_facts(f2, info2, "test /info");
	ck_assert_msg(absent_for(f2, "runtimes", "not_reported"), "a Runtimes array recorded");
	_cleanup_free_ char *so = json_dumps(value_of(f2, "security_options"), JSON_COMPACT);
	ck_assert_str_eq(so, "[\"name=seccomp\"]");
}
END_TEST

START_TEST(docker_version_shapes)
{
	_cleanup_json_ json_t *f = json_object();
	_cleanup_json_ json_t *no_api = json_loads("{\"Version\": \"24.0.7\"}", 0, NULL);
	_cleanup_json_ json_t *num = json_loads("{\"Version\": 24, \"ApiVersion\": \"1.43\"}", 0, NULL);
	_cleanup_json_ json_t *ok = json_loads("{\"Version\": \"24.0.7\", \"ApiVersion\": \"1.43\"}", 0, NULL);
	ck_assert(!agsbx_docker_version_facts(f, no_api, "t"));
	ck_assert(!agsbx_docker_version_facts(f, num, "t"));
	ck_assert_uint_eq(json_object_size(f), 0);
	ck_assert(agsbx_docker_version_facts(f, ok, "t"));
	ck_assert_str_eq(json_string_value(value_of(f, "version")), "24.0.7");
	ck_assert_str_eq(json_string_value(value_of(f, "api_version")), "1.43");
	ck_assert_msg(absent_for(f, "min_api_version", "not_reported"), "a missing MinAPIVersion recorded");
}
END_TEST

/* ---- tools on PATH, their exit and their version line --------------------- */

START_TEST(tool_runs)
{
	ck_assert_int_eq(agsbx_runner_init(), 0);
	/* relative PATH entries are not host facts: skipped */
	setenv("PATH", "bin:.:/nonexistent-cov2:/bin", 1);
	_cleanup_free_ char *sh = agsbx_probes_find_in_path("sh");
	ck_assert_str_eq(sh ?: "(none)", "/bin/sh");
	setenv("PATH", "", 1); /* empty: the default PATH */
	_cleanup_free_ char *sh2 = agsbx_probes_find_in_path("sh");
	ck_assert_ptr_nonnull(sh2);
	static const char *const facts[] = { "version", "version_line", NULL };
	char *path = NULL;
	_cleanup_json_ json_t *fam = agsbx_probes_tool_family("agsbx-cov2-no-such-tool", facts, &path);
	ck_assert_ptr_null(path);
	ck_assert(absent_for(fam, "version", "not_found_in_path") && absent_for(fam, "version_line", "not_found_in_path"));

	static const struct {
		const char *script, *reason, *detail;
		long timeout_ms;
	} runs[] = {
		{ "echo boom >&2; exit 3", "exit_status_nonzero", "status 3: boom\n", 10000 },
		{ "exit 4", "exit_status_nonzero", "status 4", 10000 },
		{ "kill -9 $$", "exit_status_nonzero", "status 137", 10000 },
		{ "exec sleep 30", "timeout", NULL, 200 },
	};
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		const char *argv[] = { "/bin/sh", "-c", runs[i].script, NULL };
		char *out = NULL, *detail = NULL;
		const char *reason = NULL;
		ck_assert_int_lt(agsbx_probes_run_tool(argv, runs[i].timeout_ms, &out, &reason, &detail), 0);
		ck_assert_ptr_null(out);
		ck_assert_str_eq(reason ?: "(none)", runs[i].reason);
		if (runs[i].detail)
			ck_assert_str_eq(detail ?: "(none)", runs[i].detail);
		free(detail);
	}
	/* a tool that is not there: its errno, with the flag as the source */
	char *src = NULL, *out = NULL;
	json_t *why = NULL;
	ck_assert_int_lt(agsbx_probes_run_flag("/nonexistent-cov2/tool", "--version", 1000, &src, &out, &why), 0);
	ck_assert_str_eq(src, "/nonexistent-cov2/tool --version");
	ck_assert_msg(json_is_true(json_object_get(why, "absent")) &&
			      strcmp(json_string_value(json_object_get(why, "reason")) ?: "", "ENOENT") == 0,
		      "missing tool: %s", json_string_value(json_object_get(why, "reason")));
	json_decref(why);
	free(src);
	free(out);
}
END_TEST

START_TEST(version_lines)
{
	static const struct {
		const char *out, *prefix, *version, *line; /* version NULL: absent empty_output */
	} v[] = {
		{ "bubblewrap 0.8.0\nmore\n", "bubblewrap ", "0.8.0", "bubblewrap 0.8.0" },
		{ "bubblewrap \n", "bubblewrap ", "bubblewrap ", "bubblewrap " },
		{ "runsc version release-20240513.0\n", "bubblewrap ", "runsc version release-20240513.0",
		  "runsc version release-20240513.0" },
		{ "\nversion on line two\n", "x", NULL, NULL },
		{ "", "x", NULL, NULL },
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		_cleanup_free_ char *out = strdup(v[i].out);
		_cleanup_json_ json_t *fam = json_object();
		agsbx_probes_version_parse(fam, out, v[i].prefix, "t --version");
		if (!v[i].version) {
			ck_assert_msg(absent_for(fam, "version", "empty_output") && absent_for(fam, "version_line", "empty_output"),
				      "case %zu not absent", i);
			continue;
		}
		ck_assert_str_eq(json_string_value(value_of(fam, "version")) ?: "(none)", v[i].version);
		ck_assert_str_eq(json_string_value(value_of(fam, "version_line")) ?: "(none)", v[i].line);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cov2-probes");
	TCase *t = tcase_create("parsers");
	tcase_add_loop_test(t, cgroup_layouts, 0, sizeof layouts / sizeof layouts[0]);
	tcase_add_test(t, cgroup_self_path);
	tcase_add_test(t, bwrap_option_words);
	tcase_add_test(t, version_edges);
	tcase_add_test(t, docker_info_shapes);
	tcase_add_test(t, docker_version_shapes);
	tcase_add_test(t, tool_runs);
	tcase_add_test(t, version_lines);
	suite_add_tcase(s, t);
	return agsbx_test_run_suite(s);
}
