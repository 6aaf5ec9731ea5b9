/* bench: per-provider spawn latency (p50/p99) of `payload true` through the
 * provider, against plain fork+exec of the same payload, measured in the
 * same run. Numbers, not assertions. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/log.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/harness.h"
#include "providers/external/external.h"

static const char help[] =
	"usage: agsbx-evidence bench [--provider ID]... [--adapter ID=COMMAND]... [--wrap ID=TEMPLATE]...\n"
	"                            [--runs N] [--run-as USER] [--json]\n"
	"\n"
	"Times N executions of the payload's 'true' through each available provider and as a plain\n"
	"fork+exec baseline; prints p50/p99 in microseconds and the ratio to the baseline.\n"
	"\n"
	"  --provider ID          a provider to time (repeatable; default: every available one)\n"
	"  --runs N               executions per provider\n"
	"  --run-as USER          when root: run the sandboxes as this unprivileged user\n"
	"  --json                 the timings as JSON on stdout\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 measured, 2 bad usage, 3 internal error\n"
	"\n"
	"example: agsbx-evidence bench --provider landlock --runs 50\n";

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void percentiles(uint64_t *v, int n, uint64_t *p50, uint64_t *p99)
{
	qsort(v, (size_t)n, sizeof *v, cmp_u64);
	*p50 = v[n / 2];
	*p99 = v[(n * 99) / 100 >= n ? n - 1 : (n * 99) / 100];
}

static int baseline(const char *payload, int runs, uint64_t *t)
{
	for (int i = 0; i < runs; i++) {
		uint64_t t0 = agsbx_now_us();
		pid_t pid = fork();
		if (pid < 0)
			return -errno;
		if (pid == 0) {
			/* Same plumbing as a provider run: no output on our stdout. */
			int null = open("/dev/null", O_RDWR);
			if (null >= 0) {
				dup2(null, STDOUT_FILENO);
				dup2(null, STDERR_FILENO);
			}
			execl(payload, payload, "true", (char *)NULL);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
		t[i] = agsbx_now_us() - t0;
	}
	return 0;
}

static int time_provider(const struct agsbx_provider_ops *ops, const struct agsbx_ctx *ctx, int runs, uint64_t *t,
			 char *why, size_t why_size)
{
	struct agsbx_probe p = { 0 };
	ops->probe(ctx, &p);
	if (!p.available) {
		snprintf(why, why_size, "%s", p.reason ? p.reason : "unavailable");
		agsbx_probe_clear(&p);
		if (ops->finish) {
			struct agsbx_failure defect = { 0 };
			json_decref(ops->finish(ops, &defect));
		}
		return -ENODEV;
	}
	agsbx_probe_clear(&p);
	const char *tmp = getenv("TMPDIR");
	struct agsbx_grant *g = NULL;
	int r = agsbx_grant_create(tmp && *tmp ? tmp : "/tmp", "agsbx-bench", ctx->run_as ? ctx->run_uid : (uid_t)-1,
				   ctx->run_as ? ctx->run_gid : (gid_t)-1, &g);
	if (r == 0)
		r = agsbx_grant_add_file(g, "agsbx-payload", ctx->payload_path, true);
	struct agsbx_handle *h = NULL;
	struct agsbx_failure fail = { 0 };
	if (r == 0 && (r = ops->ensure(ctx, g, &h, &fail)) < 0)
		snprintf(why, why_size, "%s", fail.reason ? fail.reason : "ensure failed");
	for (int i = 0; r == 0 && i < runs; i++) {
		_cleanup_free_ char *pl = agsbx_handle_path(h, AGSBX_ROOT_SOURCE, "agsbx-payload");
		const char *argv[] = { pl, "true", NULL };
		struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
		struct agsbx_limits lim = { .max_output_bytes = 4096, .timeout_ms = 60000, .cancel_fd = -1 };
		struct agsbx_exec_result xr = { 0 };
		uint64_t t0 = agsbx_now_us();
		r = ops->execute(h, &step, &lim, &xr, &fail);
		t[i] = agsbx_now_us() - t0;
		if (r == 0 && xr.run.status != 0) {
			snprintf(why, why_size, "payload exited %d", xr.run.status);
			r = -EIO;
		}
		agsbx_exec_result_clear(&xr);
	}
	if (h) {
		ops->release(h);
		agsbx_handle_free(h);
	}
	if (ops->finish) {
		struct agsbx_failure defect = { 0 };
		json_decref(ops->finish(ops, &defect));
		if (r == 0 && defect.reason) {
			snprintf(why, why_size, "%.40s: %.200s", defect.reason, defect.message);
			r = -EPROTO;
		}
	}
	agsbx_grant_destroy(g);
	return r;
}

int agsbx_cmd_bench(int argc, char **argv)
{
	if (agsbx_wants_help(argc, argv, help))
		return AGSBX_EXIT_OK;
	const char *ids[16];
	int nids = 0, runs = 50;
	bool as_json = false;
	const char *run_as = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--provider") == 0 && i + 1 < argc && nids < 16) {
			ids[nids++] = argv[++i];
		} else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 2 || v > 100000)
				return agsbx_usage_error("bench", "--runs: expected an integer in [2, 100000]");
			runs = (int)v;
		} else if (strcmp(argv[i], "--run-as") == 0 && i + 1 < argc) {
			run_as = argv[++i];
		} else if ((strcmp(argv[i], "--adapter") == 0 || strcmp(argv[i], "--wrap") == 0) && i + 1 < argc) {
			char err[512] = "";
			bool wrap = strcmp(argv[i], "--wrap") == 0;
			if (agsbx_external_declare(argv[++i], wrap, err, sizeof err) < 0)
				return agsbx_usage_error("bench", "%s", err);
		} else if (strcmp(argv[i], "--json") == 0) {
			as_json = true;
		} else {
			return agsbx_usage_error("bench", "unknown argument '%s'", argv[i]);
		}
	}
	for (int i = 0; i < nids; i++)
		if (!agsbx_provider_find(ids[i]))
			return agsbx_usage_error("bench", "unknown provider '%s'", ids[i]);
	struct agsbx_harness hs;
	int rc = agsbx_harness_init(&hs, "bench", run_as, false);
	if (rc)
		return rc;
	_cleanup_free_ uint64_t *t = calloc((size_t)runs, sizeof *t);
	if (!t || baseline(hs.payload_path, runs, t) < 0) {
		agsbx_harness_free(&hs);
		return AGSBX_EXIT_INTERNAL;
	}
	uint64_t b50, b99;
	percentiles(t, runs, &b50, &b99);
	json_t *out = json_pack("{s:i, s:{s:I, s:I}, s:[]}", "runs", runs, "baseline", "p50_us", (json_int_t)b50,
				"p99_us", (json_int_t)b99, "providers");
	if (!as_json)
		printf("%-16s %10s %10s %8s\n%-16s %10llu %10llu %8s\n", "provider", "p50 (us)", "p99 (us)", "x base",
		       "fork+exec", (unsigned long long)b50, (unsigned long long)b99, "1.00");
	size_t n = nids ? (size_t)nids : agsbx_provider_builtin_count();
	for (size_t i = 0; i < n; i++) {
		const struct agsbx_provider_ops *ops = nids ? agsbx_provider_find(ids[i]) : agsbx_provider_at(i);
		if (ops->applies && !ops->applies())
			continue;
		char why[256] = "";
		int r = time_provider(ops, &hs.ctx, runs, t, why, sizeof why);
		uint64_t p50 = 0, p99 = 0;
		if (r == 0)
			percentiles(t, runs, &p50, &p99);
		json_array_append_new(json_object_get(out, "providers"),
				      r == 0 ? json_pack("{s:s, s:I, s:I, s:I}", "id", ops->id, "p50_us", (json_int_t)p50,
							 "p99_us", (json_int_t)p99, "ratio_permille",
							 (json_int_t)(b50 ? p50 * 1000 / b50 : 0))
					     : json_pack("{s:s, s:s}", "id", ops->id, "unavailable", why));
		if (!as_json && r == 0)
			printf("%-16s %10llu %10llu %8.2f\n", ops->id, (unsigned long long)p50, (unsigned long long)p99,
			       b50 ? (double)p50 / (double)b50 : 0.0);
		else if (!as_json)
			printf("%-16s %10s %10s %8s  (%s)\n", ops->id, "-", "-", "-", why);
	}
	if (as_json) {
		json_dumpf(out, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
	}
	json_decref(out);
	agsbx_harness_free(&hs);
	return AGSBX_EXIT_OK;
}
