/* The handle ops every NEGATIVE CONTROL shares (liars.c, result-liars.c):
 * what a control lies about is its probe or its executions, never these. */
#include "tests/negative/negative.h"

#include <errno.h>

/* The handle of the control's own probe's claims (self names the control,
 * so one function serves them all). */
int neg_ensure_with(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		    struct agsbx_handle **out, struct agsbx_error *fail)
{
	(void)fail;
	struct agsbx_probe p;
	self->probe(self, ctx, &p);
	*out = agsbx_handle_new(self, ctx, g, &p.caps);
	agsbx_provider_probe_clear(&p);
	return *out ? 0 : -ENOMEM;
}

int neg_health(struct agsbx_handle *h)
{
	return h->released ? -ESTALE : 0;
}

void neg_release(struct agsbx_handle *h)
{
	h->released = true;
}
