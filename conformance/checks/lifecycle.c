/* The lifecycle: a timed-out or cancelled run leaves nothing behind, and a
 * released handle runs nothing. */
#include "conformance/checks/attack.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/rundir.h"

/* After a run ends, no process of ours carrying the marker may remain
 * (base/runner.h: anybody can copy a marker they see in ps into a process
 * of their own; only our tree's, and root's, count); a dying process can
 * linger a few ms, so poll briefly before judging. */
static int survivors(const char *marker, json_t *facts)
{
	int n = 0;
	for (int i = 0; i < 20; i++) {
		_cleanup_free_ pid_t *pids = NULL;
		n = agsbx_find_tree_processes_with_marker(marker, &pids);
		if (n <= 0)
			break;
		usleep(50 * 1000);
	}
	json_object_set_new(facts, "surviving_marker_processes", json_integer(n < 0 ? 0 : n));
	return n;
}

/* The provider's resources left after the run: a count, -EOPNOTSUPP when
 * the provider has no inventory (nothing was looked at: never "0 left"),
 * another -errno when its inventory failed. facts.provider_inventory says
 * which. */
static int provider_leftovers(const struct check_env *env, const char *marker, json_t *facts)
{
	json_t *found = NULL;
	int n = env->ops->leftovers ? env->ops->leftovers(env->h, marker, &found) : -EOPNOTSUPP;
	json_object_set_new(facts, "provider_inventory", json_string(n == -EOPNOTSUPP ? "none" : n < 0 ? "failed" : "taken"));
	json_object_set_new(facts, "provider_leftovers", found ? found : json_array());
	return n;
}

/* "; 2 provider resource(s) left" or what stands in for it. */
static void leftovers_text(int n, char *buf, size_t size)
{
	if (n == -EOPNOTSUPP)
		snprintf(buf, size, "provider resources not inventoried (the provider has no inventory)");
	else if (n < 0)
		snprintf(buf, size, "provider resources UNKNOWN (the inventory failed: %s)", strerror(-n));
	else
		snprintf(buf, size, "%d provider resource(s) left", n);
}

static void kill_marker(const char *marker)
{
	/* Never leave an escapee behind for the next check or the host; and
	 * never hit another user's copy of the marker. */
	_cleanup_free_ pid_t *pids = NULL;
	int n = agsbx_find_tree_processes_with_marker(marker, &pids);
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
}

struct cancel_arg {
	const struct check_env *env;
	struct check_out *out;
	const char *const *args;
	struct agsbx_limits lim;
	struct agsbx_exec_result xr;
	int rc;
	int done;             /* set (atomically) when the execution returned */
};

static void *cancel_thread(void *p)
{
	struct cancel_arg *a = p;
	a->rc = cf_sandbox_op(a->env, a->out, a->env->h, &a->lim, a->args, NULL, &a->xr);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Until the payload's ready file appears, or the execution already ended
 * (a refusal must not cost the whole wait). */
static bool wait_for_ready(const char *path, const struct cancel_arg *a, int ms)
{
	for (int i = 0; i < ms / 20; i++) {
		if (access(path, F_OK) == 0)
			return true;
		if (__atomic_load_n(&a->done, __ATOMIC_ACQUIRE))
			break;
		usleep(20 * 1000);
	}
	return access(path, F_OK) == 0;
}

/* How long a cancelled run's detached tree may take to come up. */
#define CANCEL_READY_WAIT_MS 10000

/* One attempt; returns true when it was inconclusive: the timeout fired
 * before the payload had even started its detached tree (a loaded
 * machine), so nothing was shown either way. */
static bool lifecycle_cleanup(const struct check_env *env, struct check_out *out, bool cancel, int64_t timeout_ms)
{
	_cleanup_free_ char *n = cf_nonce(), *marker = NULL, *ready = NULL;
	/* The run's nonce (its work dir's record holds it) and the check's: a
	 * killed run's detached tree is known to `cleanup` by it. */
	if (!n || asprintf(&marker, "agsbx-marker-%s-%s", agsbx_run_nonce(), n) < 0 ||
	    asprintf(&ready, "ready-%s", n) < 0)
		return false;
	_cleanup_free_ char *in_ready = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, ready);
	_cleanup_free_ char *host_ready = cf_host_path(env, AGSBX_ROOT_OUTPUT, ready);
	_cleanup_close_ int efd = eventfd(0, EFD_CLOEXEC);
	struct cancel_arg a = {
		.env = env, .out = out, .args = ARGS("spawn-detached", marker, in_ready),
		.lim = { .max_output_bytes = env->o->max_output_bytes,
			 .timeout_ms = timeout_ms, .cancel_fd = cancel ? efd : -1,
			 /* what is left afterwards must be this run's alone */
			 .own_sandbox = true },
	};
	bool spawned;
	if (cancel) {
		pthread_t t;
		if (efd < 0 || pthread_create(&t, NULL, cancel_thread, &a) != 0) {
			cf_reason(out, "internal: cannot start the cancelling run");
			return false;
		}
		spawned = wait_for_ready(host_ready, &a, CANCEL_READY_WAIT_MS);
		uint64_t one = 1;
		if (write(efd, &one, sizeof one) < 0) { /* the join below still ends it via timeout */ }
		pthread_join(t, NULL);
	} else {
		cancel_thread(&a);
		spawned = access(host_ready, F_OK) == 0;
	}
	if (a.rc < 0) {
		cf_reason(out, "provider refused to execute");
		kill_marker(marker);
		return false;
	}
	bool ended = cancel ? a.xr.run.cancelled : (a.xr.run.timed_out && a.xr.run.status == 124);
	int left = survivors(marker, out->facts);
	int res_left = provider_leftovers(env, marker, out->facts);
	json_object_set_new(out->facts, "detached_tree_started", json_boolean(spawned));
	json_object_set_new(out->facts, "marker", json_string(marker));
	/* No inventory: nothing counted, nothing held against it (the reason
	 * says so); a failed one cannot show that nothing is left. */
	bool res_ok = res_left == 0 || res_left == -EOPNOTSUPP;
	out->observed_pass = spawned && ended && left == 0 && res_ok;
	char res_text[128];
	leftovers_text(res_left, res_text, sizeof res_text);
	/* A tree that never started: what the wrapper or provider did instead. */
	char run[sizeof out->no_result + 32] = "";
	if (!spawned)
		snprintf(run, sizeof run, " (the run: %s)", out->no_result[0] ? out->no_result : "no detail");
	cf_reason(out, "%s; detached tree %s%s; %d marker process(es) left; %s",
		  cancel ? (ended ? "cancelled" : "NOT cancelled") : (ended ? "timed out (124)" : "did NOT time out"),
		  spawned ? "started" : "NEVER STARTED", run, left, res_text);
	kill_marker(marker);
	agsbx_exec_result_clear(&a.xr);
	return !cancel && !spawned && ended && left == 0 && res_ok;
}

/* An inconclusive attempt is repeated with twice the timeout (at most
 * three attempts, all recorded): the verdict never rests on a race with
 * the machine's load, and the matrix stays quick when it is idle. */
static void lifecycle_timeout_cleanup(const struct check_env *env, struct check_out *out)
{
	int64_t t = env->lifecycle_timeout_ms;
	int attempt = 1;
	while (lifecycle_cleanup(env, out, false, t) && attempt < 3) {
		attempt++;
		t *= 2;
	}
	json_object_set_new(out->facts, "attempts", json_integer(attempt));
	json_object_set_new(out->facts, "timeout_ms", json_integer(t));
}

/* The cancel goes out once the detached tree is up (at most
 * CANCEL_READY_WAIT_MS), so the run's own timeout only has to outlast that
 * wait with room for the cancel to act: 5 s more (a gVisor container of
 * its own, the slowest, is up and killed in 1-2 s on a loaded 2-core
 * host). It is also how long a provider whose cancelled run never returns
 * holds collect up (an adapter: this plus its 5 s execute deadline), so it
 * is no longer than that. */
static void lifecycle_cancel_cleanup(const struct check_env *env, struct check_out *out)
{
	lifecycle_cleanup(env, out, true, CANCEL_READY_WAIT_MS + 5000);
}

static bool same_json(const json_t *a, const json_t *b)
{
	return a && b && json_equal((json_t *)a, (json_t *)b);
}

static void lifecycle_consistent(const struct check_env *env, struct check_out *out)
{
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	if (env->ops->ensure(env->ops, env->ctx, env->grant, &h, &fail) < 0) {
		cf_reason(out, "ensure failed after a ready probe: %s (%s)", fail.reason ? fail.reason : "?", fail.message);
		return;
	}
	int health_before = agsbx_provider_health(h);
	struct agsbx_exec_result xr = { 0 };
	int run = cf_sandbox_op(env, out, h, NULL, ARGS("true"), NULL, &xr);
	json_t *claims = agsbx_caps_to_json(&env->probe->caps);
	const json_t *meta = xr.meta;
	bool meta_ok = run == 0 && meta &&
		       json_is_string(json_object_get(meta, "provider")) &&
		       strcmp(json_string_value(json_object_get(meta, "provider")), env->ops->id) == 0 &&
		       same_json(json_object_get(meta, "capabilities"), claims) &&
		       json_is_string(json_object_get(meta, "mechanism")) &&
		       strcmp(json_string_value(json_object_get(meta, "mechanism")), env->probe->caps.mechanism ?: "none") == 0;
	json_object_set_new(out->facts, "probe_capabilities", claims);
	json_object_set_new(out->facts, "result_meta", meta ? json_incref((json_t *)meta) : json_null());
	agsbx_exec_result_clear(&xr);
	agsbx_provider_release(h);
	int health_after = agsbx_provider_health(h);
	_cleanup_free_ char *n = cf_nonce(), *name = NULL;
	if (!n || asprintf(&name, "after-release-%s", n) < 0)
		name = NULL;
	_cleanup_free_ char *inside = agsbx_handle_path(h, AGSBX_ROOT_OUTPUT, name ? name : "x");
	_cleanup_free_ char *host = cf_host_path(env, AGSBX_ROOT_OUTPUT, name ? name : "x");
	int after = cf_sandbox_op(env, out, h, NULL, ARGS("write", inside, "after-release"), NULL, NULL);
	bool ran_after = access(host, F_OK) == 0;
	agsbx_provider_release(h); /* idempotent */
	agsbx_handle_free(h);
	json_object_set_new(out->facts, "health_before_release", json_string(health_before == 0 ? "ready" : "unhealthy"));
	json_object_set_new(out->facts, "health_after_release", json_string(health_after == 0 ? "ready" : "unhealthy"));
	json_object_set_new(out->facts, "execute_after_release_refused", json_boolean(after < 0 && !ran_after));
	out->observed_pass = health_before == 0 && health_after != 0 && after < 0 && !ran_after && meta_ok;
	cf_reason(out, "health %s before release, %s after; execute after release %s; result metadata %s the probe",
		     health_before == 0 ? "ready" : "UNHEALTHY", health_after == 0 ? "READY" : "unhealthy",
		     after < 0 && !ran_after ? "refused" : "RAN", meta_ok ? "matches" : "DISAGREES WITH");
}

const struct check_def cf_checks_lifecycle[] = {
	{ .id = "lifecycle.cancel_cleanup", .axis = AGSBX_AXIS_CONTRACT, .run = lifecycle_cancel_cleanup, .needs_handle = true, .exclusive = AGSBX_EXCLUSIVE_ORPHANS,
	  .title = "cancelling mid-run leaves no process and no provider resource",
	  .attacks = "cancels a run with a detached, SIGTERM-ignoring tree",
	  .why = "nothing may outlive a cancelled run",
	  .control = "the tree is seen up before the cancel",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_leaky" } } },
	{ .id = "lifecycle.consistent", .axis = AGSBX_AXIS_CONTRACT, .run = lifecycle_consistent, .needs_handle = true,
	  .title = "probe, ensure, health, execute, release, health, execute agree",
	  .attacks = "probe, ensure, health, execute, release, health, execute",
	  .why = "a released handle must not run anything; metadata must match the probe",
	  .control = "the run before release",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_meta_liar" }, { "tests/cli/collect-negative.sh", "neg_runs_after_release" } } },
	{ .id = "lifecycle.timeout_cleanup", .axis = AGSBX_AXIS_CONTRACT, .run = lifecycle_timeout_cleanup, .needs_handle = true, .exclusive = AGSBX_EXCLUSIVE_ORPHANS,
	  .title = "a timeout kills a detached SIGTERM-ignoring tree; nothing left",
	  .attacks = "times out a run with a detached, SIGTERM-ignoring tree",
	  .why = "nothing may outlive a timed-out run",
	  .control = "the tree is seen up before the timeout",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_leaky" }, { "tests/cli/collect-negative.sh", "neg_refuses" }, { "tests/test-covA-liars.c", "neg_killed_liar" }, { "tests/test-covA-liars.c", "neg_timeout_liar" } } },
};
const size_t cf_checks_lifecycle_count = AGSBX_ARRAY_SIZE(cf_checks_lifecycle);
