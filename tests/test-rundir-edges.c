/* Run ownership and tree removal (base/rundir.h), through the public
 * functions `cleanup` relies on: an owner token decides "dead run" only
 * for a process that is provably gone (never for a malformed token, one
 * from another pid namespace, or an owner file that is not a small regular
 * file), and agsbx_rm_tree removes nested, read-only trees without ever
 * following a symlink out of them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/rundir.h"
#include "base/util.h"
#include "tests/lib/testlib.h"

static char *dir;

static void setup(void)
{
	dir = agsbx_test_tmpdir("rundir");
	ck_assert_ptr_nonnull(dir);
}

static void teardown(void)
{
	agsbx_test_rmtree(dir);
	free(dir);
}

static char *in_dir(const char *name)
{
	char *p = agsbx_path_join(dir, name);
	ck_assert_ptr_nonnull(p);
	return p;
}

static void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void mkdir_ok(const char *path, mode_t mode)
{
	ck_assert_msg(mkdir(path, mode) == 0, "mkdir %s: %s", path, strerror(errno));
}

/* The pid namespace inode, as the token writes it. */
static unsigned long long pidns(void)
{
	struct stat st;
	ck_assert_int_eq(stat("/proc/self/ns/pid", &st), 0);
	return (unsigned long long)st.st_ino;
}

START_TEST(test_token_of_self_is_alive)
{
	char tok[64];
	ck_assert_int_eq(agsbx_owner_token(tok, sizeof tok), 0);
	int pid = 0;
	unsigned long long start = 0, ns = 0;
	ck_assert_int_eq(sscanf(tok, "%d %llu %llu", &pid, &start, &ns), 3);
	ck_assert_int_eq(pid, (int)getpid());
	ck_assert_uint_gt(start, 0);
	ck_assert_uint_eq(ns, pidns());
	ck_assert(agsbx_owner_token_alive(tok));
	/* too small a buffer is an error, not a cut token */
	char small[4];
	ck_assert_int_eq(agsbx_owner_token(small, sizeof small), -ENOSPC);
}
END_TEST

/* What cannot be judged is alive: cleanup never removes on a guess. */
START_TEST(test_unjudgeable_tokens_are_alive)
{
	char tok[128];
	static const char *const bad[] = { "", "x", "12", "12 34", "0 5 6", "-4 5 6", "12 0 6", "12 34 56 trailing",
					  "12 34 56x" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(agsbx_owner_token_alive(bad[i]), "token '%s' judged dead", bad[i]);
	ck_assert(agsbx_owner_token_alive(NULL));
	/* our own pid and start time, but written in another pid namespace */
	ck_assert_int_eq(agsbx_owner_token(tok, sizeof tok), 0);
	int pid;
	unsigned long long start, ns;
	ck_assert_int_eq(sscanf(tok, "%d %llu %llu", &pid, &start, &ns), 3);
	snprintf(tok, sizeof tok, "%d %llu %llu", pid, start, ns + 1);
	ck_assert(agsbx_owner_token_alive(tok));
	/* a reused pid (same pid, other start time) is a dead owner */
	snprintf(tok, sizeof tok, "%d %llu %llu", pid, start + 1, ns);
	ck_assert(!agsbx_owner_token_alive(tok));
}
END_TEST

/* A child that exited and was reaped, and one that is a zombie (SIGKILLed,
 * not yet reaped): both own nothing any more. */
START_TEST(test_dead_and_zombie_owners)
{
	int pfd[2];
	ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		char t[64];
		if (agsbx_owner_token(t, sizeof t) < 0 || write(pfd[1], t, strlen(t) + 1) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	char tok[64] = "";
	ck_assert_int_gt(read(pfd[0], tok, sizeof tok - 1), 0);
	close(pfd[0]);
	ck_assert(agsbx_owner_token_alive(tok));
	ck_assert_int_eq(kill(child, SIGKILL), 0);
	/* a zombie until reaped: wait for the state without reaping it */
	siginfo_t si;
	memset(&si, 0, sizeof si);
	ck_assert_int_eq(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT), 0);
	ck_assert(!agsbx_owner_token_alive(tok));
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	ck_assert(!agsbx_owner_token_alive(tok));
}
END_TEST

START_TEST(test_claim_and_owner_file)
{
	char *run = in_dir("agsbx-run-a");
	mkdir_ok(run, 0700);
	/* no owner file: unknown, never "dead" */
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), -ENOENT);
	ck_assert_int_eq(agsbx_rundir_claim(run), 0);
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), 1);
	char *owner = agsbx_path_join(run, AGSBX_RUNDIR_OWNER_FILE);
	struct stat st;
	ck_assert_int_eq(stat(owner, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	/* a dead owner: our pid with another start time */
	char tok[64], line[96];
	ck_assert_int_eq(agsbx_owner_token(tok, sizeof tok), 0);
	int pid;
	unsigned long long start, ns;
	ck_assert_int_eq(sscanf(tok, "%d %llu %llu", &pid, &start, &ns), 3);
	snprintf(line, sizeof line, "%d %llu %llu\n", pid, start + 7, ns);
	spit(owner, line);
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), 0);
	/* claiming a directory that does not exist fails with the errno */
	char *missing = in_dir("no-such-dir");
	ck_assert_int_eq(agsbx_rundir_claim(missing), -ENOENT);
	free(missing);
	free(owner);
	free(run);
}
END_TEST

/* The owner file of someone else's dir is read without trusting it. */
START_TEST(test_untrusted_owner_files_are_unknown)
{
	char *run = in_dir("agsbx-run-b");
	mkdir_ok(run, 0700);
	char *owner = agsbx_path_join(run, AGSBX_RUNDIR_OWNER_FILE);
	char *elsewhere = in_dir("elsewhere");
	char tok[64], line[96];
	ck_assert_int_eq(agsbx_owner_token(tok, sizeof tok), 0);
	int pid;
	unsigned long long start, ns;
	ck_assert_int_eq(sscanf(tok, "%d %llu %llu", &pid, &start, &ns), 3);
	snprintf(line, sizeof line, "%d %llu %llu\n", pid, start + 7, ns); /* a dead owner */

	/* empty */
	spit(owner, "");
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), -ENOENT);
	/* not a token */
	spit(owner, "hello world\n");
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), -ENOENT);
	/* too big to be a token (a dead owner's line padded past 128 bytes) */
	char big[300];
	snprintf(big, sizeof big, "%s%0*d\n", line, 150, 0);
	spit(owner, big);
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), -ENOENT);
	/* a symlink to a dead owner's token elsewhere is not followed */
	ck_assert_int_eq(unlink(owner), 0);
	spit(elsewhere, line);
	ck_assert_int_eq(symlink(elsewhere, owner), 0);
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), -ENOENT);
	/* a FIFO does not block the sweep */
	ck_assert_int_eq(unlink(owner), 0);
	ck_assert_int_eq(mkfifo(owner, 0644), 0);
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), -ENOENT);
	/* a directory in its place */
	ck_assert_int_eq(unlink(owner), 0);
	mkdir_ok(owner, 0700);
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), -ENOENT);
	ck_assert_int_eq(rmdir(owner), 0);
	/* and the plain dead token is judged: the cases above were refused
	 * for what they are, not for their content */
	spit(owner, line);
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), 0);
	free(elsewhere);
	free(owner);
	free(run);
}
END_TEST

/* Nested directories, some read-only, a FIFO, and symlinks pointing out of
 * the tree (to a file and to a directory): the tree goes, what the links
 * point to stays. */
START_TEST(test_rm_tree_nested_never_follows)
{
	char *outside = in_dir("outside");
	mkdir_ok(outside, 0700);
	char *keep = agsbx_path_join(outside, "keep");
	spit(keep, "precious\n");
	char *tree = in_dir("tree");
	mkdir_ok(tree, 0700);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/a", tree);
	mkdir_ok(path, 0700);
	snprintf(path, sizeof path, "%s/a/b", tree);
	mkdir_ok(path, 0700);
	snprintf(path, sizeof path, "%s/a/b/file", tree);
	spit(path, "x");
	snprintf(path, sizeof path, "%s/a/b/fifo", tree);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	snprintf(path, sizeof path, "%s/a/link-dir", tree);
	ck_assert_int_eq(symlink(outside, path), 0);
	snprintf(path, sizeof path, "%s/a/b/link-file", tree);
	ck_assert_int_eq(symlink(keep, path), 0);
	/* read-only directories, as a sandbox may leave them */
	snprintf(path, sizeof path, "%s/a/b", tree);
	ck_assert_int_eq(chmod(path, 0500), 0);
	snprintf(path, sizeof path, "%s/a", tree);
	ck_assert_int_eq(chmod(path, 0500), 0);
	ck_assert_int_eq(chmod(tree, 0500), 0);

	ck_assert_int_eq(agsbx_rm_tree(tree), 0);
	struct stat st;
	ck_assert_int_eq(lstat(tree, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(stat(keep, &st), 0);
	ck_assert_int_eq(stat(outside, &st), 0);
	free(tree);
	free(keep);
	free(outside);
}
END_TEST

START_TEST(test_rm_tree_on_links_files_and_nothing)
{
	char *target = in_dir("target");
	mkdir_ok(target, 0700);
	char *inner = agsbx_path_join(target, "inner");
	spit(inner, "stays\n");
	/* a symlink to a directory: the link goes, the directory stays */
	char *link = in_dir("link");
	ck_assert_int_eq(symlink(target, link), 0);
	ck_assert_int_eq(agsbx_rm_tree(link), 0);
	struct stat st;
	ck_assert_int_eq(lstat(link, &st), -1);
	ck_assert_int_eq(stat(inner, &st), 0);
	/* a plain file is removed */
	char *file = in_dir("file");
	spit(file, "x");
	ck_assert_int_eq(agsbx_rm_tree(file), 0);
	ck_assert_int_eq(lstat(file, &st), -1);
	/* nothing there: the errno */
	ck_assert_int_eq(agsbx_rm_tree(file), -ENOENT);
	free(file);
	free(link);
	free(inner);
	free(target);
}
END_TEST

/* A tree deeper than one walk goes (a sandbox may nest directories past
 * any bound: its residue must not outlast the run), with a bounded number
 * of open directories (base/fsat.c moves deep subtrees up). */
START_TEST(test_rm_tree_depth_bound)
{
	char *tree = in_dir("deep");
	mkdir_ok(tree, 0700);
	int fd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 300; i++) {
		ck_assert_int_eq(mkdirat(fd, "d", 0700), 0);
		int sub = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_ge(sub, 0);
		close(fd);
		fd = sub;
	}
	close(fd);
	ck_assert_int_eq(agsbx_rm_tree(tree), 0);
	struct stat st;
	ck_assert_int_eq(lstat(tree, &st), -1);
	/* a shallow tree beside it too */
	char *flat = in_dir("flat");
	mkdir_ok(flat, 0700);
	ck_assert_int_eq(agsbx_rm_tree(flat), 0);
	free(flat);
	free(tree);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rundir-edges");
	TCase *tc = tcase_create("rundir-edges");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_token_of_self_is_alive);
	tcase_add_test(tc, test_unjudgeable_tokens_are_alive);
	tcase_add_test(tc, test_dead_and_zombie_owners);
	tcase_add_test(tc, test_claim_and_owner_file);
	tcase_add_test(tc, test_untrusted_owner_files_are_unknown);
	tcase_add_test(tc, test_rm_tree_nested_never_follows);
	tcase_add_test(tc, test_rm_tree_on_links_files_and_nothing);
	tcase_add_test(tc, test_rm_tree_depth_bound);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
