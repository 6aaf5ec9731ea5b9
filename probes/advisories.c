/* advisories: the host's kernel and runtime versions against a small table
 * of known-vulnerable upstream ranges (probes/advisories.json, with its
 * sources), and the hardening knobs that leave a surface exposed. Advice,
 * never a verdict: distributions backport fixes, so a version inside an
 * upstream range is a reason to look, and the record says which version
 * string it read (Debian's kernel package version where uname -v has it,
 * since its release string "6.1.0-28" names the ABI, not the code). */
#include "probes/probes.h"
#include "probes/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

extern const char agsbx_advisories_json[];
extern const size_t agsbx_advisories_json_len;

#define ADVISORY_SOURCE "agsbx-evidence advisory table (probes/advisories.json)"

int agsbx_version_parse(const char *s, struct agsbx_version *v)
{
	memset(v, 0, sizeof *v);
	v->rc = -1;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	for (int i = 0; i < 4 && isdigit((unsigned char)*s); i++) {
		v->part[i] = strtol(s, (char **)&s, 10);
		if (*s != '.' || !isdigit((unsigned char)s[1]))
			break;
		s++;
	}
	if (strncmp(s, "-rc", 3) == 0) {
		s += 3 + (s[3] == '.');
		if (isdigit((unsigned char)*s))
			v->rc = strtol(s, NULL, 10);
	}
	return 0;
}

int agsbx_version_cmp(const struct agsbx_version *a, const struct agsbx_version *b)
{
	for (int i = 0; i < 4; i++)
		if (a->part[i] != b->part[i])
			return a->part[i] < b->part[i] ? -1 : 1;
	if (a->rc == b->rc)
		return 0;
	if (a->rc < 0 || b->rc < 0) /* the release sorts after its candidates */
		return a->rc < 0 ? 1 : -1;
	return a->rc < b->rc ? -1 : 1;
}

static bool same_branch(const struct agsbx_version *a, const struct agsbx_version *b)
{
	return a->part[0] == b->part[0] && a->part[1] == b->part[1];
}

/* "in_range", or "fixed"/"before" with the fix or introduction that
 * decides it. A branch with a fix of its own is judged by it; a branch
 * without one is in range while it is older than the newest fix (its line
 * ended unfixed, or its fix is not in the table). */
static const char *range_status(const struct agsbx_version *v, const json_t *adv)
{
	struct agsbx_version intro, fix, newest = { { 0 }, -1 };
	const char *in = json_string_value(json_object_get(adv, "introduced"));
	if (in && agsbx_version_parse(in, &intro) == 0 && agsbx_version_cmp(v, &intro) < 0)
		return "before_introduced";
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(adv, "fixed"), i, f) {
		if (agsbx_version_parse(json_string_value(f), &fix) < 0)
			continue;
		if (same_branch(v, &fix))
			return agsbx_version_cmp(v, &fix) >= 0 ? "fixed" : "in_range";
		if (agsbx_version_cmp(&fix, &newest) > 0)
			newest = fix;
	}
	return agsbx_version_cmp(v, &newest) >= 0 ? "fixed" : "in_range";
}

/* The kernel's upstream version and where it was read. */
static char *kernel_version(const json_t *host, const char **from)
{
	const char *ver = json_string_value(agsbx_probe_value(host, "kernel", "version"));
	const char *deb = ver ? strstr(ver, "Debian ") : NULL;
	if (deb && isdigit((unsigned char)deb[7])) {
		*from = "kernel.version (the Debian package version in uname -v)";
		return strndup(deb + 7, strcspn(deb + 7, " -+~"));
	}
	const char *rel = json_string_value(agsbx_probe_value(host, "kernel", "release"));
	*from = "kernel.release";
	return rel ? strdup(rel) : NULL;
}

static char *component_version(const json_t *host, const char *component, const char **from)
{
	if (strcmp(component, "kernel") == 0)
		return kernel_version(host, from);
	char name[64];
	snprintf(name, sizeof name, "%s_version", component);
	const char *v = json_string_value(agsbx_probe_value(host, "runtimes", name));
	*from = "runtimes";
	return v ? strdup(v) : NULL;
}

static json_t *range_finding(const json_t *host, const json_t *adv)
{
	const char *component = json_string_value(json_object_get(adv, "component"));
	const char *from = NULL;
	_cleanup_free_ char *observed = component ? component_version(host, component, &from) : NULL;
	struct agsbx_version v;
	const char *status = !observed				    ? "not_observed"
			     : agsbx_version_parse(observed, &v) < 0 ? "unparsed"
								     : range_status(&v, adv);
	json_t *o = json_pack("{s:O?, s:O?, s:s?, s:s, s:O?, s:O?, s:O?, s:O?}", "id", json_object_get(adv, "id"),
			      "name", json_object_get(adv, "name"), "component", component, "status", status,
			      "introduced", json_object_get(adv, "introduced"), "fixed", json_object_get(adv, "fixed"),
			      "why", json_object_get(adv, "why"), "sources", json_object_get(adv, "sources"));
	if (o && observed) {
		json_object_set_new(o, "observed", json_string(observed));
		json_object_set_new(o, "observed_from", json_string(from));
	}
	return o;
}

static bool knob_exposed(long long v, const char *when, long long limit)
{
	return (strcmp(when, "eq") == 0 && v == limit) || (strcmp(when, "lt") == 0 && v < limit) ||
	       (strcmp(when, "gt") == 0 && v > limit);
}

static json_t *knob_finding(const json_t *host, const json_t *rule)
{
	const char *fact = json_string_value(json_object_get(rule, "fact"));
	const char *family = json_string_value(json_object_get(rule, "family"));
	const char *when = json_string_value(json_object_get(rule, "weak_when"));
	if (!fact || !when)
		return NULL;
	const json_t *v = agsbx_probe_value(host, family ? family : "hardening", fact);
	const char *status = !json_is_integer(v) ? "not_observed"
			     : knob_exposed(json_integer_value(v), when, json_integer_value(json_object_get(rule, "value")))
				     ? "exposed"
				     : "restricted";
	return json_pack("{s:s, s:s, s:s, s:O?, s:O?}", "fact", fact, "family", family ? family : "hardening",
			 "status", status, "value", v, "why", json_object_get(rule, "why"));
}

/* fn over every row of the table's member key, into a fact. */
static json_t *findings(const json_t *host, const json_t *table, const char *key,
			json_t *(*fn)(const json_t *host, const json_t *row))
{
	json_t *list = json_array();
	size_t i;
	const json_t *row;
	json_array_foreach(json_object_get(table, key), i, row) {
		json_t *f = fn(host, row);
		if (f)
			json_array_append_new(list, f);
	}
	json_t *fact = agsbx_fact_value(list, ADVISORY_SOURCE);
	const char *note = json_string_value(json_object_get(table, "note"));
	if (fact && note && strcmp(key, "advisories") == 0)
		json_object_set_new(fact, "detail", json_string(note));
	return fact;
}

json_t *agsbx_probe_advisories(const json_t *host)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	json_error_t e;
	_cleanup_json_ json_t *table = json_loadb(agsbx_advisories_json, agsbx_advisories_json_len, 0, &e);
	if (!table) {
		agsbx_fact_put(f, "upstream_ranges", agsbx_fact_absent("table_unreadable", ADVISORY_SOURCE));
		agsbx_fact_put(f, "hardening", agsbx_fact_absent("table_unreadable", ADVISORY_SOURCE));
		return f;
	}
	json_t *table_date = json_object_get(table, "updated");
	agsbx_fact_put(f, "table_updated", agsbx_fact_value(json_incref(table_date), ADVISORY_SOURCE));
	agsbx_fact_put(f, "upstream_ranges", findings(host, table, "advisories", range_finding));
	agsbx_fact_put(f, "hardening", findings(host, table, "sysctls", knob_finding));
	return f;
}
