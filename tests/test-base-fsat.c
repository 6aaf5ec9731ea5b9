/* base/fsat.c: the fd-based operations a root harness uses in directories
 * the sandbox user can write. Each refuses what another
 * user could have put in the place of the file it expects: a symlink, a
 * hard link, a FIFO, a directory, a file of another owner; the removal
 * walk never enters a directory swapped for a link, even mid-walk. */
#include "base/cleanup.h"
#include "base/fsat.h"
#include "base/util.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir;

static void setup(void)
{
	dir = agsbx_test_tmpdir("agsbx-t-fsat");
	ck_assert_ptr_nonnull(dir);
}

static void teardown(void)
{
	agsbx_test_rmtree(dir);
	free(dir);
}

static char *at(const char *name)
{
	char *p = agsbx_path_join(dir, name);
	ck_assert_ptr_nonnull(p);
	return p;
}

static void spit(const char *name, const char *text)
{
	_cleanup_free_ char *p = at(name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static int dfd_of_dir(void)
{
	int fd = agsbx_dir_open(dir);
	ck_assert_int_ge(fd, 0);
	return fd;
}

START_TEST(test_open_file_at_refusals)
{
	_cleanup_close_ int dfd = dfd_of_dir();
	spit("f", "one\n");
	spit("g", "two\n");
	struct stat st;
	int fd = agsbx_open_file_at(dfd, "f", O_RDONLY, geteuid(), &st);
	ck_assert_int_ge(fd, 0);
	ck_assert(S_ISREG(st.st_mode) && st.st_nlink == 1);
	close(fd);
	ck_assert_int_eq(symlinkat("f", dfd, "link"), 0);
	ck_assert_int_eq(agsbx_open_file_at(dfd, "link", O_RDONLY, AGSBX_ANY_OWNER, NULL), -ELOOP);
	ck_assert_int_eq(agsbx_open_file_at(dfd, "link", O_WRONLY | O_APPEND, AGSBX_ANY_OWNER, NULL), -ELOOP);
	/* a hard link aliases the file: both names are refused */
	ck_assert_int_eq(linkat(dfd, "g", dfd, "hard", 0), 0);
	ck_assert_int_eq(agsbx_open_file_at(dfd, "hard", O_RDONLY, AGSBX_ANY_OWNER, NULL), -EMLINK);
	ck_assert_int_eq(agsbx_open_file_at(dfd, "g", O_WRONLY | O_APPEND, AGSBX_ANY_OWNER, NULL), -EMLINK);
	/* a FIFO without a writer is refused at once, never waited on */
	ck_assert_int_eq(mkfifoat(dfd, "fifo", 0600), 0);
	ck_assert_int_eq(agsbx_open_file_at(dfd, "fifo", O_RDONLY, AGSBX_ANY_OWNER, NULL), -EINVAL);
	ck_assert_int_eq(agsbx_open_file_at(dfd, "fifo", O_WRONLY, AGSBX_ANY_OWNER, NULL), -EINVAL);
	ck_assert_int_eq(mkdirat(dfd, "sub", 0700), 0);
	ck_assert_int_eq(agsbx_open_file_at(dfd, "sub", O_RDONLY, AGSBX_ANY_OWNER, NULL), -EISDIR);
	/* another owner than the one expected */
	ck_assert_int_eq(agsbx_open_file_at(dfd, "f", O_RDONLY, geteuid() + 1, NULL), -EPERM);
	ck_assert_int_eq(agsbx_open_file_at(dfd, "f", O_RDONLY | O_TRUNC, AGSBX_ANY_OWNER, NULL), -EINVAL);
	ck_assert_int_eq(agsbx_open_file_at(dfd, "none", O_RDONLY, AGSBX_ANY_OWNER, NULL), -ENOENT);
	/* the directory itself: never through a link */
	_cleanup_free_ char *dl = at("dirlink");
	ck_assert_int_eq(symlink(dir, dl), 0);
	ck_assert_int_eq(agsbx_dir_open(dl), -ENOTDIR); /* O_DIRECTORY|O_NOFOLLOW on a link */
	ck_assert_int_lt(agsbx_dir_open_at(dfd, "dirlink"), 0);
	ck_assert_int_lt(agsbx_dir_open_at(dfd, "f"), 0);
}
END_TEST

START_TEST(test_read_line_at)
{
	_cleanup_close_ int dfd = dfd_of_dir();
	spit("f", "first\nsecond\n");
	spit("secret", "do-not-read\n");
	char *line = NULL;
	ck_assert_int_eq(agsbx_read_line_at(dfd, "f", geteuid(), 64, &line), 0);
	ck_assert_str_eq(line, "first");
	free(line);
	line = NULL;
	ck_assert_int_eq(symlinkat("secret", dfd, "link"), 0);
	ck_assert_int_eq(agsbx_read_line_at(dfd, "link", AGSBX_ANY_OWNER, 64, &line), -ELOOP);
	ck_assert_int_eq(linkat(dfd, "secret", dfd, "hard", 0), 0);
	ck_assert_int_eq(agsbx_read_line_at(dfd, "hard", AGSBX_ANY_OWNER, 64, &line), -EMLINK);
	ck_assert_int_eq(agsbx_read_line_at(dfd, "f", AGSBX_ANY_OWNER, 4, &line), -EFBIG);
	ck_assert_ptr_null(line);
	spit("empty", "");
	ck_assert_int_eq(agsbx_read_line_at(dfd, "empty", AGSBX_ANY_OWNER, 4, &line), 0);
	ck_assert_str_eq(line, "");
	free(line);
}
END_TEST

START_TEST(test_create_file_at)
{
	_cleanup_close_ int dfd = dfd_of_dir();
	spit("victim", "precious\n");
	_cleanup_free_ char *v = at("victim");
	ck_assert_int_eq(chmod(v, 0600), 0);
	/* a link planted under the name: refused, the target untouched */
	ck_assert_int_eq(symlinkat("victim", dfd, "planted"), 0);
	ck_assert_int_eq(agsbx_create_file_at(dfd, "planted", "x", 1, 0644, (uid_t)-1, (gid_t)-1), -EEXIST);
	char *line = NULL;
	ck_assert_int_eq(agsbx_read_line_at(dfd, "victim", AGSBX_ANY_OWNER, 64, &line), 0);
	ck_assert_str_eq(line, "precious");
	free(line);
	struct stat st;
	ck_assert_int_eq(fstatat(dfd, "victim", &st, 0), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	/* a new file: content, mode, and (as root) the owner, all through the fd */
	uid_t uid = geteuid() == 0 ? 1 : (uid_t)-1;
	ck_assert_int_eq(agsbx_create_file_at(dfd, "new", "hello\n", 6, 0640, uid, 1), 0);
	ck_assert_int_eq(fstatat(dfd, "new", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0640);
	ck_assert_int_eq(st.st_uid, uid == (uid_t)-1 ? geteuid() : uid);
	ck_assert_int_eq(agsbx_read_line_at(dfd, "new", AGSBX_ANY_OWNER, 64, &line), 0);
	ck_assert_str_eq(line, "hello");
	free(line);
	ck_assert_int_eq(agsbx_create_file_at(dfd, "new", "x", 1, 0644, (uid_t)-1, (gid_t)-1), -EEXIST);
}
END_TEST

/* The grant removal against a user still at work: a directory of the tree
 * is swapped for a link to an outside directory and back, in a loop, while
 * the tree is removed, again and again. The outside files survive every
 * round (nftw, which descended by path, lost them in ~1 of 20,000). */
static atomic_bool stop;
static char *tree, *outside;

static void *swapper(void *arg)
{
	(void)arg;
	_cleanup_free_ char *sw = agsbx_path_join(tree, "sw"), *old = agsbx_path_join(tree, "sw.old");
	while (!atomic_load(&stop)) {
		if (rename(sw, old) < 0)
			continue;
		if (symlink(outside, sw) == 0)
			unlink(sw);
		rename(old, sw);
	}
	return NULL;
}

static void build_tree(void)
{
	ck_assert_int_eq(mkdir(tree, 0755), 0);
	char p[4096];
	snprintf(p, sizeof p, "%s/sw", tree);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/sw/sub", tree);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	for (int i = 0; i < 8; i++) {
		snprintf(p, sizeof p, "%s/sw/keep%d", tree, i);
		FILE *f = fopen(p, "w");
		ck_assert_ptr_nonnull(f);
		fclose(f);
	}
}

START_TEST(test_remove_tree_swapped_mid_walk)
{
	tree = at("tree");
	outside = at("outside");
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	for (int i = 0; i < 8; i++) {
		char p[4096];
		snprintf(p, sizeof p, "%s/keep%d", outside, i);
		FILE *f = fopen(p, "w");
		ck_assert_ptr_nonnull(f);
		fclose(f);
	}
	for (int round = 0; round < 400; round++) {
		build_tree();
		atomic_store(&stop, false);
		pthread_t t;
		ck_assert_int_eq(pthread_create(&t, NULL, swapper, NULL), 0);
		agsbx_remove_tree(tree, NULL);
		atomic_store(&stop, true);
		pthread_join(t, NULL);
		agsbx_remove_tree(tree, NULL); /* what the race left */
		for (int i = 0; i < 8; i++) {
			char p[4096];
			snprintf(p, sizeof p, "%s/keep%d", outside, i);
			ck_assert_msg(access(p, F_OK) == 0, "round %d: %s removed through a swapped link", round, p);
		}
	}
	free(tree);
	free(outside);
}
END_TEST

/* Unreadable and read-only directories are opened up on the way down; the
 * entry named last goes last, and a link as the top is just unlinked. */
START_TEST(test_remove_tree_modes_and_last)
{
	_cleanup_free_ char *t = at("t"), *a = at("t/a"), *b = at("t/a/b");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	ck_assert_int_eq(mkdir(a, 0755), 0);
	ck_assert_int_eq(mkdir(b, 0755), 0);
	spit("t/a/b/f", "x");
	spit("t/.last", "x");
	ck_assert_int_eq(chmod(b, 0), 0);
	ck_assert_int_eq(chmod(a, 0500), 0);
	ck_assert_int_eq(agsbx_remove_tree(t, ".last"), 0);
	struct stat st;
	ck_assert_int_eq(lstat(t, &st), -1);
	_cleanup_free_ char *target = at("target"), *link = at("link");
	ck_assert_int_eq(mkdir(target, 0755), 0);
	ck_assert_int_eq(symlink(target, link), 0);
	ck_assert_int_eq(agsbx_remove_tree(link, NULL), 0);
	ck_assert_int_eq(lstat(link, &st), -1);
	ck_assert_int_eq(lstat(target, &st), 0);
}
END_TEST

/* A sandbox can nest directories far deeper than PATH_MAX (mkdirat from
 * fds): the removal takes any depth, within a small fd limit (it moves deep
 * subtrees up rather than holding one fd per level). nftw stopped at
 * PATH_MAX and the walk before it at 256 levels, leaving residue. */
START_TEST(test_remove_tree_any_depth)
{
	_cleanup_free_ char *t = at("deep");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	int fd = open(t, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 3000; i++) {
		ck_assert_int_eq(mkdirat(fd, "dd", 0755), 0);
		int sub = openat(fd, "dd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_ge(sub, 0);
		if (i % 100 == 0)
			ck_assert_int_eq(symlinkat(dir, sub, "up"), 0); /* links to the test dir: never entered */
		close(fd);
		fd = sub;
	}
	close(fd);
	struct rlimit old;
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	struct rlimit low = { 128, old.rlim_max }; /* the soft limit: it can be raised back */
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	int r = agsbx_remove_tree(t, NULL);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	ck_assert_int_eq(r, 0);
	struct stat st;
	ck_assert_int_eq(lstat(t, &st), -1);
	ck_assert_int_eq(lstat(dir, &st), 0);
}
END_TEST

/* A directory path is private when only root (or the caller) can change
 * any directory on the way: /tmp's sticky bit is enough, a directory of
 * another owner or a group/world-writable one without it is not. */
START_TEST(test_path_check_private)
{
	char bad[4096] = "";
	ck_assert_int_eq(agsbx_path_check_private("/", bad, sizeof bad), 0);
	ck_assert_int_eq(agsbx_path_check_private(dir, bad, sizeof bad), 0);
	_cleanup_free_ char *open_dir = at("open"), *below = at("open/below");
	ck_assert_int_eq(mkdir(open_dir, 0755), 0);
	ck_assert_int_eq(mkdir(below, 0755), 0);
	ck_assert_int_eq(chmod(open_dir, 0777), 0);
	ck_assert_int_eq(agsbx_path_check_private(below, bad, sizeof bad), -EPERM);
	ck_assert_str_eq(bad, open_dir);
	ck_assert_int_eq(chmod(open_dir, 01777), 0);
	ck_assert_int_eq(agsbx_path_check_private(below, bad, sizeof bad), 0);
	ck_assert_int_eq(chmod(open_dir, 0755), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(below, 1, 1), 0);
		ck_assert_int_eq(agsbx_path_check_private(below, bad, sizeof bad), -EPERM);
		ck_assert_str_eq(bad, below);
	}
	ck_assert_int_eq(agsbx_path_check_private("relative", bad, sizeof bad), -EINVAL);
	ck_assert_int_eq(agsbx_path_check_private("/nonexistent-agsbx/x", bad, sizeof bad), -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("base-fsat");
	TCase *tc = tcase_create("fsat");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_open_file_at_refusals);
	tcase_add_test(tc, test_read_line_at);
	tcase_add_test(tc, test_create_file_at);
	tcase_add_test(tc, test_remove_tree_swapped_mid_walk);
	tcase_add_test(tc, test_remove_tree_modes_and_last);
	tcase_add_test(tc, test_path_check_private);
	tcase_add_test(tc, test_remove_tree_any_depth);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
