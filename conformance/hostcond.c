/* Host conditions behind a blocked reason, decided by the harness itself
 * (probe.truthful): "blocked" is only honest when the host really blocks.
 * Each decision runs as the user the sandbox runs as, under the same
 * labelled simulation, and is recorded with how it was made. */
#include "conformance/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/strv.h"
#include "base/util.h"
#include "probes/probes.h"

/* unshare(CLONE_NEWUSER) plus a mount namespace inside it: what every
 * userns sandbox needs (an AppArmor userns restriction lets the first
 * succeed and fails the second). */
static int decide_userns(const struct check_env *env, json_t *how)
{
	static const char *const probe[] = { "/usr/bin/unshare", "--user", "--map-root-user", "--mount", "true", NULL };
	char **argv = agsbx_provider_wrap_simulation(env->ctx, probe);
	if (!argv)
		return -1;
	struct agsbx_run_opts o = {
		.argv = (const char *const *)argv, .timeout_ms = 10000, .cancel_fd = -1, .max_output_bytes = 2048,
		.drop_privileges = env->ctx->run_as, .run_uid = env->ctx->run_uid, .run_gid = env->ctx->run_gid,
	};
	struct agsbx_run_result r = { 0 };
	int rc = agsbx_run(&o, &r);
	json_t *a = json_array();
	for (char **w = argv; *w; w++)
		json_array_append_new(a, json_string(*w));
	json_object_set_new(how, "argv", a);
	json_object_set_new(how, "exit_status", json_integer(r.status));
	json_object_set_new(how, "stderr", agsbx_json_string_sanitized(r.err ? r.err : "", r.err_len));
	json_object_set_new(how, "as_uid", json_integer(env->ctx->run_as ? (json_int_t)env->ctx->run_uid : (json_int_t)getuid()));
	agsbx_strv_free(argv);
	int decided = rc < 0 || r.timed_out ? -1 : r.status != 0;
	agsbx_run_result_clear(&r);
	return decided;
}

static int decide_landlock(const struct check_env *env, json_t *how)
{
	/* A kernel property, the same for every user; the host probe made
	 * the syscall. A seccomp simulation would hide it from the provider
	 * only, so under one nothing is decided. */
	if (env->ctx->simulate)
		return -1;
	const json_t *abi = agsbx_probe_value(env->ctx->host, "landlock", "abi");
	json_object_set_new(how, "host_probe", json_string("landlock.abi"));
	json_object_set_new(how, "abi", abi ? json_incref((json_t *)abi) : json_null());
	return json_is_integer(abi) && json_integer_value(abi) >= 1 ? 0 : 1;
}

/* The host probe talked to Docker as the harness; an adapter running as
 * another user may not reach the socket, so that case stays undecided. */
static bool docker_decidable(const struct check_env *env)
{
	return !env->ctx->simulate && !(env->ctx->run_as && env->ops->declared);
}

static int decide_docker(const struct check_env *env, json_t *how)
{
	if (!docker_decidable(env))
		return -1;
	const json_t *r = agsbx_probe_value(env->ctx->host, "docker", "reachable");
	json_object_set_new(how, "host_probe", json_string("docker.reachable"));
	json_object_set_new(how, "reachable", r ? json_incref((json_t *)r) : json_null());
	return json_is_boolean(r) ? !json_is_true(r) : -1;
}

static int decide_runtime(const struct check_env *env, json_t *how)
{
	if (!docker_decidable(env))
		return -1;
	const json_t *rt = agsbx_probe_value(env->ctx->host, "docker", "runtimes");
	const char *want = json_string_value(json_object_get(env->ctx->config, "runtime"));
	json_object_set_new(how, "host_probe", json_string("docker.runtimes"));
	json_object_set_new(how, "runtime", json_string(want ? want : "runsc"));
	json_object_set_new(how, "runtimes", rt ? json_incref((json_t *)rt) : json_null());
	if (!json_is_object(rt))
		return -1;
	return json_object_get(rt, want ? want : "runsc") ? 0 : 1;
}

const char *cf_reason_condition(const struct agsbx_provider_ops *ops, const char *reason)
{
	for (const struct agsbx_reason_cond *c = ops->reason_conds; reason && c && c->reason; c++)
		if (strcmp(c->reason, reason) == 0)
			return c->cond;
	return NULL;
}

int cf_hostcond_decide(const struct check_env *env, const char *cond, json_t *how)
{
	if (strcmp(cond, AGSBX_HOSTCOND_USERNS_BLOCKED) == 0)
		return decide_userns(env, how);
	if (strcmp(cond, AGSBX_HOSTCOND_LANDLOCK_UNSUPPORTED) == 0)
		return decide_landlock(env, how);
	if (strcmp(cond, AGSBX_HOSTCOND_DOCKER_UNREACHABLE) == 0)
		return decide_docker(env, how);
	if (strcmp(cond, AGSBX_HOSTCOND_RUNTIME_UNREGISTERED) == 0)
		return decide_runtime(env, how);
	return -1;
}
