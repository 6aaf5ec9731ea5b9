/* matrix FILE... [--format markdown|json] */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
	"usage: agsbx-evidence matrix FILE... [--format markdown|json]\n"
	"\n"
	"Many bundles side by side: one row per bundle (host kernel, OS, created_at), one\n"
	"column per provider, cells = verdict and failing check ids. Members a bundle lacks\n"
	"(another tool version) show as \"?\". Unreadable files are reported and skipped;\n"
	"exit status 2 only when none is readable.\n";

int agsbx_cmd_matrix(int argc, char **argv)
{
	if (agsbx_wants_help(argc, argv, help))
		return AGSBX_EXIT_OK;
	const char *format = "markdown";
	_cleanup_free_ const char **files = calloc((size_t)argc, sizeof *files);
	_cleanup_free_ json_t **bundles = calloc((size_t)argc, sizeof *bundles);
	if (!files || !bundles)
		return AGSBX_EXIT_INTERNAL;
	size_t n = 0, loaded = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format = argv[++i];
		else if (strncmp(argv[i], "--format=", 9) == 0)
			format = argv[i] + 9;
		else if (argv[i][0] == '-' && argv[i][1] != '\0')
			return agsbx_usage_error("matrix", "unknown option '%s'", argv[i]);
		else
			files[n++] = argv[i];
	}
	if (n == 0)
		return agsbx_usage_error("matrix", "no bundle given");
	if (strcmp(format, "markdown") != 0 && strcmp(format, "json") != 0)
		return agsbx_usage_error("matrix", "unknown format '%s'", format);
	_cleanup_free_ const char **names = calloc(n, sizeof *names);
	if (!names)
		return AGSBX_EXIT_INTERNAL;
	for (size_t i = 0; i < n; i++) {
		char err[512];
		json_t *b = NULL;
		if (agsbx_bundle_load(files[i], &b, err, sizeof err) < 0) {
			agsbx_warn("skipping %s", err);
			continue;
		}
		names[loaded] = files[i];
		bundles[loaded++] = b;
	}
	int rc = AGSBX_EXIT_OK;
	if (loaded == 0) {
		agsbx_error("no readable bundle");
		rc = AGSBX_EXIT_USAGE;
	} else {
		json_t *m = agsbx_matrix_build((const json_t *const *)bundles, names, loaded);
		int r = m ? agsbx_matrix_render(m, format, stdout) : -ENOMEM;
		json_decref(m);
		if (r < 0) {
			agsbx_error("cannot write the matrix: %s", strerror(-r));
			rc = AGSBX_EXIT_INTERNAL;
		}
	}
	for (size_t i = 0; i < loaded; i++)
		json_decref(bundles[i]);
	return rc;
}
