/* placeholder until the provider lands */
#include "providers/provider.h"
#include <errno.h>
#include <string.h>
static const char *const reasons[] = { "ready", "not_implemented", NULL };
static int p_probe(const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	memset(out, 0, sizeof *out);
	out->reason = "not_implemented";
	out->facts = json_object();
	return 0;
}
const struct agsbx_provider_ops agsbx_provider_landlock = {
	.id = "landlock",
	.summary = "(not implemented yet)",
	.reasons = reasons,
	.probe = p_probe,
};
