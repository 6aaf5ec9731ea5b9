/* Process containment: the harness visible inside, and its neighbours'
 * memory and environment. */
#include "conformance/checks/attack.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"

/* ---- proc.contained ----------------------------------------------------- */

static void proc_contained(const struct check_env *env, struct check_out *out)
{
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)env->harness_pid);
	struct stat st;
	bool host_ns = stat("/proc/self/ns/pid", &st) == 0;
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("pid-visible", pid), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (!res) {
		cf_no_observation(out, "harness pid lookup");
		return;
	}
	json_t *ns = json_object_get(res, "pid_ns");
	bool distinct = host_ns && json_is_integer(ns) && (ino_t)json_integer_value(ns) != st.st_ino;
	bool visible = cf_result_ok(res);
	json_object_set_new(out->facts, "harness_pid", json_integer(env->harness_pid));
	json_object_set_new(out->facts, "pid_ns_distinct", json_boolean(distinct));
	out->observed_pass = !visible && distinct;
	cf_reason(out, "harness pid %d %s inside; pid namespace %s", (int)env->harness_pid,
		     visible ? "VISIBLE" : "not visible", distinct ? "distinct" : "SHARED with the host");
}

/* ---- proc.ptrace_denied ------------------------------------------------- */

static void stop_target(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	agsbx_runner_unregister_child(pid);
}

/* A process outside any sandbox, of the sandbox's user, holding a secret in
 * its environment: the target of the ptrace attempts. Returns once the
 * target has exec'd (its environ is the payload's, not a copy of ours):
 * the close-on-exec end of a pipe reports that, however slow the machine
 * is — no polling with a time bound. */
static pid_t start_target(const struct check_env *env, const char *marker, const char *secret)
{
	_cleanup_free_ char *envvar = NULL;
	if (asprintf(&envvar, "AGSBX_PTRACE_CANARY=%s", secret) < 0)
		return -ENOMEM;
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	pid_t parent = getpid();
	/* Registered from the start: a concurrent run's sweep would otherwise
	 * take the new-session target for an orphan of its own and kill it. */
	pid_t pid = agsbx_runner_fork_registered();
	if (pid == 0) {
		close(ready[0]);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		(void)setsid();
		if (env->ctx->run_as && (setgroups(0, NULL) < 0 || setgid(env->ctx->run_gid) < 0 || setuid(env->ctx->run_uid) < 0))
			_exit(126);
		/* The target dies with the harness even when the harness is
		 * SIGKILLed (it is setsid'd, outside every sandbox's tree). Set
		 * after the credential change, which would clear it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(0);
		char *argv[] = { (char *)env->ctx->payload_path, (char *)"linger", (char *)marker, NULL };
		char *envp[] = { envvar, NULL };
		execve(env->ctx->payload_path, argv, envp);
		int e = errno;
		(void)!write(ready[1], &e, sizeof e);
		_exit(127);
	}
	int fe = errno;
	close(ready[1]);
	if (pid < 0) {
		close(ready[0]);
		return -fe;
	}
	int e = 0;
	ssize_t r;
	while ((r = read(ready[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (r != 0) { /* exec failed (or the child died before it) */
		stop_target(pid);
		return r == (ssize_t)sizeof e && e > 0 ? -e : -ECHILD;
	}
	return pid;
}

static void check_proc_ptrace_denied(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = cf_nonce(), *secret = cf_nonce(), *marker = NULL;
	if (!n || !secret || asprintf(&marker, "agsbx-ptrace-target-%s", n) < 0)
		return;
	pid_t pid = start_target(env, marker, secret);
	if (pid < 0) {
		cf_skip(out, "cannot start the target process: %s", strerror(-pid));
		return;
	}
	char ps[16];
	snprintf(ps, sizeof ps, "%d", (int)pid);
	struct agsbx_exec_result xr = { 0 };
	json_t *res, *ctl;
	int sr = cf_sandbox_op(env, out, env->h, NULL, ARGS("ptrace", ps), &res, &xr);
	bool leaked = sr == 0 && cf_run_output_contains(&xr.run, secret);
	agsbx_exec_result_clear(&xr);
	cf_control_op(env, out, ARGS("ptrace", ps), &ctl);
	stop_target(pid);
	json_object_set_new(out->facts, "target_pid", json_integer(pid));
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	if (sr < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	const json_t *ce = cf_sub(ctl, "environ");
	if (!cf_result_ok(ce) || !strstr(json_string_value(cf_sub(ce, "content")) ?: "", secret)) {
		cf_control_skip(out, "/proc/PID/environ of the target is not readable", ce);
		return;
	}
	if (!res && !leaked) {
		cf_no_observation(out, "ptrace of a process outside");
		return;
	}
	out->observed_pass = res && !cf_result_ok(res) && !leaked;
	cf_reason(out, "against pid %d outside: ptrace %s, process_vm_readv %s, /proc/PID/mem %s, "
			  "/proc/PID/environ %s; control read its environ outside",
		     (int)pid, cf_denial(cf_sub(res, "attach")), cf_denial(cf_sub(res, "vm_readv")), cf_denial(cf_sub(res, "mem")),
		     cf_denial(cf_sub(res, "environ")));
}

const struct check_def cf_checks_proc[] = {
	{ .id = "proc.contained", .axis = AGSBX_AXIS_PROCESS, .run = proc_contained, .needs_handle = true,
	  .title = "own pid namespace; the harness pid is not visible",
	  .attacks = "looks for the harness pid inside",
	  .why = "a visible host process can be signalled or inspected",
	  .control = "the host's pid namespace",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_deny_liar" }, { "tests/test-covA-liars.c", "neg_silent_refusal" } } },
	{ .id = "proc.ptrace_denied", .axis = AGSBX_AXIS_PROCESS, .evidence = CHECK_REFUTES, .run = check_proc_ptrace_denied, .needs_handle = true,
	  .title = "ptrace, process_vm_readv, /proc/PID/mem and environ of a process outside are denied",
	  .attacks = "ptrace, process_vm_readv, /proc/PID/mem and environ of a process outside holding a secret",
	  .why = "memory and environment of neighbours hold credentials",
	  .control = "environ is readable outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" } } },
};
const size_t cf_checks_proc_count = AGSBX_ARRAY_SIZE(cf_checks_proc);
