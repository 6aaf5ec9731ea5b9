#include "providers/provider.h"

#include <string.h>

/* Sorted by id: `providers` lists them in this order and the bundle keeps
 * it, so bundles from different hosts line up. A new provider is one
 * extern and one row here (provider.h's checklist). */
extern const struct agsbx_provider_ops agsbx_provider_bubblewrap;
extern const struct agsbx_provider_ops agsbx_provider_gvisor;
extern const struct agsbx_provider_ops agsbx_provider_landlock;
extern const struct agsbx_provider_ops agsbx_provider_seatbelt;
extern const struct agsbx_provider_ops agsbx_provider_trusted_local;

static const struct agsbx_provider_ops *const builtin[] = {
	&agsbx_provider_bubblewrap,
	&agsbx_provider_gvisor,
	&agsbx_provider_landlock,
	&agsbx_provider_seatbelt,
	&agsbx_provider_trusted_local,
};

#define MAX_EXTRA 48
static const struct agsbx_provider_ops *extra[MAX_EXTRA];
static size_t nextra;

void agsbx_provider_register_extra(const struct agsbx_provider_ops *ops)
{
	if (nextra < MAX_EXTRA)
		extra[nextra++] = ops;
}

size_t agsbx_provider_builtin_count(void)
{
	return sizeof builtin / sizeof builtin[0];
}

size_t agsbx_provider_count(void)
{
	return sizeof builtin / sizeof builtin[0] + nextra;
}

const struct agsbx_provider_ops *agsbx_provider_at(size_t i)
{
	size_t nb = sizeof builtin / sizeof builtin[0];
	if (i < nb)
		return builtin[i];
	i -= nb;
	return i < nextra ? extra[i] : NULL;
}

const struct agsbx_provider_ops *agsbx_provider_find(const char *id)
{
	for (size_t i = 0; i < agsbx_provider_count(); i++)
		if (strcmp(agsbx_provider_at(i)->id, id) == 0)
			return agsbx_provider_at(i);
	return NULL;
}

const char *const agsbx_generic_reasons[] = {
	"config_invalid", "grant_invalid", "step_invalid", "bundle_changed", "released", "run_failed", NULL,
};

bool agsbx_reason_in_set(const struct agsbx_provider_ops *ops, const char *reason)
{
	if (!reason)
		return false;
	for (const char *const *r = ops->reasons; r && *r; r++)
		if (strcmp(*r, reason) == 0)
			return true;
	return false;
}
