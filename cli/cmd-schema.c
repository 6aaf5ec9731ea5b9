/* schema NAME: prints a JSON Schema embedded at build time. */
#include "cli/commands.h"

#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

const char agsbx_help_schema[] =
	"usage: agsbx-evidence schema NAME\n"
	"       agsbx-evidence schema --list\n"
	"\n"
	"Prints a shipped JSON Schema (2020-12), e.g. evidence-bundle, host-probe,\n"
	"in-toto-statement-v1 or in-toto-test-result-v0.1.\n"
	"\n"
	"  --list                 the names of the shipped schemas\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 printed, 2 unknown schema or bad usage\n"
	"\n"
	"example: agsbx-evidence schema evidence-bundle > evidence-bundle.schema.json\n";

int agsbx_cmd_schema(int argc, char **argv)
{
	enum { O_LIST = AGSBX_OPT_LOCAL };
	static const struct option lo[] = { { "list", no_argument, NULL, O_LIST }, { 0 } };
	bool list = false;
	struct agsbx_args a = { .cmd = "schema", .argc = argc, .argv = argv };
	int c;
	while ((c = agsbx_args_next(&a, lo)) > 0)
		list = true;
	if (c < 0 || agsbx_args_operands(&a, !list, !list, "one schema name", "one schema name"))
		return AGSBX_EXIT_USAGE;
	const char *const *names = agsbx_schema_names();
	if (list) {
		for (size_t i = 0; names[i]; i++)
			printf("%s\n", names[i]);
		return AGSBX_EXIT_OK;
	}
	size_t len;
	const char *text = agsbx_schema_get(a.operands[0], &len);
	if (!text) {
		agsbx_error("unknown schema '%s'", a.operands[0]);
		for (size_t i = 0; names[i]; i++)
			agsbx_hint("available: %s", names[i]);
		return AGSBX_EXIT_USAGE;
	}
	errno = 0;
	int r = fwrite(text, 1, len, stdout) != len ? (errno ? -errno : -EIO) : agsbx_flush_errno(stdout);
	if (r < 0) {
		agsbx_error_errno(r, "cannot write the schema");
		return AGSBX_EXIT_INTERNAL;
	}
	return AGSBX_EXIT_OK;
}
