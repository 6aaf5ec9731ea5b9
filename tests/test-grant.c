/* The grant model: four roots, exclusive materialisation with sha256, the
 * TOCTOU guard right before execute, symlink refusal. Exercised through the
 * trusted_local provider (the bounded runner, for real). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "providers/provider.h"
#include "tests/lib/testlib.h"

static char *dir;
static char *payload;

static void setup(void)
{
	dir = agsbx_test_tmpdir("grant");
	payload = agsbx_test_build_path("agsbx-payload");
	ck_assert(dir && payload);
}

static void teardown(void)
{
	agsbx_test_rmtree(dir);
	free(dir);
	free(payload);
}

static struct agsbx_grant *make_grant(void)
{
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(dir, "area", (uid_t)-1, (gid_t)-1, &g), 0);
	ck_assert_int_eq(agsbx_grant_add_file(g, "agsbx-payload", payload, true), 0);
	ck_assert_int_eq(agsbx_grant_seal(g), 0);
	return g;
}

START_TEST(test_roots_and_digest)
{
	struct agsbx_grant *g = make_grant();
	static const char *const roles[] = { "source", "build", "output", "logs" };
	for (int i = 0; i < AGSBX_ROOT_COUNT; i++) {
		ck_assert_str_eq(agsbx_root_role_name(i), roles[i]);
		struct stat st;
		ck_assert_int_eq(stat(g->roots[i].path, &st), 0);
		ck_assert(S_ISDIR(st.st_mode));
		ck_assert(g->roots[i].writable == (i != AGSBX_ROOT_SOURCE));
	}
	char hex[65];
	ck_assert_int_eq(agsbx_sha256_file(payload, hex), 0);
	ck_assert_str_eq(g->files[0].sha256, hex);
	char why[256];
	ck_assert_int_eq(agsbx_grant_verify(g, why, sizeof why), 0);
	/* sealed: no more files; names cannot escape the source root */
	ck_assert_int_eq(agsbx_grant_add_file(g, "x", payload, false), -EPERM);
	agsbx_grant_destroy(g);
}
END_TEST

START_TEST(test_bad_names)
{
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(dir, "area", (uid_t)-1, (gid_t)-1, &g), 0);
	ck_assert_int_eq(agsbx_grant_add_file(g, "../escape", payload, false), -EINVAL);
	ck_assert_int_eq(agsbx_grant_add_file(g, "..", payload, false), -EINVAL);
	ck_assert_int_eq(agsbx_grant_add_file(g, "", payload, false), -EINVAL);
	ck_assert_int_eq(agsbx_grant_add_file(g, "p", payload, false), 0);
	ck_assert_int_eq(agsbx_grant_add_file(g, "p", payload, false), -EEXIST);
	agsbx_grant_destroy(g);
}
END_TEST

START_TEST(test_symlink_parent_refused)
{
	char *link = agsbx_path_join(dir, "link");
	ck_assert_int_eq(symlink(dir, link), 0);
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(link, "area", (uid_t)-1, (gid_t)-1, &g), -ELOOP);
	ck_assert_int_eq(agsbx_path_check_no_symlink(link), -ELOOP);
	ck_assert_int_eq(agsbx_path_check_no_symlink(dir), 0);
	ck_assert_int_eq(agsbx_path_check_no_symlink("relative/path"), -EINVAL);
	free(link);
}
END_TEST

static int run_true(struct agsbx_handle *h, struct agsbx_failure *fail)
{
	char *pl = agsbx_handle_path(h, AGSBX_ROOT_SOURCE, "agsbx-payload");
	const char *argv[] = { pl, "true", NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 4096, .timeout_ms = 10000, .cancel_fd = -1 };
	struct agsbx_exec_result xr = { 0 };
	int r = agsbx_provider_trusted_local.execute(h, &step, &lim, &xr, fail);
	if (r == 0)
		ck_assert_int_eq(xr.run.status, 0);
	agsbx_exec_result_clear(&xr);
	free(pl);
	return r;
}

START_TEST(test_tampered_file_refused)
{
	struct agsbx_grant *g = make_grant();
	struct agsbx_ctx ctx = { .probe_timeout_ms = 1000 };
	struct agsbx_handle *h = NULL;
	struct agsbx_failure fail = { 0 };
	ck_assert_int_eq(agsbx_provider_trusted_local.ensure(&ctx, g, &h, &fail), 0);
	ck_assert_int_eq(run_true(h, &fail), 0);
	/* tamper between materialisation and execution */
	chmod(g->files[0].path, 0755);
	int fd = open(g->files[0].path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
	memset(&fail, 0, sizeof fail);
	ck_assert_int_eq(run_true(h, &fail), -EBADMSG);
	ck_assert_str_eq(fail.reason, "bundle_changed");
	ck_assert(strstr(fail.message, "digest") != NULL);
	/* replaced by a symlink: also refused */
	unlink(g->files[0].path);
	ck_assert_int_eq(symlink(payload, g->files[0].path), 0);
	memset(&fail, 0, sizeof fail);
	ck_assert_int_lt(run_true(h, &fail), 0);
	agsbx_provider_trusted_local.release(h);
	agsbx_handle_free(h);
	agsbx_grant_destroy(g);
}
END_TEST

START_TEST(test_destroy_never_follows_symlinks)
{
	struct agsbx_grant *g = make_grant();
	char *outside = agsbx_path_join(dir, "outside");
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	char *keep = agsbx_path_join(outside, "keep");
	ck_assert_int_eq(agsbx_write_file_atomic(keep, "k", 1, 0644), 0);
	char *link = agsbx_path_join(g->roots[AGSBX_ROOT_OUTPUT].path, "evil");
	ck_assert_int_eq(symlink(outside, link), 0);
	agsbx_grant_destroy(g);
	ck_assert_int_eq(access(keep, F_OK), 0);
	free(outside);
	free(keep);
	free(link);
}
END_TEST

int main(void)
{
	char *p = agsbx_test_build_path("agsbx-payload");
	if (access(p, X_OK) < 0)
		agsbx_test_skip("payload", true, "build/agsbx-payload not built");
	free(p);
	Suite *s = suite_create("grant");
	TCase *tc = tcase_create("grant");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_roots_and_digest);
	tcase_add_test(tc, test_bad_names);
	tcase_add_test(tc, test_symlink_parent_refused);
	tcase_add_test(tc, test_tampered_file_refused);
	tcase_add_test(tc, test_destroy_never_follows_symlinks);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
