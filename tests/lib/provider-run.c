#include "tests/lib/provider-run.h"
#include "conformance/conformance.h"
#include "base/error.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

json_t *agsbx_test_run_provider(const struct agsbx_provider_ops *ops, const struct agsbx_test_run_opts *t)
{
	struct agsbx_ctx ctx = { .tool_dir = t->tool_dir, .payload_path = t->payload, .probe_timeout_ms = 5000,
				 .simulate = t->simulate };
	struct agsbx_conformance_opts o = { .ctx = &ctx, .work_dir = t->work, .env_canary_name = "AGSBX_T_CANARY",
					    .env_canary_value = "c4n4ry", .max_output_bytes = t->max_output_bytes,
					    .timeout_ms = 20000, .jobs = 2 };
	setenv("AGSBX_T_CANARY", "c4n4ry", 1);
	struct agsbx_error err = { 0 };
	json_t *p = agsbx_conformance_run(ops, &o, &err);
	ck_assert_msg(p != NULL, "%s: %s", ops->id, err.message);
	return p;
}

const json_t *agsbx_test_check_of(const json_t *prov, const char *id)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(prov, "checks"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "id")), id) == 0)
			return c;
	ck_abort_msg("no check %s", id);
	return NULL;
}
