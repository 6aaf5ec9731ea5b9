/* The environment axis: what the harness's environment leaks inside. */
#include "conformance/checks/attack.h"


#include "base/cleanup.h"

static void env_scrubbed(const struct check_env *env, struct check_out *out)
{
	struct agsbx_exec_result xr = { 0 };
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("env", env->o->env_canary_name), &res, &xr) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	bool leaked = cf_run_output_contains(&xr.run, env->o->env_canary_value);
	agsbx_exec_result_clear(&xr);
	bool present = json_is_true(json_object_get(res, "present"));
	json_object_set_new(out->facts, "canary_variable", json_string(env->o->env_canary_name));
	if (!res && !leaked) {
		cf_no_observation(out, "harness canary variable lookup");
		return;
	}
	out->observed_pass = !present && !leaked;
	cf_reason(out, "harness canary variable %s inside", present || leaked ? "VISIBLE" : "not visible");
}

const struct check_def cf_checks_env[] = {
	{ .id = "env.scrubbed", .axis = AGSBX_AXIS_ENVIRONMENT, .run = env_scrubbed, .needs_handle = true,
	  .title = "a harness canary variable is not visible inside",
	  .attacks = "looks for a harness canary variable inside",
	  .why = "tokens in the caller's environment are the commonest secret leak",
	  .control = "the variable is set in the harness's own environment",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_silent_refusal" } } },
};
const size_t cf_checks_env_count = AGSBX_ARRAY_SIZE(cf_checks_env);
