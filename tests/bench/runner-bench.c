/* Benchmark driver for tests/bench/runner.sh (not a test: prints numbers).
 *
 *   runner-bench spawn RUNS     p50/p90 of fork+execve+waitpid of
 *                               /usr/bin/true vs agsbx_run of the same
 *                               (and with use_cgroup), alternating
 *   runner-bench flood BYTES    one agsbx_run of head -c BYTES on stdout
 *                               and stderr at the default cap
 *   runner-bench raw-flood BYTES  the same writers piped into one
 *                               `cat >/dev/null`, fork+exec+waitpid only */
#include "base/runner.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL };

static int raw_run(char *const *argv, int out_fd)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (out_fd >= 0) {
			dup2(out_fd, 1);
			dup2(out_fd, 2);
		}
		execve(argv[0], argv, env);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return st;
}

static int runner_run(const char *const *argv, bool cgroup, struct agsbx_run_result *r)
{
	struct agsbx_run_opts o = {
		.argv = argv, .envp = (const char *const *)env, .cancel_fd = -1, .use_cgroup = cgroup,
	};
	return agsbx_run(&o, r);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, int n, int p)
{
	qsort(v, (size_t)n, sizeof *v, cmp_u64);
	return v[(n - 1) * p / 100];
}

static int bench_spawn(int runs)
{
	char *const raw_argv[] = { "/usr/bin/true", NULL };
	const char *const argv[] = { "/usr/bin/true", NULL };
	uint64_t *raw = calloc((size_t)runs, sizeof *raw), *run = calloc((size_t)runs, sizeof *run),
		 *cg = calloc((size_t)runs, sizeof *cg);
	if (!raw || !run || !cg)
		return 1;
	unsigned used_cg = 0;
	for (int i = 0; i < runs; i++) {
		uint64_t t0 = now_us();
		if (raw_run(raw_argv, -1) != 0)
			return 1;
		uint64_t t1 = now_us();
		struct agsbx_run_result r;
		if (runner_run(argv, false, &r) != 0 || r.status != 0)
			return 1;
		uint64_t t2 = now_us();
		agsbx_run_result_clear(&r);
		uint64_t t3 = now_us();
		if (runner_run(argv, true, &r) != 0 || r.status != 0)
			return 1;
		uint64_t t4 = now_us();
		used_cg += r.used_cgroup;
		agsbx_run_result_clear(&r);
		raw[i] = t1 - t0;
		run[i] = t2 - t1;
		cg[i] = t4 - t3;
	}
	uint64_t raw50 = pct(raw, runs, 50), raw90 = pct(raw, runs, 90);
	uint64_t run50 = pct(run, runs, 50), run90 = pct(run, runs, 90);
	uint64_t cg50 = pct(cg, runs, 50), cg90 = pct(cg, runs, 90);
	printf("spawn /usr/bin/true x%d (microseconds)\n", runs);
	printf("  raw fork+execve+waitpid    p50 %6llu  p90 %6llu\n", (unsigned long long)raw50,
	       (unsigned long long)raw90);
	printf("  agsbx_run                  p50 %6llu  p90 %6llu  ratio p50 %.2f\n",
	       (unsigned long long)run50, (unsigned long long)run90, (double)run50 / (double)raw50);
	printf("  agsbx_run use_cgroup       p50 %6llu  p90 %6llu  ratio p50 %.2f  (cgroup used %u/%d)\n",
	       (unsigned long long)cg50, (unsigned long long)cg90, (double)cg50 / (double)raw50, used_cg,
	       runs);
	return 0;
}

static int bench_flood(const char *bytes, bool raw)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "head -c %s /dev/zero & head -c %s /dev/zero >&2; wait", bytes, bytes);
	uint64_t t0 = now_us();
	if (raw) {
		/* The same writers, both streams drained by one cat into
		 * /dev/null: a pipe and a reader, nothing else. */
		char piped[400];
		snprintf(piped, sizeof piped, "{ %s; } 2>&1 | cat >/dev/null", cmd);
		char *const argv[] = { "/bin/sh", "-c", piped, NULL };
		int st = raw_run(argv, -1);
		printf("raw flood 2x%s bytes | cat >/dev/null: %llu ms (status %d)\n", bytes,
		       (unsigned long long)((now_us() - t0) / 1000), st);
		return st != 0;
	}
	const char *const argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct agsbx_run_result r;
	int rc = runner_run(argv, false, &r);
	uint64_t us = now_us() - t0;
	if (rc != 0)
		return 1;
	double mib = (double)(r.out_total + r.err_total) / (1024.0 * 1024.0);
	printf("agsbx_run flood: %.0f MiB drained in %llu ms (%.0f MiB/s), kept %zu+%zu bytes\n", mib,
	       (unsigned long long)(us / 1000), mib / ((double)us / 1e6), r.out_len, r.err_len);
	agsbx_run_result_clear(&r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: runner-bench spawn RUNS | flood BYTES | raw-flood BYTES\n");
		return 2;
	}
	if (agsbx_runner_init() < 0)
		return 1;
	if (strcmp(argv[1], "spawn") == 0)
		return bench_spawn(atoi(argv[2]) > 0 ? atoi(argv[2]) : 200);
	if (strcmp(argv[1], "flood") == 0)
		return bench_flood(argv[2], false);
	if (strcmp(argv[1], "raw-flood") == 0)
		return bench_flood(argv[2], true);
	return 2;
}
