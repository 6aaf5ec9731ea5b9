/* agsbx-evidence probe [--json]: read-only host facts, as an aligned table
 * (family, fact, value, source) or as the JSON object that goes into every
 * bundle's "host" (schemas/host-probe.schema.json). */
#include "cli/commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/escape.h"
#include "base/log.h"
#include "evidence/evidence.h"
#include "probes/probes.h"

const char agsbx_help_probe[] =
	"usage: agsbx-evidence probe [--json]\n"
	"\n"
	"Reads host facts without changing anything: kernel, OS, privilege context,\n"
	"container markers, user namespaces, AppArmor, Landlock, cgroups, bubblewrap,\n"
	"runsc, the Docker Engine API ($DOCKER_HOST, unix:// only, or\n"
	"/var/run/docker.sock) and macOS Seatbelt. Each fact names its source; an\n"
	"unavailable fact is shown as absent with the reason.\n"
	"\n"
	"options:\n"
	"  --json      print one JSON object (schema: agsbx-evidence schema host-probe)\n"
	"  -h, --help  show this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 facts printed, 2 bad usage, 3 internal or output error.\n"
	"\n"
	"example: agsbx-evidence probe --json | jq .userns\n";

/* Widest value column used for alignment; longer values just push the
 * source column right on their own line. */
#define VALUE_ALIGN_MAX 40

/* Escaped for the terminal (base/escape.h) so no cell (a value, or a
 * source built from $DOCKER_HOST or $PATH) can forge table lines, move the
 * cursor or reorder text. Takes s; malloc'd. */
static char *printable(char *s)
{
	if (!s)
		return NULL;
	char *e = agsbx_term_escape(s, 0);
	free(s);
	return e;
}

/* One table cell for a fact's value: strings as-is, advisory lists as
 * their flagged findings, everything else as compact JSON, absent as
 * "absent (reason)". malloc'd. */
static char *value_text(const json_t *fact)
{
	char *s = NULL;
	if (json_is_true(json_object_get(fact, "absent"))) {
		const char *reason = json_string_value(json_object_get(fact, "reason"));
		if (asprintf(&s, "absent (%s)", reason ? reason : "?") < 0)
			return NULL;
	} else {
		const json_t *v = json_object_get(fact, "value");
		const char *reason = json_string_value(json_object_get(fact, "reason"));
		_cleanup_free_ char *js = json_is_string(v) ? strdup(json_string_value(v))
					  : agsbx_is_findings(v) ? agsbx_findings_text(v)
							     : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
		if (!js)
			return NULL;
		if (asprintf(&s, reason ? "%s (%s)" : "%s", js, reason) < 0)
			return NULL;
	}
	return printable(s);
}

/* Calls fn for every fact, family by family in the probes' order; stops
 * at the first negative return. */
static int each_fact(const json_t *host, int (*fn)(void *ud, const char *family, const char *name, const json_t *fact),
		     void *ud)
{
	size_t nfam;
	const struct agsbx_probe_family *fams = agsbx_probe_families(&nfam);
	for (size_t i = 0; i < nfam; i++) {
		const char *name;
		const json_t *fact;
		json_object_foreach(json_object_get(host, fams[i].name), name, fact) {
			int r = fn(ud, fams[i].name, name, fact);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

struct widths {
	int fam, fact, val;
};

static int widen(void *ud, const char *family, const char *name, const json_t *fact)
{
	struct widths *w = ud;
	_cleanup_free_ char *v = value_text(fact);
	int lv = v ? (int)strlen(v) : 0;
	if ((int)strlen(family) > w->fam)
		w->fam = (int)strlen(family);
	if ((int)strlen(name) > w->fact)
		w->fact = (int)strlen(name);
	if (lv > w->val && lv <= VALUE_ALIGN_MAX)
		w->val = lv;
	return 0;
}

static int print_row(void *ud, const char *family, const char *name, const json_t *fact)
{
	const struct widths *w = ud;
	_cleanup_free_ char *v = value_text(fact);
	_cleanup_free_ char *ename = agsbx_term_escape(name, 0);
	if (!v || !ename)
		return -ENOMEM;
	const char *s = json_string_value(json_object_get(fact, "source"));
	_cleanup_free_ char *src = printable(strdup(s ? s : ""));
	if (!src)
		return -ENOMEM;
	printf("%-*s  %-*s  %-*s  %s\n", w->fam, family, w->fact, ename, w->val, v, src);
	return 0;
}

static int print_table(const json_t *host)
{
	struct widths w = { (int)strlen("FAMILY"), (int)strlen("FACT"), (int)strlen("VALUE") };
	each_fact(host, widen, &w);
	printf("%-*s  %-*s  %-*s  %s\n", w.fam, "FAMILY", w.fact, "FACT", w.val, "VALUE", "SOURCE");
	return each_fact(host, print_row, &w);
}

static int print_json(const json_t *host)
{
	_cleanup_free_ char *s = json_dumps(host, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	if (!s)
		return -ENOMEM;
	fputs(s, stdout);
	fputc('\n', stdout);
	return 0;
}

int agsbx_cmd_probe(int argc, char **argv)
{
	static const struct option lo[] = { AGSBX_OPTION_JSON, { 0 } };
	bool json = false;
	struct agsbx_args a = { .cmd = "probe", .argc = argc, .argv = argv };
	int c;
	while ((c = agsbx_args_next(&a, lo)) > 0)
		json = true;
	if (c < 0 || agsbx_args_operands(&a, 0, 0, NULL, NULL))
		return AGSBX_EXIT_USAGE;
	_cleanup_json_ json_t *host = agsbx_probe_host(NULL);
	if (!host) {
		agsbx_error("probe: out of memory");
		return AGSBX_EXIT_INTERNAL;
	}
	int r = json ? print_json(host) : print_table(host);
	if (r < 0) {
		agsbx_error_errno(r, "probe: cannot format the result");
		return AGSBX_EXIT_INTERNAL;
	}
	if ((r = agsbx_flush_errno(stdout)) < 0) {
		agsbx_error_errno(r, "probe: cannot write the result to stdout");
		return AGSBX_EXIT_INTERNAL;
	}
	return AGSBX_EXIT_OK;
}
