/* The bounded process runner against real processes: output caps under a
 * flood, exact truncation at the boundary, timeout and cancellation of a
 * detached SIGTERM-ignoring tree, exit codes and signals, spawn errors,
 * privilege drop, concurrency, the cgroup leaf, and no leftovers.
 *
 * The test binary doubles as the misbehaving program under test: re-exec'd
 * as `test-runner --runner-helper MODE MARKER` it double-forks, detaches,
 * ignores SIGTERM, or forks away endlessly, with MARKER in every member's
 * argv so a /proc scan can prove nothing survived. */
#include "base/runner.h"
#include "base/runner-internal.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>

#define MiB (1024u * 1024u)
#define GiB (1024ull * MiB)

static char self_exe[4096];
static char suite_marker[64];   /* in every helper's argv */

/* ---- helper modes (the program under test) ---- */

static void ignore_polite_signals(void)
{
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
}

/* A broken runner must not leave these behind for long: every helper
 * process ends itself after HELPER_LIFETIME_S (SIGALRM is not ignored). */
#define HELPER_LIFETIME_S 60

static _Noreturn void linger(void)
{
	alarm(HELPER_LIFETIME_S);
	for (;;)
		pause();
}

/* Double fork + setsid: a grandchild in its own session, re-parented away
 * from the child as soon as the middle process exits. */
static void detach_grandchild(void)
{
	pid_t mid = fork();
	if (mid == 0) {
		setsid();
		if (fork() == 0) {
			linger();
		}
		_exit(0);
	}
	if (mid > 0)
		waitpid(mid, NULL, 0);
}

static int helper_ids(void)
{
	int pdeath = -1;
	prctl(PR_GET_PDEATHSIG, &pdeath);
	char stdin_target[256] = "";
	ssize_t n = readlink("/proc/self/fd/0", stdin_target, sizeof stdin_target - 1);
	if (n > 0)
		stdin_target[n] = '\0';
	int extra = 0;
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			int fd = atoi(de->d_name);
			if (de->d_name[0] != '.' && fd > 2 && fd != dirfd(d))
				extra++;
		}
		closedir(d);
	}
	struct sigaction sa;
	sigaction(SIGPIPE, NULL, &sa);
	sigset_t blocked;
	sigprocmask(SIG_BLOCK, NULL, &blocked);
	printf("sid_is_pid=%d pgid_is_pid=%d pdeathsig=%d stdin=%s extra_fds=%d sigpipe_default=%d "
	       "sigterm_blocked=%d\n",
	       getsid(0) == getpid(), getpgrp() == getpid(), pdeath, stdin_target, extra,
	       sa.sa_handler == SIG_DFL, sigismember(&blocked, SIGTERM));
	return 0;
}

static int helper_main(const char *mode)
{
	if (strcmp(mode, "ids") == 0)
		return helper_ids();
	ignore_polite_signals();
	if (strcmp(mode, "linger") == 0)
		linger();
	if (strcmp(mode, "detach") == 0) {
		detach_grandchild();
		linger();
	}
	if (strcmp(mode, "detach-exit") == 0) {
		detach_grandchild();
		printf("detached\n");
		return 0;
	}
	if (strcmp(mode, "pause") == 0) {
		/* A short-lived program: walks see it running for a while. */
		usleep(300000);
		return 0;
	}
	if (strcmp(mode, "runaway") == 0) {
		/* Fork, exit, setsid, repeat: a process that keeps moving. The
		 * deadline is inherited over fork (no exec), so the chain as a
		 * whole ends itself if the runner failed to. */
		time_t until = time(NULL) + HELPER_LIFETIME_S / 4;
		/* Bounded: every hop leaves a zombie re-parented to the harness
		 * until the runner reaps it, and an unbounded chain exhausts the
		 * machine's PIDs for every other test running alongside. After
		 * the last hop the survivor keeps the marker and lingers. */
		for (int hops = 0; hops < 400; hops++) {
			if (time(NULL) > until)
				_exit(0);
			pid_t p = fork();
			if (p > 0)
				_exit(0);
			if (p == 0)
				setsid();
		}
		linger();
	}
	fprintf(stderr, "unknown helper mode %s\n", mode);
	return 2;
}

/* ---- shared test helpers ---- */

static struct agsbx_run_opts opts_for(const char *const *argv)
{
	return (struct agsbx_run_opts){ .argv = argv, .cancel_fd = -1 };
}

static int marker_count(const char *marker)
{
	pid_t *pids = NULL;
	int n = agsbx_find_processes_with_marker(marker, &pids);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "leftover process %d carries %s\n", (int)pids[i], marker);
	free(pids);
	return n;
}

/* A per-test marker below the suite marker. */
static void test_marker(char *buf, size_t size, const char *what)
{
	unsigned char r[4];
	if (getrandom(r, sizeof r, 0) != sizeof r)
		memset(r, 0x5a, sizeof r);
	snprintf(buf, size, "%s-%s-%02x%02x%02x%02x", suite_marker, what, r[0], r[1], r[2], r[3]);
}

/* Proves there are no processes left, allowing the kernel a moment to
 * finish tearing down what was SIGKILLed. */
static void assert_no_marker(const char *marker)
{
	int n = -1;
	for (int i = 0; i < 50 && n != 0; i++) {
		n = marker_count(marker);
		if (n != 0)
			usleep(20000);
	}
	ck_assert_int_eq(n, 0);
}

/* ---- exit status, signals, spawn errors ---- */

START_TEST(test_exit_code)
{
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 7", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert(r.exited);
	ck_assert_int_eq(r.exit_code, 7);
	ck_assert_int_eq(r.status, 7);
	ck_assert_int_eq(r.term_signal, 0);
	ck_assert(!r.timed_out && !r.cancelled);
	ck_assert_int_eq(r.spawn_errno, 0);
	ck_assert_uint_gt(r.duration_us, 0);
	ck_assert_str_eq(r.out, "out\n");
	ck_assert_str_eq(r.err, "err\n");
	ck_assert_uint_eq(r.out_total, 4);
	ck_assert(!r.out_truncated && !r.err_truncated);
	ck_assert_uint_eq(r.killed, 0);
	agsbx_run_result_clear(&r);
}
END_TEST

/* A timeout too large to ever fire (INT64_MAX ms, "no real limit") must
 * not wrap the deadline around into the past. */
START_TEST(test_huge_timeout)
{
	const char *argv[] = { "sh", "-c", "sleep 0.2; echo done", NULL };
	const int64_t timeouts[] = { INT64_MAX, INT64_MAX / 1000, INT64_MAX / 1000 + 1 };
	for (size_t i = 0; i < sizeof timeouts / sizeof timeouts[0]; i++) {
		struct agsbx_run_opts o = opts_for(argv);
		o.timeout_ms = timeouts[i];
		struct agsbx_run_result r;
		ck_assert_int_eq(agsbx_run(&o, &r), 0);
		ck_assert_msg(!r.timed_out, "timeout_ms %lld timed out at once", (long long)timeouts[i]);
		ck_assert(r.exited);
		ck_assert_int_eq(r.exit_code, 0);
		ck_assert_str_eq(r.out, "done\n");
		agsbx_run_result_clear(&r);
	}
}
END_TEST

/* opts.fd3: the program reads the caller's descriptor on fd 3 (bwrap's
 * --seccomp 3), whatever number it has here; without it fd 3 is closed.
 * Both the dup (fd above 3) and the in-place case (fd already 3). */
START_TEST(test_fd3)
{
	const char *argv[] = { "sh", "-c", "cat <&3 || echo closed", NULL };
	int p[2];
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(write(p[1], "seen", 4), 4);
	close(p[1]);
	int fd = p[0];
	if (_i == 1 && fd != 3) {
		/* fd 3 may hold something of the harness: keep it, park ours there */
		int saved = fcntl(3, F_DUPFD_CLOEXEC, 10);
		ck_assert_int_eq(dup3(fd, 3, O_CLOEXEC), 3);
		close(fd);
		fd = 3;
		struct agsbx_run_opts o = opts_for(argv);
		o.fd3 = fd;
		struct agsbx_run_result r;
		ck_assert_int_eq(agsbx_run(&o, &r), 0);
		ck_assert_str_eq(r.out, "seen");
		agsbx_run_result_clear(&r);
		if (saved >= 0) {
			dup3(saved, 3, O_CLOEXEC);
			close(saved);
		} else {
			close(3);
		}
		return;
	}
	struct agsbx_run_opts o = opts_for(argv);
	o.fd3 = _i == 2 ? 0 : fd;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert_str_eq(r.out, _i == 2 ? "closed\n" : "seen");
	agsbx_run_result_clear(&r);
	close(fd);
}
END_TEST

START_TEST(test_signal)
{
	const char *argv[] = { "sh", "-c", "kill -SEGV $$", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert(!r.exited);
	ck_assert_int_eq(r.term_signal, SIGSEGV);
	ck_assert_int_eq(r.status, 128 + SIGSEGV);
	ck_assert_uint_gt(r.duration_us, 0);
	agsbx_run_result_clear(&r);
}
END_TEST

START_TEST(test_enoent)
{
	const char *bare[] = { "agsbx-no-such-program-4c1e", NULL };
	const char *abs[] = { "/nonexistent/agsbx-no-such-program", NULL };
	const char *const *cases[] = { bare, abs };
	/* An explicit PATH: an inherited one may hold directories this uid
	 * cannot search, which (as with execvp) turns the answer into EACCES. */
	const char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", NULL };
	for (size_t i = 0; i < 2; i++) {
		struct agsbx_run_opts o = opts_for(cases[i]);
		o.envp = env;
		struct agsbx_run_result r;
		ck_assert_int_eq(agsbx_run(&o, &r), -ENOENT);
		ck_assert_int_eq(r.spawn_errno, ENOENT);
		ck_assert(!r.exited);
		agsbx_run_result_clear(&r);
	}
}
END_TEST

START_TEST(test_eacces_and_bad_cwd)
{
	char *dir = agsbx_test_tmpdir("agsbx-runner");
	ck_assert_ptr_nonnull(dir);
	char path[512];
	snprintf(path, sizeof path, "%s/not-executable", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("#!/bin/sh\necho hi\n", f);
	fclose(f);
	chmod(path, 0644);
	const char *argv[] = { path, NULL };
	struct agsbx_run_opts o = opts_for(argv);
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), -EACCES);
	ck_assert_int_eq(r.spawn_errno, EACCES);
	agsbx_run_result_clear(&r);

	const char *pwd[] = { "pwd", NULL };
	o = opts_for(pwd);
	snprintf(path, sizeof path, "%s/missing-dir", dir);
	o.cwd = path;
	ck_assert_int_eq(agsbx_run(&o, &r), -ENOENT);
	ck_assert_int_eq(r.spawn_errno, ENOENT);
	agsbx_run_result_clear(&r);

	o.cwd = dir;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(strncmp(r.out, dir, strlen(dir)), 0);
	agsbx_run_result_clear(&r);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_bad_args)
{
	struct agsbx_run_result r;
	const char *empty[] = { NULL };
	struct agsbx_run_opts o = opts_for(empty);
	ck_assert_int_eq(agsbx_run(&o, &r), -EINVAL);
	o.argv = NULL;
	ck_assert_int_eq(agsbx_run(&o, &r), -EINVAL);
	ck_assert_int_eq(agsbx_run(NULL, &r), -EINVAL);
	ck_assert_int_eq(agsbx_find_processes_with_marker("", NULL), -EINVAL);
	agsbx_run_result_clear(&r);
}
END_TEST

/* ---- environment, PATH, child state ---- */

START_TEST(test_env_and_path)
{
	/* envp's PATH decides the lookup, and envp is all the child sees. */
	const char *env[] = { "PATH=/nonexistent-agsbx:/usr/bin:/bin", "AGSBX_RT=from-envp", NULL };
	const char *argv[] = { "sh", "-c", "echo \"$AGSBX_RT|$HOME\"", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.envp = env;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert_str_eq(r.out, "from-envp|\n");
	agsbx_run_result_clear(&r);

	/* An envp PATH without the program: not found, even though ours has it. */
	const char *env2[] = { "PATH=/nonexistent-agsbx", NULL };
	o.envp = env2;
	ck_assert_int_eq(agsbx_run(&o, &r), -ENOENT);
	agsbx_run_result_clear(&r);

	/* NULL envp inherits ours. */
	setenv("AGSBX_RT", "inherited", 1);
	o.envp = NULL;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert_int_eq(strncmp(r.out, "inherited|", 10), 0);
	agsbx_run_result_clear(&r);
}
END_TEST

START_TEST(test_child_state)
{
	/* A stray inheritable fd and a blocked SIGTERM in the harness must not
	 * reach the child. */
	int stray = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(stray, 0);
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	const char *argv[] = { self_exe, "--runner-helper", "ids", suite_marker, NULL };
	struct agsbx_run_opts o = opts_for(argv);
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert_msg(strcmp(r.out, "sid_is_pid=1 pgid_is_pid=1 pdeathsig=9 stdin=/dev/null extra_fds=0 "
			  "sigpipe_default=1 sigterm_blocked=0\n") == 0, "child state: %s (stderr %s)",
		      r.out, r.err);
	agsbx_run_result_clear(&r);
	close(stray);
}
END_TEST

START_TEST(test_sigpipe_default_in_child)
{
	/* The harness ignores SIGPIPE; the child must not inherit that, or
	 * `yes` would report EPIPE instead of dying quietly. */
	const char *argv[] = { "sh", "-c", "yes | head -n 1", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "y\n");
	ck_assert_str_eq(r.err, "");
	agsbx_run_result_clear(&r);
}
END_TEST

/* ---- output caps ---- */

static const struct { size_t cap; size_t bytes; } boundary[] = {
	{ 1, 1 }, { 1, 2 }, { 4095, 4095 }, { 4095, 4096 }, { 4096, 4096 }, { 4096, 4097 },
	{ 65536, 65536 }, { 65536, 65537 }, { 300000, 300000 }, { 300000, 300001 },
	{ 0, AGSBX_RUN_DEFAULT_MAX_OUTPUT }, { 0, AGSBX_RUN_DEFAULT_MAX_OUTPUT + 1 }, { 64, 0 },
};

START_TEST(test_truncation_boundary)
{
	size_t cap = boundary[_i].cap, bytes = boundary[_i].bytes;
	size_t eff = cap ? cap : AGSBX_RUN_DEFAULT_MAX_OUTPUT;
	char cmd[160];
	snprintf(cmd, sizeof cmd, "head -c %zu /dev/zero | tr '\\0' a; head -c %zu /dev/zero | tr '\\0' b >&2",
		 bytes, bytes);
	const char *argv[] = { "sh", "-c", cmd, NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.max_output_bytes = cap;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert_int_eq(r.status, 0);
	bool trunc = bytes > eff;
	size_t kept = trunc ? eff : bytes;
	ck_assert_uint_eq(r.out_total, bytes);
	ck_assert_uint_eq(r.err_total, bytes);
	ck_assert_uint_eq(r.out_len, kept);
	ck_assert_uint_eq(r.err_len, kept);
	ck_assert_int_eq(r.out_truncated, trunc);
	ck_assert_int_eq(r.err_truncated, trunc);
	ck_assert_int_eq(r.out[kept], '\0');
	for (size_t k = 0; k < kept; k++) {
		if (r.out[k] != 'a' || r.err[k] != 'b')
			ck_abort_msg("byte %zu differs", k);
	}
	agsbx_run_result_clear(&r);
}
END_TEST

static long status_kib(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t klen = strlen(key);
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':')
			v = atol(line + klen + 1);
	if (f)
		fclose(f);
	return v;
}

START_TEST(test_flood_cap_and_rss)
{
	/* Reset the peak-RSS mark so it measures this run only. */
	FILE *cr = fopen("/proc/self/clear_refs", "w");
	if (cr) {
		fputs("5", cr);
		fclose(cr);
	}
	long base_kib = status_kib("VmRSS");
	const char *argv[] = { "/bin/sh", "-c",
			       "head -c 1073741824 /dev/zero & head -c 1073741824 /dev/zero >&2; wait", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.max_output_bytes = 4096;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	long peak_kib = status_kib("VmHWM");
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(r.out_len, 4096);
	ck_assert_uint_eq(r.err_len, 4096);
	ck_assert(r.out_truncated && r.err_truncated);
	ck_assert_uint_eq(r.out_total, GiB);
	ck_assert_uint_eq(r.err_total, GiB);
	fprintf(stderr, "flood: 2 GiB drained in %llu ms, RSS base %ld KiB peak %ld KiB\n",
		(unsigned long long)(r.duration_us / 1000), base_kib, peak_kib);
	ck_assert_int_gt(base_kib, 0);
	ck_assert_int_gt(peak_kib, 0);
	ck_assert_int_le(peak_kib - base_kib, 64 * 1024);
	agsbx_run_result_clear(&r);
}
END_TEST

/* ---- trees: timeout, cancel, detached after exit, runaway ---- */

START_TEST(test_timeout_kills_detached_tree)
{
	char marker[128];
	test_marker(marker, sizeof marker, "timeout");
	const char *argv[] = { self_exe, "--runner-helper", "detach", marker, NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.timeout_ms = 500;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert(r.timed_out);
	ck_assert(!r.cancelled);
	ck_assert_int_eq(r.status, AGSBX_RUN_STATUS_TIMEOUT);
	/* The helper and its detached grandchild, both ignoring SIGTERM. */
	ck_assert_uint_ge(r.killed, 2);
	ck_assert_uint_ge(r.duration_us, 500000);
	assert_no_marker(marker);
	agsbx_run_result_clear(&r);
}
END_TEST

struct canceller {
	int fd;
	unsigned delay_ms;
};

static void *cancel_later(void *arg)
{
	struct canceller *c = arg;
	usleep(c->delay_ms * 1000u);
	uint64_t one = 1;
	if (write(c->fd, &one, sizeof one) != sizeof one)
		abort();
	return NULL;
}

START_TEST(test_cancel_from_thread)
{
	char marker[128];
	test_marker(marker, sizeof marker, "cancel");
	int efd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(efd, 0);
	struct canceller c = { efd, 300 };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, cancel_later, &c), 0);
	const char *argv[] = { self_exe, "--runner-helper", "detach", marker, NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.timeout_ms = 60000;
	o.cancel_fd = efd;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	pthread_join(th, NULL);
	ck_assert(r.cancelled);
	ck_assert(!r.timed_out);
	ck_assert_int_eq(r.status, AGSBX_RUN_STATUS_CANCELLED);
	ck_assert_uint_ge(r.killed, 2);
	ck_assert_uint_lt(r.duration_us, 30000000);
	assert_no_marker(marker);
	agsbx_run_result_clear(&r);

	/* Already cancelled before the start: the run still ends cleanly. */
	o.timeout_ms = 0;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert(r.cancelled);
	ck_assert_int_eq(r.status, AGSBX_RUN_STATUS_CANCELLED);
	assert_no_marker(marker);
	agsbx_run_result_clear(&r);
	close(efd);
}
END_TEST

START_TEST(test_detached_killed_after_normal_exit)
{
	char marker[128];
	test_marker(marker, sizeof marker, "afterexit");
	const char *argv[] = { self_exe, "--runner-helper", "detach-exit", marker, NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.timeout_ms = 60000;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert(r.exited);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "detached\n");
	ck_assert_uint_eq(r.killed, 1);
	assert_no_marker(marker);
	agsbx_run_result_clear(&r);
}
END_TEST

START_TEST(test_runaway_fork_chain)
{
	char marker[128];
	test_marker(marker, sizeof marker, "runaway");
	const char *argv[] = { self_exe, "--runner-helper", "runaway", marker, NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.timeout_ms = 300;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	/* The first process exits at once (status 0); its descendants keep
	 * moving and are still found and killed. */
	ck_assert_uint_ge(r.killed, 1);
	assert_no_marker(marker);
	agsbx_run_result_clear(&r);
}
END_TEST

static int cancel_efd = -1;

static void on_alarm(int sig)
{
	(void)sig;
	uint64_t one = 1;
	ssize_t n = write(cancel_efd, &one, sizeof one);   /* async-signal-safe */
	(void)n;
}

START_TEST(test_cancel_from_signal_handler)
{
	cancel_efd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(cancel_efd, 0);
	struct sigaction sa = { .sa_handler = on_alarm };
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
	struct itimerval it = { .it_value = { 0, 300000 } };
	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	const char *argv[] = { "sleep", "30", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.cancel_fd = cancel_efd;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert(r.cancelled);
	ck_assert_int_eq(r.status, AGSBX_RUN_STATUS_CANCELLED);
	ck_assert_uint_eq(r.killed, 1);
	agsbx_run_result_clear(&r);
	close(cancel_efd);
}
END_TEST

START_TEST(test_sigchld_ignored_by_harness)
{
	/* A harness that ignores SIGCHLD would lose every exit status; the
	 * runner's init undoes that (this forked test process has not run
	 * anything yet, so the first agsbx_run initialises it). */
	signal(SIGCHLD, SIG_IGN);
	const char *argv[] = { "sh", "-c", "exit 5", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert(r.exited);
	ck_assert_int_eq(r.status, 5);
	agsbx_run_result_clear(&r);
}
END_TEST

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Children (live or zombie) of every thread of this process. */
static int our_children(void)
{
	char path[320], buf[4096];
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/children", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[len] = '\0';
		for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

START_TEST(test_no_fd_or_child_leaks)
{
	char marker[128];
	test_marker(marker, sizeof marker, "leaks");
	const char *ok[] = { "true", NULL };
	const char *missing[] = { "agsbx-no-such-program-4c1e", NULL };
	const char *detach[] = { self_exe, "--runner-helper", "detach", marker, NULL };
	const char *detach_exit[] = { self_exe, "--runner-helper", "detach-exit", marker, NULL };
	const char *const *cases[] = { ok, missing, detach, detach_exit };
	int fds_before = count_entries("/proc/self/fd");
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < 4; i++) {
			struct agsbx_run_opts o = opts_for(cases[i]);
			o.timeout_ms = 200;
			o.use_cgroup = round == 1;
			struct agsbx_run_result r;
			agsbx_run(&o, &r);
			agsbx_run_result_clear(&r);
		}
	}
	ck_assert_int_eq(count_entries("/proc/self/fd"), fds_before);
	ck_assert_int_eq(our_children(), 0);
	assert_no_marker(marker);
}
END_TEST

/* ---- concurrency ---- */

struct worker {
	int id;
	int failures;
	char why[256];
};

static void *run_many(void *arg)
{
	struct worker *w = arg;
	for (int n = 0; n < 15; n++) {
		char cmd[128], want_out[64], want_err[64];
		snprintf(want_out, sizeof want_out, "out-%d-%d\n", w->id, n);
		snprintf(want_err, sizeof want_err, "err-%d-%d\n", w->id, n);
		snprintf(cmd, sizeof cmd, "printf 'out-%d-%d\\n'; printf 'err-%d-%d\\n' >&2", w->id, n, w->id, n);
		const char *argv[] = { "sh", "-c", cmd, NULL };
		struct agsbx_run_opts o = opts_for(argv);
		o.timeout_ms = 30000;
		struct agsbx_run_result r;
		int rc = agsbx_run(&o, &r);
		if (rc != 0 || r.status != 0 || strcmp(r.out, want_out) || strcmp(r.err, want_err)) {
			w->failures++;
			snprintf(w->why, sizeof w->why, "rc %d status %d out %s", rc, r.status, r.out ? r.out : "");
		}
		agsbx_run_result_clear(&r);
	}
	return NULL;
}

START_TEST(test_concurrent_outputs)
{
	struct worker w[2] = { { .id = 1 }, { .id = 2 } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, run_many, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++)
		ck_assert_msg(w[i].failures == 0, "worker %d: %d failures, last: %s", i, w[i].failures, w[i].why);
}
END_TEST

/* Another thread's runs, one after another: each end sweeps orphans. */
struct repeater {
	const char *const *argv;
	int times;
	int started;
	int failures;
};

static void *run_repeatedly(void *arg)
{
	struct repeater *rp = arg;
	for (int n = 0; n < rp->times; n++) {
		struct agsbx_run_opts o = opts_for(rp->argv);
		o.timeout_ms = 30000;
		struct agsbx_run_result r;
		__atomic_store_n(&rp->started, 1, __ATOMIC_RELEASE);
		if (agsbx_run(&o, &r) != 0 || r.status != 0)
			rp->failures++;
		agsbx_run_result_clear(&r);
	}
	return NULL;
}

/* Starts rp on *th and returns once its first run has begun, and a little
 * more, so that run's child is older than what the caller starts next. */
static void start_repeater(pthread_t *th, struct repeater *rp)
{
	ck_assert_int_eq(pthread_create(th, NULL, run_repeatedly, rp), 0);
	while (!__atomic_load_n(&rp->started, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(50000);
}

static const char *const sleep_argv[] = { "sleep", "0.3", NULL };

START_TEST(test_cleanup_spares_other_runs)
{
	/* One thread's cleanups sweep re-parented orphans repeatedly while
	 * another thread's run (a shell waiting on its own child) goes on:
	 * that run must finish untouched. */
	char marker[128];
	test_marker(marker, sizeof marker, "sweeper");
	const char *const dargv[] = { self_exe, "--runner-helper", "detach-exit", marker, NULL };
	struct repeater d = { .argv = dargv, .times = 5 };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, run_repeatedly, &d), 0);
	const char *argv[] = { "sh", "-c", "sleep 1; echo survived", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.timeout_ms = 30000;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "survived\n");
	ck_assert_uint_eq(r.killed, 0);
	ck_assert_int_eq(d.failures, 0);
	assert_no_marker(marker);
	agsbx_run_result_clear(&r);
}
END_TEST

START_TEST(test_detached_orphan_stays_in_its_run)
{
	/* A run whose child detaches a worker and waits for its answer,
	 * while another thread's runs end (and sweep) around it. The other
	 * runs started first, so an orphan passing through the harness
	 * would look like theirs and be killed: the answer would be lost. */
	struct repeater sl = { .argv = sleep_argv, .times = 4 };
	pthread_t th;
	start_repeater(&th, &sl);
	const char *argv[] = { "sh", "-c", "(sleep 0.6 && echo alive &); sleep 1.2", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.timeout_ms = 30000;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "alive\n");
	ck_assert_uint_eq(r.killed, 0);
	ck_assert_int_eq(sl.failures, 0);
	agsbx_run_result_clear(&r);
}
END_TEST

START_TEST(test_fork_registered_spared)
{
	/* A child forked outside the runner into a new session while another
	 * thread's runs end and sweep: registered from the fork on, it is
	 * never taken for an orphan of theirs. */
	struct repeater sl = { .argv = sleep_argv, .times = 4 };
	pthread_t th;
	start_repeater(&th, &sl);
	pid_t pid = agsbx_runner_fork_registered();
	if (pid == 0) {
		setsid();
		usleep(1000000);
		_exit(7);
	}
	ck_assert_int_gt(pid, 0);
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	agsbx_runner_unregister_child(pid);
	pthread_join(th, NULL);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 7, "the registered child ended with status %#x", st);
	ck_assert_int_eq(sl.failures, 0);
}
END_TEST

/* The state letter of pid in /proc, or 0 when it is gone. */
static char proc_state(pid_t pid)
{
	struct agsbx_proc p;
	return agsbx_proc_stat(pid, &p) == 0 ? p.state : 0;
}

START_TEST(test_adopted_zombie_reaped)
{
	/* A grandchild forked outside any run (new session) dies after its
	 * parent: we, the subreaper, adopt it as a zombie that nobody will
	 * wait for. The next run's sweep must reap it, or such zombies pile
	 * up and every later sweep reads them all. (check forks each test:
	 * this process becomes the subreaper here, before the fork.) */
	ck_assert_int_eq(agsbx_runner_init(), 0);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t mid = fork();
	ck_assert_int_ge(mid, 0);
	if (mid == 0) {
		pid_t g = fork();
		if (g == 0) {
			setsid();
			usleep(100000);
			_exit(0);
		}
		(void)!write(p[1], &g, sizeof g);
		_exit(0);
	}
	pid_t g = 0;
	ck_assert_int_eq(read(p[0], &g, sizeof g), (ssize_t)sizeof g);
	close(p[0]);
	close(p[1]);
	ck_assert_int_eq(waitpid(mid, NULL, 0), mid);
	for (int i = 0; i < 200 && proc_state(g) != 'Z'; i++)
		usleep(10000);
	ck_assert_int_eq(proc_state(g), 'Z');
	const char *argv[] = { "true", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	agsbx_run_result_clear(&r);
	ck_assert_msg(proc_state(g) == 0, "adopted zombie %d still there", (int)g);
}
END_TEST

/* ---- privileges and cgroup (root) ---- */

START_TEST(test_drop_privileges)
{
	uid_t uid;
	gid_t gid;
	ck_assert(agsbx_test_user(&uid, &gid, NULL));
	const char *argv[] = { "sh", "-c", "id -u; id -g; id -G", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.drop_privileges = true;
	o.run_uid = uid;
	o.run_gid = gid;
	o.cwd = "/";
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	char want[96];
	snprintf(want, sizeof want, "%u\n%u\n%u\n", (unsigned)uid, (unsigned)gid, (unsigned)gid);
	ck_assert_str_eq(r.out, want);
	agsbx_run_result_clear(&r);

	/* The parent-death signal survives the credential change. */
	const char *ids[] = { self_exe, "--runner-helper", "ids", suite_marker, NULL };
	o.argv = ids;
	int rc = agsbx_run(&o, &r);
	if (rc == -EACCES) {
		/* The build dir is not readable by the test user: not this test's concern. */
		fprintf(stderr, "note: %s not executable by uid %u\n", self_exe, (unsigned)uid);
	} else {
		ck_assert_int_eq(rc, 0);
		ck_assert_msg(strstr(r.out, "pdeathsig=9") != NULL, "ids: %s %s", r.out, r.err);
	}
	agsbx_run_result_clear(&r);
}
END_TEST

/* The working directory is entered as the dropped user: a directory
 * that user cannot reach (below a 0700 parent) must fail the spawn with
 * EACCES, not hand the program a cwd it could never have opened. */
START_TEST(test_drop_privileges_cwd_as_user)
{
	uid_t uid;
	gid_t gid;
	ck_assert(agsbx_test_user(&uid, &gid, NULL));
	char *dir = agsbx_test_tmpdir("runner-cwd");
	char priv[4200], inner[4300];
	snprintf(priv, sizeof priv, "%s/private", dir);
	snprintf(inner, sizeof inner, "%s/inner", priv);
	ck_assert_int_eq(mkdir(priv, 0700), 0);
	ck_assert_int_eq(mkdir(inner, 0755), 0);
	const char *argv[] = { "/bin/sh", "-c", "pwd", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.cwd = inner;
	struct agsbx_run_result r;
	/* Control: as ourselves (root) the directory is fine. */
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert_int_eq(r.exit_code, 0);
	agsbx_run_result_clear(&r);
	o.drop_privileges = true;
	o.run_uid = uid;
	o.run_gid = gid;
	int rc = agsbx_run(&o, &r);
	ck_assert_msg(rc == -EACCES, "run as uid %u in %s: rc %d, out '%s'", (unsigned)uid, inner, rc,
		      r.out ? r.out : "");
	ck_assert_int_eq(r.spawn_errno, EACCES);
	ck_assert(!r.exited);
	agsbx_run_result_clear(&r);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_drop_privileges_refused)
{
	/* Unprivileged, a switch to another uid must fail the spawn with
	 * the kernel's answer, and nothing may run. Root may switch to any
	 * uid, so there is nothing to refuse. */
	if (geteuid() == 0)
		return;
	const char *argv[] = { "true", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.drop_privileges = true;
	o.run_uid = geteuid() == 1 ? 2 : 1;
	o.run_gid = 1;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), -EPERM);
	ck_assert_int_eq(r.spawn_errno, EPERM);
	ck_assert(!r.exited);
	agsbx_run_result_clear(&r);
}
END_TEST

static int leftover_cgroups(void)
{
	static const char *mounts[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	char prefix[64];
	snprintf(prefix, sizeof prefix, "agsbx-run-%d-", (int)getpid());
	int n = 0;
	for (size_t i = 0; i < 2; i++) {
		DIR *d = opendir(mounts[i]);
		struct dirent *de;
		while (d && (de = readdir(d)))
			n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
		if (d)
			closedir(d);
	}
	return n;
}

/* A leaf left by a harness that died mid-run: a dead creator pid. */
static char *make_stale_leaf(void)
{
	const char *mount = access("/sys/fs/cgroup/unified/cgroup.procs", F_OK) == 0 ?
				    "/sys/fs/cgroup/unified" : "/sys/fs/cgroup";
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	char *leaf = NULL;
	if (asprintf(&leaf, "%s/agsbx-run-%d-0-stale", mount, (int)dead) < 0)
		return NULL;
	if (mkdir(leaf, 0755) < 0) {
		free(leaf);
		return NULL;
	}
	return leaf;
}

START_TEST(test_cgroup_leaf)
{
	char marker[128];
	test_marker(marker, sizeof marker, "cgroup");
	/* First cgroup use in this (forked) test process: stale leaves go. */
	char *stale = geteuid() == 0 ? make_stale_leaf() : NULL;
	const char *argv[] = { "/bin/sh", "-c", "cat /proc/self/cgroup", NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.use_cgroup = true;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert_int_eq(r.status, 0);
	bool root = geteuid() == 0;
	bool v2 = access("/sys/fs/cgroup/unified/cgroup.procs", F_OK) == 0 ||
		  access("/sys/fs/cgroup/cgroup.procs", F_OK) == 0;
	if (stale) {
		ck_assert_msg(access(stale, F_OK) < 0, "stale leaf %s survived", stale);
		free(stale);
	}
	if (root && v2) {
		ck_assert_msg(r.used_cgroup, "root with cgroup2 mounted but no leaf was used");
		ck_assert_msg(strstr(r.out, "0::/agsbx-run-") != NULL, "child cgroup: %s", r.out);
	} else {
		fprintf(stderr, "note: no cgroup leaf as uid %u (v2 %d): run still fine\n",
			(unsigned)geteuid(), v2);
	}
	agsbx_run_result_clear(&r);

	/* With a cgroup, a detached tree still dies at the timeout. */
	const char *det[] = { self_exe, "--runner-helper", "detach", marker, NULL };
	o.argv = det;
	o.timeout_ms = 300;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert(r.timed_out);
	ck_assert_int_eq(r.status, AGSBX_RUN_STATUS_TIMEOUT);
	assert_no_marker(marker);
	agsbx_run_result_clear(&r);
	ck_assert_int_eq(leftover_cgroups(), 0);
}
END_TEST

/* ---- the marker scan itself ---- */

START_TEST(test_find_marker)
{
	char marker[128];
	test_marker(marker, sizeof marker, "find");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(self_exe, self_exe, "--runner-helper", "linger", marker, (char *)NULL);
		_exit(127);
	}
	pid_t *pids = NULL;
	int n = 0;
	for (int i = 0; i < 100 && n == 0; i++) {
		n = agsbx_find_processes_with_marker(marker, &pids);
		if (n == 0) {
			free(pids);
			pids = NULL;
			usleep(10000);
		}
	}
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(pids[0], pid);
	free(pids);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_int_eq(agsbx_find_processes_with_marker(marker, NULL), 0);
}
END_TEST

/* ---- a wrapper tool's own helpers (spare_helpers) ---- */

/* The pid a shell wrote to path (polled: the writer is detached). */
static pid_t pid_from_file(const char *path)
{
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen(path, "r");
		int pid = 0;
		if (f && fscanf(f, "%d", &pid) == 1 && pid > 0) {
			fclose(f);
			return (pid_t)pid;
		}
		if (f)
			fclose(f);
		usleep(10000);
	}
	return -1;
}

static bool gone(pid_t pid)
{
	for (int i = 0; i < 100; i++) {
		struct agsbx_proc p;
		if (agsbx_proc_stat(pid, &p) < 0 || p.state == 'Z')
			return true;
		usleep(20000);
	}
	return false;
}

/* The wrapper (a shell) starts, each in a session of its own, and leaves:
 * a stand-in for rootless podman's pause process (a `sleep` carrying
 * nothing of the run: the word reaches it in the environment) with a
 * shell carrying the run's word below it (as conmon runs the container), the run's program detached (this binary:
 * the same file), and a shell carrying the run's word with a `sleep`
 * below it.
 * Only the stand-in may survive the end of the run, whether the wrapper
 * exited (loop 0) or timed out (loop 1); without spare_helpers (loop 2)
 * it goes too. */
START_TEST(test_spare_helpers)
{
	char marker[128], word[160], dir[] = "/tmp/agsbx-spare-XXXXXX", script[16384];
	test_marker(marker, sizeof marker, "spare");
	snprintf(word, sizeof word, "%s-word", marker);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(script, sizeof script,
		 "( W=%s setsid sh -c 'sh -c \"echo \\$\\$ > %s/under; sleep 60; :\" sh \"$W\" & echo $$ > %s/helper; "
		 "exec sleep 60' </dev/null >/dev/null 2>&1 & )\n"
		 "%s --runner-helper detach-exit %s >/dev/null\n"
		 "( setsid sh -c 'sleep 60 & echo $! > %s/below; wait' sh %s </dev/null >/dev/null 2>&1 & )\n"
		 "while [ ! -s %s/below ] || [ ! -s %s/helper ] || [ ! -s %s/under ]; do sleep 0.01; done\n%s",
		 word, dir, dir, self_exe, marker, dir, word, dir, dir, dir, _i == 1 ? "exec sleep 60\n" : "");
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.timeout_ms = _i == 1 ? 4000 : 60000; /* the timeout after both are up, under load too */
	o.spare_helpers = _i != 2;
	o.own_exe = self_exe;
	o.own_word = word;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert(_i == 1 ? r.timed_out : r.exited && r.exit_code == 0);
	char path[256];
	snprintf(path, sizeof path, "%s/helper", dir);
	pid_t helper = pid_from_file(path);
	snprintf(path, sizeof path, "%s/below", dir);
	pid_t below = pid_from_file(path);
	ck_assert_int_gt(helper, 0);
	ck_assert_int_gt(below, 0);
	/* Until it has exec'd sleep it may still be in the wrapper's session
	 * (killed with the wrapper), so the wrapper waits for its pid file
	 * (written after its setsid): as a tool waits for its daemon. */
	assert_no_marker(marker);   /* the detached program and the word's shell */
	ck_assert_msg(gone(below), "the sleep below the run's shell survived");
	snprintf(path, sizeof path, "%s/under", dir);
	pid_t under = pid_from_file(path);
	ck_assert_int_gt(under, 0);
	ck_assert_msg(gone(under), "the run's shell below the helper survived");
	struct agsbx_proc hp;
	bool alive = agsbx_proc_stat(helper, &hp) == 0 && hp.state != 'Z';
	if (alive) {
		/* Ours to end: the harness adopted it; by its pid. */
		kill(helper, SIGKILL);
		waitpid(helper, NULL, 0);
	}
	ck_assert_msg(alive == o.spare_helpers, "helper %s", alive ? "survived a full sweep" : "was killed");
	ck_assert_uint_eq(r.spared, o.spare_helpers ? 1 : 0);   /* said: the one helper left running */
	agsbx_run_result_clear(&r);
	snprintf(path, sizeof path, "rm -rf %s", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* The wrapper starts its daemon (in a session of its own, adopted by the
 * run's child, a subreaper), waits until the runner's walks (every 25 ms)
 * have seen it below the wrapper, then execs the run's program: the
 * daemon, now a child of the run's program by adoption, is still the
 * wrapper's and outlives the run (as the stand-in of
 * tests/cli/wrap-helpers.sh, where this flip once killed it). */
/* _i 0: the wrapper waits before its exec, so a walk meets it as the
 * wrapper first; 1: it execs at once, before any walk, so the first walk
 * meets the daemon already adopted by the run's program. */
START_TEST(test_spare_helper_then_exec)
{
	char marker[128], word[160], dir[] = "/tmp/agsbx-spare-XXXXXX", script[16384], wait[256] = "";
	test_marker(marker, sizeof marker, "spexec");
	snprintf(word, sizeof word, "%s-word", marker);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	if (_i == 0)
		snprintf(wait, sizeof wait, "while [ ! -s %s/helper ]; do sleep 0.01; done\nsleep 0.5\n", dir);
	snprintf(script, sizeof script,
		 "( setsid sh -c 'echo $$ > %s/helper; exec sleep 60' </dev/null >/dev/null 2>&1 & )\n"
		 "%sexec %s --runner-helper pause %s\n",
		 dir, wait, self_exe, word);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct agsbx_run_opts o = opts_for(argv);
	o.timeout_ms = 60000;
	o.spare_helpers = true;
	o.own_exe = self_exe;
	o.own_word = word;
	struct agsbx_run_result r;
	ck_assert_int_eq(agsbx_run(&o, &r), 0);
	ck_assert(r.exited && r.exit_code == 0);
	char path[256];
	snprintf(path, sizeof path, "%s/helper", dir);
	pid_t helper = pid_from_file(path);
	ck_assert_int_gt(helper, 0);
	struct agsbx_proc hp;
	bool alive = agsbx_proc_stat(helper, &hp) == 0 && hp.state != 'Z';
	if (alive) {
		kill(helper, SIGKILL);
		waitpid(helper, NULL, 0);
	}
	ck_assert_msg(alive, "the wrapper's daemon was killed once the wrapper exec'd the run's program");
	ck_assert_uint_eq(r.spared, 1);
	agsbx_run_result_clear(&r);
	snprintf(path, sizeof path, "rm -rf %s", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

static Suite *runner_suite(bool privileged)
{
	Suite *s = suite_create("runner");
	TCase *tc = tcase_create("basic");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_exit_code);
	tcase_add_test(tc, test_signal);
	tcase_add_loop_test(tc, test_fd3, 0, 3);
	tcase_add_test(tc, test_huge_timeout);
	tcase_add_test(tc, test_enoent);
	tcase_add_test(tc, test_eacces_and_bad_cwd);
	tcase_add_test(tc, test_bad_args);
	tcase_add_test(tc, test_env_and_path);
	tcase_add_test(tc, test_child_state);
	tcase_add_test(tc, test_sigpipe_default_in_child);
	tcase_add_test(tc, test_find_marker);
	tcase_add_test(tc, test_drop_privileges_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("output");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_truncation_boundary, 0, (int)(sizeof boundary / sizeof boundary[0]));
	tcase_add_test(tc, test_flood_cap_and_rss);
	suite_add_tcase(s, tc);

	tc = tcase_create("trees");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_timeout_kills_detached_tree);
	tcase_add_test(tc, test_cancel_from_thread);
	tcase_add_test(tc, test_detached_killed_after_normal_exit);
	tcase_add_test(tc, test_runaway_fork_chain);
	tcase_add_test(tc, test_concurrent_outputs);
	tcase_add_test(tc, test_cleanup_spares_other_runs);
	tcase_add_test(tc, test_detached_orphan_stays_in_its_run);
	tcase_add_test(tc, test_adopted_zombie_reaped);
	tcase_add_test(tc, test_fork_registered_spared);
	tcase_add_test(tc, test_cgroup_leaf);
	tcase_add_test(tc, test_cancel_from_signal_handler);
	tcase_add_test(tc, test_sigchld_ignored_by_harness);
	tcase_add_test(tc, test_no_fd_or_child_leaks);
	tcase_add_loop_test(tc, test_spare_helpers, 0, 3);
	tcase_add_loop_test(tc, test_spare_helper_then_exec, 0, 2);
	suite_add_tcase(s, tc);

	if (privileged) {
		tc = tcase_create("privileges");
		tcase_set_timeout(tc, 60);
		tcase_add_test(tc, test_drop_privileges);
		tcase_add_test(tc, test_drop_privileges_cwd_as_user);
		suite_add_tcase(s, tc);
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "--runner-helper") == 0)
		return helper_main(argv[2]);

	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
	if (n <= 0) {
		perror("readlink /proc/self/exe");
		return EXIT_FAILURE;
	}
	self_exe[n] = '\0';
	unsigned char r[6];
	if (getrandom(r, sizeof r, 0) != sizeof r)
		return EXIT_FAILURE;
	snprintf(suite_marker, sizeof suite_marker, "agsbx-runner-test-%02x%02x%02x%02x%02x%02x",
		 r[0], r[1], r[2], r[3], r[4], r[5]);
	if (agsbx_runner_init() < 0) {
		perror("agsbx_runner_init");
		return EXIT_FAILURE;
	}

	bool root = geteuid() == 0;
	bool have_user = agsbx_test_user(NULL, NULL, NULL);
	if (!root)
		fprintf(stderr, "note: not root: the drop_privileges test does not apply\n");
	int rc = agsbx_test_run_suite(runner_suite(root && have_user));

	/* Nothing any test started may have outlived the suite. */
	int left = -1;
	for (int i = 0; i < 50 && left != 0; i++) {
		left = marker_count(suite_marker);
		if (left)
			usleep(20000);
	}
	if (left != 0) {
		fprintf(stderr, "FAIL: %d processes with %s outlived the suite\n", left, suite_marker);
		rc = EXIT_FAILURE;
	}
	if (rc == EXIT_SUCCESS && root && !have_user)
		agsbx_test_skip("unprivileged test user", true,
				"root but the agsbx-test user is missing (useradd -m agsbx-test); "
				"every other runner test passed");
	return rc;
}
