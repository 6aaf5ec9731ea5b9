/* env.scrubbed's canary (conformance.h): made here, beside the check that
 * looks for it, so that the CLI only sets it up and takes it down. */
#include "conformance/conformance.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"

int agsbx_env_canary_set(struct agsbx_env_canary *c)
{
	char hex[17];
	agsbx_random_hex(hex, 8);
	snprintf(c->name, sizeof c->name, "AGSBX_CANARY_%s", hex);
	agsbx_random_hex(c->value, 32);
	snprintf(c->assignment, sizeof c->assignment, "%s=%s", c->name, c->value);
	/* In our own environment, before any worker: a provider that passes
	 * the host environment through shows it to the payload. */
	return setenv(c->name, c->value, 1) < 0 ? -errno : 0;
}

void agsbx_env_canary_unset(const struct agsbx_env_canary *c)
{
	unsetenv(c->name);
}
