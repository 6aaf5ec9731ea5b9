/* Host facts, the unit of what probes and providers report about a host:
 * a fact is {"value": V, "source": S} or {"absent": true, "reason": R,
 * "source": S}; either may carry "detail" (free text, e.g. curl's message)
 * and a present fact may carry "reason" when its value is a negative
 * finding (docker "reachable": false, "reason": "ENOENT"). Reasons are
 * errno names ("ENOENT", "EACCES") for OS errors and snake_case words for
 * everything else ("not_macos", "landlock_disabled"). */
#ifndef AGSBX_BASE_FACT_H
#define AGSBX_BASE_FACT_H

#include <stdbool.h>
#include <jansson.h>

/* New fact objects. fact_value steals value; a NULL value (OOM) yields an
 * absent fact with reason "ENOMEM" so a family never silently loses a name. */
json_t *agsbx_fact_value(json_t *value, const char *source);
json_t *agsbx_fact_absent(const char *reason, const char *source);
/* Absent with the errno's name as reason; err may be negative or positive. */
json_t *agsbx_fact_errno(int err, const char *source);
/* A string value, sanitised to valid UTF-8 (any bytes are accepted). */
json_t *agsbx_fact_string(const char *s, const char *source);
json_t *agsbx_fact_int(long long v, const char *source);
json_t *agsbx_fact_bool(bool v, const char *source);
/* Adds "detail" (sanitised) / "reason" to a fact; returns the fact. */
json_t *agsbx_fact_detail(json_t *fact, const char *detail);
json_t *agsbx_fact_reason(json_t *fact, const char *reason);
/* family[name] = fact (stolen). */
void agsbx_fact_put(json_t *family, const char *name, json_t *fact);

/* "ENOENT" etc. for errno values (sign ignored); never NULL. */
const char *agsbx_errno_name(int err);

#endif
