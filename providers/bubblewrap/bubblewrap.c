/* bubblewrap: every step runs in `bwrap --unshare-all` with only the grant
 * roots and the read-only system roots mounted, a cleared environment, a
 * new session, --die-with-parent, --disable-userns and the shared seccomp
 * filter (providers/seccomp-filter.c, handed to bwrap as fd 3).
 *
 * Two rules shape this file:
 *  - bwrap started by host root keeps every capability inside its user
 *    namespace (uid_map "0 0 1") and can remount a read-only bind
 *    read-write, so the provider never runs it as root: it refuses, or the
 *    runner drops to ctx->run_uid before exec'ing bwrap.
 *  - availability is observed, never assumed: probe, ensure and health all
 *    run a real minimal sandbox, and a failure is classified from bwrap's
 *    own message (classify.c) and reported with the host facts that
 *    explain it, without ever suggesting a weaker host policy. */
#include "providers/bubblewrap/bwrap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/compat.h"
#include "base/defaults.h"
#include "base/util.h"
#include "providers/seccomp-filter.h"

#define BW_PROBE_MAX_OUTPUT 8192
#define BW_STDERR_FACT_MAX 2048
#define BW_DETAIL_MAX 300

static const char *const reasons[] = {
	"bwrap_binary_missing", "bwrap_mechanism_failed", "bwrap_unsafe_as_root",
	"bwrap_user_namespace_blocked", "not_linux", "ready", NULL,
};
static const char *const config_keys[] = { "network:bool", NULL };
static const struct agsbx_reason_cond reason_conds[] = {
	{ "bwrap_user_namespace_blocked", AGSBX_HOSTCOND_USERNS_BLOCKED }, { NULL, NULL },
};

/* bwrap's own environment; the sandbox gets its own via --clearenv and
 * --setenv, so nothing of the harness's environment reaches either. */
static const char *const bwrap_env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL };

static const char *const unsafe_root_hint =
	"run as a normal user, or pass --run-as USER to drop privileges before bwrap";

static bool bw_applies(const struct agsbx_provider_ops *self)
{
#ifdef __linux__
	return true;
#else
	return false;
#endif
}

/* The only config key: network (bool, default false). */
static int network_config(const json_t *config, bool *share_net, struct agsbx_error *fail)
{
	*share_net = false;
	if (agsbx_provider_check_config(&agsbx_provider_bubblewrap, config, fail) < 0)
		return -EINVAL;
	return agsbx_config_bool(&agsbx_provider_bubblewrap, config, "network", false, share_net, fail);
}

static struct agsbx_caps claimed_caps(bool ready, bool share_net)
{
	struct agsbx_caps c = {
		.network = AGSBX_NET_INHERITED,
		.mechanism = "bubblewrap",
		.safety_class = "namespace",
	};
	if (!ready)
		return c; /* nothing is claimed for a mechanism that did not run */
	c.process_contained = true;
	c.host_filesystem_restricted = true;
	c.privilege_escalation_blocked = true;
	c.environment_scrubbed = true;
	/* The shared seccomp filter denies the kernel surfaces the common
	 * LPEs need and io_uring (syscalls.kernel_surface_denied,
	 * syscalls.io_uring_denied); the rest of the syscall surface stays. */
	c.syscalls_restricted = true;
	c.network = share_net ? AGSBX_NET_INHERITED : AGSBX_NET_ISOLATED;
	return c;
}

/* Root inside bwrap's user namespace is host root with every capability. */
static bool unsafe_as_root(const struct agsbx_ctx *ctx)
{
	return ctx->run_as ? ctx->run_uid == 0 : geteuid() == 0;
}

static int64_t probe_timeout(const struct agsbx_ctx *ctx)
{
	return ctx->probe_timeout_ms > 0 ? ctx->probe_timeout_ms : AGSBX_PROBE_TIMEOUT_MS;
}

static int run_bounded(const struct agsbx_ctx *ctx, const char *const *argv, int fd3, struct agsbx_run_result *res)
{
	struct agsbx_run_opts o = {
		.argv = argv,
		.envp = bwrap_env,
		.cwd = "/",
		.max_output_bytes = BW_PROBE_MAX_OUTPUT,
		.timeout_ms = probe_timeout(ctx),
		.cancel_fd = -1,
		.drop_privileges = ctx->run_as,
		.run_uid = ctx->run_uid,
		.run_gid = ctx->run_gid,
		.use_cgroup = true,
		.fd3 = fd3,
	};
	return agsbx_run(&o, res);
}

/* "bubblewrap 0.8.0" -> "0.8.0"; NULL when bwrap cannot say. */
static char *bwrap_version(const struct agsbx_ctx *ctx, const char *path)
{
	const char *argv[] = { path, "--version", NULL };
	struct agsbx_run_result res = { 0 };
	char *v = NULL;
	if (run_bounded(ctx, argv, -1, &res) == 0 && res.exited && res.exit_code == 0 && res.out) {
		const char *p = strncmp(res.out, "bubblewrap ", 11) == 0 ? res.out + 11 : res.out;
		v = strndup(p, strcspn(p, " \n\r\t"));
	}
	agsbx_run_result_clear(&res);
	return v;
}

static bool is_setuid(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && (st.st_mode & S_ISUID) && st.st_uid == 0;
}

/* Whether `bwrap --help` lists OPT as an option (a line "  --opt ..."). */
static bool help_lists(const char *help, const char *opt)
{
	size_t n = strlen(opt);
	for (const char *p = help; p && (p = strstr(p, opt)); p += n) {
		bool line_start = p > help && (p[-1] == ' ' || p[-1] == '\t');
		if (line_start && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
	}
	return false;
}

/* The options the sandbox needs beyond 0.4's, as bwrap's own --help lists
 * them (recorded as facts.needed_options); NULL when all are there,
 * otherwise the first one missing. A bwrap that cannot say is treated as
 * missing them: fail closed, never run without the filter. */
static const char *missing_option(const struct agsbx_ctx *ctx, const char *path, bool setuid, json_t *facts)
{
	static const char *const needed[] = { "--seccomp", "--disable-userns" };
	const char *argv[] = { path, "--help", NULL };
	struct agsbx_run_result res = { 0 };
	bool ok = run_bounded(ctx, argv, -1, &res) == 0 && res.exited && res.exit_code == 0 && res.out;
	const char *missing = NULL;
	json_t *found = json_object();
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(needed); i++) {
		if (setuid && strcmp(needed[i], "--disable-userns") == 0)
			continue; /* not used with a setuid bwrap (argv.c) */
		bool has = ok && help_lists(res.out, needed[i]);
		json_object_set_new(found, needed[i], json_boolean(has));
		if (!has && !missing)
			missing = needed[i];
	}
	json_object_set_new(facts, "needed_options", found);
	json_object_set_new(facts, "help_listed", json_boolean(ok)); /* false: --help failed, nothing listed */
	agsbx_run_result_clear(&res);
	return missing;
}

/* First line of bwrap's stderr, printable ASCII only, for the detail. */
static char *first_line(const char *err, size_t len)
{
	size_t n = 0;
	while (n < len && n < BW_DETAIL_MAX && err[n] != '\n')
		n++;
	char *s = strndup(err ? err : "", n);
	for (char *p = s; p && *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	return s;
}

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();
	for (; v && *v; v++)
		json_array_append_new(a, agsbx_json_string_sanitized(*v, strlen(*v)));
	return a;
}

static void set_unavailable(struct agsbx_probe *out, const char *reason, char *detail, char *hint)
{
	out->available = false;
	out->reason = reason;
	free(out->detail);
	free(out->hint);
	out->detail = detail;
	out->hint = hint;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, f);
	int n = vasprintf(&s, f, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

/* Outcome of a run that ended with a status: 0 = ready; otherwise the
 * class of bwrap's complaint decides the reason. */
static void judge_exit(const struct agsbx_run_result *res, json_t *facts, struct agsbx_probe *out)
{
	if (res->exited && res->exit_code == 0) {
		out->available = true;
		out->reason = "ready";
		return;
	}
	const char *cls = agsbx_bwrap_classify(res->err, res->err_len);
	json_object_set_new(facts, "failure_class", json_string(cls));
	json_object_set_new(facts, "suspected_layers", agsbx_bwrap_suspected_layers(json_object_get(facts, "host")));
	_cleanup_free_ char *line = first_line(res->err, res->err_len);
	char status[32];
	if (res->exited)
		snprintf(status, sizeof status, "exit %d", res->exit_code);
	else
		snprintf(status, sizeof status, "signal %d", res->term_signal);
	set_unavailable(out, agsbx_bwrap_class_reason(cls),
			fmt("bwrap could not start a sandbox (%s, class %s)", status, cls),
			agsbx_bwrap_class_hint(cls, json_object_get(facts, "host")));
	if (line && *line) {
		char *d = NULL;
		if (asprintf(&d, "%s: %s", out->detail ? out->detail : "bwrap failed", line) >= 0) {
			free(out->detail);
			out->detail = d;
		}
	}
}

/* The real check: a minimal sandbox with the namespaces execution uses,
 * started exactly as execution starts bwrap (same user, same simulation). */
static void sandbox_probe(const struct agsbx_ctx *ctx, const char *bwrap, bool share_net, json_t *facts,
			  struct agsbx_probe *out)
{
	static const char *const true_argv[] = { "/usr/bin/true", NULL };
	struct agsbx_bwrap_spec spec = { .bwrap = bwrap, .share_net = share_net, .argv = true_argv, .seccomp_fd = 3,
					 .setuid = is_setuid(bwrap) };
	_cleanup_close_ int filter = agsbx_seccomp_memfd();
	json_object_set_new(facts, "seccomp_filter", agsbx_seccomp_describe());
	if (filter < 0) {
		set_unavailable(out, "bwrap_mechanism_failed",
				fmt("could not build the seccomp filter: %s", strerror(-filter)), NULL);
		return;
	}
	char **argv = NULL;
	int r = agsbx_bwrap_build_argv(&spec, &argv);
	char **wrapped = r == 0 ? agsbx_provider_wrap_simulation(ctx, (const char *const *)argv) : NULL;
	agsbx_strv_free(argv);
	if (!wrapped) {
		set_unavailable(out, "bwrap_mechanism_failed", fmt("could not build the probe command"),
				NULL);
		return;
	}
	struct agsbx_run_result res = { 0 };
	r = run_bounded(ctx, (const char *const *)wrapped, filter, &res);
	json_t *p = json_pack("{s:o, s:I, s:b, s:I}", "argv", strv_json(wrapped), "duration_us",
			      (json_int_t)res.duration_us, "timed_out", res.timed_out, "status", (json_int_t)res.status);
	if (res.spawn_errno)
		json_object_set_new(p, "spawn_errno", json_string(agsbx_errname(res.spawn_errno)));
	json_object_set_new(facts, "sandbox_probe", p);
	/* What failed to start may be the simulation wrapper, not bwrap. */
	_cleanup_free_ char *prog = strdup(wrapped[0]);
	agsbx_strv_free(wrapped);
	if (res.err) {
		size_t n = res.err_len < BW_STDERR_FACT_MAX ? res.err_len : BW_STDERR_FACT_MAX;
		json_object_set_new(facts, "stderr", agsbx_json_string_sanitized(res.err, n));
		json_object_set_new(facts, "stderr_truncated", json_boolean(res.err_truncated || n < res.err_len));
	}
	if (r < 0 || res.spawn_errno)
		set_unavailable(out, "bwrap_mechanism_failed",
				fmt("could not run the bwrap probe: %s", strerror(res.spawn_errno ? res.spawn_errno : -r)),
				fmt("check that %s exists and can be executed by the harness user", prog ? prog : bwrap));
	else if (res.timed_out || res.cancelled)
		set_unavailable(out, "bwrap_mechanism_failed",
				fmt("the bwrap probe did not finish in time"),
				fmt("bwrap hung starting /usr/bin/true; facts.sandbox_probe.argv reproduces it"));
	else
		judge_exit(&res, facts, out);
	agsbx_run_result_clear(&res);
}

static json_t *run_as_json(const struct agsbx_ctx *ctx)
{
	if (!ctx->run_as)
		return json_null();
	return json_pack("{s:I, s:I, s:s?}", "uid", (json_int_t)ctx->run_uid, "gid", (json_int_t)ctx->run_gid,
			 "user", ctx->run_as_name);
}

/* Everything the probe does, with the network setting already decided.
 * On return, *bwrap_path (when non-NULL) holds the bwrap that was used. */
static int probe_with(const struct agsbx_ctx *ctx, bool share_net, struct agsbx_probe *out, char **bwrap_path,
		      char **version_out)
{
	memset(out, 0, sizeof *out);
	out->facts = json_object();
	out->caps = claimed_caps(false, share_net);
	if (!out->facts)
		return -ENOMEM;
	if (!bw_applies(&agsbx_provider_bubblewrap)) {
		set_unavailable(out, "not_linux", fmt("bubblewrap needs Linux namespaces"), NULL);
		return 0;
	}
	json_t *facts = out->facts;
	json_object_set_new(facts, "euid", json_integer(geteuid()));
	json_object_set_new(facts, "run_as", run_as_json(ctx));
	json_object_set_new(facts, "network", json_string(share_net ? AGSBX_NET_INHERITED : AGSBX_NET_ISOLATED));
	json_object_set_new(facts, "simulate", ctx->simulate ? json_string(ctx->simulate) : json_null());
	json_object_set_new(facts, "host", agsbx_bwrap_host_facts());

	_cleanup_free_ char *path = NULL;
	if (agsbx_bwrap_find(&path) < 0) {
		json_object_set_new(facts, "path", json_null());
		set_unavailable(out, "bwrap_binary_missing", fmt("no executable bwrap on PATH"),
				fmt("install your distribution's bubblewrap package, or use the landlock provider"));
		return 0;
	}
	_cleanup_free_ char *version = bwrap_version(ctx, path);
	json_object_set_new(facts, "path", json_string(path));
	json_object_set_new(facts, "version", version ? json_string(version) : json_null());
	json_object_set_new(facts, "setuid", json_boolean(is_setuid(path)));

	if (unsafe_as_root(ctx)) {
		set_unavailable(out, "bwrap_unsafe_as_root",
				fmt("bwrap started by root keeps every capability inside the sandbox and can "
				     "remount its binds read-write"),
				strdup(unsafe_root_hint));
		return 0;
	}
	const char *missing = missing_option(ctx, path, is_setuid(path), facts);
	if (missing) {
		set_unavailable(out, "bwrap_mechanism_failed",
				fmt("%s lacks %s, which the sandbox needs (the seccomp filter, no nested user namespace)",
				    path, missing),
				fmt("install bubblewrap 0.8.0 or later, or use the landlock provider"));
		return 0;
	}
	sandbox_probe(ctx, path, share_net, facts, out);
	if (out->available)
		out->caps = claimed_caps(true, share_net);
	if (bwrap_path)
		*bwrap_path = TAKE_PTR(path);
	if (version_out)
		*version_out = TAKE_PTR(version);
	return 0;
}

static int bw_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	/* The probe reports; it does not judge the config (ensure does), but
	 * it claims the network axis the config would give. */
	bool net = false;
	agsbx_config_bool(&agsbx_provider_bubblewrap, ctx->config, "network", false, &net, NULL);
	return probe_with(ctx, net, out, NULL, NULL);
}

static json_t *versions_json(const char *path, const char *version)
{
	return json_pack("{s:s, s:s, s:b}", "bwrap", version ? version : "unknown", "bwrap_path", path, "setuid",
			 is_setuid(path));
}

static int check_grant(const struct agsbx_grant *g, struct agsbx_error *fail)
{
	for (int r = 0; r < AGSBX_ROOT_COUNT; r++) {
		const char *p = g->roots[r].path;
		/* bwrap follows symlinks when binding: a swapped-in link would
		 * mount something the grant never named. */
		int e = p && strcmp(p, "/") != 0 ? agsbx_path_check_no_symlink(p) : -EINVAL;
		if (e < 0) {
			agsbx_fail(fail, "grant_invalid", "bubblewrap: grant root %s (%s) unusable: %s",
				   agsbx_root_role_name(r), p ? p : "(null)", strerror(-e));
			return e;
		}
	}
	return 0;
}

static int bw_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		     struct agsbx_handle **out, struct agsbx_error *fail)
{
	*out = NULL;
	bool share_net = false;
	int r = network_config(ctx->config, &share_net, fail);
	if (r < 0)
		return r;
	struct agsbx_probe p;
	_cleanup_free_ char *path = NULL, *version = NULL;
	r = probe_with(ctx, share_net, &p, &path, &version);
	if (r < 0) {
		agsbx_provider_probe_clear(&p);
		agsbx_fail(fail, "bwrap_mechanism_failed", "bubblewrap: probe failed: %s", strerror(-r));
		return r;
	}
	if (!p.available) {
		/* Fail closed with the probe's reason; never fall back. */
		agsbx_fail_hint(fail, p.reason, p.hint, "bubblewrap: %s", p.detail ? p.detail : p.reason);
		r = strcmp(p.reason, "bwrap_unsafe_as_root") == 0 ? -EPERM : -ENODEV;
		agsbx_provider_probe_clear(&p);
		return r;
	}
	struct agsbx_caps caps = p.caps;
	agsbx_provider_probe_clear(&p);
	r = check_grant(g, fail);
	if (r < 0)
		return r;
	struct agsbx_handle *h = agsbx_handle_new(&agsbx_provider_bubblewrap, ctx, g, &caps);
	if (h) {
		json_decref(h->versions);
		h->versions = versions_json(path, version);
	}
	if (!h || !h->versions) {
		/* Every refusal names its reason, this one too. */
		agsbx_handle_free(h);
		agsbx_fail(fail, "bwrap_mechanism_failed", "bubblewrap: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

static bool handle_share_net(const struct agsbx_handle *h)
{
	return h->caps.network && strcmp(h->caps.network, AGSBX_NET_INHERITED) == 0;
}

static int bw_health(struct agsbx_handle *h)
{
	if (agsbx_handle_health(h) < 0)
		return -ESTALE;
	struct agsbx_probe p;
	int r = probe_with(h->ctx, handle_share_net(h), &p, NULL, NULL);
	bool ok = r == 0 && p.available;
	agsbx_provider_probe_clear(&p);
	return ok ? 0 : -ENODEV;
}

/* The argv for one step; NULL-terminated, simulation wrapper included. */
static int step_argv(const struct agsbx_handle *h, const struct agsbx_step *step, int seccomp_fd, char ***out)
{
	const char *bwrap = json_string_value(json_object_get(h->versions, "bwrap_path"));
	char **env = agsbx_provider_min_env(h, step);
	if (!env)
		return -ENOMEM;
	struct agsbx_bwrap_spec spec = {
		.bwrap = bwrap,
		.share_net = handle_share_net(h),
		.env = (const char *const *)env,
		.grant = h->grant,
		.chdir = h->paths[step->cwd],
		.argv = step->argv,
		.seccomp_fd = seccomp_fd,
		.setuid = json_is_true(json_object_get(h->versions, "setuid")),
	};
	char **argv = NULL;
	int r = agsbx_bwrap_build_argv(&spec, &argv);
	agsbx_strv_free(env);
	if (r < 0)
		return r;
	*out = agsbx_provider_wrap_simulation(h->ctx, (const char *const *)argv);
	agsbx_strv_free(argv);
	return *out ? 0 : -ENOMEM;
}

static int run_step(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		    struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	if (unsafe_as_root(h->ctx)) {
		agsbx_fail_hint(fail, "bwrap_unsafe_as_root", unsafe_root_hint, "bubblewrap: refusing to run bwrap as root");
		return -EPERM;
	}
	_cleanup_close_ int filter = agsbx_seccomp_memfd();
	if (filter < 0) {
		agsbx_fail(fail, "bwrap_mechanism_failed", "bubblewrap: cannot build the seccomp filter: %s",
			   strerror(-filter));
		return filter;
	}
	char **argv = NULL;
	int r = step_argv(h, step, 3, &argv);
	if (r < 0) {
		agsbx_fail(fail, "step_invalid", "bubblewrap: cannot build the bwrap command: %s", strerror(-r));
		return r;
	}
	/* In "/": bwrap's --chdir sets the step's directory inside. bwrap
	 * leaves the session keyring alone, and a session keyring the harness
	 * inherited explicitly stays possessed across its user namespace: a
	 * new, empty one keeps the caller's keys out (secrets.keyring_denied). */
	struct agsbx_run_opts o;
	agsbx_provider_run_opts(h, limits, &o);
	o.argv = (const char *const *)argv;
	o.envp = bwrap_env;
	o.cwd = "/";
	o.new_session_keyring = true;
	o.fd3 = filter;
	r = agsbx_run(&o, &out->run);
	out->meta = agsbx_handle_meta(h);
	agsbx_strv_free(argv);
	return r;
}

static int bw_execute(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		      struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	return agsbx_handle_execute(h, step, limits, out, fail, run_step);
}

/* By hand: the same bwrap command line (binds, namespaces, environment)
 * but the seccomp filter, which needs a descriptor a command line cannot
 * carry; --disable-userns stays. */
static int bw_raw_command(struct agsbx_handle *h, const struct agsbx_step *step, struct agsbx_raw_command *out)
{
	*out = (struct agsbx_raw_command){ 0 };
	if (agsbx_handle_health(h) < 0)
		return -ESTALE;
	int r = step_argv(h, step, -1, &out->argv);
	out->envp = r == 0 ? agsbx_strv_dup(bwrap_env) : NULL;
	out->cwd = r == 0 ? strdup("/") : NULL;
	if (r == 0 && (!out->envp || !out->cwd))
		r = -ENOMEM;
	if (r < 0)
		agsbx_raw_command_clear(out);
	return r;
}

/* No release: nothing temporary is created, the sandbox lives only as
 * long as each bwrap process, which the runner reaps with its whole tree. */
const struct agsbx_provider_ops agsbx_provider_bubblewrap = {
	.id = "bubblewrap",
	.summary = "bwrap --unshare-all with grant-only binds, cleared environment, new session",
	.reasons = reasons,
	.config_keys = config_keys,
	.reason_conds = reason_conds,
	.fail_closed_simulation = AGSBX_SIM_BLOCKED_USERNS,
	.runs_keep_orphans = true,   /* bwrap waits for the sandbox's pid 1 */
	.applies = bw_applies,
	.probe = bw_probe,
	.ensure = bw_ensure,
	.health = bw_health,
	.execute = bw_execute,
	.raw_command = bw_raw_command,
};
