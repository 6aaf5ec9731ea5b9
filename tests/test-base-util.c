/* base/util.c: file digests and reads on what a path may turn out to be
 * (a FIFO swapped in for a granted file must not hang the harness). */
#include "base/util.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static char *tmp_path(const char *dir, const char *name)
{
	char *p = agsbx_path_join(dir, name);
	ck_assert_ptr_nonnull(p);
	return p;
}

START_TEST(test_sha256_file_regular)
{
	char *dir = agsbx_test_tmpdir("util");
	char *f = tmp_path(dir, "abc");
	int fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "abc", 3), 3);
	close(fd);
	char hex[65];
	ck_assert_int_eq(agsbx_sha256_file(f, hex), 0);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	free(f);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

/* Without a writer, open(2) of a FIFO blocks forever: the digest of
 * anything but a regular file is refused without waiting. */
START_TEST(test_sha256_file_refuses_fifo_and_dir)
{
	char *dir = agsbx_test_tmpdir("util");
	char *fifo = tmp_path(dir, "fifo");
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	char hex[65] = "";
	int r = agsbx_sha256_file(fifo, hex);
	ck_assert_int_lt(r, 0);
	ck_assert_int_eq(agsbx_sha256_file(dir, hex), -EISDIR);
	ck_assert_int_eq(agsbx_sha256_file("/dev/null", hex) < 0, 1);
	free(fifo);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

/* --adapter/--wrap commands: shell-like splitting, never a shell. */
static void expect_words(const char *in, const char *const *want)
{
	char **v = NULL;
	int n = agsbx_split_words(in, &v);
	int k = 0;
	while (want[k])
		k++;
	ck_assert_int_eq(n, k);
	for (int i = 0; i < k; i++)
		ck_assert_str_eq(v[i], want[i]);
	ck_assert_ptr_null(v[k]);
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

START_TEST(test_split_words)
{
	expect_words("python3  a.py --x=1", (const char *const[]){ "python3", "a.py", "--x=1", NULL });
	expect_words("sh -c 'a | b $HOME' \"x\\\"y\" z\\ w", (const char *const[]){ "sh", "-c", "a | b $HOME", "x\"y", "z w", NULL });
	expect_words("'' \"\" a''b", (const char *const[]){ "", "", "ab", NULL });
	expect_words("\"\\$\\a\"", (const char *const[]){ "$\\a", NULL });
	expect_words("a\n\tb", (const char *const[]){ "a", "b", NULL });
	expect_words("   ", (const char *const[]){ NULL });
	char **v = NULL;
	ck_assert_int_eq(agsbx_split_words("sh -c 'oops", &v), -EINVAL);
	ck_assert_int_eq(agsbx_split_words("a \"b", &v), -EINVAL);
	ck_assert_int_eq(agsbx_split_words("a\\", &v), -EINVAL);
	ck_assert_ptr_null(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("base-util");
	TCase *tc = tcase_create("digest");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_sha256_file_regular);
	tcase_add_test(tc, test_sha256_file_refuses_fifo_and_dir);
	tcase_add_test(tc, test_split_words);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
