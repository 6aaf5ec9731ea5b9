/* diff OLD NEW [--format text|markdown|json] */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char help[] =
	"usage: agsbx-evidence diff OLD NEW [--format text|markdown|json] [--fail-on host-change]\n"
	"\n"
	"What changed between two bundles: host facts, provider verdicts, check verdicts\n"
	"(regressions first), capability claims, mechanism versions. Providers and checks\n"
	"are matched by id.\n"
	"\n"
	"A regression is lost evidence: a check newly failing, pass -> skip or not_claimed, a check\n"
	"or provider gone, a provider newly defective or conformant -> skipped, a claim true -> false.\n"
	"A host change (pass -> blocked, conformant -> blocked: the host stopped the mechanism) is\n"
	"reported apart.\n"
	"\n"
	"  --fail-on host-change   a host change fails the diff too (exit 1)\n"
	"\n"
	"exit status: 0 no regression, 1 a regression (or a host change with --fail-on host-change),\n"
	"2 bad input, 3 I/O error.\n";

int agsbx_cmd_diff(int argc, char **argv)
{
	if (agsbx_wants_help(argc, argv, help))
		return AGSBX_EXIT_OK;
	const char *files[2] = { NULL, NULL }, *format = "text";
	int nfiles = 0;
	bool fail_on_host = false;
	for (int i = 1; i < argc; i++) {
		const char *fail_on = NULL;
		if (strcmp(argv[i], "--fail-on") == 0 && i + 1 < argc)
			fail_on = argv[++i];
		else if (strncmp(argv[i], "--fail-on=", 10) == 0)
			fail_on = argv[i] + 10;
		if (fail_on) {
			if (strcmp(fail_on, "host-change") != 0)
				return agsbx_usage_error("diff", "--fail-on: unknown class '%s' (host-change)", fail_on);
			fail_on_host = true;
		} else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format = argv[++i];
		else if (strncmp(argv[i], "--format=", 9) == 0)
			format = argv[i] + 9;
		else if (argv[i][0] == '-' && argv[i][1] != '\0')
			return agsbx_usage_error("diff", "unknown option '%s'", argv[i]);
		else if (nfiles == 2)
			return agsbx_usage_error("diff", "two bundles: OLD NEW");
		else
			files[nfiles++] = argv[i];
	}
	if (nfiles != 2)
		return agsbx_usage_error("diff", "two bundles: OLD NEW");
	if (strcmp(format, "text") != 0 && strcmp(format, "markdown") != 0 && strcmp(format, "json") != 0)
		return agsbx_usage_error("diff", "unknown format '%s'", format);
	char err[512];
	_cleanup_json_ json_t *old_b = NULL;
	_cleanup_json_ json_t *new_b = NULL;
	if (agsbx_bundle_load(files[0], &old_b, err, sizeof err) < 0 ||
	    agsbx_bundle_load(files[1], &new_b, err, sizeof err) < 0) {
		agsbx_error("%s", err);
		return AGSBX_EXIT_USAGE;
	}
	_cleanup_json_ json_t *d = agsbx_bundle_diff(old_b, new_b);
	if (!d) {
		agsbx_error("out of memory");
		return AGSBX_EXIT_INTERNAL;
	}
	int r = agsbx_diff_render(d, format, stdout);
	if (r < 0) {
		agsbx_error("cannot write the diff: %s", strerror(-r));
		return AGSBX_EXIT_INTERNAL;
	}
	if (json_integer_value(json_object_get(d, "regressions")) > 0 ||
	    (fail_on_host && json_integer_value(json_object_get(d, "host_changes")) > 0))
		return AGSBX_EXIT_DEFECT;
	return AGSBX_EXIT_OK;
}
