/* base/fsat.h's removal and privacy checks on what a sandbox can leave
 * behind: a tree whose top or a subdirectory has mode 0000 (opened up by
 * its owner and removed), a symlink given as the tree (the link goes, its
 * target stays), a regular file given as the tree, the entry kept for last;
 * and agsbx_path_check_private naming the first component another user
 * could change (world-writable without sticky bit, or owned by another
 * uid). The 0000 cases need the owner's own permission checks, so the
 * test drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH when it runs as root
 * (each check test runs in a child of its own). */
#include "base/cleanup.h"
#include "base/fsat.h"
#include "base/util.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Effective capabilities without the two that bypass permission bits. */
static void drop_dac(void)
{
	if (geteuid() != 0)
		return;
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];
	ck_assert_int_eq(syscall(SYS_capget, &h, d), 0);
	d[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
	ck_assert_int_eq(syscall(SYS_capset, &h, d), 0);
}

static char *path_in(const char *dir, const char *rel)
{
	char *p = NULL;
	ck_assert_int_ge(asprintf(&p, "%s/%s", dir, rel), 0);
	return p;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(remove_shut_trees)
{
	_cleanup_free_ char *dir = agsbx_test_tmpdir("cov2-fsat");
	_cleanup_free_ char *top = path_in(dir, "top"), *sub = path_in(dir, "top/sub"), *deep = path_in(dir, "top/sub/f"),
			    *keep = path_in(dir, "top/owner");
	ck_assert_int_eq(mkdir(top, 0755), 0);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	put(deep, "x");
	put(keep, "record");
	ck_assert_int_eq(chmod(sub, 0), 0);
	ck_assert_int_eq(chmod(top, 0), 0);
	drop_dac();
	/* shut out now: the walk must open them up itself */
	ck_assert_int_eq(open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC), -1);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_int_eq(agsbx_remove_tree(top, "owner"), 0);
	struct stat st;
	ck_assert_int_eq(lstat(top, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	agsbx_test_rmtree(dir);
}
END_TEST

START_TEST(remove_link_or_file)
{
	_cleanup_free_ char *dir = agsbx_test_tmpdir("cov2-fsat");
	_cleanup_free_ char *target = path_in(dir, "target"), *inside = path_in(dir, "target/keep"),
			    *link = path_in(dir, "link"), *file = path_in(dir, "file");
	ck_assert_int_eq(mkdir(target, 0755), 0);
	put(inside, "victim");
	ck_assert_int_eq(symlink(target, link), 0);
	put(file, "plain");
	/* a symlink in place of the tree: the link goes, the target stays */
	ck_assert_int_eq(agsbx_remove_tree(link, NULL), 0);
	struct stat st;
	ck_assert_int_eq(lstat(link, &st), -1);
	ck_assert_int_eq(stat(inside, &st), 0);
	ck_assert_int_eq(st.st_size, 6);
	/* a file in place of the tree: unlinked */
	ck_assert_int_eq(agsbx_remove_tree(file, NULL), 0);
	ck_assert_int_eq(lstat(file, &st), -1);
	/* nothing there */
	ck_assert_int_eq(agsbx_remove_tree(file, NULL), -ENOENT);
	agsbx_test_rmtree(dir);
}
END_TEST

START_TEST(check_private_components)
{
	char bad[4096] = "";
	ck_assert_int_eq(agsbx_path_check_private("relative/x", bad, sizeof bad), -EINVAL);
	ck_assert_int_eq(agsbx_path_check_private(NULL, bad, sizeof bad), -EINVAL);
	_cleanup_free_ char *dir = agsbx_test_tmpdir("cov2-fsat");
	ck_assert_int_eq(agsbx_path_check_private(dir, bad, sizeof bad), 0);
	/* world-writable without the sticky bit: anyone may rename in it */
	_cleanup_free_ char *open_dir = path_in(dir, "open"), *below = path_in(dir, "open/below");
	ck_assert_int_eq(mkdir(open_dir, 0755), 0);
	ck_assert_int_eq(chmod(open_dir, 0777), 0);
	ck_assert_int_eq(mkdir(below, 0755), 0);
	ck_assert_int_eq(agsbx_path_check_private(below, bad, sizeof bad), -EPERM);
	ck_assert_str_eq(bad, open_dir);
	/* with the sticky bit (as /tmp) it is fine */
	ck_assert_int_eq(chmod(open_dir, 01777), 0);
	ck_assert_int_eq(agsbx_path_check_private(below, bad, sizeof bad), 0);
	/* owned by another user (needs root to make) */
	if (geteuid() == 0) {
		_cleanup_free_ char *theirs = path_in(dir, "theirs"), *in = path_in(dir, "theirs/in");
		ck_assert_int_eq(mkdir(theirs, 0755), 0);
		ck_assert_int_eq(mkdir(in, 0755), 0);
		ck_assert_int_eq(chown(theirs, 65534, 65534), 0);
		bad[0] = '\0';
		ck_assert_int_eq(agsbx_path_check_private(in, bad, sizeof bad), -EPERM);
		ck_assert_str_eq(bad, theirs);
	}
	/* a file on the way is not a directory of ours */
	_cleanup_free_ char *file = path_in(dir, "f"), *past = path_in(dir, "f/x");
	put(file, "x");
	ck_assert_int_lt(agsbx_path_check_private(past, bad, sizeof bad), 0);
	agsbx_test_rmtree(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cov2-fsat");
	TCase *t = tcase_create("fsat");
	tcase_add_test(t, remove_shut_trees);
	tcase_add_test(t, remove_link_or_file);
	tcase_add_test(t, check_private_components);
	suite_add_tcase(s, t);
	return agsbx_test_run_suite(s);
}
