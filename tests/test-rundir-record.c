/* The owner record beyond its token (base/rundir.h) and what `cleanup`
 * does with it: a claim records the run nonce and the --run-as uid; a
 * canary noted in the primary record is read back; a record is trusted
 * only where its directory's owner owns it and nobody else can write
 * either; a dead run's canary is removed only where it is named and owned
 * like one, never through a symlink; and a dead run's leftover processes
 * are only those its record confines (base/runner.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/rundir.h"
#include "base/runner.h"
#include "base/util.h"
#include "tests/lib/testlib.h"

static char *dir;

static void setup(void)
{
	dir = agsbx_test_tmpdir("rundir-record");
	ck_assert_ptr_nonnull(dir);
	chmod(dir, 0755);
}

static void teardown(void)
{
	agsbx_rundir_set_primary(NULL);
	agsbx_test_rmtree(dir);
	free(dir);
}

static char *in_dir(const char *name)
{
	char *p = agsbx_path_join(dir, name);
	ck_assert_ptr_nonnull(p);
	return p;
}

static void spit(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

START_TEST(test_claim_records_nonce_run_uid_and_canaries)
{
	char *run = in_dir("agsbx-run-a");
	ck_assert_int_eq(mkdir(run, 0755), 0);
	agsbx_rundir_set_run_uid(4242);
	ck_assert_int_eq(agsbx_rundir_claim(run), 0);
	/* no primary record: noting is a no-op */
	ck_assert_int_eq(agsbx_rundir_note_canary("/home/u/.agsbx-canary-0123456789abcdef"), 0);
	agsbx_rundir_set_primary(run);
	ck_assert_int_eq(agsbx_rundir_note_canary("/home/u/.agsbx-canary-0123456789abcdef"), 0);
	ck_assert_int_eq(agsbx_rundir_note_canary("/home/v/.agsbx-canary-fedcba9876543210"), 0);
	ck_assert_int_eq(agsbx_rundir_note_canary("relative"), -EINVAL);
	ck_assert_int_eq(agsbx_rundir_note_canary("/a\nnonce 00"), -EINVAL);
	struct agsbx_owner_record rec;
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), 0);
	ck_assert_str_eq(rec.nonce, agsbx_run_nonce());
	ck_assert_uint_eq(strlen(rec.nonce), 32);
	ck_assert(rec.has_run_uid);
	ck_assert_uint_eq(rec.run_uid, 4242);
	ck_assert_uint_eq(rec.uid, geteuid());
	ck_assert_uint_eq(rec.ncanaries, 2);
	ck_assert_str_eq(rec.canaries[1], "/home/v/.agsbx-canary-fedcba9876543210");
	/* run_uid widens only a root-owned record */
	ck_assert(agsbx_owner_record_allows(&rec, geteuid()));
	ck_assert(agsbx_owner_record_allows(&rec, 4242) == (geteuid() == 0));
	ck_assert(!agsbx_owner_record_allows(&rec, 4243));
	agsbx_owner_record_clear(&rec);
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), 1);
	free(run);
}
END_TEST

/* Who else could have written the record decides whether it is one. */
START_TEST(test_record_trust)
{
	char *run = in_dir("agsbx-run-b"), *owner = agsbx_path_join(run, AGSBX_RUNDIR_OWNER_FILE);
	ck_assert_int_eq(mkdir(run, 0755), 0);
	char tok[64], line[160];
	ck_assert_int_eq(agsbx_owner_token(tok, sizeof tok), 0);
	snprintf(line, sizeof line, "%s\nnonce %s\n", tok, agsbx_run_nonce());
	struct agsbx_owner_record rec;
	spit(owner, line, 0644);
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), 0);
	agsbx_owner_record_clear(&rec);
	spit(owner, line, 0664);   /* group-writable record */
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -EPERM);
	ck_assert_int_eq(agsbx_rundir_owner_alive(run), -EPERM);
	spit(owner, line, 0644);
	ck_assert_int_eq(chmod(run, 0777), 0);   /* anyone can replace it */
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -EPERM);
	ck_assert_int_eq(chmod(run, 0755), 0);
	/* a field we do not know, a second nonce: not a record to act on */
	snprintf(line, sizeof line, "%s\nsession 12\n", tok);
	spit(owner, line, 0644);
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -ENOENT);
	snprintf(line, sizeof line, "%s\nnonce %s\nnonce %s\n", tok, agsbx_run_nonce(), agsbx_run_nonce());
	spit(owner, line, 0644);
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -ENOENT);
	if (geteuid() == 0) {
		/* owned by another uid than its directory */
		snprintf(line, sizeof line, "%s\n", tok);
		spit(owner, line, 0644);
		ck_assert_int_eq(chown(owner, 65534, 65534), 0);
		ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -EPERM);
		/* both the other uid's: its record, confined to it */
		ck_assert_int_eq(chown(run, 65534, 65534), 0);
		ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), 0);
		ck_assert_uint_eq(rec.uid, 65534);
		ck_assert(!agsbx_owner_record_allows(&rec, 0));
		agsbx_owner_record_clear(&rec);
	}
	free(owner);
	free(run);
}
END_TEST

static char *make_canary(const char *name)
{
	char *c = in_dir(name), *key = agsbx_path_join(c, "id_key");
	ck_assert_int_eq(mkdir(c, 0700), 0);
	spit(key, "secret\n", 0600);
	free(key);
	return c;
}

START_TEST(test_remove_canary)
{
	struct agsbx_owner_record rec = { .uid = geteuid() };
	char *c = make_canary(".agsbx-canary-0123456789abcdef");
	ck_assert_int_eq(agsbx_rundir_remove_canary(c, &rec, true), 1);
	ck_assert_int_eq(access(c, F_OK), 0);
	ck_assert_int_eq(agsbx_rundir_remove_canary(c, &rec, false), 1);
	ck_assert_int_eq(access(c, F_OK), -1);
	ck_assert_int_eq(agsbx_rundir_remove_canary(c, &rec, false), 0);   /* gone: nothing to do */
	/* not named like a canary */
	char *other = make_canary("keys");
	ck_assert_int_eq(agsbx_rundir_remove_canary(other, &rec, false), -EINVAL);
	ck_assert_int_eq(access(other, F_OK), 0);
	/* a symlink in its place is not followed */
	char *link = in_dir(".agsbx-canary-fedcba9876543210");
	ck_assert_int_eq(symlink(other, link), 0);
	ck_assert_int_lt(agsbx_rundir_remove_canary(link, &rec, false), 0);
	char *kept = agsbx_path_join(other, "id_key");
	ck_assert_int_eq(access(kept, F_OK), 0);
	/* owned by a uid the record does not allow */
	struct agsbx_owner_record stranger = { .uid = geteuid() + 1 };
	char *c2 = make_canary(".agsbx-canary-00000000000000aa");
	ck_assert_int_eq(agsbx_rundir_remove_canary(c2, &stranger, false), -EPERM);
	ck_assert_int_eq(access(c2, F_OK), 0);
	free(c2);
	free(kept);
	free(link);
	free(other);
	free(c);
}
END_TEST

/* A child "sh -c 'read x' NAME" blocked on a pipe: NAME is its argv[3]. */
static pid_t named_child(const char *name, int *wfd)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(p[0], 0);
		close(p[1]);
		execl("/bin/sh", "sh", "-c", "read x", name, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*wfd = p[1];
	for (int i = 0; i < 500; i++) {
		char *cmd = agsbx_proc_cmdline(pid, NULL);
		bool named = cmd && strstr(cmd, name);
		free(cmd);
		if (named)
			break;
		usleep(10000);
	}
	return pid;
}

static int count(const struct agsbx_leftover_filter *f, pid_t want)
{
	struct agsbx_leftover *l = NULL;
	int n = agsbx_find_run_leftovers(f, &l);
	ck_assert_int_ge(n, 0);
	int hits = 0;
	for (int i = 0; i < n; i++)
		hits += l[i].pid == want;
	free(l);
	return hits;
}

START_TEST(test_leftover_filter)
{
	char *run = in_dir("agsbx-run-c"), *name = NULL, *lookalike = NULL;
	const char *nonce = agsbx_run_nonce();
	ck_assert_int_ge(asprintf(&name, "%s/output/ready-%s", run, nonce), 0);
	ck_assert_int_ge(asprintf(&lookalike, "%s-x", run), 0);
	int wfd;
	pid_t pid = named_child(name, &wfd);
	uid_t me = geteuid(), other = me + 1;
	struct agsbx_leftover_filter f = { .dir = run, .nonce = nonce, .uids = &me, .nuids = 1 };
	ck_assert_int_eq(count(&f, pid), 1);
	/* without the run's nonce it runs no program from the dir: not the run's */
	f.nonce = NULL;
	ck_assert_int_eq(count(&f, pid), 0);
	f.nonce = nonce;
	/* a path merely starting with the dir's is another dir */
	f.dir = lookalike;
	ck_assert_int_eq(count(&f, pid), 0);
	f.dir = run;
	/* another user's, or started before the dead owner: not the run's */
	f.uids = &other;
	ck_assert_int_eq(count(&f, pid), 0);
	f.uids = &me;
	f.started_after = ~0ULL;
	ck_assert_int_eq(count(&f, pid), 0);
	f.started_after = 0;
	struct agsbx_leftover *l = NULL;
	int n = agsbx_find_run_leftovers(&f, &l);
	ck_assert_int_ge(n, 1);
	for (int i = 0; i < n; i++)
		if (l[i].pid == pid)
			ck_assert_int_eq(agsbx_kill_leftover(&l[i]), 0);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* gone: killing it again is no error, and nobody else is hit */
	ck_assert_int_eq(agsbx_kill_leftover(&l[0]), 0);
	free(l);
	close(wfd);
	free(lookalike);
	free(name);
	free(run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rundir-record");
	TCase *tc = tcase_create("rundir-record");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_claim_records_nonce_run_uid_and_canaries);
	tcase_add_test(tc, test_record_trust);
	tcase_add_test(tc, test_remove_canary);
	tcase_add_test(tc, test_leftover_filter);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
