/* diff OLD NEW [--format text|markdown|json] [trust options] [-o FILE] */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

const char agsbx_help_diff[] =
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
	"reported apart. Text and markdown list the regressions first, then the host changes as one\n"
	"line per provider (\"27 checks: pass -> blocked\"), then the rest; json lists every change.\n"
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

struct diff_opts {
	const char *format, *output;
	struct agsbx_verify_opts trust;
	bool have_trust, fail_on_host;
};

static int parse_args(int argc, char **argv, struct diff_opts *o, struct agsbx_args *a)
{
	enum { O_FAIL_ON = AGSBX_OPT_LOCAL };
	static const struct option lo[] = {
		AGSBX_OPTION_OUTPUT, AGSBX_OPTION_FORMAT, { "fail-on", required_argument, NULL, O_FAIL_ON },
		AGSBX_OPTIONS_TRUST, { 0 },
	};
	*a = (struct agsbx_args){ .cmd = "diff", .argc = argc, .argv = argv };
	int c;
	while ((c = agsbx_args_next(a, lo)) > 0) {
		if (c == 'o')
			o->output = a->value;
		else if (c == AGSBX_OPT_FORMAT)
			o->format = a->value;
		else if (c == O_FAIL_ON && strcmp(a->value, "host-change") != 0)
			return agsbx_usage_error("diff", "--fail-on: unknown class '%s' (host-change)", a->value);
		else if (c == O_FAIL_ON)
			o->fail_on_host = true;
		else
			o->have_trust |= agsbx_trust_option(c, a->value, &o->trust);
	}
	if (c < 0)
		return AGSBX_EXIT_USAGE;
	int rc = agsbx_args_operands(a, 2, 2, "two bundles: OLD NEW", "two bundles: OLD NEW");
	return rc ? rc : agsbx_check_format("diff", o->format, agsbx_render_formats("diff"));
}

int agsbx_cmd_diff(int argc, char **argv)
{
	struct diff_opts o = { .format = "text", .output = "-" };
	struct agsbx_args a;
	int rc = parse_args(argc, argv, &o, &a);
	if (rc)
		return rc;
	const char *files[2] = { a.operands[0], a.operands[1] };
	_cleanup_json_ json_t *old_b = NULL;
	_cleanup_json_ json_t *new_b = NULL;
	if ((rc = agsbx_cli_load_bundle(files[0], &old_b)) || (rc = agsbx_cli_load_bundle(files[1], &new_b)))
		return rc;
	const struct agsbx_verify_opts *trust = o.have_trust ? &o.trust : NULL;
	_cleanup_json_ json_t *d = agsbx_bundle_diff(old_b, new_b);
	_cleanup_json_ json_t *po = agsbx_bundle_provenance(old_b, trust);
	_cleanup_json_ json_t *pn = agsbx_bundle_provenance(new_b, trust);
	if (!d || !po || !pn) {
		agsbx_error("out of memory");
		return AGSBX_EXIT_INTERNAL;
	}
	_cleanup_(agsbx_output_closep) struct agsbx_output out = { 0 };
	if (agsbx_output_open(&out, o.output) < 0)
		return AGSBX_EXIT_USAGE;
	int r = render(&out, d, po, pn, files, o.format);
	if (r == 0)
		r = agsbx_output_commit(&out);
	if (r < 0) {
		agsbx_error("cannot write the diff: %s", strerror(-r));
		return AGSBX_EXIT_INTERNAL;
	}
	if (json_integer_value(json_object_get(d, "regressions")) > 0 ||
	    (o.fail_on_host && json_integer_value(json_object_get(d, "host_changes")) > 0))
		return AGSBX_EXIT_DEFECT;
	return AGSBX_EXIT_OK;
}
