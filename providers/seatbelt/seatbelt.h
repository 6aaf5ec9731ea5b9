#ifndef AGSBX_PROVIDERS_SEATBELT_H
#define AGSBX_PROVIDERS_SEATBELT_H

#include <stdbool.h>

#include "providers/provider.h"

/* The SBPL profile for a grant: deny by default; reads broad (Seatbelt
 * cannot hide the host's files from a process that must load its own
 * libraries, so host_filesystem_restricted is not claimed); writes only to
 * the read-write grant roots and /dev/null; network denied unless
 * `network`. Paths are escaped for SBPL strings. malloc'd. */
char *agsbx_seatbelt_profile(const struct agsbx_grant *g, bool network);

/* The command line that runs step_argv (NULL-terminated) under the profile
 * file at profile_path: sandbox-exec -f PROFILE ARGV... The array is
 * malloc'd and NULL-terminated; its strings are borrowed from the
 * arguments. */
const char **agsbx_seatbelt_argv(const char *profile_path, const char *const *step_argv);

#endif
