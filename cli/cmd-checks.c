/* checks: the catalogue (every check a bundle can contain) as text or
 * JSON, from the rows the matrix runs. */
#include <getopt.h>
#include <stdio.h>

#include "base/log.h"
#include "cli/commands.h"
#include "conformance/conformance.h"

const char agsbx_help_checks[] =
	"usage: agsbx-evidence checks [--json]\n"
	"\n"
	"Prints the check catalogue: every check a bundle can contain, sorted by id, with its axis, what it\n"
	"attacks, why, its paired control and the negative control (test and provider) that makes it fail.\n"
	"Runs nothing.\n"
	"\n"
	"  --json                 one JSON object on stdout: {count, checks: [{id, axis, evidence, phase,\n"
	"                         title, attacks, why, control, negative_control, needs_handle, exclusive,\n"
	"                         declared_only}]}\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 printed, 2 bad usage, 3 internal or I/O error\n"
	"\n"
	"example: agsbx-evidence checks --json | jq -r '.checks[] | select(.axis == \"network\") | .id'\n";

static const char *str(const json_t *row, const char *key)
{
	const char *s = json_string_value(json_object_get(row, key));
	return s ? s : "-";
}

static void print_row(const json_t *row)
{
	printf("%-34s %-28s %s%s\n", str(row, "id"), str(row, "axis"), str(row, "evidence"),
	       json_is_true(json_object_get(row, "declared_only")) ? ", declared providers only" : "");
	printf("    attacks:  %s\n    why:      %s\n    control:  %s\n", str(row, "attacks"), str(row, "why"),
	       str(row, "control"));
	size_t i;
	const json_t *n;
	json_array_foreach(json_object_get(row, "negative_control"), i, n)
		printf("    %s %s (%s)\n", i ? "         " : "negative:", str(n, "provider"), str(n, "test"));
}

static void print_text(const json_t *list)
{
	size_t i;
	const json_t *row;
	printf("%-34s %-28s %s\n", "check", "axis", "evidence");
	json_array_foreach(list, i, row)
		print_row(row);
	printf("%zu checks\n", json_array_size(list));
}

int agsbx_cmd_checks(int argc, char **argv)
{
	static const struct option lo[] = { AGSBX_OPTION_JSON, { 0 } };
	bool as_json = false;
	struct agsbx_args a = { .cmd = "checks", .argc = argc, .argv = argv };
	int c;
	while ((c = agsbx_args_next(&a, lo)) > 0)
		as_json = true;
	if (c < 0 || agsbx_args_operands(&a, 0, 0, NULL, NULL))
		return AGSBX_EXIT_USAGE;
	json_t *list = agsbx_conformance_catalogue();
	json_t *doc = list ? json_pack("{s:I, s:O}", "count", (json_int_t)json_array_size(list), "checks", list) : NULL;
	json_decref(list);
	if (!doc)
		return agsbx_error("out of memory"), AGSBX_EXIT_INTERNAL;
	int r = 0;
	if (as_json)
		r = agsbx_cli_print_json(doc, 0);
	else
		print_text(json_object_get(doc, "checks"));
	r = r < 0 ? r : agsbx_flush_errno(stdout);
	json_decref(doc);
	if (r < 0)
		return agsbx_error_errno(r, "cannot write to stdout"), AGSBX_EXIT_INTERNAL;
	return AGSBX_EXIT_OK;
}
