/* bench: per provider, the latency of the payload's `true` through the
 * provider's execute() against the same step run by the raw mechanism by
 * hand (ops->raw_command: bwrap with the same binds, the landlock helper
 * with the same manifest, docker run with the same mounts), interleaved in
 * the same run so both see the same machine. Numbers, not assertions. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/harness.h"
#include "providers/external/external.h"

const char agsbx_help_bench[] =
	"usage: agsbx-evidence bench [--provider ID]... [--adapter ID=COMMAND]... [--wrap ID=TEMPLATE]...\n"
	"                            [--runs N] [--warmup N] [--run-as USER] [--json]\n"
	"\n"
	"Times N executions of the payload's 'true' through each available provider and, interleaved\n"
	"in the same run, the same step run by the raw mechanism by hand (bwrap with the same binds,\n"
	"the landlock helper with the same manifest, docker run --runtime=runsc with the same mounts,\n"
	"the program itself for trusted_local). Prints p50/p90 in microseconds and the ratio of the\n"
	"p50s (provider / raw). gvisor runs its executions in a warm container (docker exec); its\n"
	"raw baseline starts a container each time.\n"
	"\n"
	"  --provider ID   a provider to time (repeatable; default: every provider for this platform)\n"
	"  --runs N        timed executions of each (default 50, 2..100000)\n"
	"  --warmup N      untimed executions of each first (default 3, 0..1000)\n"
	"  --run-as USER   when root: run as this unprivileged user\n"
	"  --json          JSON on stdout\n"
	"  -h, --help      this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 measured (an unavailable provider is reported, not an error), 2 bad usage,\n"
	"3 internal error\n"
	"\n"
	"example: agsbx-evidence bench --provider landlock --runs 50\n";

#define MAX_IDS 16

struct bench_opts {
	const char *ids[MAX_IDS];
	int nids;
	long long runs, warmup;
	const char *run_as;
	bool json;
};

static int add_provider(struct bench_opts *o, const char *id)
{
	if (o->nids >= MAX_IDS)
		return agsbx_usage_error("bench", "--provider given more than %d times", MAX_IDS);
	for (int i = 0; i < o->nids; i++)
		if (strcmp(o->ids[i], id) == 0)
			return agsbx_usage_error("bench", "provider '%s' given twice", id);
	o->ids[o->nids++] = id;
	return 0;
}

static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	enum { O_PROVIDER = AGSBX_OPT_LOCAL, O_RUNS, O_WARMUP, O_ADAPTER, O_WRAP };
	static const struct option lo[] = {
		{ "provider", required_argument, NULL, O_PROVIDER }, { "runs", required_argument, NULL, O_RUNS },
		{ "warmup", required_argument, NULL, O_WARMUP }, AGSBX_OPTION_RUN_AS, AGSBX_OPTION_JSON,
		{ "adapter", required_argument, NULL, O_ADAPTER }, { "wrap", required_argument, NULL, O_WRAP }, { 0 },
	};
	o->runs = 50;
	o->warmup = 3;
	struct agsbx_args a = { .cmd = "bench", .argc = argc, .argv = argv };
	int c = 0, r = 0;
	struct agsbx_error f;
	while (r == 0 && (c = agsbx_args_next(&a, lo)) > 0) {
		switch (c) {
		case O_PROVIDER: r = add_provider(o, a.value); break;
		case O_RUNS: r = agsbx_parse_count("bench", "--runs", a.value, 2, 100000, &o->runs); break;
		case O_WARMUP: r = agsbx_parse_count("bench", "--warmup", a.value, 0, 1000, &o->warmup); break;
		case AGSBX_OPT_RUN_AS: o->run_as = a.value; break;
		case AGSBX_OPT_JSON: o->json = true; break;
		default: /* declared before any --provider naming it is looked up */
			f = (struct agsbx_error){ 0 };
			if (agsbx_external_declare(a.value, c == O_WRAP, &f) < 0)
				r = agsbx_usage_error("bench", "%s", f.message);
		}
	}
	if (r || c < 0 || agsbx_args_operands(&a, 0, 0, NULL, NULL))
		return AGSBX_EXIT_USAGE;
	/* After the loop: --adapter may come after the --provider naming it. */
	for (int i = 0; i < o->nids; i++)
		if (!agsbx_provider_find(o->ids[i]))
			return agsbx_usage_error("bench", "unknown provider '%s' (see 'agsbx-evidence providers')", o->ids[i]);
	return 0;
}

/* ---- timing ------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of n sorted samples. */
static uint64_t pct(const uint64_t *v, size_t n, unsigned p)
{
	size_t k = (n * p + 99) / 100;
	return v[k ? k - 1 : 0];
}

/* The raw command as a user's shell would run it: fork, exec, wait; the
 * output goes to /dev/null (the provider's is captured, which is part of
 * what it costs). Returns the wait status or -errno. */
static int run_raw(const struct agsbx_raw_command *rc, const struct agsbx_ctx *ctx, uint64_t *us)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		return -errno;
	uint64_t t0 = agsbx_now_us();
	/* Registered (base/runner.h), so no run's sweep takes it for an orphan. */
	pid_t pid = agsbx_runner_fork_registered();
	if (pid < 0) {
		int e = -errno;
		close(null);
		return e;
	}
	if (pid == 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (ctx->run_as && (setgroups(0, NULL) < 0 || setresgid(ctx->run_gid, ctx->run_gid, ctx->run_gid) < 0 ||
				    setresuid(ctx->run_uid, ctx->run_uid, ctx->run_uid) < 0))
			_exit(126);
		if (rc->cwd && chdir(rc->cwd) < 0)
			_exit(126);
		if (rc->envp)
			execvpe(rc->argv[0], rc->argv, rc->envp);
		else
			execvp(rc->argv[0], rc->argv);
		_exit(127);
	}
	close(null);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*us = agsbx_now_us() - t0;
	agsbx_runner_unregister_child(pid);
	return st;
}

static int run_provider(const struct agsbx_provider_ops *ops, struct agsbx_handle *h, const struct agsbx_step *step,
			uint64_t *us, char *why, size_t why_size)
{
	struct agsbx_limits lim = { .max_output_bytes = 4096, .timeout_ms = 60000, .cancel_fd = -1 };
	struct agsbx_exec_result xr = { 0 };
	struct agsbx_error fail = { 0 };
	uint64_t t0 = agsbx_now_us();
	int r = ops->execute(h, step, &lim, &xr, &fail);
	*us = agsbx_now_us() - t0;
	if (r < 0)
		snprintf(why, why_size, "execute refused: %s", fail.reason ? fail.reason : strerror(-r));
	else if (xr.run.status != 0)
		snprintf(why, why_size, "payload exited %d through the provider", xr.run.status);
	/* read before the clear (it zeroes the status) */
	int status = xr.run.status;
	agsbx_exec_result_clear(&xr);
	return r < 0 ? r : status != 0 ? -EIO : 0;
}

/* ---- one provider --------------------------------------------------------- */

struct series {
	uint64_t *prov, *raw;
	bool raw_ok;
	char raw_why[256];
};

/* Provider and raw alternate, each going first every other round, so a
 * drift in machine load hits both alike. */
static int measure(const struct agsbx_provider_ops *ops, struct agsbx_handle *h, const struct agsbx_ctx *ctx,
		   const struct agsbx_step *step, const struct agsbx_raw_command *rc, const struct bench_opts *o,
		   struct series *s, char *why, size_t why_size)
{
	long long total = o->warmup + o->runs;
	for (long long i = 0; i < total; i++) {
		uint64_t tp = 0, tr = 0;
		for (int k = 0; k < 2; k++) {
			if ((k == 0) == (i % 2 == 0)) {
				int r = run_provider(ops, h, step, &tp, why, why_size);
				if (r < 0)
					return r;
			} else if (s->raw_ok) {
				int st = run_raw(rc, ctx, &tr);
				if (st != 0) {
					s->raw_ok = false;
					snprintf(s->raw_why, sizeof s->raw_why, "%s exited %s %d", rc->argv[0],
						 st < 0 ? "with error" : WIFSIGNALED(st) ? "on signal" : "with status",
						 st < 0 ? -st : WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
				}
			}
		}
		if (i >= o->warmup) {
			s->prov[i - o->warmup] = tp;
			s->raw[i - o->warmup] = tr;
		}
	}
	return 0;
}

static json_t *argv_json(char *const *v)
{
	json_t *a = json_array();
	for (; v && *v; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

static json_t *stats_json(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_u64);
	return json_pack("{s:I, s:I, s:I, s:I}", "p50_us", (json_int_t)pct(v, n, 50), "p90_us", (json_int_t)pct(v, n, 90),
			 "min_us", (json_int_t)v[0], "max_us", (json_int_t)v[n - 1]);
}

/* The provider's row: its stats, the raw baseline's, and the ratio. */
static json_t *row_json(const struct agsbx_provider_ops *ops, struct series *s, const struct agsbx_raw_command *rc,
			size_t n)
{
	json_t *row = json_pack("{s:s, s:o}", "id", ops->id, "provider", stats_json(s->prov, n));
	json_t *raw = json_pack("{s:o}", "argv", argv_json(rc->argv));
	if (s->raw_ok) {
		json_t *st = stats_json(s->raw, n);
		json_object_update(raw, st);
		json_decref(st);
		double p50 = (double)json_integer_value(json_object_get(json_object_get(row, "provider"), "p50_us"));
		double b50 = (double)json_integer_value(json_object_get(raw, "p50_us"));
		json_object_set_new(row, "ratio_p50", json_real(b50 > 0 ? p50 / b50 : 0));
	} else {
		json_object_set_new(raw, "unavailable", json_string(s->raw_why));
	}
	json_object_set_new(row, "raw", raw);
	return row;
}

static int grant_for(const struct agsbx_ctx *ctx, struct agsbx_grant **g)
{
	const char *tmp = getenv("TMPDIR");
	int r = agsbx_grant_create(tmp && *tmp ? tmp : "/tmp", "agsbx-bench", ctx->run_as ? ctx->run_uid : (uid_t)-1,
				   ctx->run_as ? ctx->run_gid : (gid_t)-1, g);
	if (r == 0)
		r = agsbx_grant_add_file(*g, "agsbx-payload", ctx->payload_path, true);
	if (r == 0)
		r = agsbx_grant_seal(*g);
	return r;
}

/* A declared (external) provider's run is over: its adapter is stopped.
 * bench reports timings, not contract breaks, so the record is dropped. */
static void finish(const struct agsbx_provider_ops *ops)
{
	if (ops->finish) {
		struct agsbx_error defect = { 0 };
		json_decref(ops->finish(ops, &defect));
	}
}

/* The raw mechanism's command for step, or why there is none (in s). */
static void raw_for(const struct agsbx_provider_ops *ops, struct agsbx_handle *h, const struct agsbx_step *step,
		    struct agsbx_raw_command *rc, struct series *s)
{
	int r = ops->raw_command ? ops->raw_command(h, step, rc) : -EOPNOTSUPP;
	if (r < 0) {
		s->raw_ok = false;
		snprintf(s->raw_why, sizeof s->raw_why, "%s",
			 r == -EOPNOTSUPP ? "the provider names no raw mechanism command" : strerror(-r));
	}
}

/* Probe, ensure, raw command, the interleaved series, release. */
static json_t *bench_provider(const struct agsbx_provider_ops *ops, const struct agsbx_ctx *ctx,
			      const struct bench_opts *o)
{
	char why[256] = "";
	struct agsbx_probe p = { 0 };
	ops->probe(ops, ctx, &p);
	bool avail = p.available;
	snprintf(why, sizeof why, "%s", p.reason ? p.reason : "unavailable");
	agsbx_provider_probe_clear(&p);
	if (!avail) {
		finish(ops);
		return json_pack("{s:s, s:s}", "id", ops->id, "unavailable", why);
	}
	struct agsbx_grant *g = NULL;
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	struct agsbx_raw_command rc = { 0 };
	struct series s = { .prov = calloc((size_t)o->runs, sizeof(uint64_t)),
			    .raw = calloc((size_t)o->runs, sizeof(uint64_t)), .raw_ok = true };
	json_t *row = NULL;
	int r = s.prov && s.raw ? grant_for(ctx, &g) : -ENOMEM;
	if (r < 0)
		snprintf(why, sizeof why, "cannot prepare the grant: %s", strerror(-r));
	else if ((r = ops->ensure(ops, ctx, g, &h, &fail)) < 0)
		snprintf(why, sizeof why, "ensure refused: %s", fail.reason ? fail.reason : strerror(-r));
	_cleanup_free_ char *pl = h ? agsbx_handle_path(h, AGSBX_ROOT_SOURCE, "agsbx-payload") : NULL;
	const char *argv[] = { pl, "true", NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	if (r == 0) {
		raw_for(ops, h, &step, &rc, &s);
		r = measure(ops, h, ctx, &step, &rc, o, &s, why, sizeof why);
	}
	if (h) {
		agsbx_provider_release(h);
		agsbx_handle_free(h);
	}
	agsbx_grant_destroy(g);
	/* A declared provider's adapter that broke the contract: no numbers. */
	if (ops->finish) {
		struct agsbx_error defect = { 0 };
		json_decref(ops->finish(ops, &defect));
		if (r == 0 && defect.reason) {
			snprintf(why, sizeof why, "%.40s: %.200s", defect.reason, defect.message);
			r = -EPROTO;
		}
	}
	if (r == 0)
		row = row_json(ops, &s, &rc, (size_t)o->runs);
	else
		row = json_pack("{s:s, s:s}", "id", ops->id, "unavailable", why);
	agsbx_raw_command_clear(&rc);
	free(s.prov);
	free(s.raw);
	return row;
}

static void print_row(const json_t *row)
{
	const json_t *pv = json_object_get(row, "provider"), *raw = json_object_get(row, "raw");
	const char *id = json_string_value(json_object_get(row, "id"));
	if (!pv) {
		printf("%-14s %9s %9s  %9s %9s  %6s  (%s)\n", id, "-", "-", "-", "-", "-",
		       json_string_value(json_object_get(row, "unavailable")));
		return;
	}
	printf("%-14s %9lld %9lld", id, (long long)json_integer_value(json_object_get(pv, "p50_us")),
	       (long long)json_integer_value(json_object_get(pv, "p90_us")));
	if (json_object_get(raw, "p50_us"))
		printf("  %9lld %9lld  %6.2f  %s\n", (long long)json_integer_value(json_object_get(raw, "p50_us")),
		       (long long)json_integer_value(json_object_get(raw, "p90_us")),
		       json_real_value(json_object_get(row, "ratio_p50")),
		       json_string_value(json_array_get(json_object_get(raw, "argv"), 0)));
	else
		printf("  %9s %9s  %6s  (raw: %s)\n", "-", "-", "-", json_string_value(json_object_get(raw, "unavailable")));
}

int agsbx_cmd_bench(int argc, char **argv)
{
	struct bench_opts o = { 0 };
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	struct agsbx_harness hs;
	if ((rc = agsbx_harness_init(&hs, "bench", o.run_as, false)))
		return rc;
	json_t *out = json_pack("{s:I, s:I, s:s, s:[]}", "runs", (json_int_t)o.runs, "warmup", (json_int_t)o.warmup,
				"method",
				"CLOCK_MONOTONIC around each execute() and each fork+exec+wait of the raw command, "
				"interleaved (alternating which goes first); integer microseconds; ratio_p50 = provider "
				"p50 / raw p50",
				"providers");
	if (!o.json)
		printf("%-14s %9s %9s  %9s %9s  %6s  %s\n", "provider", "p50 (us)", "p90 (us)", "raw p50", "raw p90",
		       "ratio", "raw mechanism");
	size_t n = o.nids ? (size_t)o.nids : agsbx_provider_builtin_count();
	for (size_t i = 0; i < n; i++) {
		const struct agsbx_provider_ops *ops = o.nids ? agsbx_provider_find(o.ids[i]) : agsbx_provider_at(i);
		if (ops->applies && !ops->applies(ops))
			continue;
		json_t *row = bench_provider(ops, &hs.ctx, &o);
		if (!row) {
			rc = AGSBX_EXIT_INTERNAL;
			break;
		}
		if (!o.json) {
			print_row(row);
			fflush(stdout);
		}
		json_array_append_new(json_object_get(out, "providers"), row);
	}
	if (o.json && rc == 0)
		agsbx_cli_print_json(out, JSON_SORT_KEYS);
	json_decref(out);
	agsbx_harness_clear(&hs);
	return rc;
}
