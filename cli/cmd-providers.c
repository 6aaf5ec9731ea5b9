/* providers: each provider, whether it applies here, its probe reason and
 * what it claims. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/escape.h"
#include "cli/harness.h"

const char agsbx_help_providers[] =
	"usage: agsbx-evidence providers [--json] [--run-as USER]\n"
	"\n"
	"Probes every provider (a real minimal sandbox each) and prints availability, reason and claims.\n"
	"\n"
	"  --json                 one JSON array on stdout\n"
	"  --run-as USER          when root: probe as this unprivileged user\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 printed (unavailable providers included), 2 bad usage, 3 internal error\n"
	"\n"
	"example: agsbx-evidence providers --json | jq '.[] | {id, reason}'\n";

static json_t *provider_json(const struct agsbx_provider_ops *ops, const struct agsbx_ctx *ctx)
{
	bool applies = !ops->applies || ops->applies(ops);
	json_t *j = json_pack("{s:s, s:s, s:b}", "id", ops->id, "summary", ops->summary ? ops->summary : "",
			      "applies", applies);
	json_t *reasons = json_array();
	for (const char *const *r = ops->reasons; r && *r; r++)
		json_array_append_new(reasons, json_string(*r));
	json_object_set_new(j, "reasons", reasons);
	if (applies) {
		struct agsbx_probe p = { 0 };
		ops->probe(ops, ctx, &p);
		json_object_set_new(j, "probe", agsbx_provider_probe_to_json(&p));
		agsbx_provider_probe_clear(&p);
	}
	return j;
}

static void print_table(const json_t *list)
{
	printf("%-16s %-9s %-34s %s\n", "provider", "available", "reason", "claims");
	size_t i;
	json_t *p;
	json_array_foreach(list, i, p) {
		const json_t *probe = json_object_get(p, "probe");
		const json_t *caps = json_object_get(probe, "capabilities");
		char claims[256] = "";
		for (int k = 0; k < AGSBX_AXIS_COUNT; k++)
			if (agsbx_axes[k].kind == AGSBX_AXIS_KIND_FLAG &&
			    json_is_true(json_object_get(caps, agsbx_axes[k].name)))
				snprintf(claims + strlen(claims), sizeof claims - strlen(claims), "%s%s",
					 claims[0] ? "," : "", agsbx_axes[k].name);
		const char *net = json_string_value(json_object_get(caps, "network"));
		if (net)
			snprintf(claims + strlen(claims), sizeof claims - strlen(claims), "%snetwork=%s",
				 claims[0] ? "," : "", net);
		/* ids, reasons and claims can come from an external adapter */
		_cleanup_free_ char *id = agsbx_term_escape(json_string_value(json_object_get(p, "id")), 0);
		_cleanup_free_ char *reason = agsbx_term_escape(
			!probe ? "not for this platform" : json_string_value(json_object_get(probe, "reason")), 0);
		_cleanup_free_ char *cl = agsbx_term_escape(claims[0] ? claims : "-", 0);
		printf("%-16s %-9s %-34s %s\n", id, !probe ? "n/a" : json_is_true(json_object_get(probe, "available")) ? "yes" : "no",
		       reason, cl);
	}
}

int agsbx_cmd_providers(int argc, char **argv)
{
	static const struct option lo[] = { AGSBX_OPTION_JSON, AGSBX_OPTION_RUN_AS, { 0 } };
	bool as_json = false;
	const char *run_as = NULL;
	struct agsbx_args a = { .cmd = "providers", .argc = argc, .argv = argv };
	int c;
	while ((c = agsbx_args_next(&a, lo)) > 0) {
		if (c == AGSBX_OPT_JSON)
			as_json = true;
		else
			run_as = a.value;
	}
	if (c < 0 || agsbx_args_operands(&a, 0, 0, NULL, NULL))
		return AGSBX_EXIT_USAGE;
	struct agsbx_harness hs;
	int rc = agsbx_harness_init(&hs, "providers", run_as, true);
	if (rc)
		return rc;
	json_t *list = json_array();
	for (size_t i = 0; i < agsbx_provider_count(); i++)
		json_array_append_new(list, provider_json(agsbx_provider_at(i), &hs.ctx));
	int r = 0;
	if (as_json)
		r = agsbx_cli_print_json(list, JSON_SORT_KEYS);
	else
		print_table(list);
	json_decref(list);
	agsbx_harness_clear(&hs);
	if (r < 0) /* here, with the write's errno: the final flush has none left */
		return agsbx_error_errno(r, "cannot write to stdout"), AGSBX_EXIT_INTERNAL;
	return AGSBX_EXIT_OK;
}
