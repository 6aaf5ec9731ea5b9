/* Seatbelt on Linux: the provider does not apply and says why; its profile
 * is derived from the grant only. (The mechanism itself runs only on macOS:
 * workflows/ has the macOS job.) */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "providers/seatbelt/seatbelt.h"
#include "tests/lib/testlib.h"

START_TEST(test_not_macos)
{
	struct agsbx_ctx ctx = { .probe_timeout_ms = 1000 };
	struct agsbx_probe p = { 0 };
	agsbx_provider_seatbelt.probe(&agsbx_provider_seatbelt, &ctx, &p);
#ifdef __APPLE__
	ck_assert(p.reason != NULL);
#else
	ck_assert_str_eq(p.reason, "not_macos");
	ck_assert(!p.available);
	ck_assert(!agsbx_provider_seatbelt.applies(&agsbx_provider_seatbelt));
#endif
	ck_assert(agsbx_reason_in_set(&agsbx_provider_seatbelt, p.reason));
	agsbx_provider_probe_clear(&p);
}
END_TEST

START_TEST(test_profile_from_grant_only)
{
	char *dir = agsbx_test_tmpdir("sb");
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(dir, "a\"b\\c", (uid_t)-1, (gid_t)-1, &g), 0);
	char *prof = agsbx_seatbelt_profile(g, false);
	ck_assert(prof != NULL);
	ck_assert(strstr(prof, "(deny default)") != NULL);
	ck_assert(strstr(prof, "(deny network*)") != NULL);
	/* read-write roots are writable, the source root explicitly not */
	ck_assert(strstr(prof, "(deny file-write* (subpath \"") != NULL);
	ck_assert(strstr(prof, "/source\"))") != NULL);
	ck_assert(strstr(prof, "/output\"))") != NULL);
	/* quotes and backslashes in paths are escaped, never break out */
	ck_assert(strstr(prof, "a\\\"b\\\\c") != NULL);
	ck_assert(strstr(prof, "/private/tmp") == NULL);
	char *open_net = agsbx_seatbelt_profile(g, true);
	ck_assert(strstr(open_net, "(allow network*)") != NULL);
	free(prof);
	free(open_net);
	agsbx_grant_destroy(g);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_unknown_config_key)
{
	struct agsbx_error f = { 0 };
	json_t *cfg = json_pack("{s:s}", "extra_sbpl_rules", "(allow default)");
	ck_assert_int_lt(agsbx_provider_check_config(&agsbx_provider_seatbelt, cfg, &f), 0);
	ck_assert(strstr(f.message, "extra_sbpl_rules") != NULL);
	json_decref(cfg);
}
END_TEST

/* s with every occurrence of from replaced by to (malloc'd). */
static char *replace_all(const char *s, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to), n = 0;
	for (const char *p = strstr(s, from); p; p = strstr(p + fl, from))
		n++;
	char *out = malloc(strlen(s) + n * tl + 1);
	ck_assert_ptr_nonnull(out);
	char *o = out;
	for (const char *p; (p = strstr(s, from)); s = p + fl) {
		memcpy(o, s, (size_t)(p - s));
		o += p - s;
		memcpy(o, to, tl);
		o += tl;
	}
	strcpy(o, s);
	return out;
}

/* The whole profile for a grant, byte for byte, against a reviewed golden
 * file (the grant's random area path replaced by @AREA@). A change to the
 * generated SBPL has to show up as a change to tests/data/seatbelt/. */
static const struct {
	bool network;
	int depth; /* nested 200-character directories above the grant */
	const char *golden;
} golden_cases[] = {
	{ false, 0, "tests/data/seatbelt/grant.sb" },
	{ true, 0, "tests/data/seatbelt/grant-network.sb" },
	/* paths far longer than the first buffer: the profile grows, unchanged */
	{ false, 6, "tests/data/seatbelt/grant.sb" },
};

/* dir/ddd.../ddd... depth levels down (created); malloc'd. */
static char *deep_dir(const char *dir, int depth)
{
	char *p = strdup(dir);
	char name[201];
	memset(name, 'd', 200);
	name[200] = '\0';
	for (int i = 0; i < depth; i++) {
		char *q = agsbx_path_join(p, name);
		ck_assert_int_eq(mkdir(q, 0755), 0);
		free(p);
		p = q;
	}
	return p;
}

START_TEST(test_profile_golden)
{
	char *dir = agsbx_test_tmpdir("sb-golden");
	char *parent = deep_dir(dir, golden_cases[_i].depth);
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(parent, "golden", (uid_t)-1, (gid_t)-1, &g), 0);
	free(parent);
	char *prof = agsbx_seatbelt_profile(g, golden_cases[_i].network);
	ck_assert_ptr_nonnull(prof);
	char *got = replace_all(prof, g->area, "@AREA@");
	char *path = agsbx_test_source_path(golden_cases[_i].golden);
	char *want = NULL;
	ck_assert_int_eq(agsbx_read_file(path, 1 << 16, &want, NULL), 0);
	ck_assert_msg(strcmp(got, want) == 0, "profile differs from %s:\n%s", golden_cases[_i].golden, got);
	free(want);
	free(path);
	free(got);
	free(prof);
	agsbx_grant_destroy(g);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

/* sandbox-exec -f PROFILE, then the step's argv unchanged (no shell, no
 * re-quoting); an argument that looks like an option stays an argument of
 * the step. */
START_TEST(test_argv)
{
	const char *step[] = { "/grant/source/agsbx-payload", "write", "a b", "-p", "(allow default)", NULL };
	const char **argv = agsbx_seatbelt_argv("/grant/logs/p.sb", step);
	ck_assert_ptr_nonnull(argv);
	const char *want[] = { "/usr/bin/sandbox-exec", "-f", "/grant/logs/p.sb", "/grant/source/agsbx-payload",
			       "write", "a b", "-p", "(allow default)" };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		ck_assert_str_eq(argv[i], want[i]);
	ck_assert_ptr_null(argv[sizeof want / sizeof want[0]]);
	ck_assert_ptr_eq(argv[3], step[0]); /* borrowed, not copied */
	free(argv);
	const char *empty[] = { NULL };
	argv = agsbx_seatbelt_argv("p", empty);
	ck_assert_str_eq(argv[2], "p");
	ck_assert_ptr_null(argv[3]);
	free(argv);
}
END_TEST

static size_t count_entries(const char *path)
{
	DIR *d = opendir(path);
	ck_assert_ptr_nonnull(d);
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

#ifndef __APPLE__
/* Without sandbox-exec nothing runs unconfined: ensure refuses with the
 * probe's reason, and an execute forced through a handle fails (the exec
 * of sandbox-exec itself fails) and leaves no profile file behind. */
START_TEST(test_fails_closed_without_sandbox_exec)
{
	char *dir = agsbx_test_tmpdir("sb-closed");
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(dir, "area", (uid_t)-1, (gid_t)-1, &g), 0);
	struct agsbx_ctx ctx = { .probe_timeout_ms = 1000 };
	struct agsbx_handle *h = NULL;
	struct agsbx_error f = { 0 };
	ck_assert_int_eq(agsbx_provider_seatbelt.ensure(&agsbx_provider_seatbelt, &ctx, g, &h, &f), -ENODEV);
	ck_assert_str_eq(f.reason, "not_macos");
	ck_assert_ptr_null(h);
	json_t *bad = json_pack("{s:b}", "extra", 1);
	ctx.config = bad;
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(agsbx_provider_seatbelt.ensure(&agsbx_provider_seatbelt, &ctx, g, &h, &f), -EINVAL);
	ctx.config = NULL;

	struct agsbx_caps caps = { .mechanism = "seatbelt" };
	h = agsbx_handle_new(&agsbx_provider_seatbelt, &ctx, g, &caps);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(agsbx_provider_seatbelt.health(h), -ENODEV);
	const char *argv[] = { "/usr/bin/true", NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 4096, .timeout_ms = 10000, .cancel_fd = -1 };
	struct agsbx_exec_result xr = { 0 };
	memset(&f, 0, sizeof f);
	int r = agsbx_provider_seatbelt.execute(h, &step, &lim, &xr, &f);
	ck_assert_int_lt(r, 0);
	ck_assert_int_ne(xr.run.spawn_errno, 0);
	ck_assert_uint_eq(count_entries(g->roots[AGSBX_ROOT_LOGS].path), 0);
	agsbx_exec_result_clear(&xr);
	/* a malformed step is refused before any profile is written */
	const char *noargv[] = { NULL };
	struct agsbx_step malformed = { .argv = noargv, .cwd = AGSBX_ROOT_BUILD };
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(agsbx_provider_seatbelt.execute(h, &malformed, &lim, &xr, &f), -EINVAL);
	ck_assert_str_eq(f.reason, "step_invalid");
	/* no place for the profile: nothing runs */
	ck_assert_int_eq(rmdir(g->roots[AGSBX_ROOT_LOGS].path), 0);
	ck_assert_int_eq(agsbx_provider_seatbelt.execute(h, &step, &lim, &xr, &f), -ENOENT);
	ck_assert_ptr_null(xr.meta);

	agsbx_provider_release(h);
	ck_assert_int_eq(agsbx_provider_seatbelt.health(h), -ESTALE);
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(agsbx_provider_seatbelt.execute(h, &step, &lim, &xr, &f), -ESTALE);
	ck_assert_str_eq(f.reason, "released");
	agsbx_handle_free(h);
	json_decref(bad);
	agsbx_grant_destroy(g);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("seatbelt");
	TCase *tc = tcase_create("seatbelt");
	tcase_add_test(tc, test_not_macos);
	tcase_add_test(tc, test_profile_from_grant_only);
	tcase_add_test(tc, test_unknown_config_key);
	tcase_add_loop_test(tc, test_profile_golden, 0, sizeof golden_cases / sizeof golden_cases[0]);
	tcase_add_test(tc, test_argv);
#ifndef __APPLE__
	tcase_add_test(tc, test_fails_closed_without_sandbox_exec);
#endif
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
