/* trusted_local: the bounded runner and nothing else. It claims no
 * isolation axis; it is the control that proves the checks can fail. */
#include "providers/provider.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static const char *const reasons[] = { "ready", NULL };
static const char *const config_keys[] = { NULL };

static const struct agsbx_caps caps = {
	.network = AGSBX_NET_INHERITED,
	.mechanism = "trusted_local",
	.safety_class = "trusted_local",
};

static int tl_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	memset(out, 0, sizeof *out);
	out->available = true;
	out->reason = "ready";
	out->caps = caps;
	out->facts = json_pack("{s:b, s:b}", "unsafe", 1, "run_as", ctx->run_as);
	return 0;
}

static int tl_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		     struct agsbx_handle **out, struct agsbx_error *fail)
{
	if (agsbx_provider_check_config(&agsbx_provider_trusted_local, ctx->config, fail) < 0)
		return -EINVAL;
	*out = agsbx_handle_new(&agsbx_provider_trusted_local, ctx, g, &caps);
	return *out ? 0 : -ENOMEM;
}

static int run_step(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		    struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	(void)fail;
	/* The host environment (NULL) on purpose: trusted_local hides
	 * nothing, and env.scrubbed records that. */
	return agsbx_provider_run(h, limits, step->argv, NULL, h->paths[step->cwd], out);
}

static int tl_execute(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		      struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	return agsbx_handle_execute(h, step, limits, out, fail, run_step);
}

/* By hand: the program itself, in the same directory and environment. */
static int tl_raw_command(struct agsbx_handle *h, const struct agsbx_step *step, struct agsbx_raw_command *out)
{
	*out = (struct agsbx_raw_command){ 0 };
	out->argv = agsbx_strv_dup(step->argv);
	out->cwd = strdup(h->paths[step->cwd]);
	if (!out->argv || !out->cwd) {
		agsbx_raw_command_clear(out);
		return -ENOMEM;
	}
	return 0;
}

/* No health or release: nothing to re-probe, nothing temporary is created. */
const struct agsbx_provider_ops agsbx_provider_trusted_local = {
	.id = "trusted_local",
	.summary = "no isolation: the bounded runner only (the control)",
	.reasons = reasons,
	.config_keys = config_keys,
	.fail_closed_simulation = NULL,
	.runs_keep_orphans = true,   /* the payload is the run's child */
	.probe = tl_probe,
	.ensure = tl_ensure,
	.execute = tl_execute,
	.raw_command = tl_raw_command,
};
