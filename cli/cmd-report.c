/* report FILE [--format text|markdown|junit|tap] [-o FILE] */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char help[] =
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

static bool known_format(const char *f)
{
	return strcmp(f, "text") == 0 || strcmp(f, "markdown") == 0 || strcmp(f, "junit") == 0 ||
	       strcmp(f, "tap") == 0;
}

int agsbx_cmd_report(int argc, char **argv)
{
	if (agsbx_wants_help(argc, argv, help))
		return AGSBX_EXIT_OK;
	const char *file = NULL, *format = "text", *output = "-";
	for (int i = 1; i < argc; i++) {
		if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc)
			output = argv[++i];
		else if (strncmp(argv[i], "--output=", 9) == 0)
			output = argv[i] + 9;
		else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format = argv[++i];
		else if (strncmp(argv[i], "--format=", 9) == 0)
			format = argv[i] + 9;
		else if (argv[i][0] == '-' && argv[i][1] != '\0')
			return agsbx_usage_error("report", "unknown option '%s'", argv[i]);
		else if (file)
			return agsbx_usage_error("report", "one bundle at a time");
		else
			file = argv[i];
	}
	if (!file)
		return agsbx_usage_error("report", "no bundle given");
	if (!known_format(format))
		return agsbx_usage_error("report", "unknown format '%s'", format);
	char err[512];
	_cleanup_json_ json_t *bundle = NULL;
	if (agsbx_bundle_load(file, &bundle, err, sizeof err) < 0) {
		agsbx_error("%s", err);
		return AGSBX_EXIT_USAGE;
	}
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
