/* The bubblewrap and runsc probes against recorded tool behaviour: PATH
 * set to a directory of small scripts standing in for the tools' output
 * (fixtures of the probe's input, not of the mechanism: no sandbox is
 * judged here). What is asserted is how each answer becomes a fact — a
 * missing tool, a --help that fails, no package manager, a package
 * manager that does not know the package, rpm instead of dpkg. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "probes/probes.h"
#include "tests/lib/testlib.h"

static char *dir;
static char *saved_path;

static void setup(void)
{
	dir = agsbx_test_tmpdir("probe-tools");
	ck_assert_ptr_nonnull(dir);
	const char *p = getenv("PATH");
	saved_path = strdup(p ? p : "/usr/bin:/bin");
	setenv("PATH", dir, 1);
}

static void teardown(void)
{
	setenv("PATH", saved_path, 1);
	free(saved_path);
	agsbx_test_rmtree(dir);
	free(dir);
}

/* dir/NAME: a /bin/sh script with BODY, executable. */
static void tool(const char *name, const char *body)
{
	char *p = agsbx_path_join(dir, name);
	ck_assert_ptr_nonnull(p);
	FILE *f = fopen(p, "we");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(p, 0755), 0);
	free(p);
}

static const json_t *fact(const json_t *f, const char *name)
{
	const json_t *v = json_object_get(f, name);
	ck_assert_msg(json_is_object(v), "no fact %s", name);
	return v;
}

static void assert_absent(const json_t *f, const char *name, const char *reason)
{
	const json_t *v = fact(f, name);
	ck_assert_msg(json_is_true(json_object_get(v, "absent")), "%s is not absent", name);
	ck_assert_str_eq(json_string_value(json_object_get(v, "reason")), reason);
	ck_assert_ptr_null(json_object_get(v, "value"));
}

static const char *string_value(const json_t *f, const char *name)
{
	const json_t *v = json_object_get(fact(f, name), "value");
	ck_assert_msg(json_is_string(v), "%s has no string value", name);
	return json_string_value(v);
}

START_TEST(test_bwrap_not_in_path)
{
	json_t *f = agsbx_probe_bubblewrap();
	ck_assert_ptr_nonnull(f);
	static const char *const names[] = { "path", "setuid", "version", "version_line", "options", "package" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		assert_absent(f, names[i], "not_found_in_path");
	json_decref(f);
	json_t *r = agsbx_probe_runsc();
	ck_assert_ptr_nonnull(r);
	assert_absent(r, "path", "not_found_in_path");
	assert_absent(r, "version", "not_found_in_path");
	json_decref(r);
}
END_TEST

/* A bwrap whose --help fails and no package manager on PATH. */
START_TEST(test_bwrap_help_fails_no_package_manager)
{
	tool("bwrap", "case \"$1\" in --version) echo 'bubblewrap 0.8.0';; *) echo 'bwrap: broken' >&2; exit 1;; esac");
	json_t *f = agsbx_probe_bubblewrap();
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(string_value(f, "path"), "/bwrap"));
	ck_assert(json_is_false(json_object_get(fact(f, "setuid"), "value")));
	ck_assert_str_eq(string_value(f, "version"), "0.8.0");
	const json_t *opts = fact(f, "options");
	ck_assert(json_is_true(json_object_get(opts, "absent")));
	ck_assert_ptr_nonnull(json_object_get(opts, "reason"));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(opts, "source")), "--help"));
	assert_absent(f, "package", "no_package_manager");
	json_decref(f);
}
END_TEST

/* --help lists some options: each known one is true or false by the text. */
START_TEST(test_bwrap_options_from_help)
{
	tool("bwrap", "case \"$1\" in --version) echo 'bubblewrap 0.9.0';;\n"
		      "--help) printf 'usage: bwrap [OPTIONS...] [--] COMMAND\\n"
		      "    --unshare-all               Unshare every namespace\\n"
		      "    --die-with-parent           Kills with SIGKILL\\n';; esac");
	tool("dpkg-query", "exit 1");
	json_t *f = agsbx_probe_bubblewrap();
	const json_t *o = json_object_get(fact(f, "options"), "value");
	ck_assert(json_is_object(o));
	ck_assert(json_is_true(json_object_get(o, "--unshare-all")));
	ck_assert(json_is_true(json_object_get(o, "--die-with-parent")));
	ck_assert(json_is_false(json_object_get(o, "--json-status-fd")));
	ck_assert(json_is_false(json_object_get(o, "--disable-userns")));
	/* dpkg-query present but without the package, no rpm */
	assert_absent(f, "package", "not_installed_as_package");
	json_decref(f);
}
END_TEST

/* dpkg-query fails, rpm knows the package: rpm's answer, its source named. */
START_TEST(test_package_from_rpm)
{
	tool("bwrap", "echo 'bubblewrap 0.8.0'");
	tool("dpkg-query", "echo 'dpkg-query: no packages found matching bubblewrap' >&2; exit 1");
	tool("rpm", "printf 'bubblewrap 0.8.0-2.fc39\\nextra\\n'");
	json_t *f = agsbx_probe_bubblewrap();
	const json_t *pkg = fact(f, "package");
	ck_assert_str_eq(json_string_value(json_object_get(pkg, "value")), "bubblewrap 0.8.0-2.fc39");
	ck_assert_str_eq(json_string_value(json_object_get(pkg, "source")), "rpm");
	json_decref(f);
	/* and dpkg first when it knows it */
	tool("dpkg-query", "printf 'bubblewrap 0.8.0-2+deb12u1'");
	f = agsbx_probe_bubblewrap();
	pkg = fact(f, "package");
	ck_assert_str_eq(json_string_value(json_object_get(pkg, "value")), "bubblewrap 0.8.0-2+deb12u1");
	ck_assert_str_eq(json_string_value(json_object_get(pkg, "source")), "dpkg-query");
	json_decref(f);
}
END_TEST

/* runsc's version line is parsed; a runsc that prints something else has
 * a version_line too. */
START_TEST(test_runsc_version)
{
	tool("runsc", "printf 'runsc version release-20231218.0\\nspec: 1.1.0-rc.1\\n'");
	json_t *r = agsbx_probe_runsc();
	ck_assert_ptr_nonnull(strstr(string_value(r, "path"), "/runsc"));
	ck_assert_str_eq(string_value(r, "version"), "release-20231218.0");
	json_decref(r);
	/* without the expected prefix the whole first line is the version */
	tool("runsc", "echo 'something else entirely'");
	r = agsbx_probe_runsc();
	ck_assert_str_eq(string_value(r, "version"), "something else entirely");
	ck_assert_str_eq(string_value(r, "version_line"), "something else entirely");
	json_decref(r);
	/* no output at all, and a failing --version: absent, with the reason */
	tool("runsc", "exit 0");
	r = agsbx_probe_runsc();
	assert_absent(r, "version", "empty_output");
	assert_absent(r, "version_line", "empty_output");
	json_decref(r);
	tool("runsc", "echo 'runsc: cannot start' >&2; exit 3");
	r = agsbx_probe_runsc();
	ck_assert(json_is_true(json_object_get(fact(r, "version"), "absent")));
	ck_assert_ptr_nonnull(json_object_get(fact(r, "version"), "reason"));
	ck_assert_ptr_nonnull(strstr(string_value(r, "path"), "/runsc"));
	json_decref(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("probe-tools");
	TCase *tc = tcase_create("probe-tools");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_bwrap_not_in_path);
	tcase_add_test(tc, test_bwrap_help_fails_no_package_manager);
	tcase_add_test(tc, test_bwrap_options_from_help);
	tcase_add_test(tc, test_package_from_rpm);
	tcase_add_test(tc, test_runsc_version);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
