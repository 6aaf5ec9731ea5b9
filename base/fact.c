#include "base/fact.h"
#include "base/compat.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

static json_t *sanitized(const char *s)
{
	return agsbx_json_string_sanitized(s, strlen(s));
}

json_t *agsbx_fact_absent(const char *reason, const char *source)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	json_object_set_new(f, "absent", json_true());
	json_object_set_new(f, "reason", sanitized(reason));
	json_object_set_new(f, "source", sanitized(source));
	return f;
}

json_t *agsbx_fact_value(json_t *value, const char *source)
{
	if (!value)
		return agsbx_fact_absent("ENOMEM", source);
	json_t *f = json_object();
	if (!f) {
		json_decref(value);
		return NULL;
	}
	json_object_set_new(f, "value", value);
	json_object_set_new(f, "source", sanitized(source));
	return f;
}

json_t *agsbx_fact_errno(int err, const char *source)
{
	return agsbx_fact_absent(agsbx_errno_name(err), source);
}

json_t *agsbx_fact_string(const char *s, const char *source)
{
	return agsbx_fact_value(sanitized(s), source);
}

json_t *agsbx_fact_int(long long v, const char *source)
{
	/* A file or answer from outside can hold any integer: one beyond the
	 * bundle's range would make the whole bundle unwritable. */
	if (v > AGSBX_BUNDLE_INT_MAX || v < -AGSBX_BUNDLE_INT_MAX) {
		char n[32];
		snprintf(n, sizeof n, "%lld", v);
		return agsbx_fact_detail(agsbx_fact_absent("out_of_range", source), n);
	}
	return agsbx_fact_value(json_integer(v), source);
}

json_t *agsbx_fact_bool(bool v, const char *source)
{
	return agsbx_fact_value(json_boolean(v), source);
}

json_t *agsbx_fact_detail(json_t *fact, const char *detail)
{
	if (fact && detail && *detail)
		json_object_set_new(fact, "detail", sanitized(detail));
	return fact;
}

json_t *agsbx_fact_reason(json_t *fact, const char *reason)
{
	if (fact && reason)
		json_object_set_new(fact, "reason", sanitized(reason));
	return fact;
}

void agsbx_fact_put(json_t *family, const char *name, json_t *fact)
{
	json_object_set_new(family, name, fact);
}

const char *agsbx_errno_name(int err)
{
	static __thread char buf[32];
	if (err < 0)
		err = -err;
	const char *n = agsbx_errname(err);
	if (n)
		return n;
	snprintf(buf, sizeof buf, "errno_%d", err);
	return buf;
}
