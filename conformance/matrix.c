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
#include "base/log.h"
#include "base/util.h"

/* The catalogue plus capabilities.truthful, which the matrix computes. */
size_t agsbx_check_count(void)
{
	return agsbx_checks_count + 1;
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

static int write_owned(const char *path, const char *text, mode_t mode, const struct agsbx_ctx *ctx)
{
	int r = agsbx_write_file_atomic(path, text, strlen(text), mode);
	if (r == 0 && ctx->run_as && chown(path, ctx->run_uid, ctx->run_gid) < 0)
		r = -errno;
	return r;
}

static int fixture_setup(struct fixture *f, const struct agsbx_matrix_opts *o, const struct agsbx_ctx *ctx)
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
	r = write_owned(f->ro_canary, f->ro_content, 0644, ctx);
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
	r = write_owned(f->canary_file, f->secret, 0644, ctx);
	if (r < 0)
		return r;
	if (mkdir(f->canary_wdir, 0755) < 0)
		return -errno;
	if (ctx->run_as && (chown(f->canary_wdir, uid, gid) < 0 || chown(f->canary_dir, uid, gid) < 0))
		return -errno;
	return 0;
}

static void rm_rf(const char *dir)
{
	if (!dir)
		return;
	/* lstat, never stat: a symlink a sandbox planted is unlinked, not
	 * followed. */
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		_cleanup_free_ char *p = agsbx_path_join(dir, e->d_name);
		struct stat st;
		if (p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rm_rf(p);
		else if (p)
			unlink(p);
	}
	rmdir(dir);
}

static void fixture_teardown(struct fixture *f)
{
	agsbx_grant_destroy(f->grant);
	rm_rf(f->canary_dir);
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
	bool observed_pass;
	uint64_t duration_us;
};

struct pool {
	struct job *jobs;
	size_t n, next;
	pthread_mutex_t lock;
	const struct agsbx_matrix_opts *o;
	const char *provider;
};

static const char *verdict_of(const struct check_out *out, bool required)
{
	if (out->forced_verdict)
		return out->forced_verdict;
	if (!required)
		return "not_claimed";
	return out->observed_pass ? "pass" : "fail";
}

static void run_job(struct job *j)
{
	struct check_out out = { .observations = json_array(), .facts = json_object() };
	uint64_t t0 = agsbx_now_us();
	j->env.required = j->required;
	j->def->run(&j->env, &out);
	j->duration_us = agsbx_now_us() - t0;
	if (!out.reason[0])
		check_reason(&out, "internal: the check could not run (out of memory?)");
	/* An interrupt cancelled the executions under this check: whatever
	 * it observed is no verdict. */
	if (agsbx_runner_aborted()) {
		out.forced_verdict = "skip";
		check_reason(&out, "not completed: the harness was interrupted");
	}
	/* A verdict that rests on a result the harness's own output limit
	 * cut off is inconclusive, not a defect. */
	if (out.result_cut && j->required && !out.forced_verdict && !out.observed_pass) {
		out.forced_verdict = "skip";
		char why[sizeof out.reason];
		snprintf(why, sizeof why, "%s", out.reason);
		check_reason(&out, "inconclusive: a payload result line was cut by the output limit (%s)", why);
	}
	j->observed_pass = out.observed_pass && !out.forced_verdict;
	j->result = json_pack("{s:s, s:s, s:s, s:b, s:s, s:I, s:o, s:o}", "id", j->def->id, "axis", j->def->axis,
			      "verdict", verdict_of(&out, j->required), "observed_pass", j->observed_pass, "reason",
			      out.reason, "duration_us", (json_int_t)j->duration_us, "observations", out.observations,
			      "facts", out.facts);
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
		run_job(&pl->jobs[i]);
		if (pl->o->progress) {
			pthread_mutex_lock(&pl->lock);
			pl->o->progress(pl->o->progress_ud, pl->provider, pl->jobs[i].result);
			pthread_mutex_unlock(&pl->lock);
		}
	}
}

static int check_threads(const struct agsbx_matrix_opts *o)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return o->jobs > 0 ? o->jobs : (int)(cores > 0 ? cores : 2);
}

/* extra: threads on top of --jobs, one per long-waiting lifecycle check
 * queued first, so their waits do not hold the other checks back. */
static void run_pool(struct job *jobs, size_t n, const struct agsbx_matrix_opts *o, const char *provider, int extra)
{
	struct pool pl = { .jobs = jobs, .n = n, .o = o, .provider = provider };
	pthread_mutex_init(&pl.lock, NULL);
	int nthreads = check_threads(o) + extra;
	if (nthreads > (int)n)
		nthreads = (int)n;
	pthread_t t[64];
	int started = 0;
	for (int i = 0; i < nthreads && i < 64; i++)
		if (pthread_create(&t[i], NULL, worker, &pl) == 0)
			started++;
	if (started == 0)
		worker(&pl);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&pl.lock);
}

static json_t *blocked_check(const struct check_def *def, const char *reason)
{
	return json_pack("{s:s, s:s, s:s, s:b, s:s, s:i, s:[], s:{}}", "id", def->id, "axis", def->axis, "verdict",
			 "blocked", "observed_pass", 0, "reason", reason, "duration_us", 0, "observations", "facts");
}

/* ---- capabilities.truthful and the verdict ------------------------------- */

/* What the checks of an axis showed: enforced, not enforced (a check ran
 * and saw it fail), or inconclusive (a check was skipped: its control
 * failed or the host could not run it, which says nothing about the
 * mechanism). */
enum axis_state { AXIS_NOT_OBSERVED, AXIS_OBSERVED, AXIS_INCONCLUSIVE };

static enum axis_state axis_state(const struct job *jobs, size_t n, const char *id)
{
	bool any = false, skipped = false;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(jobs[i].def->id, id) != 0 || !jobs[i].result)
			continue;
		const char *v = json_string_value(json_object_get(jobs[i].result, "verdict"));
		if (strcmp(v, "blocked") == 0)
			return AXIS_NOT_OBSERVED;
		if (strcmp(v, "skip") == 0) {
			skipped = true;
			continue;
		}
		any = true;
		if (!jobs[i].observed_pass)
			return AXIS_NOT_OBSERVED;
	}
	return skipped ? AXIS_INCONCLUSIVE : any ? AXIS_OBSERVED : AXIS_NOT_OBSERVED;
}

/* Every check of the list: one not observed decides, then inconclusive. */
static enum axis_state all_of(const struct job *jobs, size_t n, const char *const *ids)
{
	enum axis_state st = AXIS_OBSERVED;
	for (; *ids; ids++) {
		enum axis_state s = axis_state(jobs, n, *ids);
		if (s == AXIS_NOT_OBSERVED)
			return s;
		if (s == AXIS_INCONCLUSIVE)
			st = s;
	}
	return st;
}

/* For the catalogue-v2 checks: a skip (the host could not show the attack,
 * e.g. no IPv6 loopback, io_uring disabled) does not refute the axis; a
 * fail does. */
static bool axis_not_refuted(const struct job *jobs, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(jobs[i].def->id, id) != 0 || !jobs[i].result)
			continue;
		const char *v = json_string_value(json_object_get(jobs[i].result, "verdict"));
		return strcmp(v, "skip") == 0 || jobs[i].observed_pass;
	}
	return true;
}

/* Axis → the checks that evidence it (all must show it; fs.grant_write is
 * a contract check and not part of the filesystem axis) and the v2 checks
 * that can only refute it. */
struct axis_def {
	const char *axis;
	const char *primary[6];
	const char *refuters[3];
};
static const struct axis_def axis_defs[] = {
	{ "process_contained", { "proc.contained" }, { "proc.ptrace_denied", "ipc.host_sockets_denied" } },
	{ "host_filesystem_restricted",
	  { "fs.host_read_denied", "fs.host_write_denied", "fs.readonly_grant_denied", "fs.remount_denied",
	    "fs.symlink_escape_denied" },
	  { "fs.hardlink_alias_denied", "secrets.home_denied" } },
	{ "privilege_escalation_blocked", { "priv.no_escalation" }, { "priv.capabilities_dropped" } },
	{ "syscalls_restricted", { "syscalls.restricted" }, { "syscalls.io_uring_denied" } },
	{ "environment_scrubbed", { "env.scrubbed" }, { NULL } },
	{ "net:namespace", { "net.namespace_distinct" }, { "net.egress_udp_denied" } },
	{ "net:egress", { "net.egress_denied" }, { "net.egress_ipv6_denied" } },
};

static enum axis_state axis_of(const struct job *jobs, size_t n, const char *axis)
{
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(axis_defs); i++) {
		const struct axis_def *d = &axis_defs[i];
		if (strcmp(d->axis, axis) != 0)
			continue;
		for (size_t k = 0; k < AGSBX_ARRAY_SIZE(d->refuters) && d->refuters[k]; k++)
			if (!axis_not_refuted(jobs, n, d->refuters[k]))
				return AXIS_NOT_OBSERVED;
		return all_of(jobs, n, d->primary);
	}
	return AXIS_NOT_OBSERVED;
}

static bool seen(enum axis_state s)
{
	return s == AXIS_OBSERVED;
}

static json_t *observed_axes(const struct job *jobs, size_t n)
{
	bool ns = seen(axis_of(jobs, n, "net:namespace"));
	bool egress = seen(axis_of(jobs, n, "net:egress"));
	return json_pack("{s:b, s:b, s:b, s:b, s:s, s:b}",
			 "process_contained", seen(axis_of(jobs, n, "process_contained")),
			 "host_filesystem_restricted", seen(axis_of(jobs, n, "host_filesystem_restricted")),
			 "privilege_escalation_blocked", seen(axis_of(jobs, n, "privilege_escalation_blocked")),
			 "syscalls_restricted", seen(axis_of(jobs, n, "syscalls_restricted")),
			 "network", ns && egress ? AGSBX_NET_ISOLATED : egress ? AGSBX_NET_TCP_RESTRICTED : AGSBX_NET_INHERITED,
			 "environment_scrubbed", seen(axis_of(jobs, n, "environment_scrubbed")));
}

/* Claimed axes whose evidence was inconclusive: neither backed nor
 * refuted, so no overclaim either way (they are listed instead). */
static json_t *inconclusive_axes(const struct job *jobs, size_t n, const json_t *claims)
{
	static const char *const bool_axes[] = { "process_contained", "host_filesystem_restricted",
						 "privilege_escalation_blocked", "syscalls_restricted",
						 "environment_scrubbed" };
	json_t *out = json_array();
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(bool_axes); i++)
		if (json_is_true(json_object_get(claims, bool_axes[i])) &&
		    axis_of(jobs, n, bool_axes[i]) == AXIS_INCONCLUSIVE)
			json_array_append_new(out, json_string(bool_axes[i]));
	const char *net = json_string_value(json_object_get(claims, "network"));
	bool wants_egress = net && (strcmp(net, AGSBX_NET_ISOLATED) == 0 || strcmp(net, AGSBX_NET_TCP_RESTRICTED) == 0);
	bool wants_ns = net && strcmp(net, AGSBX_NET_ISOLATED) == 0;
	enum axis_state eg = axis_of(jobs, n, "net:egress"), ns = axis_of(jobs, n, "net:namespace");
	bool refuted = (wants_egress && eg == AXIS_NOT_OBSERVED) || (wants_ns && ns == AXIS_NOT_OBSERVED);
	if (!refuted && ((wants_egress && eg == AXIS_INCONCLUSIVE) || (wants_ns && ns == AXIS_INCONCLUSIVE)))
		json_array_append_new(out, json_string("network"));
	return out;
}

static int net_rank(const char *v)
{
	if (!v)
		return 0;
	if (strcmp(v, AGSBX_NET_ISOLATED) == 0)
		return 2;
	if (strcmp(v, AGSBX_NET_TCP_RESTRICTED) == 0)
		return 1;
	return 0;
}

static bool in_list(const json_t *list, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
		if (strcmp(json_string_value(v), s) == 0)
			return true;
	return false;
}

static json_t *truthful_check(const json_t *claims, const json_t *observed, json_t *inconclusive, json_t *underclaim,
			      bool *pass)
{
	static const char *const axes[] = { "process_contained", "host_filesystem_restricted",
					    "privilege_escalation_blocked", "syscalls_restricted", "environment_scrubbed" };
	json_t *over = json_array();
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(axes); i++) {
		bool c = json_is_true(json_object_get(claims, axes[i]));
		bool ob = json_is_true(json_object_get(observed, axes[i]));
		if (c && !ob && !in_list(inconclusive, axes[i]))
			json_array_append_new(over, json_string(axes[i]));
		if (!c && ob)
			json_array_append_new(underclaim, json_string(axes[i]));
	}
	int cn = net_rank(json_string_value(json_object_get(claims, "network")));
	int on = net_rank(json_string_value(json_object_get(observed, "network")));
	if (cn > on && !in_list(inconclusive, "network"))
		json_array_append_new(over, json_string("network"));
	if (on > cn)
		json_array_append_new(underclaim, json_string("network"));
	*pass = json_array_size(over) == 0;
	char reason[512];
	_cleanup_free_ char *o = json_dumps(over, JSON_COMPACT);
	_cleanup_free_ char *u = json_dumps(underclaim, JSON_COMPACT);
	_cleanup_free_ char *ic = json_dumps(inconclusive, JSON_COMPACT);
	int k = *pass ? snprintf(reason, sizeof reason, "every claimed axis is backed by passing checks; underclaim %s", u)
		      : snprintf(reason, sizeof reason, "OVERCLAIM %s: claimed but not observed; underclaim %s", o, u);
	if (json_array_size(inconclusive) && k > 0 && (size_t)k < sizeof reason)
		snprintf(reason + k, sizeof reason - (size_t)k, "; inconclusive on this host %s", ic);
	return json_pack("{s:s, s:s, s:s, s:b, s:s, s:i, s:[], s:{s:o, s:O, s:O}}", "id", "capabilities.truthful", "axis",
			 "contract", "verdict", *pass ? "pass" : "fail", "observed_pass", *pass, "reason", reason,
			 "duration_us", 0, "observations", "facts", "overclaim", over, "underclaim", underclaim,
			 "inconclusive", inconclusive);
}

/* A declared provider's end of run (ops->finish): its record for the
 * provider object in *declared, and the adapter.protocol check, which
 * fails on a protocol violation, a missed deadline, an early exit or
 * leftovers. NULL for built-in providers. */
static json_t *finish_provider(const struct agsbx_provider_ops *ops, json_t **declared)
{
	*declared = NULL;
	if (!ops->finish)
		return NULL;
	struct agsbx_failure defect = { 0 };
	uint64_t t0 = agsbx_now_us();
	*declared = ops->finish(ops, &defect);
	/* A wrapper has no protocol: its runs are the harness's own. */
	const char *kind = json_string_value(json_object_get(*declared, "kind"));
	if (!kind || strcmp(kind, "external") != 0)
		return NULL;
	bool ok = !defect.reason;
	json_t *facts = json_pack("{s:s*}", "reason", defect.reason);
	char reason[700];
	snprintf(reason, sizeof reason, ok ? "every response was well-formed, in time, and nothing was left running"
					   : "%s: %s", defect.reason, defect.message);
	return json_pack("{s:s, s:s, s:s, s:b, s:s, s:I, s:[], s:o}", "id", "adapter.protocol", "axis", "contract",
			 "verdict", ok ? "pass" : "fail", "observed_pass", ok, "reason", reason, "duration_us",
			 (json_int_t)(agsbx_now_us() - t0), "observations", "facts", facts);
}

/* ---- the provider run ---------------------------------------------------- */

/* One `true` through the provider before the checks: its latency scales
 * the lifecycle timeouts (a container runtime starts slower than a
 * fork). */
static uint64_t warm_up(const struct check_env *env)
{
	struct check_out out = { .observations = json_array(), .facts = json_object() };
	uint64_t t0 = agsbx_now_us();
	sandbox_op(env, &out, env->h, NULL, (const char *const[]){ "true", NULL }, NULL, NULL);
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
	return def->exclusive == AGSBX_EXCLUSIVE_ORPHANS && ops->outside_harness_tree ? 0 : 2;
}

struct phase_times {
	uint64_t probe_us, setup_us, ensure_us, warm_us, concurrent_us, exclusive_us, release_us, teardown_us;
};

/* Where the provider's time went, phase by phase, and how it was taken. */
static json_t *timings_json(const struct phase_times *t, uint64_t total_us, const struct agsbx_matrix_opts *o)
{
	char method[160];
	snprintf(method, sizeof method, "CLOCK_MONOTONIC around each phase, integer microseconds; concurrent checks "
		 "on up to %d threads, exclusive checks one at a time", check_threads(o));
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s}", "probe_us", (json_int_t)t->probe_us,
			 "setup_us", (json_int_t)t->setup_us, "ensure_us", (json_int_t)t->ensure_us, "first_exec_us",
			 (json_int_t)t->warm_us, "checks_us", (json_int_t)(t->concurrent_us + t->exclusive_us),
			 "concurrent_checks_us", (json_int_t)t->concurrent_us, "exclusive_checks_us",
			 (json_int_t)t->exclusive_us, "release_us", (json_int_t)t->release_us, "teardown_us",
			 (json_int_t)t->teardown_us, "total_us", (json_int_t)total_us, "method", method);
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

static json_t *skipped_provider(const struct agsbx_provider_ops *ops, const char *why, uint64_t t0)
{
	json_t *checks = json_array();
	for (size_t i = 0; i < agsbx_checks_count; i++)
		json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:b, s:s, s:i, s:[], s:{}}", "id",
							agsbx_checks[i].id, "axis", agsbx_checks[i].axis, "verdict",
							"skip", "observed_pass", 0, "reason", why, "duration_us", 0,
							"observations", "facts"));
	json_array_insert_new(checks, 0, json_pack("{s:s, s:s, s:s, s:b, s:s, s:i, s:[], s:{}}", "id",
						   "capabilities.truthful", "axis", "contract", "verdict", "skip",
						   "observed_pass", 0, "reason", why, "duration_us", 0, "observations",
						   "facts"));
	return json_pack("{s:s, s:s, s:s, s:{s:b, s:s, s:{}, s:{}}, s:n, s:n, s:[], s:[], s:o, s:{s:I}}", "id", ops->id,
			 "verdict", "skipped", "reason", why, "probe", "available", 0, "reason", "not_probed",
			 "capabilities", "facts", "claims", "observed", "underclaim", "failing_checks", "checks", checks,
			 "timings", "total_us", (json_int_t)(agsbx_now_us() - t0));
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
	if (env->h && sandbox_op(env, &out, env->h, NULL, (const char *const[]){ "status", NULL }, &res, NULL) == 0 && res) {
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

json_t *agsbx_matrix_run(const struct agsbx_provider_ops *ops, const struct agsbx_matrix_opts *o, char *err,
			 size_t err_size)
{
	uint64_t t0 = agsbx_now_us();
	if (ops->applies && !ops->applies()) {
		return json_pack("{s:s, s:s, s:s, s:{s:b, s:s, s:{}, s:{}}, s:n, s:n, s:[], s:[], s:[], s:{s:I}}", "id",
				 ops->id, "verdict", "skipped", "reason", "not applicable to this platform", "probe",
				 "available", 0, "reason", "not_applicable", "capabilities", "facts", "claims", "observed",
				 "underclaim", "failing_checks", "checks", "timings", "total_us",
				 (json_int_t)(agsbx_now_us() - t0));
	}
	char starved[300];
	if (harness_starved(starved, sizeof starved))
		return skipped_provider(ops, starved, t0);
	const struct agsbx_ctx *ctx = o->ctx;
	struct agsbx_probe probe = { 0 };
	uint64_t tp = agsbx_now_us();
	ops->probe(ctx, &probe);
	uint64_t probe_us = agsbx_now_us() - tp;

	struct fixture f = { 0 };
	uint64_t ts = agsbx_now_us();
	int r = fixture_setup(&f, o, ctx);
	uint64_t setup_us = agsbx_now_us() - ts;
	if (r < 0) {
		snprintf(err, err_size, "cannot prepare the execution area in %s: %s", o->work_dir, strerror(-r));
		fixture_teardown(&f);
		agsbx_provider_probe_clear(&probe);
		return NULL;
	}
	struct utsname u;
	uname(&u);
	struct check_env env = {
		.ops = ops, .o = o, .ctx = ctx, .grant = f.grant, .probe = &probe,
		.canary_file = f.canary_file, .canary_secret = f.secret, .canary_wdir = f.canary_wdir,
		.ro_canary = f.ro_canary, .ro_canary_content = f.ro_content, .harness_pid = getpid(),
		.host_kernel_release = u.release,
	};
	struct agsbx_failure fail = { 0 };
	uint64_t te = agsbx_now_us();
	if (probe.available && !agsbx_runner_aborted() && ops->ensure(ctx, f.grant, &env.h, &fail) < 0)
		env.h = NULL;
	uint64_t ensure_us = agsbx_now_us() - te;
	uint64_t warm_us = env.h ? warm_up(&env) : 0;
	json_t *conf = confinement(&env);
	/* Long enough for any provider to start the detached tree, short
	 * enough that the matrix stays quick on fast mechanisms. */
	env.lifecycle_timeout_ms = 500 + (int64_t)(3 * warm_us / 1000);

	char blocked[600];
	if (!probe.available)
		set_blocked_reason(blocked, sizeof blocked, &probe);
	else if (!env.h)
		snprintf(blocked, sizeof blocked, "ensure refused after a ready probe: %s (%s)",
			 fail.reason ? fail.reason : "?", fail.message);

	struct job jobs[64];
	size_t n = agsbx_checks_count;
	memset(jobs, 0, sizeof jobs);
	size_t runnable = 0;
	for (size_t i = 0; i < n; i++) {
		jobs[i].def = &agsbx_checks[i];
		jobs[i].env = env;
		jobs[i].required = !agsbx_checks[i].required || agsbx_checks[i].required(&probe.caps);
		if (agsbx_checks[i].needs_handle && !env.h)
			jobs[i].result = blocked_check(&agsbx_checks[i], blocked);
		else
			runnable++;
	}
	/* Jobs that can run go to the pool, exclusive ones then run alone;
	 * blocked ones are already final. A check exclusive only because of
	 * the orphan sweeps joins the pool when no execution of this provider
	 * can ever be in our process tree: queued first, on an extra thread
	 * each (they mostly wait). */
	struct job *torun = calloc(runnable ? runnable : 1, sizeof *torun);
	size_t k = 0, shared = 0, waits = 0;
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < n; i++)
			if (!jobs[i].result && placement(ops, jobs[i].def) == pass)
				torun[k++] = jobs[i];
	for (size_t i = 0; i < n; i++) {
		shared += !jobs[i].result && placement(ops, jobs[i].def) < 2;
		waits += !jobs[i].result && placement(ops, jobs[i].def) == 0;
	}
	uint64_t tc = agsbx_now_us();
	run_pool(torun, shared, o, ops->id, (int)waits);
	uint64_t tx = agsbx_now_us();
	for (size_t i = shared; i < runnable; i++)
		run_pool(torun + i, 1, o, ops->id, 0);
	uint64_t concurrent_us = tx - tc, exclusive_us = shared < runnable ? agsbx_now_us() - tx : 0;
	for (size_t i = 0; i < runnable; i++)
		for (size_t j = 0; j < n; j++)
			if (jobs[j].def == torun[i].def)
				jobs[j] = torun[i];
	free(torun);
	/* Checks an interrupt kept from starting: the bundle is never
	 * written then, but the object stays well-formed. */
	for (size_t i = 0; i < n; i++)
		if (!jobs[i].result)
			jobs[i].result = json_pack("{s:s, s:s, s:s, s:b, s:s, s:i, s:[], s:{}}", "id", jobs[i].def->id,
						   "axis", jobs[i].def->axis, "verdict", "skip", "observed_pass", 0,
						   "reason", "not run: the harness was interrupted", "duration_us", 0,
						   "observations", "facts");

	uint64_t tr = agsbx_now_us();
	if (env.h) {
		ops->release(env.h);
		agsbx_handle_free(env.h);
	}
	uint64_t release_us = agsbx_now_us() - tr;

	json_t *declared = NULL;
	json_t *finish_check = finish_provider(ops, &declared);
	json_t *claims = agsbx_caps_to_json(&probe.caps);
	json_t *observed = observed_axes(jobs, n);
	json_t *underclaim = json_array();
	json_t *checks = json_array();
	bool truthful = true;
	json_t *tc_json;
	if (env.h) {
		_cleanup_json_ json_t *inconclusive = inconclusive_axes(jobs, n, claims);
		tc_json = truthful_check(claims, observed, inconclusive, underclaim, &truthful);
	} else {
		static const struct check_def tdef = { "capabilities.truthful", "contract", "", NULL, NULL, false, false };
		tc_json = blocked_check(&tdef, blocked);
	}
	if (o->progress)
		o->progress(o->progress_ud, ops->id, tc_json);
	json_t *failing = json_array();
	if (!truthful)
		json_array_append_new(failing, json_string("capabilities.truthful"));
	for (size_t i = 0; i < n; i++) {
		if (strcmp(json_string_value(json_object_get(jobs[i].result, "verdict")), "fail") == 0)
			json_array_append_new(failing, json_string(jobs[i].def->id));
		json_array_append_new(checks, jobs[i].result);
	}
	/* The bundle lists checks sorted by id, capabilities.truthful among
	 * them (bundle.* sorts before it). */
	size_t at = 0;
	while (at < n && strcmp(jobs[at].def->id, "capabilities.truthful") < 0)
		at++;
	json_array_insert_new(checks, at, tc_json);
	if (finish_check) {
		/* adapter.protocol sorts first. */
		if (o->progress)
			o->progress(o->progress_ud, ops->id, finish_check);
		if (strcmp(json_string_value(json_object_get(finish_check, "verdict")), "fail") == 0)
			json_array_insert_new(failing, 0, json_string("adapter.protocol"));
		json_array_insert_new(checks, 0, finish_check);
	}
	const char *verdict = json_array_size(failing) ? "defective" : env.h ? "conformant" : "blocked";
	struct phase_times pt = { probe_us, setup_us, ensure_us, warm_us, concurrent_us, exclusive_us, release_us, 0 };
	json_t *pj = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "id", ops->id,
			       "verdict", verdict, "reason",
			       env.h ? "ready" : probe.available ? (fail.reason ? fail.reason : "ensure_failed")
								 : (probe.reason ? probe.reason : "unknown"),
			       "probe", agsbx_provider_probe_to_json(&probe), "claims", claims, "observed", observed,
			       "underclaim", underclaim, "failing_checks", failing, "checks", checks);
	json_object_set_new(pj, "confinement", conf);
	if (declared) {
		json_object_update(pj, declared);
		json_decref(declared);
		/* A contract break outside any one check names the verdict. */
		const char *fr = json_string_value(json_object_get(finish_check, "facts") ?
						   json_object_get(json_object_get(finish_check, "facts"), "reason") : NULL);
		if (fr)
			json_object_set_new(pj, "reason", json_string(fr));
	}
	uint64_t td = agsbx_now_us();
	fixture_teardown(&f);
	agsbx_provider_probe_clear(&probe);
	pt.teardown_us = agsbx_now_us() - td;
	json_object_set_new(pj, "timings", timings_json(&pt, agsbx_now_us() - t0, o));
	return pj;
}
