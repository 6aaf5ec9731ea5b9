/* base/proc.c and base/pidfd.c: the one /proc walker, stat parser,
 * status-field reader and checked kill, on real processes (forked
 * children that wait to be killed). */
#include "base/proc.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

/* A child that names itself like a hostile comm and waits. */
static pid_t sleeper(void)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_NAME, "a) b (c 1 2", 0, 0, 0);
		for (;;)
			pause();
	}
	return pid;
}

static int reaped_signal(pid_t pid)
{
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

/* The value after the colon and its blanks, the first line too; a prefix
 * of a key and a missing key are no field, an empty value is "". */
START_TEST(test_status_field)
{
	static const char text[] = "Name:\tbash\nUid:\t1000\t1001\t1000\t1000\nEmpty:\t\nCapEff:\t000001ffffffffff";
	char *v;
	ck_assert_str_eq(v = agsbx_status_field(text, "Name"), "bash");
	free(v);
	ck_assert_str_eq(v = agsbx_status_field(text, "Uid"), "1000\t1001\t1000\t1000");
	free(v);
	ck_assert_str_eq(v = agsbx_status_field(text, "CapEff"), "000001ffffffffff");
	free(v);
	ck_assert_ptr_null(agsbx_status_field(text, "Ui"));
	ck_assert_str_eq(v = agsbx_status_field(text, "Empty"), "");
	free(v);
	ck_assert_ptr_null(agsbx_status_field(text, "Gid"));
	ck_assert_ptr_null(agsbx_status_field("", "Name"));
}
END_TEST

START_TEST(test_proc_status_self)
{
	char *text = NULL;
	ck_assert_int_eq(agsbx_proc_status(0, &text), 0);
	char *pid = agsbx_status_field(text, "Pid");
	ck_assert_ptr_nonnull(pid);
	ck_assert_int_eq(atoi(pid), getpid());
	free(pid);
	free(text);
	ck_assert_int_eq(agsbx_proc_status(-1, &text), -ENOENT);
}
END_TEST

/* comm with spaces and parentheses does not shift the fields. */
START_TEST(test_proc_stat_hostile_comm)
{
	pid_t pid = sleeper();
	struct agsbx_proc p = { 0 };
	for (int i = 0; i < 200; i++) {   /* until the child has renamed itself */
		char *st = NULL;
		agsbx_proc_status(pid, &st);
		bool named = st && strstr(st, "Name:\ta) b (c 1 2");
		free(st);
		if (named)
			break;
		usleep(5000);
	}
	ck_assert_int_eq(agsbx_proc_stat(pid, &p), 0);
	ck_assert_int_eq(p.pid, pid);
	ck_assert_int_eq(p.ppid, getpid());
	ck_assert_int_eq(p.sid, getsid(0));
	ck_assert(p.state == 'S' || p.state == 'R');
	struct agsbx_proc self;
	ck_assert_int_eq(agsbx_proc_stat(getpid(), &self), 0);
	ck_assert_uint_ge(p.start, self.start);
	kill(pid, SIGKILL);
	reaped_signal(pid);
	ck_assert_int_lt(agsbx_proc_stat(pid, &p), 0);
}
END_TEST

struct seen {
	pid_t want;
	int hits, calls;
};

static int look(pid_t pid, void *ud)
{
	struct seen *s = ud;
	s->calls++;
	s->hits += pid == s->want;
	return 0;
}

static int stop_at_first(pid_t pid, void *ud)
{
	(void)pid;
	(void)ud;
	return -42;
}

START_TEST(test_proc_each)
{
	pid_t pid = sleeper();
	struct seen self = { .want = getpid() }, child = { .want = pid };
	ck_assert_int_eq(agsbx_proc_each(look, &self), 0);
	ck_assert_int_eq(agsbx_proc_each(look, &child), 0);
	ck_assert_int_eq(self.hits, 1);
	ck_assert_int_eq(child.hits, 1);
	ck_assert_int_gt(self.calls, 1);
	ck_assert_int_eq(agsbx_proc_each(stop_at_first, NULL), -42);
	kill(pid, SIGKILL);
	reaped_signal(pid);
}
END_TEST

static bool never(pid_t pid, void *ud)
{
	(void)pid;
	(void)ud;
	return false;
}

static bool is_want(pid_t pid, void *ud)
{
	return pid == *(pid_t *)ud;
}

/* Another start time (a reused pid) or a failed caller check is never
 * signalled; the process itself is, once. */
START_TEST(test_proc_signal_checks_identity)
{
	pid_t pid = sleeper();
	struct agsbx_proc p;
	ck_assert_int_eq(agsbx_proc_stat(pid, &p), 0);
	struct agsbx_proc other = p;
	other.start = p.start + 1;
	ck_assert(!agsbx_proc_signal(&other, SIGKILL, NULL, NULL));
	ck_assert(!agsbx_proc_signal(&p, SIGKILL, never, NULL));
	struct agsbx_proc now;
	ck_assert_int_eq(agsbx_proc_stat(pid, &now), 0);
	ck_assert(now.state != 'Z');   /* still alive */
	ck_assert(agsbx_proc_signal(&p, SIGKILL, is_want, &pid));
	ck_assert_int_eq(reaped_signal(pid), SIGKILL);
	ck_assert(!agsbx_proc_signal(&p, SIGKILL, NULL, NULL));   /* gone */
}
END_TEST

/* A zombie is dead: nothing to signal. */
START_TEST(test_proc_signal_zombie)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(7);
	struct agsbx_proc p;
	siginfo_t si;
	ck_assert_int_eq(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	ck_assert_int_eq(agsbx_proc_stat(pid, &p), 0);
	ck_assert_int_eq(p.state, 'Z');
	ck_assert(!agsbx_proc_signal(&p, SIGKILL, NULL, NULL));
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 7);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("base-proc");
	TCase *tc = tcase_create("proc");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_status_field);
	tcase_add_test(tc, test_proc_status_self);
	tcase_add_test(tc, test_proc_stat_hostile_comm);
	tcase_add_test(tc, test_proc_each);
	tcase_add_test(tc, test_proc_signal_checks_identity);
	tcase_add_test(tc, test_proc_signal_zombie);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
