/* seatbelt: /usr/bin/sandbox-exec with a profile generated from the grant
 * only (macOS). On any other platform the provider does not apply and
 * probes as not_macos. */
#include "providers/seatbelt/seatbelt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/strv.h"
#include "base/util.h"

#define SANDBOX_EXEC "/usr/bin/sandbox-exec"

static const char *const reasons[] = { "not_macos", "sandbox_exec_missing", "sandbox_exec_failed", "ready", NULL };
static const char *const config_keys[] = { "network:bool", NULL };

/* Conservative claims: only what the profile enforces by construction.
 * Reads stay broad; there is no pid or net namespace. */
static const struct agsbx_caps caps = {
	.network = AGSBX_NET_TCP_RESTRICTED,
	.environment_scrubbed = true,
	.mechanism = "seatbelt",
	.safety_class = "host_policy",
};

static bool sb_applies(const struct agsbx_provider_ops *self)
{
#ifdef __APPLE__
	return true;
#else
	return false;
#endif
}

/* SBPL string literal: backslash and double quote escaped. */
static int append_quoted(char **buf, size_t *len, size_t *cap, const char *s)
{
	for (; *s; s++) {
		if (*len + 3 >= *cap) {
			size_t nc = *cap * 2 + 64;
			char *nb = realloc(*buf, nc);
			if (!nb)
				return -ENOMEM;
			*buf = nb;
			*cap = nc;
		}
		if (*s == '\\' || *s == '"')
			(*buf)[(*len)++] = '\\';
		(*buf)[(*len)++] = *s;
	}
	(*buf)[*len] = '\0';
	return 0;
}

static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);
	if (*len + n + 1 >= *cap) {
		size_t nc = (*len + n + 1) * 2;
		char *nb = realloc(*buf, nc);
		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
	return 0;
}

char *agsbx_seatbelt_profile(const struct agsbx_grant *g, bool network)
{
	size_t len = 0, cap = 1024;
	char *b = malloc(cap);
	if (!b)
		return NULL;
	b[0] = '\0';
	int r = append(&b, &len, &cap,
		       "(version 1)\n(deny default)\n(allow process-exec* process-fork)\n(allow signal (target same-sandbox))\n"
		       "(allow sysctl-read)\n(allow mach-lookup)\n(allow ipc-posix-shm-read*)\n(allow file-read*)\n"
		       "(allow file-write* (literal \"/dev/null\"))\n");
	for (int i = 0; r == 0 && i < AGSBX_ROOT_COUNT; i++) {
		r |= append(&b, &len, &cap, g->roots[i].writable ? "(allow file-write* (subpath \"" : "(deny file-write* (subpath \"");
		r |= append_quoted(&b, &len, &cap, g->roots[i].path);
		r |= append(&b, &len, &cap, "\"))\n");
	}
	r |= append(&b, &len, &cap, network ? "(allow network*)\n" : "(deny network*)\n");
	if (r) {
		free(b);
		return NULL;
	}
	return b;
}

const char **agsbx_seatbelt_argv(const char *profile_path, const char *const *step_argv)
{
	return agsbx_strv_concat((const char *const[]){ SANDBOX_EXEC, "-f", profile_path, NULL }, step_argv);
}

static int sb_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	memset(out, 0, sizeof *out);
	out->caps = caps;
	out->facts = json_pack("{s:s}", "sandbox_exec", SANDBOX_EXEC);
	if (!sb_applies(self)) {
		out->reason = "not_macos";
		return 0;
	}
	if (access(SANDBOX_EXEC, X_OK) < 0) {
		out->reason = "sandbox_exec_missing";
		return 0;
	}
	/* A real minimal sandbox, not just the binary's presence. */
	const char *argv[] = { SANDBOX_EXEC, "-p", "(version 1)(deny default)(allow process-exec*)(allow file-read*)"
				"(allow sysctl-read)(allow mach*)", "/usr/bin/true", NULL };
	struct agsbx_run_opts o = { .argv = argv, .timeout_ms = ctx->probe_timeout_ms, .cancel_fd = -1,
				    .drop_privileges = ctx->run_as, .run_uid = ctx->run_uid, .run_gid = ctx->run_gid };
	struct agsbx_run_result rr = { 0 };
	int r = agsbx_run(&o, &rr);
	bool ok = r == 0 && rr.exited && rr.exit_code == 0;
	json_object_set_new(out->facts, "probe_status", json_integer(rr.status));
	agsbx_run_result_clear(&rr);
	out->reason = ok ? "ready" : "sandbox_exec_failed";
	out->available = ok;
	return 0;
}

static bool network_on(const struct agsbx_ctx *ctx)
{
	bool on = false;
	agsbx_config_bool(&agsbx_provider_seatbelt, ctx->config, "network", false, &on, NULL);
	return on;
}

static int sb_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		     struct agsbx_handle **out, struct agsbx_error *fail)
{
	if (agsbx_provider_check_config(&agsbx_provider_seatbelt, ctx->config, fail) < 0)
		return -EINVAL;
	struct agsbx_probe p = { 0 };
	sb_probe(self, ctx, &p);
	if (!p.available) {
		agsbx_fail(fail, p.reason, "seatbelt unavailable: %s", p.reason);
		agsbx_provider_probe_clear(&p);
		return -ENODEV;
	}
	struct agsbx_caps c = p.caps;
	if (network_on(ctx))
		c.network = AGSBX_NET_INHERITED;
	agsbx_provider_probe_clear(&p);
	*out = agsbx_handle_new(&agsbx_provider_seatbelt, ctx, g, &c);
	return *out ? 0 : -ENOMEM;
}

static int sb_health(struct agsbx_handle *h)
{
	if (agsbx_handle_health(h) < 0)
		return -ESTALE;
	struct agsbx_probe p = { 0 };
	sb_probe(h->ops, h->ctx, &p);
	int r = p.available ? 0 : -ENODEV;
	agsbx_provider_probe_clear(&p);
	return r;
}

static int run_step(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		    struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	(void)fail;
	_cleanup_free_ char *profile = agsbx_seatbelt_profile(h->grant, network_on(h->ctx));
	char hex[17];
	agsbx_random_hex(hex, 8);
	_cleanup_free_ char *name = NULL;
	if (!profile || asprintf(&name, ".seatbelt-%s.sb", hex) < 0)
		return -ENOMEM;
	_cleanup_free_ char *path = agsbx_path_join(h->grant->roots[AGSBX_ROOT_LOGS].path, name);
	int r = path ? agsbx_write_file_atomic(path, profile, strlen(profile), 0644) : -ENOMEM;
	if (r < 0)
		return r;
	_cleanup_free_ const char **argv = agsbx_seatbelt_argv(path, step->argv);
	char **env = agsbx_provider_min_env(h, step);
	r = argv && env ? agsbx_provider_run(h, limits, argv, (const char *const *)env, h->paths[step->cwd], out)
			: -ENOMEM;
	agsbx_strv_free(env);
	unlink(path);
	return r;
}

static int sb_execute(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		      struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	return agsbx_handle_execute(h, step, limits, out, fail, run_step);
}

/* No release: each execution removes its own profile file; nothing else
 * exists. */
const struct agsbx_provider_ops agsbx_provider_seatbelt = {
	.id = "seatbelt",
	.summary = "macOS sandbox-exec with a grant-only write profile",
	.reasons = reasons,
	.config_keys = config_keys,
	.fail_closed_simulation = NULL,
	.applies = sb_applies,
	.probe = sb_probe,
	.ensure = sb_ensure,
	.health = sb_health,
	.execute = sb_execute,
};
