/* Resource bounds: a fork loop and a memory balloon under hard caps; the
 * host's own bounds are the control, read and never exhausted. */
#include "conformance/checks/attack.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/proc.h"
#include "base/util.h"

/* The balloons' hard caps: the payload never goes beyond them. */
#define PIDS_CAP 2048
#define MEMORY_CAP_MIB 1024

/* ---- resources.pids_bounded, resources.memory_bounded ------------------- */

/* Never two balloons at once on the machine (another provider's worker,
 * another collect): an abstract unix socket bound for the duration is
 * the lock; the kernel releases it with the process, however it ends.
 * Waits at most LOCK_WAIT_MS; -EBUSY then. */
#define LOCK_WAIT_MS 120000
static int machine_lock(void)
{
	static const char name[] = "@agsbx-evidence-resource-checks";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	memcpy(a.sun_path, name, sizeof name - 1);
	a.sun_path[0] = '\0';
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sizeof name - 1);
	for (int waited = 0; waited <= LOCK_WAIT_MS; waited += 100) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (bind(fd, (struct sockaddr *)&a, len) == 0)
			return fd;
		int e = errno;
		close(fd);
		if (e != EADDRINUSE || agsbx_runner_aborted())
			return -e;
		usleep(100 * 1000);
	}
	return -EBUSY;
}

/* Wall-clock microseconds: lock windows compared across processes. */
static int64_t unix_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A bound the host already sets outside (the control's `limits`), below
 * CAP (in the units of KEY): the sandbox's own bound is then not shown. */
static bool host_bounds(const json_t *ctl, const char *key, json_int_t cap)
{
	const json_t *v = cf_sub(ctl, key);
	return json_is_integer(v) && json_integer_value(v) < cap;
}

struct balloon {
	const char *op, *what;
	json_int_t cap;
	char cap_arg[16];
};

/* The last "agsbx-progress N" the payload wrote on stderr, or -1. */
static long long last_progress(const struct agsbx_run_result *r)
{
	long long n = -1;
	const char *e = r->err ? r->err + r->err_len : NULL;
	for (const char *p = r->err; p && p < e && (p = memmem(p, (size_t)(e - p), "agsbx-progress ", 15)); p += 15)
		n = strtoll(p + 15, NULL, 10);
	return n;
}

/* No result line: the sandbox ended the whole run (its runtime killed or
 * lost it). Bounded when it ended by itself, not by the harness's timeout
 * or cancel, before the progress reached the cap. */
static void judge_ended(struct check_out *out, const struct balloon *b, const struct agsbx_run_result *r)
{
	long long got = last_progress(r);
	json_object_set_new(out->facts, "progress_before_end", json_integer(got));
	/* no "agsbx-progress 0": the payload never started, nothing was bounded */
	if (got < 0) {
		cf_no_observation(out, b->what);
		return;
	}
	bool by_sandbox = !r->timed_out && !r->cancelled && r->status != 0;
	out->observed_pass = by_sandbox && got < b->cap;
	cf_reason(out, "%s inside: no result line; the run ended with status %d%s after %lld of the %lld cap%s", b->what,
		  r->status, r->timed_out ? " (the harness's timeout)" : "", got < 0 ? 0 : got, (long long)b->cap,
		  out->observed_pass ? ": the sandbox ended it below the cap" : ": NOT shown bounded");
}

/* The run inside, in a sandbox of its own where the provider has one (an
 * out-of-memory kill must not take a shared one with it). */
static void balloon_run(const struct check_env *env, struct check_out *out, const struct balloon *b)
{
	struct agsbx_limits lim = { .max_output_bytes = env->o->max_output_bytes, .timeout_ms = env->o->timeout_ms,
				    .cancel_fd = -1, .own_sandbox = true };
	struct agsbx_exec_result xr = { 0 };
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, &lim, ARGS(b->op, b->cap_arg), &res, &xr) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	json_object_set_new(out->facts, "cap", json_integer(b->cap));
	json_object_set_new(out->facts, "inside", res ? json_incref(res) : json_null());
	if (!res) {
		judge_ended(out, b, &xr.run);
	} else {
		out->observed_pass = json_is_true(cf_sub(res, "bounded"));
		cf_reason(out, "%s inside: stopped at %lld of the %lld cap (%s)%s", b->what,
			  (long long)json_integer_value(cf_sub(res, json_is_integer(cf_sub(res, "forked")) ? "forked" : "reached_mib")),
			  (long long)b->cap, json_string_value(cf_sub(res, "stopped")) ?: cf_result_errno(res),
			  out->observed_pass ? ": the sandbox bounds it" : ": NOT bounded");
	}
	agsbx_exec_result_clear(&xr);
}

static void resources_check(const struct check_env *env, struct check_out *out, const struct balloon *b,
			    const char *const *host_keys, json_int_t host_cap)
{
	json_t *ctl;
	cf_control_op(env, out, ARGS("limits"), &ctl);
	json_object_set_new(out->facts, "host_limits", ctl ? json_incref(ctl) : json_null());
	for (; *host_keys; host_keys++)
		if (host_bounds(ctl, *host_keys, host_cap)) {
			cf_skip(out, "control: the host already bounds it outside the sandbox (%s %lld, below the cap %lld)",
				*host_keys, (long long)json_integer_value(cf_sub(ctl, *host_keys)), (long long)b->cap);
			return;
		}
	/* Host safety: the balloon runs only where the machine has room for
	 * it twice over, in case the sandbox does not stop it. */
	if (strcmp(b->op, "balloon") == 0 && json_is_integer(cf_sub(ctl, "mem_available_kib")) &&
	    json_integer_value(cf_sub(ctl, "mem_available_kib")) < 2 * b->cap * 1024) {
		cf_skip(out, "not attempted: the host has %lld MiB available, under twice the %lld MiB cap",
			(long long)json_integer_value(cf_sub(ctl, "mem_available_kib")) / 1024, (long long)b->cap);
		return;
	}
	uint64_t t0 = agsbx_now_us();
	int lock = machine_lock();
	if (lock < 0) {
		cf_skip(out, "not attempted: another resource check held the machine's lock (%s)", strerror(-lock));
		return;
	}
	int64_t from = unix_us();
	uint64_t waited = agsbx_now_us() - t0;
	balloon_run(env, out, b);
	json_object_set_new(out->facts, "machine_lock", json_pack("{s:I, s:I, s:I}", "waited_us", (json_int_t)waited,
								  "held_from_unix_us", (json_int_t)from, "held_until_unix_us",
								  (json_int_t)unix_us()));
	close(lock);
	/* The harness keeps only the capped output of the run. */
	json_object_set_new(out->facts, "harness_vm_hwm_kib", json_integer(agsbx_proc_self_status_kib("VmHWM")));
}

static void check_resources_pids_bounded(const struct check_env *env, struct check_out *out)
{
	struct balloon b = { "fork-bound", "sleeping children", PIDS_CAP, "" };
	snprintf(b.cap_arg, sizeof b.cap_arg, "%d", PIDS_CAP);
	/* RLIMIT_NPROC binds a user outside too (root ignores it). */
	const char *const keys_user[] = { "cgroup_pids_max", "rlimit_nproc", NULL };
	const char *const keys_root[] = { "cgroup_pids_max", NULL };
	bool root = (env->ctx->run_as ? env->ctx->run_uid : getuid()) == 0;
	resources_check(env, out, &b, root ? keys_root : keys_user, PIDS_CAP);
}

static void check_resources_memory_bounded(const struct check_env *env, struct check_out *out)
{
	struct balloon b = { "balloon", "MiB touched", MEMORY_CAP_MIB, "" };
	snprintf(b.cap_arg, sizeof b.cap_arg, "%d", MEMORY_CAP_MIB);
	const char *const keys[] = { "cgroup_memory_max", "rlimit_as", "rlimit_data", NULL };
	resources_check(env, out, &b, keys, (json_int_t)MEMORY_CAP_MIB << 20);
}

const struct check_def cf_checks_resources[] = {
	{ .id = "resources.memory_bounded", .axis = AGSBX_AXIS_RESOURCES, .run = check_resources_memory_bounded, .needs_handle = true, .exclusive = true,
	  .title = "a touch-every-page balloon is stopped below 1 GiB (control: the host does not bound it outside)",
	  .attacks = "touches every page of a balloon up to 1 GiB",
	  .why = "a memory balloon is a DoS of the host (CIS Docker 5.10)",
	  .control = "the host's own bounds, read",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" } } },
	{ .id = "resources.pids_bounded", .axis = AGSBX_AXIS_RESOURCES, .run = check_resources_pids_bounded, .needs_handle = true, .exclusive = true,
	  .title = "a fork loop is stopped below 2048 children (control: the host does not bound it outside)",
	  .attacks = "forks up to 2048 sleeping children",
	  .why = "a fork bomb (CIS Docker 5.28)",
	  .control = "the host's pids.max and RLIMIT_NPROC, read",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_allow_liar" } } },
};
const size_t cf_checks_resources_count = AGSBX_ARRAY_SIZE(cf_checks_resources);
