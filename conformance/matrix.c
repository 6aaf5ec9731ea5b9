/* Runs the catalogue against one provider: set-up (grant, canaries),
 * probe, ensure, the checks concurrently (bounded by the core count, the
 * order in the bundle fixed by the catalogue), capabilities.truthful, the
 * verdict, and tear-down. */
#include "conformance/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fsat.h"
#include "base/log.h"
#include "base/rundir.h"
#include "base/util.h"

/* The catalogue (capabilities.truthful is one of its rows). */
size_t agsbx_conformance_check_count(void)
{
	return cf_checks_count;
}

/* ---- set-up ------------------------------------------------------------ */

struct fixture {
	struct agsbx_grant *grant;
	char *canary_dir;
	char *canary_file;
	char *canary_wdir;
	char *ro_canary;
	char secret[65];
	char ro_content[65];
};

/* A new file name in dir, handed to the sandbox user: created exclusively
 * and chowned through its fd, no rename. dir may be the user's already
 * (the source root): any path in it could be a link by the next call. */
static int write_owned(const char *dir, const char *name, const char *text, mode_t mode, const struct agsbx_ctx *ctx)
{
	_cleanup_close_ int dfd = agsbx_dir_open(dir);
	if (dfd < 0)
		return dfd;
	return agsbx_create_file_at(dfd, name, text, strlen(text), mode, ctx->run_as ? ctx->run_uid : (uid_t)-1,
				    ctx->run_gid);
}

static int fixture_setup(struct fixture *f, const struct agsbx_conformance_opts *o, const struct agsbx_ctx *ctx)
{
	uid_t uid = ctx->run_as ? ctx->run_uid : (uid_t)-1;
	gid_t gid = ctx->run_as ? ctx->run_gid : (gid_t)-1;
	int r = agsbx_grant_create(o->work_dir, "area", uid, gid, &f->grant);
	if (r < 0)
		return r;
	r = agsbx_grant_add_file(f->grant, "agsbx-payload", ctx->payload_path, true);
	if (r < 0)
		return r;
	r = agsbx_grant_seal(f->grant);
	if (r < 0)
		return r;
	/* A canary in source that is not part of the hashed bundle: writes to
	 * it must be denied, and if a provider lets them through, the TOCTOU
	 * guard must not mask that as "bundle changed". */
	agsbx_random_hex(f->ro_content, 32);
	f->ro_canary = agsbx_path_join(f->grant->roots[AGSBX_ROOT_SOURCE].path, "ro-canary.txt");
	if (!f->ro_canary)
		return -ENOMEM;
	r = write_owned(f->grant->roots[AGSBX_ROOT_SOURCE].path, "ro-canary.txt", f->ro_content, 0644, ctx);
	if (r < 0)
		return r;
	/* Canaries outside the grant, owned by whoever the sandbox runs as and
	 * readable/writable by it under plain file modes: only the mechanism
	 * can deny them (a test reading /etc/shadow could not tell the mechanism
	 * from plain file modes). */
	char hex[17];
	agsbx_random_hex(hex, 8);
	if (asprintf(&f->canary_dir, "%s/canary-%s", o->work_dir, hex) < 0)
		return -ENOMEM;
	if (mkdir(f->canary_dir, 0755) < 0)
		return -errno;
	agsbx_random_hex(f->secret, 32);
	f->canary_file = agsbx_path_join(f->canary_dir, "secret.txt");
	f->canary_wdir = agsbx_path_join(f->canary_dir, "writable");
	if (!f->canary_file || !f->canary_wdir)
		return -ENOMEM;
	r = write_owned(f->canary_dir, "secret.txt", f->secret, 0644, ctx);
	if (r < 0)
		return r;
	if (mkdir(f->canary_wdir, 0755) < 0)
		return -errno;
	if (ctx->run_as && (chown(f->canary_wdir, uid, gid) < 0 || chown(f->canary_dir, uid, gid) < 0))
		return -errno;
	return 0;
}

static void fixture_teardown(struct fixture *f)
{
	agsbx_grant_destroy(f->grant);
	if (f->canary_dir)
		agsbx_rm_tree(f->canary_dir); /* never follows a link a sandbox planted */
	free(f->canary_dir);
	free(f->canary_file);
	free(f->canary_wdir);
	free(f->ro_canary);
}

/* ---- running checks ------------------------------------------------------ */

struct job {
	const struct check_def *def;
	struct check_env env;
	bool required;
	json_t *result;       /* the check object */
	enum agsbx_check_verdict verdict;
	bool observed_pass;
};

struct pool {
	struct job **jobs;
	size_t n, next;
	pthread_mutex_t lock;
	const struct agsbx_conformance_opts *o;
	const char *provider;
};

static enum agsbx_check_verdict verdict_of(const struct check_out *out, bool required)
{
	if (out->skipped)
		return AGSBX_CHECK_SKIP;
	if (!required)
		return AGSBX_CHECK_NOT_CLAIMED;
	return out->observed_pass ? AGSBX_CHECK_PASS : AGSBX_CHECK_FAIL;
}

static void set_result(struct job *j, enum agsbx_check_verdict v, bool observed_pass, const char *reason,
		       uint64_t duration_us, json_t *observations, json_t *facts)
{
	j->verdict = v;
	j->observed_pass = observed_pass;
	j->result = agsbx_bundle_check(&(struct agsbx_check_record){
		.id = j->def->id, .axis = agsbx_axes[j->def->axis].name, .verdict = v, .observed_pass = observed_pass,
		.reason = reason, .duration_us = duration_us, .observations = observations, .facts = facts });
}

/* What the harness itself makes of a check's outcome: an interrupt or a
 * result its own output limit cut is no verdict about the provider. */
static void settle(const struct job *j, struct check_out *out)
{
	if (!out->reason[0])
		cf_reason(out, "internal: the check could not run (out of memory?)");
	/* An interrupt cancelled the executions under this check: whatever
	 * it observed is no verdict. */
	if (agsbx_runner_aborted()) {
		out->skipped = true;
		cf_reason(out, "not completed: the harness was interrupted");
	}
	/* A verdict that rests on a result the harness's own output limit
	 * cut off is inconclusive, not a defect; a check that already found
	 * "no observation" says why there was none (the cut). */
	if (out->result_cut && !agsbx_runner_aborted() && !out->observed_pass && (j->required || out->skipped)) {
		out->skipped = true;
		char why[sizeof out->reason];
		snprintf(why, sizeof why, "%s", out->reason);
		cf_reason(out, "inconclusive: a payload result line was cut by the output limit (%s)", why);
	}
}

static void run_job(struct job *j)
{
	struct check_out out = { .observations = json_array(), .facts = json_object() };
	uint64_t t0 = agsbx_now_us();
	j->env.required = j->required;
	j->def->run(&j->env, &out);
	uint64_t duration_us = agsbx_now_us() - t0;
	settle(j, &out);
	set_result(j, verdict_of(&out, j->required), out.observed_pass && !out.skipped, out.reason, duration_us,
		   out.observations, out.facts);
}

static void report(const struct agsbx_conformance_opts *o, const char *provider, const json_t *check)
{
	if (o->progress)
		o->progress(o->progress_ud, provider, check);
}

static void *worker(void *p)
{
	struct pool *pl = p;
	for (;;) {
		pthread_mutex_lock(&pl->lock);
		/* An interrupted harness starts no further check. */
		size_t i = pl->next < pl->n && !agsbx_runner_aborted() ? pl->next++ : pl->n;
		pthread_mutex_unlock(&pl->lock);
		if (i >= pl->n)
			return NULL;
		run_job(pl->jobs[i]);
		pthread_mutex_lock(&pl->lock);
		report(pl->o, pl->provider, pl->jobs[i]->result);
		pthread_mutex_unlock(&pl->lock);
	}
}

static int check_threads(const struct agsbx_conformance_opts *o)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return o->jobs > 0 ? o->jobs : (int)(cores > 0 ? cores : 2);
}

/* extra: threads on top of --jobs, one per long-waiting lifecycle check
 * queued first, so their waits do not hold the other checks back. */
static void run_pool(struct job **jobs, size_t n, const struct agsbx_conformance_opts *o, const char *provider, int extra)
{
	if (n == 0)
		return;
	struct pool pl = { .jobs = jobs, .n = n, .o = o, .provider = provider };
	pthread_mutex_init(&pl.lock, NULL);
	int nthreads = check_threads(o) + extra;
	if (nthreads > (int)n)
		nthreads = (int)n;
	pthread_t *t = calloc((size_t)nthreads, sizeof *t);
	int started = 0;
	for (int i = 0; t && i < nthreads; i++)
		if (pthread_create(&t[started], NULL, worker, &pl) == 0)
			started++;
	if (started == 0)
		worker(&pl);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
	pthread_mutex_destroy(&pl.lock);
}

/* ---- adapter.protocol ---------------------------------------------------- */

/* A declared provider's end of run (ops->finish): its record for the
 * provider object in *declared, and the adapter.protocol check, which
 * fails on a protocol violation, a missed deadline, an early exit or
 * leftovers. NULL for built-in providers. */
static json_t *finish_provider(const struct agsbx_provider_ops *ops, json_t **declared)
{
	*declared = NULL;
	if (!ops->declared || !ops->finish)
		return NULL;
	struct agsbx_error defect = { 0 };
	uint64_t t0 = agsbx_now_us();
	*declared = ops->finish(ops, &defect);
	/* A wrapper has no protocol: its runs are the harness's own. */
	const char *kind = json_string_value(json_object_get(*declared, "kind"));
	if (!kind || strcmp(kind, "external") != 0)
		return NULL;
	bool ok = !defect.reason;
	char reason[700];
	snprintf(reason, sizeof reason, ok ? "every response was well-formed, in time, and nothing was left running"
					   : "%s: %s", defect.reason, defect.message);
	return agsbx_bundle_check(&(struct agsbx_check_record){
		.id = "adapter.protocol", .axis = agsbx_axes[AGSBX_AXIS_CONTRACT].name,
		.verdict = ok ? AGSBX_CHECK_PASS : AGSBX_CHECK_FAIL, .observed_pass = ok, .reason = reason,
		.duration_us = agsbx_now_us() - t0, .facts = json_pack("{s:s*}", "reason", defect.reason) });
}

/* One `true` through the provider before the checks: its latency scales
 * the lifecycle timeouts (a container runtime starts slower than a
 * fork). */
static uint64_t warm_up(const struct check_env *env)
{
	struct check_out out = { .observations = json_array(), .facts = json_object() };
	uint64_t t0 = agsbx_now_us();
	cf_sandbox_op(env, &out, env->h, NULL, (const char *const[]){ "true", NULL }, NULL, NULL);
	uint64_t us = agsbx_now_us() - t0;
	json_decref(out.observations);
	json_decref(out.facts);
	return us;
}

/* 0: pool, queued first on an extra thread; 1: pool; 2: alone, after. */
static int placement(const struct agsbx_provider_ops *ops, const struct check_def *def)
{
	if (!def->exclusive)
		return 1;
	bool own_tree = ops->outside_harness_tree || ops->runs_keep_orphans;
	return def->exclusive == AGSBX_EXCLUSIVE_ORPHANS && own_tree ? 0 : 2;
}

struct phase_times {
	uint64_t probe_us, setup_us, ensure_us, warm_us, concurrent_us, exclusive_us, release_us, teardown_us;
};

/* Where the provider's time went, phase by phase (evidence/ words it). */
static int set_timings(json_t *pj, const struct phase_times *t, uint64_t total_us,
		       const struct agsbx_conformance_opts *o)
{
	return agsbx_bundle_provider_set_timings(pj, &(struct agsbx_provider_timings){
		.probe_us = t->probe_us, .setup_us = t->setup_us, .ensure_us = t->ensure_us, .first_exec_us = t->warm_us,
		.concurrent_us = t->concurrent_us, .exclusive_us = t->exclusive_us, .release_us = t->release_us,
		.teardown_us = t->teardown_us, .total_us = total_us, .check_threads = check_threads(o) });
}

/* The paired control for a whole provider: a harness that cannot hold the
 * descriptors a few concurrent runs need (ulimit -n 16) makes every probe
 * and check fail for a reason that says nothing about the mechanism. Such
 * a host skips the provider with the reason instead of calling it blocked
 * (a mechanism reason) or defective. */
#define FD_HEADROOM 64

static bool harness_starved(char *why, size_t size)
{
	int fds[FD_HEADROOM];
	int n = 0, err = 0;
	for (; n < FD_HEADROOM; n++) {
		fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fds[n] < 0) {
			err = errno;
			break;
		}
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	if (n == FD_HEADROOM)
		return false;
	struct rlimit rl = { 0 };
	getrlimit(RLIMIT_NOFILE, &rl);
	snprintf(why, size, "inconclusive on this host: the harness cannot open %d more file descriptors (%s; "
			    "RLIMIT_NOFILE %llu); raise the limit (ulimit -n) to test any provider",
		 FD_HEADROOM, strerrorname_np(err) ? strerrorname_np(err) : "?", (unsigned long long)rl.rlim_cur);
	return true;
}

/* The confinement as the program inside sees it: LSM label, seccomp mode,
 * NoNewPrivs and the capability sets (payload `status`). null when the
 * provider could not run it. */
static json_t *confinement(const struct check_env *env)
{
	static const char *const keys[] = { "uid", "euid", "apparmor_label", "seccomp", "no_new_privs", "cap_eff",
					    "cap_prm", "cap_inh", "cap_bnd", "cap_amb", "kernel_release" };
	struct check_out out = { .observations = json_array(), .facts = json_object() };
	json_t *res = NULL, *c = NULL;
	if (env->h && cf_sandbox_op(env, &out, env->h, NULL, (const char *const[]){ "status", NULL }, &res, NULL) == 0 && res) {
		c = json_object();
		for (size_t i = 0; i < AGSBX_ARRAY_SIZE(keys); i++) {
			json_t *v = json_object_get(res, keys[i]);
			json_object_set(c, keys[i], v ? v : json_null());
		}
	}
	json_decref(out.observations);
	json_decref(out.facts);
	return c ? c : json_null();
}

static void set_blocked_reason(char *buf, size_t size, const struct agsbx_probe *p)
{
	snprintf(buf, size, "mechanism unavailable: %s", p->reason ? p->reason : "unknown");
}

/* ---- the provider run: prepare, run, judge ------------------------------- */

struct provider_run {
	const struct agsbx_provider_ops *ops;
	const struct agsbx_conformance_opts *o;
	struct agsbx_probe probe;
	struct fixture f;
	struct utsname uts;
	struct check_env env;
	bool ran;             /* ensure gave a handle: the checks ran */
	struct agsbx_error fail;
	char blocked[600];    /* why checks that need a handle are blocked */
	json_t *confinement;
	struct job *jobs;     /* one per catalogue row, in its order */
	size_t n;
	struct phase_times pt;
};

/* Probe, execution area and canaries, ensure, the first execution; every
 * job gets its environment, and a blocked record when it needs a handle
 * the provider did not give. */
static int prepare(struct provider_run *st, struct agsbx_error *err)
{
	const struct agsbx_ctx *ctx = st->o->ctx;
	uint64_t t = agsbx_now_us();
	st->ops->probe(st->ops, ctx, &st->probe);
	st->pt.probe_us = agsbx_now_us() - t;
	t = agsbx_now_us();
	int r = fixture_setup(&st->f, st->o, ctx);
	st->pt.setup_us = agsbx_now_us() - t;
	if (r < 0) {
		agsbx_error_set(err, "internal", "cannot prepare the execution area in %s: %s", st->o->work_dir, strerror(-r));
		return r;
	}
	uname(&st->uts);
	st->env = (struct check_env){
		.ops = st->ops, .o = st->o, .ctx = ctx, .grant = st->f.grant, .probe = &st->probe,
		.canary_file = st->f.canary_file, .canary_secret = st->f.secret, .canary_wdir = st->f.canary_wdir,
		.ro_canary = st->f.ro_canary, .ro_canary_content = st->f.ro_content, .harness_pid = getpid(),
		.host_kernel_release = st->uts.release,
	};
	t = agsbx_now_us();
	if (st->probe.available && !agsbx_runner_aborted() &&
	    st->ops->ensure(st->ops, ctx, st->f.grant, &st->env.h, &st->fail) < 0)
		st->env.h = NULL;
	st->pt.ensure_us = agsbx_now_us() - t;
	st->ran = st->env.h != NULL;
	st->pt.warm_us = st->env.h ? warm_up(&st->env) : 0;
	st->confinement = confinement(&st->env);
	/* Long enough for any provider to start the detached tree, short
	 * enough that the matrix stays quick on fast mechanisms. */
	st->env.lifecycle_timeout_ms = 500 + (int64_t)(3 * st->pt.warm_us / 1000);
	if (!st->probe.available)
		set_blocked_reason(st->blocked, sizeof st->blocked, &st->probe);
	else if (!st->env.h)
		snprintf(st->blocked, sizeof st->blocked, "ensure refused after a ready probe: %s (%s)",
			 st->fail.reason ? st->fail.reason : "?", st->fail.message);
	return 0;
}

static int init_jobs(struct provider_run *st)
{
	st->n = cf_checks_count;
	st->jobs = calloc(st->n, sizeof *st->jobs);
	if (!st->jobs)
		return -ENOMEM;
	for (size_t i = 0; i < st->n; i++) {
		struct job *j = &st->jobs[i];
		j->def = &cf_checks[i];
		j->env = st->env;
		j->required = agsbx_axis_claimed(j->def->axis, &st->probe.caps);
		if (j->def->needs_handle && !st->env.h)
			set_result(j, AGSBX_CHECK_BLOCKED, false, st->blocked, 0, NULL, NULL);
	}
	return 0;
}

/* Pool order: placement 0 (on extra threads: they mostly wait), then
 * the long-running placement 1 ones, then the rest of 1; the exclusive
 * ones (2) after, each alone. */
static int pass_of(const struct agsbx_provider_ops *ops, const struct check_def *def)
{
	int p = placement(ops, def);
	return p == 0 ? 0 : p == 1 ? (def->long_running ? 1 : 2) : 3;
}

/* The run-phase jobs still to run, in pool order (pass_of). Returns how
 * many; *shared of them go to the pool and *waits are placement 0. */
static size_t queue(const struct provider_run *st, struct job **q, size_t *shared, int *waits)
{
	size_t k = 0;
	*shared = 0, *waits = 0;
	for (int pass = 0; pass < 4; pass++)
		for (size_t i = 0; i < st->n; i++) {
			struct job *j = &st->jobs[i];
			if (j->result || j->def->phase != CHECK_PHASE_RUN || pass_of(st->ops, j->def) != pass)
				continue;
			q[k++] = j;
			*shared += pass < 3;
			*waits += pass == 0;
		}
	return k;
}

/* Every run-phase check: the pool, then the exclusive ones alone; then
 * the handle is released. */
static int run_checks(struct provider_run *st)
{
	_cleanup_free_ struct job **q = calloc(st->n ? st->n : 1, sizeof *q);
	if (!q)
		return -ENOMEM;
	size_t shared;
	int waits;
	size_t k = queue(st, q, &shared, &waits);
	uint64_t tc = agsbx_now_us();
	run_pool(q, shared, st->o, st->ops->id, waits);
	uint64_t tx = agsbx_now_us();
	for (size_t i = shared; i < k; i++)
		run_pool(q + i, 1, st->o, st->ops->id, 0);
	st->pt.concurrent_us = tx - tc;
	st->pt.exclusive_us = shared < k ? agsbx_now_us() - tx : 0;
	uint64_t tr = agsbx_now_us();
	if (st->env.h) {
		agsbx_provider_release(st->env.h);
		agsbx_handle_free(st->env.h);
		st->env.h = NULL;
	}
	st->pt.release_us = agsbx_now_us() - tr;
	return 0;
}

/* Checks an interrupt kept from starting: the bundle is never written
 * then, but the object stays well-formed. */
static void fill_unrun(struct provider_run *st, enum check_phase phase)
{
	for (size_t i = 0; i < st->n; i++)
		if (!st->jobs[i].result && st->jobs[i].def->phase == phase)
			set_result(&st->jobs[i], AGSBX_CHECK_SKIP, false, "not run: the harness was interrupted", 0,
				   NULL, NULL);
}

static struct check_result *results_of(const struct provider_run *st)
{
	struct check_result *r = calloc(st->n ? st->n : 1, sizeof *r);
	for (size_t i = 0; r && i < st->n; i++)
		r[i] = (struct check_result){ st->jobs[i].def, st->jobs[i].verdict, st->jobs[i].observed_pass };
	return r;
}

/* The judge-phase checks, on every run-phase result. */
static int judge_checks(struct provider_run *st)
{
	_cleanup_free_ struct check_result *res = results_of(st);
	if (!res)
		return -ENOMEM;
	for (size_t i = 0; i < st->n; i++) {
		struct job *j = &st->jobs[i];
		if (j->result || j->def->phase != CHECK_PHASE_JUDGE)
			continue;
		j->env.h = NULL; /* released: a judge reads results only */
		j->env.results = res;
		j->env.nresults = st->n;
		run_job(j);
		j->env.results = NULL;
		report(st->o, st->ops->id, j->result);
	}
	return 0;
}

/* failing_checks: adapter.protocol, then the judgements (they sum up the
 * rest), then the run-phase checks in catalogue order; checks: every
 * record in catalogue order (sorted by id), adapter.protocol first. */
static void collect_records(struct provider_run *st, const json_t *protocol, json_t *failing, json_t *checks)
{
	if (protocol && agsbx_check_verdict_of(protocol) == AGSBX_CHECK_FAIL)
		json_array_append_new(failing, json_string("adapter.protocol"));
	for (int phase = CHECK_PHASE_JUDGE; phase >= CHECK_PHASE_RUN; phase--)
		for (size_t i = 0; i < st->n; i++)
			if (st->jobs[i].def->phase == (enum check_phase)phase && st->jobs[i].verdict == AGSBX_CHECK_FAIL)
				json_array_append_new(failing, json_string(st->jobs[i].def->id));
	if (protocol)
		json_array_append(checks, (json_t *)protocol);
	for (size_t i = 0; i < st->n; i++) {
		json_array_append_new(checks, st->jobs[i].result);
		st->jobs[i].result = NULL;
	}
}

static const char *provider_reason(const struct provider_run *st)
{
	if (st->ran)
		return "ready";
	if (st->probe.available)
		return st->fail.reason ? st->fail.reason : "ensure_failed";
	return st->probe.reason ? st->probe.reason : "unknown";
}

/* The provider record from the judged jobs, the probe and what a declared
 * provider's finish added. */
static json_t *provider_record(struct provider_run *st)
{
	json_t *declared = NULL;
	_cleanup_json_ json_t *protocol = finish_provider(st->ops, &declared);
	if (protocol)
		report(st->o, st->ops->id, protocol);
	_cleanup_free_ struct check_result *res = results_of(st);
	json_t *observed = res ? cf_observed(res, st->n) : NULL;
	json_t *underclaim = NULL;
	/* A judge may report what the provider did not claim but showed. */
	for (size_t i = 0; i < st->n && !underclaim; i++)
		if (st->jobs[i].def->phase == CHECK_PHASE_JUDGE)
			underclaim = json_object_get(json_object_get(st->jobs[i].result, "facts"), "underclaim");
	underclaim = underclaim ? json_incref(underclaim) : json_array();
	json_t *failing = json_array(), *checks = json_array();
	collect_records(st, protocol, failing, checks);
	json_t *pj = agsbx_bundle_provider(&(struct agsbx_provider_record){
		.id = st->ops->id, .ran = st->ran, .reason = provider_reason(st),
		.probe = agsbx_provider_probe_to_json(&st->probe), .claims = agsbx_caps_to_json(&st->probe.caps),
		.observed = observed, .underclaim = underclaim, .failing_checks = failing, .checks = checks,
		.confinement = st->confinement });
	st->confinement = NULL;
	/* A contract break outside any one check names the verdict. */
	const char *fr = json_string_value(json_object_get(json_object_get(protocol, "facts"), "reason"));
	if (pj && declared && agsbx_bundle_provider_declare(pj, declared, fr) < 0) {
		json_decref(pj);
		pj = NULL;
	}
	json_decref(declared);
	return pj;
}

static void provider_run_free(struct provider_run *st)
{
	for (size_t i = 0; st->jobs && i < st->n; i++)
		json_decref(st->jobs[i].result);
	free(st->jobs);
	json_decref(st->confinement);
	if (st->env.h) {
		agsbx_provider_release(st->env.h);
		agsbx_handle_free(st->env.h);
	}
	uint64_t t = agsbx_now_us();
	fixture_teardown(&st->f);
	agsbx_provider_probe_clear(&st->probe);
	st->pt.teardown_us = agsbx_now_us() - t;
}

/* A provider that never reached its checks: every row has the verdict. */
static json_t *unrun_provider(const struct agsbx_provider_ops *ops, enum agsbx_provider_verdict verdict,
			      const char *reason, const char *probe_reason, bool with_checks, uint64_t t0)
{
	json_t *checks = json_array();
	for (size_t i = 0; with_checks && i < cf_checks_count; i++)
		json_array_append_new(checks, agsbx_bundle_check(&(struct agsbx_check_record){
			.id = cf_checks[i].id, .axis = agsbx_axes[cf_checks[i].axis].name,
			.verdict = AGSBX_CHECK_SKIP, .reason = reason }));
	return agsbx_bundle_provider_unrun(ops->id, verdict, reason, probe_reason, checks, agsbx_now_us() - t0);
}

json_t *agsbx_conformance_run(const struct agsbx_provider_ops *ops, const struct agsbx_conformance_opts *o,
			      struct agsbx_error *err)
{
	uint64_t t0 = agsbx_now_us();
	if (ops->applies && !ops->applies(ops))
		return unrun_provider(ops, AGSBX_PROVIDER_SKIPPED, "not applicable to this platform", "not_applicable",
				      false, t0);
	char starved[300];
	if (harness_starved(starved, sizeof starved))
		return unrun_provider(ops, AGSBX_PROVIDER_SKIPPED, starved, "not_probed", true, t0);
	struct provider_run st = { .ops = ops, .o = o };
	json_t *pj = NULL;
	int r = prepare(&st, err);
	if (r == 0 && (r = init_jobs(&st)) == 0 && (r = run_checks(&st)) == 0) {
		fill_unrun(&st, CHECK_PHASE_RUN);
		if ((r = judge_checks(&st)) == 0) {
			fill_unrun(&st, CHECK_PHASE_JUDGE);
			pj = provider_record(&st);
		}
	}
	if (r == -ENOMEM)
		agsbx_error_set(err, "internal", "out of memory");
	provider_run_free(&st);
	if (pj && set_timings(pj, &st.pt, agsbx_now_us() - t0, o) < 0) {
		json_decref(pj);
		pj = NULL;
		agsbx_error_set(err, "internal", "out of memory");
	}
	return pj;
}
