/* NEGATIVE CONTROLS. Each provider below is wrong on purpose, in exactly
 * one way, so that one check (named in its comment) must fail. */
#include "tests/negative/negative.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"

static const char *const reasons[] = { "ready", "unavailable", NULL };
static const char *const no_keys[] = { NULL };

static const struct agsbx_caps claims_nothing = {
	.network = AGSBX_NET_INHERITED, .mechanism = "negative_control", .safety_class = "trusted_local",
};
/* Every axis, none enforced. */
static const struct agsbx_caps claims_everything = {
	.process_contained = true, .host_filesystem_restricted = true, .privilege_escalation_blocked = true,
	.syscalls_restricted = true, .network = AGSBX_NET_ISOLATED, .environment_scrubbed = true, .resources_bounded = true,
	.mechanism = "negative_control", .safety_class = "isolated",
};

static int probe_with(const struct agsbx_caps *c, struct agsbx_probe *out)
{
	memset(out, 0, sizeof *out);
	out->available = true;
	out->reason = "ready";
	out->caps = *c;
	out->facts = json_pack("{s:b}", "negative_control", 1);
	return 0;
}

static int p_nothing(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	return probe_with(&claims_nothing, out);
}

static int p_everything(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	return probe_with(&claims_everything, out);
}

/* Plain bounded execution, like trusted_local, with a cap override. */
static int run_plain(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		     struct agsbx_exec_result *out, struct agsbx_error *fail, size_t cap)
{
	memset(out, 0, sizeof *out);
	if (h->released) {
		agsbx_fail(fail, "unavailable", "released");
		return -ESTALE;
	}
	struct agsbx_run_opts o;
	agsbx_provider_run_opts(h, limits, &o);
	o.argv = step->argv;
	o.cwd = h->paths[step->cwd];
	if (cap)
		o.max_output_bytes = cap;
	int r = agsbx_run(&o, &out->run);
	out->meta = agsbx_handle_meta(h);
	return r;
}

/* The step run plainly behind a command prefix (pre, NULL-terminated). */
static int run_prefixed(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
			struct agsbx_exec_result *o, struct agsbx_error *f, const char *const *pre)
{
	size_t np = 0, na = 0;
	while (pre[np])
		np++;
	while (s->argv[na])
		na++;
	const char **argv = calloc(np + na + 1, sizeof *argv);
	if (!argv)
		return -ENOMEM;
	memcpy(argv, pre, np * sizeof *argv);
	memcpy(argv + np, s->argv, na * sizeof *argv);
	struct agsbx_step s2 = *s;
	s2.argv = argv;
	int r = run_plain(h, &s2, l, o, f, 0);
	free(argv);
	return r;
}

static int x_plain(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		   struct agsbx_exec_result *o, struct agsbx_error *f)
{
	return run_plain(h, s, l, o, f, 0);
}

#define NEG(name_, probe_, execute_, ...)                                             \
	const struct agsbx_provider_ops name_ = {                                     \
		.id = #name_, .summary = "NEGATIVE CONTROL (test only)", .reasons = reasons, \
		.config_keys = no_keys, .probe = probe_, .ensure = neg_ensure_with,   \
		.health = neg_health, .execute = execute_, .release = neg_release, __VA_ARGS__ };

/* Overclaims every axis while running unsandboxed: every isolation check
 * and capabilities.truthful fail. */
NEG(neg_overclaim, p_everything, x_plain)

/* Ignores the output cap: output.bounded fails. */
static int x_nocap(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		   struct agsbx_exec_result *o, struct agsbx_error *f)
{
	return run_plain(h, s, l, o, f, 256u << 20);
}
NEG(neg_nocap, p_nothing, x_nocap)

/* Result metadata names another mechanism than its probe:
 * lifecycle.consistent fails. */
static int x_meta(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		  struct agsbx_exec_result *o, struct agsbx_error *f)
{
	int r = run_plain(h, s, l, o, f, 0);
	if (o->meta)
		json_object_set_new(o->meta, "mechanism", json_string("something_else"));
	return r;
}
NEG(neg_meta_liar, p_nothing, x_meta)

/* Keeps executing after release: lifecycle.consistent fails. */
static int x_after(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		   struct agsbx_exec_result *o, struct agsbx_error *f)
{
	bool was = h->released;
	h->released = false;
	int r = run_plain(h, s, l, o, f, 0);
	h->released = was;
	return r;
}
NEG(neg_runs_after_release, p_nothing, x_after)

/* Ignores the simulation that should make it unavailable and runs anyway:
 * fail.closed fails. */
NEG(neg_fail_open, p_nothing, x_plain, .fail_closed_simulation = AGSBX_SIM_NO_LANDLOCK)

/* Reports a reason outside its closed set (and "available" with it):
 * probe.truthful fails. */
static int p_liar(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	probe_with(&claims_nothing, out);
	out->reason = "all_good";
	return 0;
}
NEG(neg_probe_liar, p_liar, x_plain)

/* Says it executed, never ran anything: fs.grant_write fails. */
static int x_noop(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		  struct agsbx_exec_result *o, struct agsbx_error *f)
{
	memset(o, 0, sizeof *o);
	o->run.exited = true;
	o->run.out = strdup("");
	o->run.err = strdup("");
	o->meta = agsbx_handle_meta(h);
	return 0;
}
NEG(neg_noop, p_nothing, x_noop)

/* Claims the filesystem axis but gives the program a private mount
 * namespace in which it may mount: fs.remount_denied fails (and the host's
 * mounts are untouched). */
static int x_mountns(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		     struct agsbx_exec_result *o, struct agsbx_error *f)
{
	const char *pre_root[] = { "unshare", "--mount", "--propagation", "private", "--", NULL };
	const char *pre_user[] = { "unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "--", NULL };
	return run_prefixed(h, s, l, o, f, geteuid() == 0 && !h->ctx->run_as ? pre_root : pre_user);
}
static const struct agsbx_caps claims_fs = {
	.host_filesystem_restricted = true, .network = AGSBX_NET_INHERITED, .mechanism = "negative_control",
	.safety_class = "filesystem_only",
};
static int p_fs(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	return probe_with(&claims_fs, out);
}
NEG(neg_mountns, p_fs, x_mountns)

/* Leaks: kills only its direct child on timeout or cancel, so a detached
 * SIGTERM-ignoring grandchild survives: lifecycle.timeout_cleanup and
 * lifecycle.cancel_cleanup fail. */
static int x_leaky(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		   struct agsbx_exec_result *o, struct agsbx_error *f)
{
	memset(o, 0, sizeof *o);
	uint64_t t0 = agsbx_now_us();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (h->ctx->run_as && (setgid(h->ctx->run_gid) < 0 || setuid(h->ctx->run_uid) < 0))
			_exit(126);
		if (chdir(h->paths[s->cwd]) < 0)
			_exit(126);
		execv(s->argv[0], (char *const *)s->argv);
		_exit(127);
	}
	int st = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		struct pollfd pfd = { .fd = l->cancel_fd, .events = POLLIN };
		bool cancel = l->cancel_fd >= 0 && poll(&pfd, 1, 0) > 0;
		bool timeout = l->timeout_ms > 0 && agsbx_now_us() - t0 > (uint64_t)l->timeout_ms * 1000;
		if (cancel || timeout) {
			kill(pid, SIGKILL); /* the child only: the leak */
			waitpid(pid, &st, 0);
			o->run.cancelled = cancel;
			o->run.timed_out = !cancel;
			o->run.status = cancel ? 130 : 124;
			break;
		}
		usleep(20000);
	}
	if (!o->run.cancelled && !o->run.timed_out) {
		o->run.exited = WIFEXITED(st);
		o->run.exit_code = WEXITSTATUS(st);
		o->run.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	o->run.duration_us = agsbx_now_us() - t0;
	o->run.out = strdup("");
	o->run.err = strdup("");
	o->meta = agsbx_handle_meta(h);
	return 0;
}
NEG(neg_leaky, p_nothing, x_leaky)

/* Claims every axis, then refuses every execution: each check that needs
 * the sandbox to run something fails (it cannot observe the claim), with
 * the refusal recorded; nothing counts as a pass by default. */
static int x_refuse(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		    struct agsbx_exec_result *o, struct agsbx_error *f)
{
	memset(o, 0, sizeof *o);
	agsbx_fail(f, "run_failed", "negative control: refuses every execution");
	return -EIO;
}
NEG(neg_refuses, p_everything, x_refuse)

/* Prints hostile output instead of running anything: non-integer and
 * out-of-range numbers, deep nesting, invalid UTF-8, control bytes, NUL.
 * The bundle must still be written, valid and signable. */
static int x_hostile(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		     struct agsbx_exec_result *o, struct agsbx_error *f)
{
	static const char out[] = "{\"op\":\"x\",\"ok\":false,\"errno\":\"EACCES\",\"r\":1.5,\"e\":1e300,"
				  "\"big\":123456789012345678901,\"neg\":-9007199254740993,\"a\":[2.5,{\"z\":-0.0}],"
				  "\"s\":\"\\u001f\\u007f\\\"\\\\\\u2028\"}\n\xff\xfe\x00\x01\x7f tail";
	static const char err[] = "\xc3\x28 invalid \xed\xa0\x80 surrogate \x00 nul \x1b[31m ansi";
	memset(o, 0, sizeof *o);
	o->run.exited = true;
	o->run.out = malloc(sizeof out);
	o->run.err = malloc(sizeof err);
	if (!o->run.out || !o->run.err)
		return -ENOMEM;
	memcpy(o->run.out, out, sizeof out);
	memcpy(o->run.err, err, sizeof err);
	o->run.out_len = o->run.out_total = sizeof out - 1;
	o->run.err_len = o->run.err_total = sizeof err - 1;
	o->meta = agsbx_handle_meta(h);
	return 0;
}
NEG(neg_hostile, p_nothing, x_hostile)

/* Names a raw mechanism command that fails (the program exits 1): bench
 * must report the raw baseline as unavailable, never time the failure. */
static int r_false(struct agsbx_handle *h, const struct agsbx_step *s, struct agsbx_raw_command *out)
{
	static const char *const argv[] = { "false", NULL };
	*out = (struct agsbx_raw_command){ .argv = agsbx_strv_dup(argv) };
	return out->argv ? 0 : -ENOMEM;
}
NEG(neg_raw_fails, p_nothing, x_plain, .raw_command = r_false)

/* Sets no_new_privs but keeps every capability (what bwrap or landlock
 * started by root without --run-as would give) while claiming the
 * privilege axis: priv.no_escalation must fail (needs root to have
 * capabilities to keep). */
static int x_nnp_caps(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		      struct agsbx_exec_result *o, struct agsbx_error *f)
{
	static const char *const pre[] = { "setpriv", "--no-new-privs", "--", NULL };
	return run_prefixed(h, s, l, o, f, pre);
}
static const struct agsbx_caps claims_priv = {
	.privilege_escalation_blocked = true, .network = AGSBX_NET_INHERITED, .mechanism = "negative_control",
	.safety_class = "trusted_local",
};
static int p_priv(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	return probe_with(&claims_priv, out);
}
NEG(neg_nnp_caps, p_priv, x_nnp_caps)

/* Answers every "write" with a result line whose errno is hostile text —
 * an @mention, links, bidi overrides, terminal escapes (CSI, OSC, C1 CSI) —
 * and runs everything else plainly. fs.grant_write fails with that errno in
 * its reason: the text must reach terminals escaped and markdown
 * neutralised. */
static int x_hostile_text(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
			  struct agsbx_exec_result *o, struct agsbx_error *f)
{
	static const char out[] = "{\"op\":\"write\",\"ok\":false,\"errno\":\"@octocat see https://evil.example and "
				  "www.evil.example \\u202e\\u2066reversed\\u2069 \\u001b[2J\\u001b]0;pwned\\u0007 "
				  "\\u009b31mred\"}\n";
	if (h->released || !s->argv[0] || !s->argv[1] || strcmp(s->argv[1], "write") != 0)
		return run_plain(h, s, l, o, f, 0);
	memset(o, 0, sizeof *o);
	o->run.exited = true;
	o->run.out = strdup(out);
	o->run.err = strdup("");
	if (!o->run.out || !o->run.err)
		return -ENOMEM;
	o->run.out_len = o->run.out_total = sizeof out - 1;
	o->meta = agsbx_handle_meta(h);
	return 0;
}
NEG(neg_hostile_text, p_nothing, x_hostile_text)

/* Every negative control's ensure ignores its config, and run_plain never
 * re-verifies the materialised bundle: config.unknown_rejected and
 * bundle.integrity_enforced fail for all of them (asserted on
 * neg_overclaim). */

/* Leaves a mount-point stub (an empty file) in the grant's parent after
 * every execution, as bwrap does when it binds onto a path that did not
 * exist: fs.no_host_residue fails. */
static int x_residue(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		     struct agsbx_exec_result *o, struct agsbx_error *f)
{
	int r = run_plain(h, s, l, o, f, 0);
	char hex[17], path[4096];
	agsbx_random_hex(hex, 8);
	snprintf(path, sizeof path, "%s/.stub-%s", h->grant->area, hex);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	return r;
}
NEG(neg_residue, p_nothing, x_residue)

/* Collapses every non-zero status to exit 1, as a wrapper that reports
 * its own failure instead of the program's would: exec.status_fidelity
 * fails. */
static int x_status(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		    struct agsbx_exec_result *o, struct agsbx_error *f)
{
	int r = run_plain(h, s, l, o, f, 0);
	if (r == 0 && o->run.status != 0 && !o->run.timed_out && !o->run.cancelled) {
		o->run.exited = true;
		o->run.exit_code = 1;
		o->run.status = 1;
		o->run.term_signal = 0;
	}
	return r;
}
NEG(neg_status_liar, p_nothing, x_status)

/* Not a liar: stalls (in the harness, no child) when asked to read the
 * $HOME canary, so a test can interrupt collect exactly while the canary
 * exists and see that it is removed anyway. When AGSBX_NEG_HANG_READY
 * names a FIFO, the canary's path is written to it first: the test then
 * knows the moment and the very file (other runs' canaries may come and
 * go in the same $HOME), with no polling. */
static void hang_announce(const char *canary)
{
	const char *fifo = getenv("AGSBX_NEG_HANG_READY");
	int fd = fifo ? open(fifo, O_WRONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return;
	dprintf(fd, "%s\n", canary);
	close(fd);
}

static int x_hang_canary(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
			 struct agsbx_exec_result *o, struct agsbx_error *f)
{
	for (const char *const *a = s->argv; *a; a++)
		if (strstr(*a, "/.agsbx-canary-")) {
			hang_announce(*a);
			for (int i = 0; i < 600 && !agsbx_runner_aborted(); i++)
				usleep(100 * 1000);   /* until an interrupt cancels every execution */
		}
	return run_plain(h, s, l, o, f, 0);
}
NEG(neg_hang_on_canary, p_fs, x_hang_canary)

/* Claims the filesystem axis but runs the program as root of a user
 * namespace of its own (mapped to nobody outside) with its own mount and
 * cgroup namespaces: no kernel interface opens for write (nobody owns
 * none), yet cgroup v1 and cgroup2 mount, the CVE-2022-0492
 * precondition: fs.kernel_interfaces_readonly fails on the mounts alone.
 * The output root is opened to that user so the mount has a target. */
static int x_cgroupns(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		      struct agsbx_exec_result *o, struct agsbx_error *f)
{
	static const char *const pre[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
					   "unshare", "--user", "--map-root-user", "--mount", "--cgroup",
					   "--propagation", "private", "--", NULL };
	if (chmod(h->paths[AGSBX_ROOT_OUTPUT], 0777) < 0)
		return -errno;
	return run_prefixed(h, s, l, o, f, pre);
}
NEG(neg_cgroupns, p_fs, x_cgroupns)
