/* What cleanup calls a dead run's leftover (agsbx_find_run_leftovers) and
 * how it ends one (agsbx_kill_leftover), on real processes of this test:
 * one whose argv names the run dir and carries the nonce (a lifecycle
 * marker), one executing a program copied below the run dir (a staged
 * helper), and three that must be spared: argv names the dir but carries
 * neither, argv names a look-alike dir ("DIR-other", a path boundary) with
 * the nonce, and the first two under a filter of another uid or of a
 * later start. A leftover whose identity (start time) no longer matches is
 * not signalled. */
#include "base/cleanup.h"
#include "base/runner.h"
#include "base/util.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NONCE "cov2nonce0123456789abcdef"

static pid_t spawn(const char *const argv[])
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* argv[] visible in /proc once the exec happened */
static void wait_exec(pid_t pid, const char *word)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	for (int i = 0; i < 500; i++) {
		_cleanup_free_ char *buf = NULL;
		size_t len = 0;
		if (agsbx_read_file(path, 1 << 16, &buf, &len) == 0 && memmem(buf, len, word, strlen(word)))
			return;
		usleep(10000);
	}
	ck_abort_msg("pid %d never showed %s", (int)pid, word);
}

static bool found_pid(const struct agsbx_leftover *v, int n, pid_t pid)
{
	for (int i = 0; i < n; i++)
		if (v[i].pid == pid)
			return true;
	return false;
}

static int find(const char *dir, const char *nonce, uid_t uid, unsigned long long after, struct agsbx_leftover **v)
{
	struct agsbx_leftover_filter f = { .dir = dir, .nonce = nonce, .uids = &uid, .nuids = 1, .started_after = after };
	return agsbx_find_run_leftovers(&f, v);
}

START_TEST(leftovers_and_kill)
{
	_cleanup_free_ char *dir = agsbx_test_tmpdir("cov2-run");
	char run[4096], other[4096], bin[4096], helper[4096], cmd[8192];
	snprintf(run, sizeof run, "%s/run", dir);
	snprintf(other, sizeof other, "%s-other/run", dir);
	snprintf(bin, sizeof bin, "%s/bin", dir);
	snprintf(helper, sizeof helper, "%s/bin/agsbx-cov2-helper", dir);
	ck_assert_int_eq(mkdir(bin, 0755), 0);
	snprintf(cmd, sizeof cmd, "cp /bin/sleep '%s'", helper);
	ck_assert_int_eq(system(cmd), 0);

	/* one process each (python3 sleeping, its argv after the script) */
#define NAP "/usr/bin/python3", "-c", "import time; time.sleep(600)"
	const char *marker[] = { NAP, run, NONCE, NULL };
	const char *staged[] = { helper, "600", NULL };
	const char *plain[] = { NAP, run, NULL };
	const char *lookalike[] = { NAP, other, NONCE, NULL };
	pid_t a = spawn(marker), b = spawn(staged), c = spawn(plain), d = spawn(lookalike);
	wait_exec(a, NONCE);
	wait_exec(b, "600");
	wait_exec(c, run);
	wait_exec(d, other);

	struct agsbx_leftover *v = NULL;
	int n = find(dir, NONCE, getuid(), 0, &v);
	ck_assert_int_eq(n, 2);
	ck_assert_msg(found_pid(v, n, a) && found_pid(v, n, b), "the marker and the staged helper");
	ck_assert(!found_pid(v, n, c) && !found_pid(v, n, d));
	struct agsbx_leftover la = v[0].pid == a ? v[0] : v[1];
	free(v);

	/* no nonce recorded: the staged helper only */
	n = find(dir, NULL, getuid(), 0, &v);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(v[0].pid, b);
	free(v);
	n = find(dir, "", getuid(), 0, &v);
	ck_assert_int_eq(n, 1);
	free(v);
	/* another uid's run, or a run that started after them: nothing */
	n = find(dir, NONCE, getuid() + 4242, 0, &v);
	ck_assert_int_eq(n, 0);
	free(v);
	n = find(dir, NONCE, getuid(), ~0ULL, &v);
	ck_assert_int_eq(n, 0);
	free(v);
	/* bad filters */
	ck_assert_int_eq(find("relative/dir", NONCE, getuid(), 0, &v), -EINVAL);
	struct agsbx_leftover_filter none = { .dir = dir, .nonce = NONCE, .nuids = 0 };
	ck_assert_int_eq(agsbx_find_run_leftovers(&none, &v), -EINVAL);

	/* a changed identity is not signalled; the real one is */
	struct agsbx_leftover wrong = { .pid = a, .start = la.start + 1 };
	ck_assert_int_eq(agsbx_kill_leftover(&wrong), 0);
	ck_assert_int_eq(kill(a, 0), 0);
	int st;
	ck_assert_int_eq(waitpid(a, &st, WNOHANG), 0);
	ck_assert_int_eq(agsbx_kill_leftover(&la), 0);
	ck_assert_int_eq(waitpid(a, &st, 0), a);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* gone: still 0 */
	ck_assert_int_eq(agsbx_kill_leftover(&la), 0);

	pid_t rest[] = { b, c, d };
	for (size_t i = 0; i < 3; i++) {
		kill(rest[i], SIGKILL);
		waitpid(rest[i], NULL, 0);
	}
	agsbx_test_rmtree(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cov2-leftovers");
	TCase *t = tcase_create("leftovers");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, leftovers_and_kill);
	suite_add_tcase(s, t);
	return agsbx_test_run_suite(s);
}
