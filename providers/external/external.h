/* Declared providers: an adapter speaking agsbx-external/1 (--adapter
 * ID=COMMAND) or a command-prefix sandbox (--wrap ID=TEMPLATE). Each is one
 * more struct agsbx_provider_ops, registered beside the built-in ones, so
 * every check, control, simulation and report treats it like them.
 * Protocol: docs/external-protocol.md. */
#ifndef AGSBX_PROVIDERS_EXTERNAL_EXTERNAL_H
#define AGSBX_PROVIDERS_EXTERNAL_EXTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "providers/provider.h"

#define AGSBX_EXTERNAL_MAX 16

/* "ID=COMMAND": ID matches [a-z][a-z0-9_-]{0,31} and is not a known
 * provider; COMMAND splits (agsbx_split_words) into at least one word.
 * Registers the provider. 0, or -EINVAL with a one-line message in err. */
int agsbx_external_declare(const char *decl, bool wrap, char *err, size_t err_size);
size_t agsbx_external_count(void);
const struct agsbx_provider_ops *agsbx_external_at(size_t i);
/* "external", "wrap", or NULL for a built-in provider. */
const char *agsbx_external_kind(const struct agsbx_provider_ops *ops);
/* Harness-side config of a declared provider, checked before anything
 * runs: a wrapper's `claims` (AXIS[,AXIS...]). Adapter keys are checked by
 * ensure against the adapter's declared config_keys. 0 or -EINVAL. */
int agsbx_external_configure(const struct agsbx_provider_ops *ops, const json_t *config, char *err,
			     size_t err_size);

#endif
