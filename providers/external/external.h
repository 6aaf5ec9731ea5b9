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
 * Registers the provider (ops->declared is true). 0, or -EINVAL with a
 * one-line message in fail (reason config_invalid). */
int agsbx_external_declare(const char *decl, bool wrap, struct agsbx_error *fail);
/* The declared providers in the order they were declared. */
size_t agsbx_external_count(void);
const struct agsbx_provider_ops *agsbx_external_at(size_t i);

#endif
