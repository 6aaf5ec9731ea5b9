/* The grant model: four roots, exclusive materialisation with sha256, the
 * TOCTOU guard right before execute, symlink refusal. Exercised through the
 * trusted_local provider (the bounded runner, for real). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mount.h>
#endif
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
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
	struct agsbx_error why = { 0 };
	ck_assert_int_eq(agsbx_grant_verify(g, &why), 0);
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

static int run_true(struct agsbx_handle *h, struct agsbx_error *fail)
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
	struct agsbx_error fail = { 0 };
	ck_assert_int_eq(agsbx_provider_trusted_local.ensure(&agsbx_provider_trusted_local, &ctx, g, &h, &fail), 0);
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
	agsbx_provider_release(h);
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

/* ------------------------------------------- error paths (own namespaces) */

/* dir/name as a fresh mount point carrying a tmpfs (own namespace only). */
static char *small_tmpfs(const char *name, const char *opts)
{
	char *mp = agsbx_test_tmpfs(dir, name, opts);
	ck_assert_ptr_nonnull(mp);
	return mp;
}

static bool is_empty_dir(const char *path)
{
	char *cmd = NULL;
	ck_assert_int_ge(asprintf(&cmd, "test -z \"$(ls -A '%s')\"", path), 0);
	int rc = system(cmd);
	free(cmd);
	return rc == 0;
}

/* A filesystem out of inodes after area/ and source/: the grant is not
 * half-made, and nothing is left behind. */
START_TEST(test_create_enospc)
{
	if (!agsbx_test_own_namespaces())
		return;
	char *mp = small_tmpfs("inodes", "size=1m,nr_inodes=3,mode=0755");
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(mp, "area", (uid_t)-1, (gid_t)-1, &g), -ENOSPC);
	ck_assert_ptr_null(g);
	ck_assert(is_empty_dir(mp));
	free(mp);
}
END_TEST

/* The bundle does not fit: -ENOSPC, no record, and no truncated copy left
 * in the source root that a later step could run. */
START_TEST(test_add_file_enospc)
{
	if (!agsbx_test_own_namespaces())
		return;
	char *mp = small_tmpfs("small", "size=64k,mode=0755");
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(mp, "area", (uid_t)-1, (gid_t)-1, &g), 0);
	struct stat st;
	ck_assert_int_eq(stat(payload, &st), 0);
	ck_assert_int_gt(st.st_size, 64 * 1024);
	ck_assert_int_eq(agsbx_grant_add_file(g, "agsbx-payload", payload, true), -ENOSPC);
	ck_assert_uint_eq(g->nfiles, 0);
	ck_assert(is_empty_dir(g->roots[AGSBX_ROOT_SOURCE].path));
	/* the name is free again: a later, smaller file can take it */
	char *small = agsbx_path_join(dir, "small-src");
	ck_assert_int_eq(agsbx_write_file_atomic(small, "#!/bin/sh\n", 10, 0644), 0);
	ck_assert_int_eq(agsbx_grant_add_file(g, "agsbx-payload", small, true), 0);
	agsbx_grant_destroy(g);
	ck_assert(is_empty_dir(mp));
	free(small);
	free(mp);
}
END_TEST

/* A read-only bind of the parent: -EROFS from the first mkdir. */
START_TEST(test_create_erofs)
{
	if (!agsbx_test_own_namespaces())
		return;
	char *ro = agsbx_path_join(dir, "ro");
	ck_assert_int_eq(mkdir(ro, 0755), 0);
#ifdef __linux__
	ck_assert_int_eq(mount(ro, ro, "none", MS_BIND, NULL), 0);
	ck_assert_int_eq(mount("none", ro, "none", MS_BIND | MS_REMOUNT | MS_RDONLY, NULL), 0);
#endif
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(ro, "area", (uid_t)-1, (gid_t)-1, &g), -EROFS);
	ck_assert_ptr_null(g);
	free(ro);
}
END_TEST

/* Without privileges: a parent we may not write to (-EACCES), a source we
 * may not read (-EACCES, no file), an owner we may not give the roots to
 * (chown fails: no half-made grant left), a changed file whose digest can
 * no longer be read (verify fails with the reason). */
START_TEST(test_unprivileged_errors)
{
	if (!agsbx_test_own_namespaces())
		return;
	char *locked = agsbx_path_join(dir, "locked");
	ck_assert_int_eq(mkdir(locked, 0555), 0);
	char *secret = agsbx_path_join(dir, "secret");
	ck_assert_int_eq(agsbx_write_file_atomic(secret, "s", 1, 0000), 0);
	char *open_dir = agsbx_path_join(dir, "open");
	ck_assert_int_eq(mkdir(open_dir, 0755), 0);
	ck_assert_int_eq(agsbx_test_drop_effective_caps(), 0);

	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(locked, "area", (uid_t)-1, (gid_t)-1, &g), -EACCES);
	/* uid 4242 is not mapped in our namespace: chown refuses */
	ck_assert_int_lt(agsbx_grant_create(open_dir, "area", 4242, 4242, &g), 0);
	ck_assert(is_empty_dir(open_dir));

	ck_assert_int_eq(agsbx_grant_create(open_dir, "area", (uid_t)-1, (gid_t)-1, &g), 0);
	ck_assert_int_eq(agsbx_grant_add_file(g, "s", secret, false), -EACCES);
	ck_assert(is_empty_dir(g->roots[AGSBX_ROOT_SOURCE].path));
	ck_assert_int_eq(agsbx_grant_add_file(g, "p", payload, true), 0);
	/* changed (so the fingerprint no longer matches) and unreadable */
	ck_assert_int_eq(chmod(g->files[0].path, 0000), 0);
	struct agsbx_error why = { 0 };
	ck_assert_int_eq(agsbx_grant_verify(g, &why), -EACCES);
	ck_assert_msg(strstr(why.message, "p: ") == why.message, "why: %s", why.message);
	agsbx_grant_destroy(g);
	ck_assert(is_empty_dir(open_dir));
	free(locked);
	free(secret);
	free(open_dir);
}
END_TEST

/* ---------------------------------------------- symlinks, races, teardown */

START_TEST(test_symlink_components)
{
	/* a symlink in the middle of the path, not only at its end */
	char *real = agsbx_path_join(dir, "real");
	ck_assert_int_eq(mkdir(real, 0755), 0);
	char *sub = agsbx_path_join(real, "sub");
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	char *link = agsbx_path_join(dir, "via");
	ck_assert_int_eq(symlink(real, link), 0);
	char *through = agsbx_path_join(link, "sub");
	ck_assert_int_eq(agsbx_path_check_no_symlink(through), -ELOOP);
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(through, "area", (uid_t)-1, (gid_t)-1, &g), -ELOOP);
	ck_assert(is_empty_dir(sub));
	ck_assert_int_eq(agsbx_path_check_no_symlink(sub), 0);
	/* a missing component is an error, not a pass */
	char *missing = agsbx_path_join(dir, "missing/x");
	ck_assert_int_eq(agsbx_path_check_no_symlink(missing), -ENOENT);
	ck_assert_int_eq(agsbx_path_check_no_symlink("/"), 0);
	ck_assert_int_eq(agsbx_path_check_no_symlink(NULL), -EINVAL);
	ck_assert_int_eq(agsbx_path_check_no_symlink(""), -EINVAL);
	free(real);
	free(sub);
	free(link);
	free(through);
	free(missing);
}
END_TEST

/* An entry planted at the destination before materialisation (a symlink
 * to a file outside, as a racing writer would place it) is never written
 * through; a missing source is an error. */
START_TEST(test_preplaced_destination)
{
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(dir, "area", (uid_t)-1, (gid_t)-1, &g), 0);
	char *victim = agsbx_path_join(dir, "victim");
	ck_assert_int_eq(agsbx_write_file_atomic(victim, "keep", 4, 0644), 0);
	char *planted = agsbx_path_join(g->roots[AGSBX_ROOT_SOURCE].path, "agsbx-payload");
	ck_assert_int_eq(symlink(victim, planted), 0);
	ck_assert_int_eq(agsbx_grant_add_file(g, "agsbx-payload", payload, true), -EEXIST);
	char *text = NULL;
	ck_assert_int_eq(agsbx_read_file(victim, 64, &text, NULL), 0);
	ck_assert_str_eq(text, "keep");
	ck_assert_uint_eq(g->nfiles, 0);
	ck_assert_int_eq(agsbx_grant_add_file(g, "other", "/nonexistent/agsbx", false), -ENOENT);
	agsbx_grant_destroy(g);
	free(text);
	free(victim);
	free(planted);
}
END_TEST

/* The TOCTOU guard decides on content: a file swapped for an identical
 * copy (new inode) or merely touched still verifies by digest; removed or
 * replaced by a directory it does not. */
START_TEST(test_verify_swaps)
{
	struct agsbx_grant *g = make_grant();
	char *path = strdup(g->files[0].path);
	struct agsbx_error why = { 0 };
	/* identical content under a new inode */
	char *copy = agsbx_path_join(dir, "copy");
	char *cmd = NULL;
	ck_assert_int_ge(asprintf(&cmd, "cp '%s' '%s' && mv -f '%s' '%s'", payload, copy, copy, path), 0);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(agsbx_grant_verify(g, &why), 0);
	ck_assert_int_eq(utimensat(AT_FDCWD, path, NULL, 0), 0);
	ck_assert_int_eq(agsbx_grant_verify(g, &why), 0);
	/* gone */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(agsbx_grant_verify(g, &why), -ENOENT);
	ck_assert(strstr(why.message, "agsbx-payload") != NULL);
	/* a directory in its place */
	ck_assert_int_eq(mkdir(path, 0755), 0);
	why = (struct agsbx_error){ 0 }; /* the first error wins: a new record */
	ck_assert_int_eq(agsbx_grant_verify(g, &why), -ELOOP);
	ck_assert_str_eq(why.reason, "bundle_changed");
	ck_assert(strstr(why.message, "no longer a regular file") != NULL);
	agsbx_grant_destroy(g);
	free(cmd);
	free(copy);
	free(path);
}
END_TEST

/* Teardown removes what a sandbox left, even directories it made
 * unwritable and unreadable (nested, too); destroying nothing is allowed.
 * Unprivileged, a mode-0 directory cannot be listed until it is unlocked. */
START_TEST(test_destroy_locked_dirs)
{
	struct agsbx_grant *g = make_grant();
	char *area = strdup(g->area);
	char *d = agsbx_path_join(g->roots[AGSBX_ROOT_OUTPUT].path, "d");
	ck_assert_int_eq(mkdir(d, 0755), 0);
	char *f = agsbx_path_join(d, "f");
	ck_assert_int_eq(agsbx_write_file_atomic(f, "x", 1, 0644), 0);
	char *inner = agsbx_path_join(d, "inner");
	ck_assert_int_eq(mkdir(inner, 0000), 0); /* nested: unreadable inside unreadable */
	ck_assert_int_eq(chmod(d, 0000), 0);
	agsbx_grant_destroy(g);
	ck_assert_int_eq(access(area, F_OK), -1);
	ck_assert_int_eq(errno, ENOENT);
	agsbx_grant_destroy(NULL);
	free(inner);
	free(area);
	free(d);
	free(f);
}
END_TEST

/* The grant's roots: one directory per role inside the area, only the
 * source read-only; each materialised file with its digest and size. */
START_TEST(test_roots_and_files)
{
	struct agsbx_grant *g = make_grant();
	for (int i = 0; i < AGSBX_ROOT_COUNT; i++) {
		_cleanup_free_ char *want = agsbx_path_join(g->area, agsbx_root_role_name(i));
		ck_assert_str_eq(g->roots[i].path, want);
		ck_assert(g->roots[i].writable == (i != AGSBX_ROOT_SOURCE));
	}
	ck_assert_uint_eq(g->nfiles, 1);
	ck_assert_str_eq(g->files[0].name, "agsbx-payload");
	ck_assert_uint_eq(strlen(g->files[0].sha256), 64);
	struct stat st;
	ck_assert_int_eq(stat(g->files[0].path, &st), 0);
	ck_assert_int_eq((long long)st.st_size, (long long)g->files[0].bytes);
	ck_assert_str_eq(agsbx_root_role_name(AGSBX_ROOT_COUNT), "unknown");
	agsbx_grant_destroy(g);
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
	tcase_add_test(tc, test_create_enospc);
	tcase_add_test(tc, test_add_file_enospc);
	tcase_add_test(tc, test_create_erofs);
	tcase_add_test(tc, test_unprivileged_errors);
	tcase_add_test(tc, test_symlink_components);
	tcase_add_test(tc, test_preplaced_destination);
	tcase_add_test(tc, test_verify_swaps);
	tcase_add_test(tc, test_destroy_locked_dirs);
	tcase_add_test(tc, test_roots_and_files);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
