/* collect: host probes + the acceptance matrix for the selected providers,
 * written as one evidence bundle (temp name, then rename). The options are
 * collect-options.c's, the terminal progress.c's, the bundle's members
 * evidence/'s (bundle.h): this file selects, runs and orders. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/fsat.h"
#include "base/log.h"
#include "base/rundir.h"
#include "base/util.h"
#include "cli/collect-workers.h"
#include "cli/collect.h"
#include "cli/commands.h"
#include "cli/harness.h"
#include "cli/progress.h"
#include "conformance/conformance.h"
#include "evidence/bundle.h"
#include "evidence/evidence.h"
#include "probes/probes.h"
#include "providers/external/external.h"

/* A simulation tests one provider's fail-closed path; every other
 * provider runs on the real host (a seccomp filter around landlock would
 * otherwise show up as its "syscall restriction"). */
static const char *simulation_for(const struct collect_opts *o, const struct agsbx_provider_ops *p)
{
	const char *s = p->fail_closed_simulation;
	/* A declared provider (--adapter, --wrap) wraps a mechanism the
	 * harness cannot name in advance: the labelled simulation is its
	 * fail-closed test too. */
	if (o->simulate && p->declared)
		return o->simulate;
	return o->simulate && s && strcmp(o->simulate, s) == 0 ? o->simulate : NULL;
}

/* A simulation none of the selected providers tests simulates nothing:
 * said once; the bundle records the request with no provider, and the
 * run is not marked simulated. */
static void check_simulation_scope(const struct collect_opts *o, const struct agsbx_provider_ops **sel, int n)
{
	if (!o->simulate)
		return;
	for (int i = 0; i < n; i++)
		if (simulation_for(o, sel[i]))
			return;
	if (!o->quiet)
		agsbx_warn("--simulate %s applies to none of the selected providers (it tests bubblewrap's fail-closed "
			   "path): nothing is simulated", o->simulate);
}

/* ---- validation before anything runs (bad input → 2, nothing written) --- */

/* --adapter / --wrap: registered before selection, so --provider and
 * --config see them; a bad declaration stops everything (exit 2). */
static int declare_providers(const struct collect_opts *o)
{
	for (int i = 0; i < o->ndeclared; i++) {
		struct agsbx_error f = { 0 };
		const char *eq = strchr(o->declared[i], '=');
		for (int j = 0; j < i && eq; j++)
			if (strncmp(o->declared[j], o->declared[i], (size_t)(eq - o->declared[i]) + 1) == 0)
				return agsbx_usage_error("collect", "%s: id '%.*s' declared twice",
							 o->declared_wrap[i] ? "--wrap" : "--adapter",
							 (int)(eq - o->declared[i]), o->declared[i]);
		if (agsbx_external_declare(o->declared[i], o->declared_wrap[i], &f) < 0)
			return agsbx_usage_error("collect", "%s", f.message);
	}
	return 0;
}

static int select_providers(const struct collect_opts *o, const struct agsbx_provider_ops **sel, int *n)
{
	*n = 0;
	if (o->nproviders == 0) {
		for (size_t i = 0; i < agsbx_provider_builtin_count(); i++) {
			const struct agsbx_provider_ops *p = agsbx_provider_at(i);
			if (!p->applies || p->applies(p))
				sel[(*n)++] = p;
		}
		for (size_t i = 0; i < agsbx_external_count(); i++)
			sel[(*n)++] = agsbx_external_at(i);
		return 0;
	}
	for (int i = 0; i < o->nproviders; i++) {
		const struct agsbx_provider_ops *p = agsbx_provider_find(o->providers[i]);
		if (!p)
			return agsbx_usage_error("collect", "unknown provider '%s' (see 'agsbx-evidence providers')",
						 o->providers[i]);
		for (int j = 0; j < *n; j++)
			if (sel[j] == p)
				return agsbx_usage_error("collect", "provider '%s' given twice", p->id);
		sel[(*n)++] = p;
	}
	return 0;
}

static json_t *parse_configs(const struct collect_opts *o, const struct agsbx_provider_ops **sel, int n, int *rc)
{
	json_t *all = json_object();
	for (int i = 0; i < o->nconfigs; i++) {
		const char *s = o->configs[i];
		const char *dot = strchr(s, '.'), *eq = strchr(s, '=');
		if (!dot || !eq || dot > eq || dot == s || eq == dot + 1) {
			*rc = agsbx_usage_error("collect", "--config: expected ID.KEY=VALUE, got '%s'", s);
			json_decref(all);
			return NULL;
		}
		_cleanup_free_ char *id = strndup(s, (size_t)(dot - s));
		_cleanup_free_ char *key = strndup(dot + 1, (size_t)(eq - dot - 1));
		bool selected = false;
		for (int j = 0; j < n; j++)
			selected |= strcmp(sel[j]->id, id) == 0;
		if (!selected) {
			*rc = agsbx_usage_error("collect", "--config: provider '%s' is not selected", id);
			json_decref(all);
			return NULL;
		}
		json_error_t jerr;
		json_t *v = json_loads(eq + 1, JSON_DECODE_ANY, &jerr);
		if (!v)
			v = json_string(eq + 1);
		json_t *pc = json_object_get(all, id);
		if (!pc) {
			pc = json_object();
			json_object_set_new(all, id, pc);
		}
		json_object_set_new(pc, key, v);
	}
	/* Unknown keys are bad input: refuse before anything runs. */
	for (int j = 0; j < n; j++) {
		struct agsbx_error f = { 0 };
		if (agsbx_provider_configure(sel[j], json_object_get(all, sel[j]->id), &f) < 0) {
			*rc = agsbx_usage_error("collect", "--config: %s", f.message);
			json_decref(all);
			return NULL;
		}
	}
	return all;
}

/* ---- the bundle ------------------------------------------------------- */

/* The facts context.* is made of, gathered here (the host probe, the
 * harness's capability sets, the selection); evidence/ shapes them. */
static int set_context(json_t *bundle, const struct agsbx_harness *hs, const struct collect_opts *o,
		       const json_t *host, const struct agsbx_provider_ops **sel, int n)
{
	_cleanup_json_ json_t *ids = json_array();
	for (int i = 0; o->simulate && i < n; i++)
		if (simulation_for(o, sel[i]))
			json_array_append_new(ids, json_string(sel[i]->id));
	struct agsbx_bundle_context c = {
		.run_as_name = hs->run_as_name,
		.container = json_is_true(agsbx_probe_value(host, "container", "detected")),
		.container_markers = agsbx_probe_value(host, "container", "markers"),
		.simulate = o->simulate, .simulated = ids,
		.userns_before = o->host_policy ? o->userns_before : NULL,
	};
	char eff[17] = "", prm[17] = "", amb[17] = "";
	c.have_caps = agsbx_self_caps(eff, prm, amb);
	c.cap_eff = eff, c.cap_prm = prm, c.cap_amb = amb;
	return agsbx_bundle_set_context(bundle, &c);
}

static int add_context_members(json_t *bundle, const struct collect_opts *o)
{
	struct agsbx_error e = { 0 };
	if (o->challenge && agsbx_bundle_set_challenge(bundle, o->challenge) < 0)
		return AGSBX_EXIT_INTERNAL;
	if (o->subject_repo && agsbx_bundle_set_subject(bundle, o->subject_repo, &e) < 0)
		return agsbx_usage_error("collect", "--subject-repo %s: %s", o->subject_repo, e.message);
	for (int i = 0; i < o->nattach; i++) {
		if (!o->quiet)
			agsbx_note("running attached command: %s", o->attach[i]);
		if (agsbx_bundle_add_attachment(bundle, o->attach[i], 30 * 60 * 1000, 8192, &e) < 0)
			return agsbx_usage_error("collect", "--attach-command '%s': %s", o->attach[i], e.message);
	}
	return 0;
}

/* What every worker needs to run its provider's matrix. */
struct run_shared {
	const struct agsbx_harness *hs;
	const struct collect_opts *o;
	const struct agsbx_provider_ops **sel;
	const json_t *configs;
	const char *work_dir;
	const struct agsbx_env_canary *canary;
	int check_jobs;
};

static void report_progress(void *ud, const char *provider, const json_t *check)
{
	(void)provider;
	agsbx_collect_report_check(*(const int *)ud, check);
}

/* In provider i's worker process. */
static json_t *run_one(size_t i, int report_fd, int cancel_fd, void *ud, struct agsbx_error *err)
{
	const struct run_shared *sh = ud;
	struct agsbx_ctx ctx = sh->hs->ctx;
	ctx.simulate = simulation_for(sh->o, sh->sel[i]);
	ctx.config = json_object_get(sh->configs, sh->sel[i]->id);
	ctx.env_canary = sh->canary->assignment;
	/* Its own directory in the run's: providers run at once, and one's
	 * files must not look like another's residue. */
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof dir, "%s/%s", sh->work_dir, sh->sel[i]->id) >= (int)sizeof dir ||
	    mkdir(dir, 0755) < 0 || chmod(dir, 0755) < 0) {
		agsbx_error_set(err, "internal", "cannot create %s: %s", dir, strerror(errno));
		return NULL;
	}
	struct agsbx_conformance_opts mo = {
		.ctx = &ctx, .work_dir = dir, .env_canary_name = sh->canary->name,
		.env_canary_value = sh->canary->value, .max_output_bytes = (size_t)sh->o->max_output,
		.timeout_ms = sh->o->timeout_ms, .jobs = sh->check_jobs, .cancel_fd = cancel_fd,
		.progress = report_progress, .progress_ud = &report_fd,
	};
	json_t *pj = agsbx_conformance_run(sh->sel[i], &mo, err);
	rmdir(dir); /* the areas inside are removed by the matrix */
	if (pj && ctx.config && agsbx_bundle_provider_set_config(pj, ctx.config) < 0)
		json_decref(pj), pj = NULL, agsbx_error_set(err, "internal", "out of memory");
	return pj;
}

/* How many providers run at once: --jobs bounds it; by default all of
 * them (a provider spends most of its time waiting on its mechanism, and
 * the lifecycle checks' timeouts are sleeps). */
static int provider_jobs(const struct collect_opts *o, int n)
{
	int j = o->jobs > 0 ? (int)o->jobs : n;
	return j < 1 ? 1 : j > n ? n : j;
}

/* Concurrent checks within a provider: --jobs, or the online cores. */
static int check_jobs(const struct collect_opts *o)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return o->jobs > 0 ? (int)o->jobs : (int)(cores > 0 ? cores : 2);
}
static int run_providers(struct agsbx_harness *hs, const struct collect_opts *o, const struct agsbx_provider_ops **sel,
			 int n, const json_t *configs, const char *work_dir, json_t *bundle)
{
	struct agsbx_env_canary canary;
	if (agsbx_env_canary_set(&canary) < 0) {
		agsbx_error("cannot set the environment canary");
		return AGSBX_EXIT_INTERNAL;
	}
	struct agsbx_progress pr;
	agsbx_progress_init(&pr, o->quiet);
	struct run_shared sh = { .hs = hs, .o = o, .sel = sel, .configs = configs, .work_dir = work_dir,
				 .canary = &canary, .check_jobs = check_jobs(o) };
	struct agsbx_collect_pool pool = { .w = calloc((size_t)n, sizeof *pool.w), .n = (size_t)n,
					   .max_live = provider_jobs(o, n), .run = run_one,
					   .on_check = agsbx_progress_on_check, .run_ud = &sh, .ud = &pr };
	if (!pool.w) {
		agsbx_env_canary_unset(&canary);
		return AGSBX_EXIT_INTERNAL;
	}
	for (int i = 0; i < n; i++)
		pool.w[i].ops = sel[i];
	int r = agsbx_collect_pool_run(&pool);
	agsbx_progress_end(&pr);
	agsbx_env_canary_unset(&canary);
	/* Interrupted: the workers cancelled and cleaned up; the caller exits 128+sig. */
	int rc = agsbx_interrupt_signal() ? 0 : agsbx_collect_pool_results(&pool, r, sh.check_jobs, bundle);
	agsbx_collect_pool_clear(&pool);
	return rc;
}

/* Leftovers of collects that were killed (SIGKILL cannot be caught):
 * removed before this run adds its own; a live run's are never touched. */
static void sweep_dead_runs(const struct collect_opts *o, const struct agsbx_harness *hs)
{
	_cleanup_json_ json_t *found = json_array();
	int failed = agsbx_cleanup_dead_runs(o->work_dir, &hs->ctx, false, found);
	if (json_array_size(found) && !o->quiet)
		agsbx_note("removed %zu leftover(s) of killed runs%s (see 'agsbx-evidence cleanup')",
			   json_array_size(found) - (size_t)failed, failed ? "; some could not be removed" : "");
}

/* Interrupts are handled from here on (before anything is created that
 * must not outlive the run); then the harness, then the leftovers of
 * killed runs go. */
static int start_harness(const struct collect_opts *o, struct agsbx_harness *hs)
{
	if (agsbx_interrupt_install() < 0)
		agsbx_warn("cannot install the interrupt handlers; an interrupted run may leave processes behind");
	int rc = agsbx_harness_init(hs, "collect", o->run_as, false);
	if (rc) {
		agsbx_interrupt_restore();
		return rc;
	}
	sweep_dead_runs(o, hs);
	return 0;
}

/* The exit status for an interrupted run: 128 + the signal, as a shell
 * reports a process killed by it (130 SIGINT, 143 SIGTERM, 129 SIGHUP). */
static int interrupted(const struct collect_opts *o)
{
	int sig = agsbx_interrupt_signal();
	if (!o->quiet)
		agsbx_note("interrupted by SIG%s: every execution cancelled and cleaned up; no bundle written",
			   sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	return 128 + sig;
}

/* A key that cannot sign is bad input found before the matrix runs, not
 * after it (the run would be lost). */
static int check_sign_key(const char *key)
{
	struct agsbx_error e = { 0 };
	if (agsbx_bundle_sign_check(key, &e) == 0)
		return 0;
	agsbx_error("--sign-key: %s", e.message);
	return AGSBX_EXIT_USAGE;
}

/* The bundle is complete once its providers ran: summary, signature,
 * the file, then what the user sees. Returns the exit status. */
static int finish_and_write(const struct collect_opts *o, const char *output, json_t *bundle, bool *written)
{
	if (agsbx_interrupt_signal())
		return interrupted(o);
	int status = agsbx_bundle_finish(bundle);
	if (o->sign_key) {
		struct agsbx_error e = { 0 };
		if (agsbx_bundle_sign(bundle, o->sign_key, &e) < 0) {
			agsbx_error("signing failed: %s", e.message);
			return AGSBX_EXIT_USAGE;
		}
	}
	if (agsbx_interrupt_signal())
		return interrupted(o);
	int w = agsbx_cli_write_json(output, bundle);
	if (w < 0) {
		agsbx_error_errno(w, "cannot write %s", output);
		return AGSBX_EXIT_INTERNAL;
	}
	*written = true;
	agsbx_progress_written(o, bundle, output);
	return status;
}

/* The document: top level, attachments, host and context, the
 * providers' records, then finish and write. Returns the exit status. */
static int collect_bundle(struct agsbx_harness *hs, const struct collect_opts *o, const struct agsbx_provider_ops **sel,
			  int n, const json_t *configs, const char *work, const char *output, bool *written)
{
	_cleanup_json_ json_t *bundle = agsbx_bundle_new();
	if (!bundle)
		return AGSBX_EXIT_INTERNAL;
	int rc = add_context_members(bundle, o);
	if (rc)
		return rc;
	hs->host = agsbx_probe_host(NULL);
	hs->ctx.host = hs->host;
	if (agsbx_bundle_set_host(bundle, hs->host) < 0 || set_context(bundle, hs, o, hs->host, sel, n) < 0)
		return AGSBX_EXIT_INTERNAL;
	if ((rc = run_providers(hs, o, sel, n, configs, work, bundle)))
		return rc;
	return finish_and_write(o, output, bundle, written);
}

int agsbx_cmd_collect(int argc, char **argv)
{
	struct collect_opts o = { 0 };
	int rc = agsbx_collect_parse_args(argc, argv, &o);
	if (rc)
		return rc;
	const struct agsbx_provider_ops *sel[MAX_LIST + 16 + AGSBX_EXTERNAL_MAX];
	int n = 0;
	if ((rc = declare_providers(&o)) || (rc = select_providers(&o, sel, &n)))
		return rc;
	check_simulation_scope(&o, sel, n);
	_cleanup_json_ json_t *configs = parse_configs(&o, sel, n, &rc);
	if (!configs)
		return rc;
	_cleanup_free_ char *output = o.output ? strdup(o.output) : agsbx_collect_default_output();
	if (!output)
		return AGSBX_EXIT_INTERNAL;
	if (!agsbx_is_stdout(output) && (rc = agsbx_collect_check_output(output)))
		return rc;
	if (o.sign_key && (rc = agsbx_check_regular(o.sign_key)) < 0)
		return agsbx_usage_error("collect", "--sign-key %s: %s", o.sign_key, agsbx_file_strerror(rc));
	if (o.sign_key && (rc = check_sign_key(o.sign_key)))
		return rc;
	struct agsbx_harness hs;
	if ((rc = start_harness(&o, &hs)))
		return rc;
	if (geteuid() == 0 && !o.run_as && !o.quiet)
		agsbx_warn("running as root: results are not representative of a normal user");
	_cleanup_free_ char *work = NULL;
	if ((rc = agsbx_collect_make_work_dir(o.work_dir, o.run_as != NULL, &work))) {
		agsbx_harness_clear(&hs);
		agsbx_interrupt_restore();
		return rc;
	}
	bool bundle_written = false;
	rc = collect_bundle(&hs, &o, sel, n, configs, work, output, &bundle_written);
	agsbx_rundir_set_primary(NULL);
	if (work)
		agsbx_rm_tree(work); /* areas are removed per provider; the rest and the dir last */
	agsbx_harness_clear(&hs);
	/* Interrupted before the bundle was complete (an early return above
	 * never reached the write): the signal decides the status. */
	if (agsbx_interrupt_signal() && !bundle_written && rc != 128 + agsbx_interrupt_signal())
		rc = interrupted(&o);
	/* A written bundle is the outcome, whatever signal comes before the exit. */
	if (bundle_written)
		agsbx_interrupt_hold();
	else
		agsbx_interrupt_restore();
	return rc;
}
