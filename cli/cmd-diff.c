/* diff OLD NEW [--format text|markdown|json] [trust options] [-o FILE] */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char help[] =
	"usage: agsbx-evidence diff OLD NEW [--format text|markdown|json] [--fail-on host-change] [-o FILE]\n"
	"                           [--key PUB | --allowed-signers F | --keys-url URL]\n"
	"\n"
	"What changed between two bundles: host facts, provider verdicts, check verdicts\n"
	"(regressions first), capability claims, mechanism versions. Providers and checks\n"
	"are matched by id. Then the provenance of both: signature and (with a trust\n"
	"option) whether the signer is trusted, representative or why not, labelled\n"
	"simulations (named in a note), challenge, subject commit, tool; blocked providers\n"
	"with their reasons (left out when nothing differs at all).\n"
	"\n"
	"  --format F             text (default), markdown or json (provenance under \"provenance\")\n"
	"  --fail-on host-change  a host change fails the diff too (exit 1)\n"
	"  -o, --output FILE      write to FILE instead of stdout ('-': stdout)\n"
	"  --key, --allowed-signers, --identity, --keys-url, --allow-insecure-keys-url\n"
	"                         trust anchors for the signer, as for verify\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"A regression is lost evidence: a check newly failing, pass -> skip or not_claimed, a check\n"
	"or provider gone, a provider newly defective or conformant -> skipped, a claim true -> false.\n"
	"A host change (pass -> blocked, conformant -> blocked: the host stopped the mechanism) is\n"
	"reported apart.\n"
	"\n"
	"exit status: 0 no regression, 1 a regression (or a host change with --fail-on host-change),\n"
	"2 bad input, 3 I/O error.\n"
	"\n"
	"example: agsbx-evidence diff main.json pr.json --format markdown --keys-url https://github.com/USER.keys\n";

/* The diff, with the provenance of both bundles: under "provenance" in
 * json; as a note naming any simulation first and a block after the
 * changes in text and markdown. */
static int render(struct agsbx_output *out, json_t *d, const json_t *po, const json_t *pn, const char *const files[2],
		  const char *format)
{
	if (strcmp(format, "json") == 0) {
		json_object_set_new(d, "provenance", json_pack("{s:O, s:O}", "old", po, "new", pn));
		return agsbx_diff_render(d, format, out->f);
	}
	char lo[600], ln[600];
	snprintf(lo, sizeof lo, "old %s", files[0]);
	snprintf(ln, sizeof ln, "new %s", files[1]);
	const json_t *provs[2] = { po, pn };
	const char *labels[2] = { lo, ln };
	/* Identical bundles need no provenance block: "no differences". */
	bool same = json_integer_value(json_object_get(d, "changes")) == 0 && json_equal(po, pn);
	int r = agsbx_provenance_notes(provs, labels, 2, format, out->f);
	if (r == 0)
		r = agsbx_diff_render(d, format, out->f);
	if (r == 0 && !same) {
		fputc('\n', out->f);
		r = agsbx_provenance_render(provs, labels, 2, format, out->f);
	}
	return r;
}

int agsbx_cmd_diff(int argc, char **argv)
{
	if (agsbx_wants_help(argc, argv, help))
		return AGSBX_EXIT_OK;
	const char *files[2] = { NULL, NULL }, *format = "text", *output = "-";
	struct agsbx_verify_opts trust = { 0 };
	bool have_trust = false;
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
			continue;
		}
		bool missing = false;
		if (agsbx_trust_option(argc, argv, &i, &trust, &missing)) {
			have_trust = true;
			continue;
		}
		if (missing)
			return agsbx_usage_error("diff", "%s needs a value", argv[i]);
		if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc)
			output = argv[++i];
		else if (strncmp(argv[i], "--output=", 9) == 0)
			output = argv[i] + 9;
		else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
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
	_cleanup_json_ json_t *po = agsbx_bundle_provenance(old_b, have_trust ? &trust : NULL);
	_cleanup_json_ json_t *pn = agsbx_bundle_provenance(new_b, have_trust ? &trust : NULL);
	if (!d || !po || !pn) {
		agsbx_error("out of memory");
		return AGSBX_EXIT_INTERNAL;
	}
	_cleanup_(agsbx_output_closep) struct agsbx_output out = { 0 };
	if (agsbx_output_open(&out, output) < 0)
		return AGSBX_EXIT_USAGE;
	int r = render(&out, d, po, pn, files, format);
	if (r == 0)
		r = agsbx_output_commit(&out);
	if (r < 0) {
		agsbx_error("cannot write the diff: %s", strerror(-r));
		return AGSBX_EXIT_INTERNAL;
	}
	if (json_integer_value(json_object_get(d, "regressions")) > 0 ||
	    (fail_on_host && json_integer_value(json_object_get(d, "host_changes")) > 0))
		return AGSBX_EXIT_DEFECT;
	return AGSBX_EXIT_OK;
}
