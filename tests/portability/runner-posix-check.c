/* The POSIX runner (base/runner-posix.c, the macOS build's runner) run for
 * real on this host by tests/cli/portable.sh, linked against the portable
 * build's libagsbx_base.a: output and status, the per-stream cap, PATH
 * lookup from envp, exec failure, timeout, cancel, and the process group
 * killed when the child exits. Prints "ok - ..." lines; exits 1 on the
 * first failure. */
#include "base/runner.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond, what)                                                  \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "FAIL: %s (%s:%d)\n", what, __FILE__, __LINE__); \
			exit(1);                                           \
		}                                                          \
	} while (0)

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static struct agsbx_run_result run(const struct agsbx_run_opts *o, int want_rc)
{
	struct agsbx_run_result r;
	int rc = agsbx_run(o, &r);
	CHECK(rc == want_rc, "agsbx_run return value");
	return r;
}

/* A process is gone (or a zombie nobody will see run again). */
static int gone(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'Z';
}

int main(void)
{
	struct agsbx_run_opts o = { .argv = ARGV("/bin/sh", "-c", "echo out; echo err >&2; exit 3"), .cancel_fd = -1 };
	struct agsbx_run_result r = run(&o, 0);
	CHECK(r.exited && r.exit_code == 3 && r.status == 3, "exit status");
	CHECK(strcmp(r.out, "out\n") == 0 && strcmp(r.err, "err\n") == 0, "both streams");
	agsbx_run_result_clear(&r);
	puts("ok - output and status");

	o = (struct agsbx_run_opts){ .argv = ARGV("/bin/sh", "-c", "head -c 100000 /dev/zero"), .max_output_bytes = 1000,
				     .cancel_fd = -1 };
	r = run(&o, 0);
	CHECK(r.out_len == 1000 && r.out_truncated && r.out_total == 100000, "per-stream cap");
	agsbx_run_result_clear(&r);
	puts("ok - output capped, the rest counted");

	o = (struct agsbx_run_opts){ .argv = ARGV("printf", "x"), .envp = ARGV("PATH=/nonexistent:/usr/bin:/bin"),
				     .cancel_fd = -1 };
	r = run(&o, 0);
	CHECK(r.status == 0 && strcmp(r.out, "x") == 0, "PATH from envp");
	agsbx_run_result_clear(&r);
	o.envp = ARGV("X=1");
	o.argv = ARGV("/nonexistent/prog");
	r = run(&o, -ENOENT);
	CHECK(r.spawn_errno == ENOENT && r.status == 127, "exec failure");
	agsbx_run_result_clear(&r);
	puts("ok - PATH lookup from envp; exec failure reported, nothing ran");

	o = (struct agsbx_run_opts){ .argv = ARGV("/bin/sleep", "30"), .timeout_ms = 200, .cancel_fd = -1 };
	r = run(&o, 0);
	CHECK(r.timed_out && r.status == 124 && !r.exited, "timeout");
	agsbx_run_result_clear(&r);
	puts("ok - timeout kills, status 124");

	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	int cfd = p[0];
	CHECK(cfd > 2, "cancel fds must be above stdio");
	CHECK(write(p[1], "c", 1) == 1, "write cancel");
	o = (struct agsbx_run_opts){ .argv = ARGV("/bin/sleep", "30"), .cancel_fd = cfd };
	r = run(&o, 0);
	CHECK(r.cancelled && r.status == 130, "cancel");
	agsbx_run_result_clear(&r);
	puts("ok - cancel fd kills, status 130");

	/* The child leaves a background process in its group and exits: the
	 * cleanup kills the group. */
	o = (struct agsbx_run_opts){ .argv = ARGV("/bin/sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"), .cancel_fd = -1 };
	r = run(&o, 0);
	pid_t bg = (pid_t)atoi(r.out);
	CHECK(bg > 0, "background pid");
	int dead = 0;
	for (int i = 0; i < 100 && !dead; i++) {
		dead = gone(bg);
		if (!dead)
			usleep(20000);
	}
	if (!dead)
		kill(bg, SIGKILL);
	CHECK(dead, "background process of the group survived the run");
	agsbx_run_result_clear(&r);
	puts("ok - the process group is killed when the child exits");
	return 0;
}
