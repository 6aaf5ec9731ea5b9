/* The provider contract: the checks every provider must pass whatever it
 * claims (bundle integrity, config, exit statuses, failing closed, probe
 * truth, bounded output) and the row of capabilities.truthful (truthful.c). */
#include "conformance/checks/attack.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fsat.h"
#include "base/proc.h"
#include "base/util.h"

/* ---- output.bounded ----------------------------------------------------- */

#define FLOOD_BYTES (64u << 20)
#define FLOOD_CAP 65536u

static void output_bounded(const struct check_env *env, struct check_out *out)
{
	char bytes[32];
	snprintf(bytes, sizeof bytes, "%u", FLOOD_BYTES);
	struct agsbx_limits lim = { .max_output_bytes = FLOOD_CAP, .timeout_ms = 120000, .cancel_fd = -1 };
	long before = agsbx_proc_self_status_kib("VmHWM");
	struct agsbx_exec_result xr = { 0 };
	if (cf_sandbox_op(env, out, env->h, &lim, ARGS("flood", bytes), NULL, &xr) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	long after = agsbx_proc_self_status_kib("VmHWM");
	const struct agsbx_run_result *r = &xr.run;
	bool capped = r->out_len <= FLOOD_CAP && r->err_len <= FLOOD_CAP;
	bool flagged = r->out_truncated && r->err_truncated;
	json_object_set_new(out->facts, "limit", json_integer(FLOOD_CAP));
	json_object_set_new(out->facts, "flood_bytes_per_stream", json_integer(FLOOD_BYTES));
	json_object_set_new(out->facts, "captured_stdout", json_integer((json_int_t)r->out_len));
	json_object_set_new(out->facts, "captured_stderr", json_integer((json_int_t)r->err_len));
	json_object_set_new(out->facts, "harness_vm_hwm_kib_before", json_integer(before));
	json_object_set_new(out->facts, "harness_vm_hwm_kib_after", json_integer(after));
	out->observed_pass = capped && flagged && !r->timed_out;
	cf_reason(out, "captured %zu/%zu bytes (limit %u), truncation flags %s/%s, %s", r->out_len, r->err_len,
		     FLOOD_CAP, r->out_truncated ? "set" : "UNSET", r->err_truncated ? "set" : "UNSET",
		     r->timed_out ? "TIMED OUT" : "finished");
	agsbx_exec_result_clear(&xr);
}

/* ---- fail.closed, probe.truthful ---------------------------------------- */

static void fail_closed(const struct check_env *env, struct check_out *out)
{
	bool real = !env->probe->available;
	const char *sim = env->ops->fail_closed_simulation;
	if (!real && !sim) {
		cf_skip(out, "%s has no mechanism that can be made unavailable", env->ops->id);
		return;
	}
	struct agsbx_ctx c = *env->ctx;
	if (!real)
		c.simulate = sim;
	struct agsbx_probe p = { 0 };
	env->ops->probe(env->ops, &c, &p);
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	int er = env->ops->ensure(env->ops, &c, env->grant, &h, &fail);
	_cleanup_free_ char *n = cf_nonce(), *name = NULL;
	if (!n || asprintf(&name, "fail-closed-%s", n) < 0)
		name = NULL;
	_cleanup_free_ char *host = cf_host_path(env, AGSBX_ROOT_OUTPUT, name ? name : "x");
	if (er == 0 && h) {
		/* Fail-open: the provider accepted work it could not isolate. */
		_cleanup_free_ char *inside = agsbx_handle_path(h, AGSBX_ROOT_OUTPUT, name ? name : "x");
		cf_sandbox_op(env, out, h, NULL, ARGS("write", inside, "fail-open"), NULL, NULL);
		agsbx_provider_release(h);
		agsbx_handle_free(h);
	}
	bool executed = access(host, F_OK) == 0;
	bool documented = fail.reason && agsbx_reason_in_set(env->ops, fail.reason) && strcmp(fail.reason, "ready") != 0;
	json_object_set_new(out->facts, "how", json_string(real ? "mechanism unavailable on this host" : "simulation"));
	json_object_set_new(out->facts, "simulation", real ? json_null() : json_string(sim));
	json_object_set_new(out->facts, "probe_under_test", agsbx_provider_probe_to_json(&p));
	json_object_set_new(out->facts, "ensure_reason", fail.reason ? json_string(fail.reason) : json_null());
	json_object_set_new(out->facts, "ensure_message", json_string(fail.message));
	json_object_set_new(out->facts, "payload_marker_written", json_boolean(executed));
	out->observed_pass = er < 0 && documented && !executed && !p.available;
	cf_reason(out, "%s: ensure %s%s%s; payload %s", real ? "unavailable" : sim,
		     er < 0 ? "refused with " : "SUCCEEDED", er < 0 ? (fail.reason ? fail.reason : "no reason") : "",
		     er < 0 && !documented ? " (NOT in the documented set)" : "", executed ? "EXECUTED" : "never executed");
	agsbx_provider_probe_clear(&p);
}

/* An unavailable provider whose reason asserts a host condition the
 * harness can decide: the harness's own probe must not show the opposite.
 * Both facts go into facts.host_condition. */
static bool blocked_reason_true(const struct check_env *env, const struct agsbx_probe *p, json_t *facts)
{
	const char *cond = p->available ? NULL : cf_reason_condition(env->ops, p->reason);
	if (!cond)
		return true;
	json_t *how = json_object();
	int holds = cf_hostcond_decide(env, cond, how);
	json_object_set_new(facts, "host_condition",
			    json_pack("{s:s, s:s, s:b, s:o, s:o}", "reason", p->reason, "condition", cond,
				      "provider_says", 1, "harness_observed", holds < 0 ? json_null() : json_boolean(holds),
				      "how", how));
	return holds != 0;
}

static void probe_truthful(const struct check_env *env, struct check_out *out)
{
	const struct agsbx_probe *p = env->probe;
	bool in_set = agsbx_reason_in_set(env->ops, p->reason);
	bool consistent = p->available == (p->reason && strcmp(p->reason, "ready") == 0);
	/* The probe must be a stable observation: a second probe agrees. */
	struct agsbx_probe again = { 0 };
	env->ops->probe(env->ops, env->ctx, &again);
	bool stable = again.reason && p->reason && strcmp(again.reason, p->reason) == 0 &&
		      again.available == p->available;
	json_object_set_new(out->facts, "reason_in_closed_set", json_boolean(in_set));
	json_object_set_new(out->facts, "available_iff_ready", json_boolean(consistent));
	json_object_set_new(out->facts, "second_probe_reason", again.reason ? json_string(again.reason) : json_null());
	/* Facts a provider shares with the host probes (ops->shared_facts)
	 * must agree with them. */
	bool facts_ok = true;
	json_t *compared = json_object();
	for (const struct agsbx_shared_fact *sf = env->ops->shared_facts; sf && sf->fact; sf++) {
		const json_t *pv = json_object_get(p->facts, sf->fact);
		const json_t *hv = json_object_get(json_object_get(json_object_get(env->ctx->host, sf->family),
								   sf->host_fact), "value");
		if (!pv || !hv)
			continue;
		bool eq = json_equal((json_t *)pv, (json_t *)hv);
		facts_ok &= eq;
		json_object_set_new(compared, sf->fact, json_boolean(eq));
	}
	json_object_set_new(out->facts, "facts_match_host", compared);
	bool host_agrees = blocked_reason_true(env, p, out->facts);
	out->observed_pass = in_set && consistent && stable && facts_ok && host_agrees;
	cf_reason(out, "reason '%s' %s the closed set; available %s reason ready; second probe %s%s%s",
		     p->reason ? p->reason : "(none)", in_set ? "is in" : "is NOT in", consistent ? "<=>" : "does NOT match",
		     stable ? "agrees" : "DISAGREES", facts_ok ? "" : "; facts DISAGREE with the host probes",
		     host_agrees ? "" : "; the host does NOT have the condition the reason asserts");
	agsbx_provider_probe_clear(&again);
}

/* ---- exec.status_fidelity ----------------------------------------------- */

/* How the status came about: a run the timeout ended was killed by the
 * harness, not by the signal asked for (a PID 1 payload ignores its own
 * SIGTERM and SIGKILL: the kernel does not deliver them to a namespace's
 * init from inside). */
static const char *status_how(const struct agsbx_run_result *r, int sig, bool ok)
{
	if (r->timed_out)
		return sig ? " (timed out: still running after its own signal; killed by the timeout)"
			   : " (timed out: killed by the timeout)";
	if (r->term_signal)
		return " (signal)";
	return sig && ok ? " (exit code 128+N)" : "";
}

static void check_exec_status_fidelity(const struct check_env *env, struct check_out *out)
{
	static const struct { const char *op, *arg; int status, sig; } cases[] = {
		{ "exit", "0", 0, 0 },        { "exit", "1", 1, 0 },         { "exit", "42", 42, 0 },
		{ "exit", "127", 127, 0 },    { "kill-self", "15", 143, 15 }, { "kill-self", "9", 137, 9 },
	};
	struct agsbx_limits lim = { .max_output_bytes = env->o->max_output_bytes, .timeout_ms = 10000, .cancel_fd = -1 };
	char detail[480] = "";
	bool pass = true, ctl_all = true;
	json_t *seen = json_array();
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(cases); i++) {
		struct agsbx_exec_result xr = { 0 };
		json_t *res;
		if (cf_sandbox_op(env, out, env->h, &lim, ARGS(cases[i].op, cases[i].arg), &res, &xr) < 0) {
			json_decref(seen);
			cf_reason(out, "provider refused to execute");
			return;
		}
		const struct agsbx_run_result *r = &xr.run;
		bool ran = res && cf_result_ok(res);
		bool ok = ran && !r->timed_out && r->status == cases[i].status &&
			  (cases[i].sig ? (r->term_signal == cases[i].sig || (r->exited && r->exit_code == cases[i].status))
					: (r->exited && r->exit_code == cases[i].status && r->term_signal == 0));
		pass &= ok;
		/* The paired control: outside, the payload really ends so. */
		json_t *cres;
		cf_control_op(env, out, ARGS(cases[i].op, cases[i].arg), &cres);
		const json_t *co = json_array_get(out->observations, json_array_size(out->observations) - 1);
		bool ctl = json_integer_value(json_object_get(co, "exit_status")) == cases[i].status &&
			   json_integer_value(json_object_get(co, "signal")) == cases[i].sig;
		ctl_all &= ctl;
		json_array_append_new(seen, json_pack("{s:s, s:s, s:i, s:i, s:b, s:i, s:b, s:b}", "op", cases[i].op, "arg",
						      cases[i].arg, "want_status", cases[i].status, "status", r->status,
						      "exited", r->exited, "signal", r->term_signal, "as_expected", ok,
						      "control_as_expected", ctl));
		size_t l = strlen(detail);
		snprintf(detail + l, sizeof detail - l, "%s%s %s -> %d%s%s", l ? ", " : "", cases[i].op, cases[i].arg,
			 r->status, status_how(r, cases[i].sig, ok), ok ? "" : ran ? " WRONG" : " (did not run)");
		agsbx_exec_result_clear(&xr);
	}
	json_object_set_new(out->facts, "cases", seen);
	if (!ctl_all) {
		cf_skip(out, "control failed: outside the sandbox the payload does not end as asked either; %s", detail);
		return;
	}
	out->observed_pass = pass;
	cf_reason(out, "%s; the controls outside ended exactly so", detail);
}

/* ---- bundle.integrity_enforced, config.unknown_rejected ----------------- */

static const char *last_refusal(const struct check_out *out)
{
	size_t n = json_array_size(out->observations);
	const json_t *o = n ? json_array_get(out->observations, n - 1) : NULL;
	return json_string_value(json_object_get(o, "refused"));
}

/* A fresh grant of its own (the shared one must stay intact for the other
 * checks) with the payload and one data file. */
static int integrity_grant(const struct check_env *env, struct agsbx_grant **g, char **data_src)
{
	uid_t uid = env->ctx->run_as ? env->ctx->run_uid : (uid_t)-1;
	gid_t gid = env->ctx->run_as ? env->ctx->run_gid : (gid_t)-1;
	char hex[17];
	agsbx_random_hex(hex, 8);
	if (asprintf(data_src, "%s/integrity-data-%s", env->o->work_dir, hex) < 0)
		return -ENOMEM;
	int r = agsbx_write_file_atomic(*data_src, "original\n", 9, 0644);
	if (r == 0)
		r = agsbx_grant_create(env->o->work_dir, "integrity", uid, gid, g);
	if (r == 0)
		r = agsbx_grant_add_file(*g, AGSBX_PAYLOAD_NAME, env->ctx->payload_path, true);
	if (r == 0)
		r = agsbx_grant_add_file(*g, "data.txt", *data_src, false);
	if (r == 0)
		r = agsbx_grant_seal(*g);
	return r;
}

/* The change a process with write access to the source root could make
 * between materialisation and execution: an append to the file name. Only
 * through fds and only to the very file the grant materialised (same
 * inode, one link, ours): the sandbox user owns the directory and may have
 * put a link to any file in its place. */
static bool tamper_source(const struct agsbx_grant *g, const char *name)
{
	const struct agsbx_bundle_file *f = NULL;
	for (size_t i = 0; i < g->nfiles; i++)
		if (strcmp(g->files[i].name, name) == 0)
			f = &g->files[i];
	_cleanup_close_ int dfd = f ? agsbx_dir_open(g->roots[AGSBX_ROOT_SOURCE].path) : -1;
	struct stat st;
	_cleanup_close_ int rd = dfd >= 0 ? agsbx_open_file_at(dfd, name, O_RDONLY, geteuid(), &st) : -1;
	if (rd < 0 || st.st_dev != f->dev || st.st_ino != f->ino)
		return false;
	if (fchmod(rd, 0644) < 0) /* the owner may: materialisation made it read-only */
		return false;
	_cleanup_close_ int fd = agsbx_open_file_at(dfd, name, O_WRONLY | O_APPEND, geteuid(), &st);
	return fd >= 0 && st.st_dev == f->dev && st.st_ino == f->ino && write(fd, "tampered\n", 9) == 9;
}

static void check_bundle_integrity_enforced(const struct check_env *env, struct check_out *out)
{
	struct agsbx_grant *g = NULL;
	_cleanup_free_ char *data_src = NULL;
	int r = integrity_grant(env, &g, &data_src);
	if (data_src)
		unlink(data_src);
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	if (r < 0 || env->ops->ensure(env->ops, env->ctx, g, &h, &fail) < 0) {
		cf_reason(out, r < 0 ? "internal: cannot prepare a second grant" : "ensure of a second grant failed: %s",
			     fail.message);
		agsbx_grant_destroy(g);
		return;
	}
	json_t *before = NULL;
	cf_sandbox_op(env, out, h, NULL, ARGS("true"), &before, NULL);
	_cleanup_free_ char *inside = agsbx_handle_path(h, AGSBX_ROOT_OUTPUT, "after-change");
	_cleanup_free_ char *host = agsbx_path_join(g->roots[AGSBX_ROOT_OUTPUT].path, "after-change");
	bool changed = tamper_source(g, "data.txt");
	int after = changed ? cf_sandbox_op(env, out, h, NULL, ARGS("write", inside, "ran"), NULL, NULL) : 0;
	const char *why = after < 0 ? last_refusal(out) : NULL;
	bool ran = host && access(host, F_OK) == 0;
	agsbx_provider_release(h);
	agsbx_handle_free(h);
	agsbx_grant_destroy(g);
	json_object_set_new(out->facts, "baseline_ran", json_boolean(cf_result_ok(before)));
	json_object_set_new(out->facts, "refusal_reason", why ? json_string(why) : json_null());
	json_object_set_new(out->facts, "executed_after_change", json_boolean(ran));
	if (!cf_result_ok(before) || !changed) {
		cf_reason(out, !changed ? "the materialised source file is gone or was replaced (never followed)"
					   : "the unchanged bundle did not execute (%s)", cf_result_errno(before));
		return;
	}
	out->observed_pass = after < 0 && why && strcmp(why, "bundle_changed") == 0 && !ran;
	cf_reason(out, "after a source file changed: execution %s%s; payload %s", after < 0 ? "refused with " : "ALLOWED",
		     after < 0 ? (why ? why : "?") : "", ran ? "RAN" : "never ran");
}

static void check_config_unknown_rejected(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = cf_nonce(), *key = NULL;
	if (!n || asprintf(&key, "agsbx_unknown_%.12s", n) < 0)
		return;
	json_t *cfg = env->ctx->config ? json_deep_copy(env->ctx->config) : json_object();
	json_object_set_new(cfg, key, json_true());
	struct agsbx_ctx c = *env->ctx;
	c.config = cfg;
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	int er = env->ops->ensure(env->ops, &c, env->grant, &h, &fail);
	if (er == 0 && h) {
		agsbx_provider_release(h);
		agsbx_handle_free(h);
	}
	json_decref(cfg);
	json_object_set_new(out->facts, "unknown_key", json_string(key));
	json_object_set_new(out->facts, "ensure_reason", fail.reason ? json_string(fail.reason) : json_null());
	json_object_set_new(out->facts, "ensure_message", json_string(fail.message));
	/* The paired control is the shared handle itself: ensure with the
	 * provider's own config succeeded (the check needs it). */
	out->observed_pass = er < 0 && fail.reason && strcmp(fail.reason, "config_invalid") == 0;
	cf_reason(out, "ensure with the unknown config key '%s': %s%s; control: ensure with the given config succeeded",
		     key, er < 0 ? "refused with " : "ACCEPTED", er < 0 ? (fail.reason ? fail.reason : "no reason") : "");
}

const struct check_def cf_checks_contract[] = {
	{ .id = "bundle.integrity_enforced", .axis = AGSBX_AXIS_CONTRACT, .run = check_bundle_integrity_enforced, .needs_handle = true,
	  .title = "a source file changed after materialisation: execution refused with bundle_changed",
	  .attacks = "changes a materialised source file of a second grant, then executes",
	  .why = "the TOCTOU guard: code changed after review must never run",
	  .control = "the unchanged grant executes",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_allow_liar" } } },
	{ .id = "capabilities.truthful", .axis = AGSBX_AXIS_CONTRACT, .phase = CHECK_PHASE_JUDGE,
	  .run = judge_capabilities_truthful, .needs_handle = true,
	  .title = "every claimed axis is backed by passing checks of that axis (an overclaim is a defect)",
	  .attacks = "compares every claimed axis with the checks that evidence it",
	  .why = "an overclaim makes a caller trust an isolation that is not there",
	  .control = "the other checks' own controls",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/cli/collect-negative.sh", "neg_nnp_caps" } } },
	{ .id = "config.unknown_rejected", .axis = AGSBX_AXIS_CONTRACT, .run = check_config_unknown_rejected, .needs_handle = true,
	  .title = "an unknown config key: ensure refuses with config_invalid",
	  .attacks = "calls ensure with an unknown config key",
	  .why = "a typo in a security setting must not be silently ignored",
	  .control = "ensure without the key succeeds",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" } } },
	{ .id = "exec.status_fidelity", .axis = AGSBX_AXIS_CONTRACT, .run = check_exec_status_fidelity, .needs_handle = true, .long_running = true,
	  .title = "exit 0/1/42/127 and death by SIGTERM/SIGKILL are reported exactly",
	  .attacks = "exits 0/1/42/127 and dies by SIGTERM/SIGKILL",
	  .why = "a wrapper that rewrites statuses turns failures into successes",
	  .control = "the same statuses outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_status_liar" }, { "tests/test-covA-liars.c", "neg_allow_liar" }, { "tests/test-covA-liars.c", "neg_killed_liar" }, { "tests/test-covA-liars.c", "neg_deny_liar" } } },
	{ .id = "fail.closed", .axis = AGSBX_AXIS_CONTRACT, .run = fail_closed,
	  .title = "an unavailable mechanism refuses work; nothing executes; no fallback",
	  .attacks = "makes the mechanism unavailable (really or by a labelled simulation), then ensures and executes",
	  .why = "an unavailable sandbox must refuse work, never fall back to running unsandboxed",
	  .control = "no payload marker on the host",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_fail_open" } } },
	{ .id = "output.bounded", .axis = AGSBX_AXIS_CONTRACT, .run = output_bounded, .needs_handle = true, .long_running = true,
	  .title = "64 MiB floods on stdout and stderr are capped and flagged",
	  .attacks = "floods 64 MiB on stdout and stderr",
	  .why = "an unbounded capture is a memory DoS of the harness",
	  .control = "the harness's own high-water mark",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_nocap" }, { "tests/cli/collect-negative.sh", "neg_refuses" }, { "tests/test-covA-liars.c", "neg_timeout_liar" }, { "tests/test-covA-liars.c", "neg_cut_liar" } } },
	{ .id = "probe.truthful", .axis = AGSBX_AXIS_CONTRACT, .run = probe_truthful, .long_running = true,
	  .title = "reason in the closed set; available <=> ready; facts match the host",
	  .attacks = "probes twice and compares facts with the host probes",
	  .why = "a probe that guesses cannot be trusted to fail closed",
	  .control = "the host probes and the harness's own host-condition test",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_probe_liar" } } },
};
const size_t cf_checks_contract_count = AGSBX_ARRAY_SIZE(cf_checks_contract);

const struct check_def cf_checks_declared[] = {
	{ .id = "adapter.protocol", .axis = AGSBX_AXIS_CONTRACT,
	  .title = "a declared adapter keeps agsbx-external/1: well-formed, in time, nothing left running",
	  .attacks = "every agsbx-external/1 exchange with a declared adapter",
	  .why = "an adapter that breaks the protocol cannot be believed about anything else",
	  .control = "none: the protocol's own rules",
	  .negative = { { "tests/cli/external-negative.sh", "garbage" } } },
};
const size_t cf_checks_declared_count = AGSBX_ARRAY_SIZE(cf_checks_declared);
