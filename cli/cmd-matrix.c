/* matrix FILE... [--format markdown|json|badge] [trust options] [-o FILE] */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char agsbx_help_matrix[] =
	"usage: agsbx-evidence matrix FILE... [--format markdown|json|badge] [-o FILE]\n"
	"                                 [--key PUB | --allowed-signers F | --keys-url URL]\n"
	"\n"
	"Many bundles side by side, for a PR comment (GitHub's 760 px column): one row per bundle\n"
	"(host kernel and OS), one column per provider, cells = verdict with its icon, the blocked\n"
	"reason or the failing check ids; a provider a bundle lacks is \"not in this bundle\". A row\n"
	"whose signature is INVALID, whose signer is NOT trusted or that is SIMULATED says so; the\n"
	"rest of each row's provenance (file, created, signature and trusted signer, representative\n"
	"or why not, simulations, challenge, subject commit, tool) is a numbered list under the\n"
	"table. Unreadable files are reported and skipped.\n"
	"\n"
	"  --format F             markdown (default), json, or badge: a shields.io endpoint JSON\n"
	"                         (red: a defect, yellow: blocked/skipped, green: all conformant);\n"
	"                         with a trust option the badge counts only bundles whose signature\n"
	"                         verifies and whose signer is trusted, and says how many it excluded\n"
	"  -o, --output FILE      write to FILE instead of stdout ('-': stdout)\n"
	"  --key, --allowed-signers, --identity, --keys-url, --allow-insecure-keys-url\n"
	"                         trust anchors for the signers, as for verify\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 written, 2 bad usage or no readable bundle, 3 I/O error\n"
	"\n"
	"example: agsbx-evidence matrix bundles/*.json --format badge -o badge.json\n";

/* The readable ones of files into bundles/names (the rest is skipped
 * with a warning); their count. */
static size_t load_bundles(char **files, size_t n, json_t **bundles, const char **names)
{
	size_t loaded = 0;
	for (size_t i = 0; i < n; i++) {
		struct agsbx_error e = { 0 };
		json_t *b = NULL;
		if (agsbx_bundle_load(files[i], &b, &e) < 0) {
			agsbx_warn("skipping %s", e.message);
			continue;
		}
		names[loaded] = files[i];
		bundles[loaded++] = b;
	}
	return loaded;
}

static int write_matrix(json_t **bundles, const char **names, size_t n, const struct agsbx_verify_opts *trust,
			const char *format, const char *output)
{
	json_t *m = agsbx_matrix_build((const json_t *const *)bundles, names, n);
	int r = m ? agsbx_matrix_add_provenance(m, (const json_t *const *)bundles, n, trust) : -ENOMEM;
	struct agsbx_output out = { 0 };
	int ro = r == 0 ? agsbx_output_open(&out, output) : 0;
	if (r == 0 && ro == 0) {
		r = agsbx_matrix_render(m, format, out.f);
		if (r == 0)
			r = agsbx_output_commit(&out);
		agsbx_output_closep(&out);
	}
	json_decref(m);
	if (ro < 0)
		return AGSBX_EXIT_USAGE; /* agsbx_output_open said why, as report and diff do */
	if (r < 0) {
		agsbx_error("cannot write the matrix: %s", strerror(-r));
		return AGSBX_EXIT_INTERNAL;
	}
	return AGSBX_EXIT_OK;
}

int agsbx_cmd_matrix(int argc, char **argv)
{
	static const struct option lo[] = { AGSBX_OPTION_OUTPUT, AGSBX_OPTION_FORMAT, AGSBX_OPTIONS_TRUST, { 0 } };
	const char *format = "markdown", *output = "-";
	struct agsbx_verify_opts trust = { 0 };
	bool have_trust = false;
	struct agsbx_args a = { .cmd = "matrix", .argc = argc, .argv = argv };
	int c;
	while ((c = agsbx_args_next(&a, lo)) > 0) {
		if (c == 'o')
			output = a.value;
		else if (c == AGSBX_OPT_FORMAT)
			format = a.value;
		else
			have_trust |= agsbx_trust_option(c, a.value, &trust);
	}
	if (c < 0)
		return AGSBX_EXIT_USAGE;
	int rc = agsbx_args_operands(&a, 1, argc, "no bundle given", NULL);
	if (rc || (rc = agsbx_check_format("matrix", format, agsbx_render_formats("matrix"))))
		return rc;
	size_t n = (size_t)a.noperands;
	_cleanup_free_ json_t **bundles = calloc(n, sizeof *bundles);
	_cleanup_free_ const char **names = calloc(n, sizeof *names);
	if (!bundles || !names)
		return AGSBX_EXIT_INTERNAL;
	size_t loaded = load_bundles(a.operands, n, bundles, names);
	if (loaded == 0) {
		agsbx_error("no readable bundle");
		return AGSBX_EXIT_USAGE;
	}
	rc = write_matrix(bundles, names, loaded, have_trust ? &trust : NULL, format, output);
	for (size_t i = 0; i < loaded; i++)
		json_decref(bundles[i]);
	return rc;
}
