/* The bounded runner's error paths through its public API, against real
 * processes and real kernel limits: exec failures the PATH search must
 * tell apart (ENOEXEC, EACCES remembered past a later ENOENT, ENOTDIR and
 * ELOOP skipped), a cwd that is a file, a descriptor limit lowered step by
 * step in a forked child (every step either runs exactly as without the
 * limit or fails with -errno and leaks no descriptor), a process limit of
 * zero for an unprivileged child (clone refused), the long-lived session
 * API's refusals and its normal life, and an allocation-failure sweep of
 * agsbx_run (the Nth allocation fails, once: a clean -ENOMEM or the same
 * result, never anything else). */
#include "base/cleanup.h"
#include "base/runner.h"
#include "tests/lib/oom-inject.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>


static char *tmp;

static void setup(void)
{
	tmp = agsbx_test_tmpdir("agsbx-cov3-runner");
	ck_assert_ptr_nonnull(tmp);
	chmod(tmp, 0755);
}

static void teardown(void)
{
	agsbx_test_rmtree(tmp);
	free(tmp);
}

static char *write_file(const char *name, const char *content, mode_t mode)
{
	char *path = NULL;
	ck_assert_int_ge(asprintf(&path, "%s/%s", tmp, name), 0);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(content, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
	return path;
}

static int run_argv(const char *const *argv, const char *const *envp, const char *cwd,
		    struct agsbx_run_result *r)
{
	struct agsbx_run_opts o = { .argv = argv, .envp = envp, .cwd = cwd, .cancel_fd = -1 };
	return agsbx_run(&o, r);
}

/* RLIMIT_NOFILE bounds descriptor numbers: the highest one open. */
static int highest_fd(void)
{
	int hi = -1;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) != dirfd(d) && atoi(de->d_name) > hi)
			hi = atoi(de->d_name);
	closedir(d);
	return hi;
}

static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	struct dirent *de;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* ---- exec failures and the PATH search ---- */

/* Says why, once, when the injector cannot work in this process. */
static bool oom_unavailable(void)
{
	const char *why = agsbx_oom_unavailable();
	if (why)
		fprintf(stderr, "SKIP: allocation sweep: %s\n", why);
	return why != NULL;
}

START_TEST(exec_not_a_format)
{
	/* Executable, no "#!", not ELF: the kernel answers ENOEXEC, and the
	 * runner does not try it with a shell (argv only, never a shell). */
	_cleanup_free_ char *junk = write_file("junk", "this is no program\n", 0755);
	const char *argv[] = { junk, NULL };
	struct agsbx_run_result r;
	ck_assert_int_eq(run_argv(argv, NULL, NULL, &r), -ENOEXEC);
	ck_assert_int_eq(r.spawn_errno, ENOEXEC);
	ck_assert(!r.exited);
	agsbx_run_result_clear(&r);

	/* ENOEXEC ends the search: a later PATH entry holding a real
	 * program of that name is not tried (execvp's rule). */
	const char *env[] = { NULL, NULL };
	_cleanup_free_ char *pathvar = NULL;
	ck_assert_int_ge(asprintf(&pathvar, "PATH=%s:/usr/bin:/bin", tmp), 0);
	env[0] = pathvar;
	_cleanup_free_ char *true_junk = write_file("true", "still no program\n", 0755);
	const char *bare[] = { "true", NULL };
	ck_assert_int_eq(run_argv(bare, env, NULL, &r), -ENOEXEC);
	agsbx_run_result_clear(&r);
}
END_TEST

START_TEST(exec_path_search)
{
	struct agsbx_run_result r;
	/* An empty program name and a PATH of empty entries only. */
	const char *empty[] = { "", NULL };
	ck_assert_int_eq(run_argv(empty, NULL, NULL, &r), -ENOENT);
	ck_assert_int_eq(r.spawn_errno, ENOENT);
	agsbx_run_result_clear(&r);
	const char *colons[] = { "PATH=::", NULL };
	const char *sh[] = { "sh", "-c", "echo ran", NULL };
	ck_assert_int_eq(run_argv(sh, colons, NULL, &r), -ENOENT);
	agsbx_run_result_clear(&r);

	/* A non-executable "sh" first: EACCES is remembered, the search goes
	 * on and the real one runs. */
	_cleanup_free_ char *fake = write_file("sh", "#!/bin/sh\necho fake\n", 0644);
	_cleanup_free_ char *p1 = NULL, *p2 = NULL, *p3 = NULL;
	ck_assert_int_ge(asprintf(&p1, "PATH=%s:/usr/bin:/bin", tmp), 0);
	const char *e1[] = { p1, NULL };
	ck_assert_int_eq(run_argv(sh, e1, NULL, &r), 0);
	ck_assert_str_eq(r.out, "ran\n");
	agsbx_run_result_clear(&r);

	/* Only the non-executable one and a missing directory: the answer
	 * is EACCES (found but not runnable), not the last ENOENT. */
	ck_assert_int_ge(asprintf(&p2, "PATH=%s:/nonexistent-agsbx-cov3", tmp), 0);
	const char *e2[] = { p2, NULL };
	ck_assert_int_eq(run_argv(sh, e2, NULL, &r), -EACCES);
	ck_assert_int_eq(r.spawn_errno, EACCES);
	agsbx_run_result_clear(&r);

	/* A PATH entry that is a file (ENOTDIR) and a symlink loop (ELOOP)
	 * are skipped like a missing one. */
	_cleanup_free_ char *loopdir = NULL, *loop = NULL;
	ck_assert_int_ge(asprintf(&loopdir, "%s/loopdir", tmp), 0);
	ck_assert_int_eq(mkdir(loopdir, 0755), 0);
	ck_assert_int_ge(asprintf(&loop, "%s/sh", loopdir), 0);
	ck_assert_int_eq(symlink(loop, loop), 0);
	ck_assert_int_ge(asprintf(&p3, "PATH=%s:%s:/usr/bin:/bin", fake, loopdir), 0);
	const char *e3[] = { p3, NULL };
	ck_assert_int_eq(run_argv(sh, e3, NULL, &r), 0);
	ck_assert(r.exited);
	ck_assert_str_eq(r.out, "ran\n");
	agsbx_run_result_clear(&r);
}
END_TEST

START_TEST(cwd_is_a_file)
{
	_cleanup_free_ char *file = write_file("plain", "x\n", 0644);
	const char *argv[] = { "/bin/true", NULL };
	struct agsbx_run_result r;
	ck_assert_int_eq(run_argv(argv, NULL, file, &r), -ENOTDIR);
	ck_assert_int_eq(r.spawn_errno, ENOTDIR);
	agsbx_run_result_clear(&r);
}
END_TEST

/* ---- kernel limits in a forked child ---- */

/* In a child with RLIMIT_NOFILE lowered to just above what is open: 0 when
 * the run gave exactly "ok\n", 1 when it failed with -errno and leaked no
 * descriptor, 2 for anything else (a wrong result, a leak). */
static int run_under_fd_limit(unsigned extra, bool session);

/* The limit back, so counting (opendir) has a descriptor of its own. */
static bool leaked(const struct rlimit *orig, int before)
{
	setrlimit(RLIMIT_NOFILE, orig);
	return open_fds() != before;
}

static int run_under_fd_limit(unsigned extra, bool session)
{
	int out;
	/* Inherited descriptors leave holes below the highest: none here
	 * (this child reports by its exit status only). */
	for (int fd = 3; fd < 4096; fd++)
		close(fd);
	int before = open_fds(), hi = highest_fd();
	struct rlimit orig, rl;
	if (before < 0 || hi < 0 || getrlimit(RLIMIT_NOFILE, &orig) < 0)
		return 2;
	rl = (struct rlimit){ (rlim_t)hi + 1 + extra, orig.rlim_max };
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 2;
	out = 2;
	const char *argv[] = { "/bin/echo", "ok", NULL };
	struct agsbx_run_opts o = { .argv = argv, .cancel_fd = -1 };
	if (session) {
		struct agsbx_session *s = NULL;
		int fds[3] = { -1, -1, -1 };
		int r = agsbx_session_start(&o, &s, fds);
		if (r < 0)
			return (s == NULL && r == -EMFILE && !leaked(&orig, before)) ? 1 : 2;
		char buf[8] = "";
		close(fds[0]);
		struct pollfd p = { fds[1], POLLIN, 0 };
		poll(&p, 1, 30000);
		ssize_t n = read(fds[1], buf, sizeof buf - 1);
		bool k;
		int st;
		agsbx_session_end(s, &k, &st);
		agsbx_session_free(s);
		close(fds[1]);
		close(fds[2]);
		return n == 3 && memcmp(buf, "ok\n", 3) == 0 && !leaked(&orig, before) ? 0 : 2;
	}
	struct agsbx_run_result res;
	int r = agsbx_run(&o, &res);
	if (r < 0)
		out = leaked(&orig, before) ? 2 : 1;
	else
		out = res.exited && res.exit_code == 0 && strcmp(res.out, "ok\n") == 0 ? 0 : 2;
	if (r < 0 && r != -EMFILE)
		out = 2;
	agsbx_run_result_clear(&res);
	return out;
}

/* exit, not _exit: a coverage build counts what a forked child ran only
 * when its exit handlers write the counters out (stdio was flushed
 * before the fork, so nothing is written twice). */
static _Noreturn void child_exit(int code)
{
	exit(code);
}

static int in_child(int (*fn)(unsigned, bool), unsigned arg, bool flag)
{
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		child_exit(fn(arg, flag));
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st), "child killed by signal %d", WTERMSIG(st));
	return WEXITSTATUS(st);
}

static void fd_sweep(bool session)
{
	int seen[3] = { 0 };
	for (unsigned extra = 0; extra < 16; extra++) {
		int o = in_child(run_under_fd_limit, extra, session);
		ck_assert_msg(o == 0 || o == 1, "%s with %u spare descriptors: outcome %d",
			      session ? "session" : "run", extra, o);
		seen[o]++;
	}
	/* The sweep saw both a refusal and a success, or it tested nothing. */
	ck_assert_int_gt(seen[0], 0);
	ck_assert_int_gt(seen[1], 0);
}

START_TEST(fd_limit_run)
{
	fd_sweep(false);
}
END_TEST

START_TEST(fd_limit_session)
{
	fd_sweep(true);
}
END_TEST

/* As the test user with no process to spare: clone is refused (EAGAIN)
 * and the run reports it, nothing ran. */
static int run_without_processes(unsigned uid_gid, bool unused)
{
	(void)unused;
	uid_t uid;
	gid_t gid;
	if (!agsbx_test_user(&uid, &gid, NULL))
		return 3;
	(void)uid_gid;
	/* Only the soft limit goes to 0, so the child can raise it again before
	 * it exits: LeakSanitizer's exit-time check clones a tracer thread. */
	struct rlimit old, rl;
	if (getrlimit(RLIMIT_NPROC, &old) < 0)
		return 4;
	rl = (struct rlimit){ 0, old.rlim_max };
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0 ||
	    setrlimit(RLIMIT_NPROC, &rl) < 0)
		return 4;
	const char *argv[] = { "/bin/true", NULL };
	struct agsbx_run_opts o = { .argv = argv, .cancel_fd = -1 };
	struct agsbx_run_result res;
	int r = agsbx_run(&o, &res);
	bool clean = r == -EAGAIN && !res.exited && res.spawn_errno == 0;
	agsbx_run_result_clear(&res);
	struct agsbx_session *s = (struct agsbx_session *)1;
	int fds[3];
	r = agsbx_session_start(&o, &s, fds);
	bool refused = r == -EAGAIN && s == NULL;
	if (setrlimit(RLIMIT_NPROC, &old) < 0)
		return 6;
	return clean && refused ? 0 : 5;
}

START_TEST(nproc_zero)
{
	uid_t uid;
	gid_t gid;
	if (geteuid() != 0 || !agsbx_test_user(&uid, &gid, NULL)) {
		/* One case of several: skipped alone, and CI (root, with the
		 * test user) must not skip it. */
		ck_assert_msg(!agsbx_test_require_mechanisms(), "nproc_zero needs root and the test user");
		fprintf(stderr, "SKIP: nproc_zero: needs root and the test user\n");
		return;
	}
	ck_assert_int_eq(in_child(run_without_processes, 0, false), 0);
}
END_TEST

/* ---- sessions ---- */

START_TEST(session_refusals_and_life)
{
	struct agsbx_session *s = (struct agsbx_session *)1;
	int fds[3] = { -1, -1, -1 };
	ck_assert_int_eq(agsbx_session_start(NULL, &s, fds), -EINVAL);
	ck_assert_ptr_null(s);
	struct agsbx_run_opts o = { .argv = NULL, .cancel_fd = -1 };
	ck_assert_int_eq(agsbx_session_start(&o, &s, fds), -EINVAL);
	const char *none[] = { NULL };
	o.argv = none;
	ck_assert_int_eq(agsbx_session_start(&o, &s, fds), -EINVAL);
	const char *missing[] = { "/nonexistent-agsbx-cov3/adapter", NULL };
	o.argv = missing;
	int before = open_fds();
	ck_assert_int_eq(agsbx_session_start(&o, &s, fds), -ENOENT);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(open_fds(), before);
	agsbx_session_free(NULL);

	/* A live one: what we write comes back, it runs until ended, and the
	 * end kills it (it was still running) exactly once. */
	const char *cat[] = { "/bin/cat", NULL };
	o.argv = cat;
	ck_assert_int_eq(agsbx_session_start(&o, &s, fds), 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_gt(agsbx_session_pid(s), 0);
	ck_assert_int_eq(write(fds[0], "ping\n", 5), 5);
	struct pollfd p = { fds[1], POLLIN, 0 };
	ck_assert_int_eq(poll(&p, 1, 30000), 1);
	char buf[16] = "";
	ck_assert_int_eq(read(fds[1], buf, sizeof buf - 1), 5);
	ck_assert_str_eq(buf, "ping\n");
	agsbx_session_record(s);
	ck_assert(!agsbx_session_exited(s));
	bool killed = false;
	int st = 0;
	ck_assert_uint_ge(agsbx_session_end(s, &killed, &st), 1);
	ck_assert(killed);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ck_assert(agsbx_session_exited(s));
	ck_assert_uint_eq(agsbx_session_end(s, &killed, &st), 0);
	ck_assert(!killed);
	agsbx_session_record(s); /* reaped: nothing to walk */
	agsbx_session_free(s);
	for (int i = 0; i < 3; i++)
		close(fds[i]);

	/* One that ends by itself: exited, and the end kills nothing of it. */
	const char *t[] = { "/bin/true", NULL };
	o.argv = t;
	ck_assert_int_eq(agsbx_session_start(&o, &s, fds), 0);
	close(fds[0]);
	while (!agsbx_session_exited(s))
		usleep(10000);
	agsbx_session_end(s, &killed, &st);
	ck_assert(!killed);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	agsbx_session_free(s);
	close(fds[1]);
	close(fds[2]);
}
END_TEST

/* ---- allocation failures ---- */

#ifndef OOM_UNDER_ASAN
/* A buffer that could not grow keeps what it had and discards the rest:
 * honest only when both streams say truncated where short, count every
 * byte the child wrote, and kept a prefix of what it wrote. */
static bool stream_kept_prefix(const char *kept, size_t len, uint64_t total, bool truncated, const char *want,
			       size_t want_len)
{
	return total == want_len && len <= want_len && memcmp(kept, want, len) == 0 &&
	       (len == want_len) == !truncated;
}

static bool kept_prefix(const struct agsbx_run_result *res, bool big)
{
	if (!res->out_truncated && !res->err_truncated)
		return false;
	static char xs[200000];
	memset(xs, 'x', sizeof xs);
	return stream_kept_prefix(res->out, res->out_len, res->out_total, res->out_truncated, big ? xs : "ok\n",
				  big ? sizeof xs : 3) &&
	       stream_kept_prefix(res->err, res->err_len, res->err_total, res->err_truncated, big ? "e\n" : "", big ? 2 : 0);
}

/* 0: same result as without injection; 1: clean -ENOMEM; 2: wrong;
 * 3: an honest truncation (above); 4: nothing was injected (past the
 * last allocation). */
static int run_with_nth_failing(unsigned nth, bool big)
{
	/* Output past the first buffer, so the stream must grow. */
	const char *argv[] = { "/bin/sh", "-c", big ? "head -c 200000 /dev/zero | tr '\\0' x; echo e >&2" : "echo ok",
			       NULL };
	struct agsbx_run_opts o = { .argv = argv, .cancel_fd = -1, .max_output_bytes = 300000 };
	struct agsbx_run_result res;
	agsbx_oom_arm((long)nth);
	int r = agsbx_run(&o, &res);
	agsbx_oom_disarm();
	int out;
	if (r == -ENOMEM)
		out = 1;
	else if (r < 0)
		out = 2;
	else if (!res.exited || res.exit_code != 0)
		out = 2;
	else if (kept_prefix(&res, big))
		out = 3;
	else if (big)
		out = res.out_len == 200000 && res.out_total == 200000 && !res.out_truncated &&
				      strcmp(res.err, "e\n") == 0
			      ? 0
			      : 2;
	else
		out = strcmp(res.out, "ok\n") == 0 ? 0 : 2;
	if (r >= 0)
		agsbx_run_result_clear(&res);
	return out == 0 && !agsbx_oom_injected() ? 4 : out;
}

/* A run whose child detaches a lingering member and exits: whichever
 * allocation fails, the run ends with that member gone (the cleanup
 * fails closed) or refuses before anything ran. 0 same, 1 clean -ENOMEM,
 * 2 a member survived or a wrong result, 4 nothing injected. */
static char detach_marker[64];

static void report_wrong(unsigned nth, int r, const struct agsbx_run_result *res)
{
	fprintf(stderr, "allocation %u failing: run returned %d, status %d, out \"%s\" (truncated %d)\n", nth, r,
		r >= 0 ? res->status : -1, r >= 0 && res->out ? res->out : "", r >= 0 && res->out_truncated);
}

static int detached_with_nth_failing(unsigned nth, bool unused)
{
	(void)unused;
	char inner[160];
	snprintf(inner, sizeof inner, "setsid /bin/sh -c 'sleep 30; : %s' </dev/null >/dev/null 2>&1 & echo ok", detach_marker);
	const char *argv[] = { "/bin/sh", "-c", inner, NULL };
	struct agsbx_run_opts o = { .argv = argv, .cancel_fd = -1 };
	struct agsbx_run_result res;
	agsbx_oom_arm((long)nth);
	int r = agsbx_run(&o, &res);
	agsbx_oom_disarm();
	int out = r == -ENOMEM ? 1 : r < 0 ? 2 : res.exited && res.exit_code == 0 && strcmp(res.out, "ok\n") == 0 ? 0 : 2;
	if (out == 2 && r >= 0 && res.exited && res.exit_code == 0 && kept_prefix(&res, false))
		out = 3;   /* the output buffer could not grow: honest truncation */
	if (out == 2)
		report_wrong(nth, r, &res);
	if (r >= 0)
		agsbx_run_result_clear(&res);
	pid_t *pids = NULL;
	int left = agsbx_find_processes_with_marker(detach_marker, &pids);
	for (int i = 0; i < 50 && left > 0; i++) {
		free(pids);
		usleep(20000);
		left = agsbx_find_processes_with_marker(detach_marker, &pids);
	}
	if (left != 0) {
		fprintf(stderr, "allocation %u failing: %d detached member(s) survived the run\n", nth, left);
		for (int i = 0; i < left; i++)
			kill(pids[i], SIGKILL);
		out = 2;
	}
	free(pids);
	return out == 0 && !agsbx_oom_injected() ? 4 : out;
}

/* The /proc scans under the same injector: the exact answer or -ENOMEM. */
static char scan_dir[256];

static int scans_with_nth_failing(unsigned nth, bool tree)
{
	pid_t *pids = NULL;
	struct agsbx_leftover *lo = NULL;
	uid_t uid = getuid();
	struct agsbx_leftover_filter f = { .dir = scan_dir, .nonce = detach_marker, .uids = &uid, .nuids = 1 };
	agsbx_oom_arm((long)nth);
	int a = tree ? agsbx_find_tree_processes_with_marker(detach_marker, &pids)
		     : agsbx_find_processes_with_marker(detach_marker, &pids);
	int b = agsbx_find_run_leftovers(&f, &lo);
	agsbx_oom_disarm();
	free(pids);
	free(lo);
	/* The parent holds exactly one process carrying both (not below
	 * this child, so the tree scan sees none unless it is root's). */
	int want_a = tree ? (getuid() == 0 ? 1 : 0) : 1;
	if ((a != want_a && a != -ENOMEM) || (b != 1 && b != -ENOMEM))
		return 2;
	if (a == -ENOMEM || b == -ENOMEM)
		return 1;
	return agsbx_oom_injected() ? 0 : 4;
}
#endif

#ifndef OOM_UNDER_ASAN
/* Fails fn's nth allocation for nth = 1, 2, ... (each in a child) until a
 * run gets past its last one (outcome 4); an outcome in the bad mask fails
 * the test. The sweep must end and see at least one clean failure (1). */
static void oom_sweep(int (*fn)(unsigned, bool), bool flag, unsigned limit, unsigned bad, const char *what)
{
	int seen[5] = { 0 };
	for (unsigned nth = 1; nth < limit; nth++) {
		int o = in_child(fn, nth, flag);
		ck_assert_msg(o >= 0 && o < 5 && !(bad & 1u << o), "allocation %u failing (%s %d): outcome %d", nth,
			      what, flag, o);
		seen[o]++;
		if (o == 4)
			break;
	}
	ck_assert_msg(seen[4] == 1, "the sweep never got past the last allocation");
	ck_assert_int_gt(seen[1], 0);
}
#endif

START_TEST(oom_sweep_detached)
{
	if (oom_unavailable())
		return;
#ifndef OOM_UNDER_ASAN
	snprintf(detach_marker, sizeof detach_marker, "agsbx-cov3-detach-%d-%ld", (int)getpid(), (long)time(NULL));
	oom_sweep(detached_with_nth_failing, false, 400, 1u << 2, "detached");
#endif
}
END_TEST

START_TEST(oom_sweep_scans)
{
	if (oom_unavailable())
		return;
#ifndef OOM_UNDER_ASAN
	snprintf(detach_marker, sizeof detach_marker, "agsbx-cov3-scan-%d-%ld", (int)getpid(), (long)time(NULL));
	snprintf(scan_dir, sizeof scan_dir, "%s/run", tmp);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* One process, never a fork of it carrying the same argv (a
		 * shell forking its sleep would be a second, for a moment). */
		execl("/usr/bin/python3", "python3", "-c", "import time; time.sleep(60)", scan_dir, detach_marker,
		      (char *)NULL);
		_exit(127);
	}
	/* Until its argv shows (the exec happened). */
	pid_t *pids = NULL;
	int n = 0;
	for (int i = 0; i < 500 && (n = agsbx_find_processes_with_marker(detach_marker, &pids)) < 1; i++) {
		free(pids);
		pids = NULL;
		usleep(10000);
	}
	free(pids);
	ck_assert_int_eq(n, 1);
	for (int tree = 0; tree < 2; tree++)
		oom_sweep(scans_with_nth_failing, tree, 2000, 1u << 2 | 1u << 3, "tree");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
#endif
}
END_TEST

START_TEST(oom_sweep_run)
{
	if (oom_unavailable())
		return;
#ifndef OOM_UNDER_ASAN
	for (int big = 0; big < 2; big++)
		oom_sweep(run_with_nth_failing, big, 400, 1u << 2, "big");
#endif
}
END_TEST

int main(void)
{
	agsbx_runner_init();
	Suite *s = suite_create("cov3-runner");
	TCase *tc = tcase_create("runner");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, exec_not_a_format);
	tcase_add_test(tc, exec_path_search);
	tcase_add_test(tc, cwd_is_a_file);
	tcase_add_test(tc, fd_limit_run);
	tcase_add_test(tc, fd_limit_session);
	tcase_add_test(tc, nproc_zero);
	tcase_add_test(tc, session_refusals_and_life);
	tcase_add_test(tc, oom_sweep_run);
	tcase_add_test(tc, oom_sweep_detached);
	tcase_add_test(tc, oom_sweep_scans);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
