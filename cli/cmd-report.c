/* report FILE [--format text|markdown|junit|tap] [-o FILE] */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

const char agsbx_help_report[] =
	"usage: agsbx-evidence report FILE [--format text|markdown|junit|tap] [-o FILE]\n"
	"\n"
	"Renders one bundle: text (default), markdown (a PR comment or $GITHUB_STEP_SUMMARY:\n"
	"provider x verdict table, failing checks, host, signature status), junit (XML: a\n"
	"testsuite per provider, a testcase per check) or tap (TAP 13 with YAML diagnostics).\n"
	"Blocked providers are listed with the probe's detail and hint. The signature is\n"
	"checked for integrity only; use 'verify' for trust.\n"
	"\n"
	"  --format F             text (default), markdown, junit or tap\n"
	"  -o, --output FILE      write to FILE instead of stdout ('-': stdout)\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 written, 2 bad usage or not a bundle, 3 I/O error\n"
	"\n"
	"example: agsbx-evidence report evidence.json --format markdown -o report.md\n";

int agsbx_cmd_report(int argc, char **argv)
{
	static const struct option lo[] = { AGSBX_OPTION_OUTPUT, AGSBX_OPTION_FORMAT, { 0 } };
	const char *format = "text", *output = "-";
	struct agsbx_args a = { .cmd = "report", .argc = argc, .argv = argv };
	int c;
	while ((c = agsbx_args_next(&a, lo)) > 0) {
		if (c == 'o')
			output = a.value;
		else
			format = a.value;
	}
	if (c < 0)
		return AGSBX_EXIT_USAGE;
	int rc = agsbx_args_operands(&a, 1, 1, "no bundle given", "one bundle at a time");
	if (rc || (rc = agsbx_check_format("report", format, agsbx_render_formats("report"))))
		return rc;
	_cleanup_json_ json_t *bundle = NULL;
	if ((rc = agsbx_cli_load_bundle(a.operands[0], &bundle)))
		return rc;
	_cleanup_(agsbx_output_closep) struct agsbx_output out = { 0 };
	if (agsbx_output_open(&out, output) < 0)
		return AGSBX_EXIT_USAGE;
	int r = agsbx_report_render(bundle, format, out.f);
	if (r == 0)
		r = agsbx_output_commit(&out);
	if (r < 0) {
		agsbx_error("cannot write the report: %s", strerror(-r));
		return AGSBX_EXIT_INTERNAL;
	}
	return AGSBX_EXIT_OK;
}
