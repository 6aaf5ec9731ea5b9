/* matrix FILE... [--format markdown|json|badge] [trust options] [-o FILE] */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
	"usage: agsbx-evidence matrix FILE... [--format markdown|json|badge] [-o FILE]\n"
	"                                 [--key PUB | --allowed-signers F | --keys-url URL]\n"
	"\n"
	"Many bundles side by side: one row per bundle (host kernel, OS, created_at, provenance:\n"
	"signature and trusted signer, representative or why not, simulations, challenge,\n"
	"subject commit), one column per provider, cells = verdict with the blocked reason or\n"
	"the failing check ids. Members a bundle lacks (another tool version) show as \"?\".\n"
	"Unreadable files are reported and skipped.\n"
	"\n"
	"  --format F             markdown (default), json, or badge: a shields.io endpoint JSON\n"
	"                         (red: a defect, yellow: blocked/skipped, green: all conformant)\n"
	"  -o, --output FILE      write to FILE instead of stdout ('-': stdout)\n"
	"  --key, --allowed-signers, --identity, --keys-url, --allow-insecure-keys-url\n"
	"                         trust anchors for the signers, as for verify\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 written, 2 bad usage or no readable bundle, 3 I/O error\n"
	"\n"
	"example: agsbx-evidence matrix bundles/*.json --format badge -o badge.json\n";

static int add_provenance(json_t *m, json_t **bundles, size_t n, const struct agsbx_verify_opts *trust)
{
	json_t *rows = json_object_get(m, "rows");
	for (size_t i = 0; i < n && i < json_array_size(rows); i++) {
		json_t *p = agsbx_bundle_provenance(bundles[i], trust);
		if (!p)
			return -ENOMEM;
		json_object_set_new(json_array_get(rows, i), "provenance", p);
	}
	return 0;
}

int agsbx_cmd_matrix(int argc, char **argv)
{
	if (agsbx_wants_help(argc, argv, help))
		return AGSBX_EXIT_OK;
	const char *format = "markdown", *output = "-";
	struct agsbx_verify_opts trust = { 0 };
	bool have_trust = false;
	_cleanup_free_ const char **files = calloc((size_t)argc, sizeof *files);
	_cleanup_free_ json_t **bundles = calloc((size_t)argc, sizeof *bundles);
	if (!files || !bundles)
		return AGSBX_EXIT_INTERNAL;
	size_t n = 0, loaded = 0;
	for (int i = 1; i < argc; i++) {
		bool missing = false;
		if (agsbx_trust_option(argc, argv, &i, &trust, &missing)) {
			have_trust = true;
			continue;
		}
		if (missing)
			return agsbx_usage_error("matrix", "%s needs a value", argv[i]);
		if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc)
			output = argv[++i];
		else if (strncmp(argv[i], "--output=", 9) == 0)
			output = argv[i] + 9;
		else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
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
	if (strcmp(format, "markdown") != 0 && strcmp(format, "json") != 0 && strcmp(format, "badge") != 0)
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
		int r = m ? add_provenance(m, bundles, loaded, have_trust ? &trust : NULL) : -ENOMEM;
		struct agsbx_output out = { 0 };
		int ro = r == 0 ? agsbx_output_open(&out, output) : 0;
		if (r == 0 && ro == 0) {
			r = agsbx_matrix_render(m, format, out.f);
			if (r == 0)
				r = agsbx_output_commit(&out);
			agsbx_output_closep(&out);
		}
		json_decref(m);
		if (ro < 0) {
			rc = AGSBX_EXIT_USAGE; /* agsbx_output_open said why */
		} else if (r < 0) {
			agsbx_error("cannot write the matrix: %s", strerror(-r));
			rc = AGSBX_EXIT_INTERNAL;
		}
	}
	for (size_t i = 0; i < loaded; i++)
		json_decref(bundles[i]);
	return rc;
}
