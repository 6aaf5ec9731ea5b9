/* base/rundir.c: the owner record of a run directory, and what the sweep
 * makes of a directory whose creator died at each moment of the claim. */
#include "base/rundir.h"
#include "base/util.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void put(const char *dir, const char *name, const char *text)
{
	char *p = agsbx_path_join(dir, name);
	ck_assert_ptr_nonnull(p);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	free(p);
}

/* The token of a process that existed and is gone (reaped). */
static void dead_token(char *buf, size_t size)
{
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char tok[64];
		if (agsbx_owner_token(tok, sizeof tok) == 0)
			(void)!write(fds[1], tok, strlen(tok));
		_exit(0);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], buf, size - 1);
	close(fds[0]);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	waitpid(pid, NULL, 0);
}

static void age(const char *dir, time_t seconds)
{
	struct timespec ts[2] = { { .tv_sec = time(NULL) - seconds }, { .tv_sec = time(NULL) - seconds } };
	ck_assert_int_eq(utimensat(AT_FDCWD, dir, ts, 0), 0);
}

START_TEST(test_claim_is_alive_and_leaves_no_staging)
{
	char *dir = agsbx_test_tmpdir("rundir");
	ck_assert_int_eq(agsbx_rundir_claim(dir), 0);
	ck_assert_int_eq(agsbx_rundir_owner_alive(dir), 1);
	char *staged = agsbx_path_join(dir, AGSBX_RUNDIR_OWNER_STAGED);
	ck_assert_int_eq(access(staged, F_OK), -1);
	free(staged);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

/* Killed between the staged write and the rename: the staged token is the
 * owner, alive or dead as its process is. */
START_TEST(test_staged_claim_counts)
{
	/* the token first: the forked child then holds no allocation of ours */
	char tok[64];
	dead_token(tok, sizeof tok);
	char *dir = agsbx_test_tmpdir("rundir");
	put(dir, AGSBX_RUNDIR_OWNER_STAGED, tok);
	ck_assert_int_eq(agsbx_rundir_owner_alive(dir), 0);
	agsbx_test_rmtree(dir);
	free(dir);

	dir = agsbx_test_tmpdir("rundir");
	ck_assert_int_eq(agsbx_owner_token(tok, sizeof tok), 0);
	put(dir, AGSBX_RUNDIR_OWNER_STAGED, tok);
	ck_assert_int_eq(agsbx_rundir_owner_alive(dir), 1);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

/* Killed before anything was written: an empty directory is a dead run's
 * only once no live claim can still be on its way. */
START_TEST(test_unclaimed_empty_dir)
{
	char *dir = agsbx_test_tmpdir("rundir");
	ck_assert_int_eq(agsbx_rundir_owner_alive(dir), -ENOENT);
	age(dir, AGSBX_RUNDIR_CLAIM_GRACE_S + 5);
	ck_assert_int_eq(agsbx_rundir_owner_alive(dir), 0);
	/* an empty staged claim (killed between open and write) is the same */
	put(dir, AGSBX_RUNDIR_OWNER_STAGED, "");
	age(dir, AGSBX_RUNDIR_CLAIM_GRACE_S + 5);
	ck_assert_int_eq(agsbx_rundir_owner_alive(dir), 0);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

/* Anything else without an owner is not ours to judge, however old. */
START_TEST(test_unowned_content_is_left_alone)
{
	char *dir = agsbx_test_tmpdir("rundir");
	put(dir, "result.json", "{}");
	age(dir, AGSBX_RUNDIR_CLAIM_GRACE_S + 5);
	ck_assert_int_eq(agsbx_rundir_owner_alive(dir), -ENOENT);
	put(dir, AGSBX_RUNDIR_OWNER_FILE, "not a token");
	age(dir, AGSBX_RUNDIR_CLAIM_GRACE_S + 5);
	ck_assert_int_eq(agsbx_rundir_owner_alive(dir), -ENOENT);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rundir");
	TCase *tc = tcase_create("owner");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_claim_is_alive_and_leaves_no_staging);
	tcase_add_test(tc, test_staged_claim_counts);
	tcase_add_test(tc, test_unclaimed_empty_dir);
	tcase_add_test(tc, test_unowned_content_is_left_alone);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
