/* diff: what changed between two bundles — host facts, provider and check
 * verdicts (regressions first), capability claims, mechanism versions.
 * Providers and checks are matched by id. */
#include "evidence/bundle.h"
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/cleanup.h"

#include <errno.h>
#include <string.h>

static json_t *or_null(const json_t *v)
{
	return v ? json_deep_copy(v) : json_null();
}

static bool same(const json_t *a, const json_t *b)
{
	if (!a || !b)
		return a == b;
	return json_equal(a, b);
}

/* How much a change matters: losing evidence is a regression; a host
 * that stopped letting a mechanism run is a host change (reported apart,
 * fatal only with --fail-on host-change); anything else is a change. */
enum change_class { CHANGE, HOST_CHANGE, REGRESSION };

/* Where each class goes in one section's array: regressions first, then
 * host changes, then the rest, each group in bundle order. */
struct order {
	size_t reg, host;
};

static void add_change(json_t *arr, json_t *entry, enum change_class c, struct order *ord)
{
	if (!entry)
		return;
	json_object_set_new(entry, "regression", json_boolean(c == REGRESSION));
	json_object_set_new(entry, "host_change", json_boolean(c == HOST_CHANGE));
	if (c == REGRESSION)
		json_array_insert_new(arr, ord->reg++, entry);
	else if (c == HOST_CHANGE)
		json_array_insert_new(arr, ord->reg + ord->host++, entry);
	else
		json_array_append_new(arr, entry);
}

/* id -> element (borrowed, first wins), so matching stays linear on big
 * bundles. */
static json_t *index_by_id(const json_t *arr)
{
	json_t *idx = json_object();
	for (size_t i = 0; idx && i < json_array_size(arr); i++) {
		json_t *e = json_array_get(arr, i);
		const char *id = ev_jstr(e, "id");
		if (id && !json_object_get(idx, id))
			json_object_set(idx, id, e);
	}
	return idx;
}

/* Every id of a (in order), then those only in b. A hash set keeps this
 * linear on big bundles. */
static json_t *union_ids(const json_t *a, const json_t *b)
{
	json_t *ids = json_array();
	_cleanup_json_ json_t *seen = json_object();
	const json_t *both[2] = { a, b };
	for (size_t k = 0; k < 2 && ids && seen; k++) {
		for (size_t i = 0; i < json_array_size(both[k]); i++) {
			const char *id = ev_jstr(json_array_get(both[k], i), "id");
			if (!id || json_object_get(seen, id))
				continue;
			json_object_set_new(seen, id, json_true());
			json_array_append_new(ids, json_string(id));
		}
	}
	return ids;
}

static json_t *union_keys(const json_t *a, const json_t *b)
{
	json_t *keys = json_object();
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)a, k, v) json_object_set_new(keys, k, json_true());
	json_object_foreach((json_t *)b, k, v) json_object_set_new(keys, k, json_true());
	return keys;
}

/* {"value": ...} or {"absent": true, ...}: an absent fact compares as
 * missing. Anything else compares as itself. */
static const json_t *fact_value(const json_t *fact)
{
	return json_is_object(fact) ? json_object_get(fact, "value") : fact;
}

static json_t *change(const char *k1, const char *v1, const char *k2, const char *v2, const json_t *o,
		      const json_t *n)
{
	json_t *e = json_object();
	if (!e)
		return NULL;
	json_object_set_new(e, k1, v1 ? json_string(v1) : json_null());
	if (k2)
		json_object_set_new(e, k2, v2 ? json_string(v2) : json_null());
	json_object_set_new(e, "old", or_null(o));
	json_object_set_new(e, "new", or_null(n));
	return e;
}

static json_t *findings_line(const json_t *v)
{
	if (!agsbx_is_findings(v))
		return NULL;
	_cleanup_free_ char *s = agsbx_findings_text(v);
	return s ? json_string(s) : NULL;
}

static void diff_host(json_t *out, const json_t *oh, const json_t *nh)
{
	_cleanup_json_ json_t *families = union_keys(oh, nh);
	const char *fam;
	json_t *unused;
	json_object_foreach(families, fam, unused) {
		const json_t *of = json_object_get(oh, fam), *nf = json_object_get(nh, fam);
		if (!json_is_object(of) && !json_is_object(nf)) {
			if (!same(of, nf))
				json_array_append_new(out, change("family", fam, "fact", NULL, of, nf));
			continue;
		}
		_cleanup_json_ json_t *facts =
			union_keys(json_is_object(of) ? of : NULL, json_is_object(nf) ? nf : NULL);
		const char *name;
		json_object_foreach(facts, name, unused) {
			const json_t *ov = fact_value(json_object_get(of, name));
			const json_t *nv = fact_value(json_object_get(nf, name));
			/* an advisory list compares and reads as its flagged findings */
			_cleanup_json_ json_t *os = findings_line(ov), *ns = findings_line(nv);
			if (!same(os ? os : ov, ns ? ns : nv))
				json_array_append_new(out, change("family", fam, "fact", name, os ? os : ov, ns ? ns : nv));
		}
	}
}

/* The rules both levels share: newly bad is a regression, a record that
 * is gone or lost its evidence too, and a loss the host caused is a host
 * change. */
static enum change_class classify(bool old_bad, bool new_bad, bool gone, bool lost, bool host_lost)
{
	if (new_bad)
		return old_bad ? CHANGE : REGRESSION;
	if (gone || lost)
		return REGRESSION;
	return host_lost ? HOST_CHANGE : CHANGE;
}

/* A check regresses when it newly fails or its evidence is lost: a pass
 * that became skip / not_claimed, or a check that is gone (its provider
 * still there). pass -> blocked is the host's doing. */
static enum change_class check_class(const char *old_v, const char *new_v, bool gone)
{
	enum agsbx_check_verdict o = agsbx_check_verdict_parse(old_v), n = agsbx_check_verdict_parse(new_v);
	bool was_pass = o == AGSBX_CHECK_PASS;
	return classify(o == AGSBX_CHECK_FAIL, n == AGSBX_CHECK_FAIL, gone,
			was_pass && (n == AGSBX_CHECK_SKIP || n == AGSBX_CHECK_NOT_CLAIMED),
			was_pass && n == AGSBX_CHECK_BLOCKED);
}

/* A provider regresses when it is newly defective, is gone, or was
 * conformant and is now skipped; conformant -> blocked is a host change. */
static enum change_class provider_class(const char *old_v, const char *new_v, bool gone)
{
	enum agsbx_provider_verdict o = agsbx_provider_verdict_parse(old_v), n = agsbx_provider_verdict_parse(new_v);
	bool was_ok = o == AGSBX_PROVIDER_CONFORMANT;
	return classify(o == AGSBX_PROVIDER_DEFECTIVE, n == AGSBX_PROVIDER_DEFECTIVE, gone,
			was_ok && n == AGSBX_PROVIDER_SKIPPED, was_ok && n == AGSBX_PROVIDER_BLOCKED);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Probe facts that identify a mechanism's version (landlock: *_abi,
 * errata; bubblewrap: version; runsc: runsc_version ...). */
static bool is_version_fact(const char *name)
{
	return strcmp(name, "version") == 0 || strcmp(name, "abi") == 0 || strcmp(name, "errata") == 0 ||
	       ends_with(name, "_version") || ends_with(name, "_abi");
}

/* The mechanism versions a provider reported with its results
 * (observations[].meta.versions): the first one found. */
static const json_t *exec_versions(const json_t *provider)
{
	const json_t *checks = json_object_get(provider, "checks");
	for (size_t i = 0; i < json_array_size(checks); i++) {
		const json_t *obs = json_object_get(json_array_get(checks, i), "observations");
		for (size_t k = 0; k < json_array_size(obs); k++) {
			const json_t *v = json_object_get(json_object_get(json_array_get(obs, k), "meta"), "versions");
			if (json_is_object(v))
				return v;
		}
	}
	return NULL;
}

/* Members of o and n that differ; prefix (may be "") is put before each
 * member name. */
static void diff_keys(json_t *out, const char *provider, const char *keyname, const char *prefix, const json_t *o,
		      const json_t *n, bool versions_only)
{
	_cleanup_json_ json_t *keys = union_keys(json_is_object(o) ? o : NULL, json_is_object(n) ? n : NULL);
	const char *k;
	json_t *unused;
	json_object_foreach(keys, k, unused) {
		if (versions_only && !is_version_fact(k))
			continue;
		const json_t *ov = json_object_get(o, k), *nv = json_object_get(n, k);
		if (same(ov, nv))
			continue;
		char name[256];
		snprintf(name, sizeof name, "%s%s", prefix, k);
		json_array_append_new(out, change("provider", provider, keyname, name, ov, nv));
	}
}

/* Capability claims of a provider present in both bundles: a claim that
 * was true and is now false or gone is a regression -- unless the provider
 * is now blocked: an unavailable mechanism claims nothing, and that loss is
 * part of the host change its verdict already reports. */
static void diff_claims(json_t *out, const char *pid, const json_t *o, const json_t *n, bool now_blocked,
			struct order *ord)
{
	_cleanup_json_ json_t *keys = union_keys(json_is_object(o) ? o : NULL, json_is_object(n) ? n : NULL);
	const char *k;
	json_t *unused;
	json_object_foreach(keys, k, unused) {
		const json_t *ov = json_object_get(o, k), *nv = json_object_get(n, k);
		if (same(ov, nv))
			continue;
		bool lost = json_is_true(ov) && !json_is_true(nv);
		enum change_class c = !lost ? CHANGE : now_blocked ? HOST_CHANGE : REGRESSION;
		add_change(out, change("provider", pid, "axis", k, ov, nv), c, ord);
	}
}

static void diff_checks(json_t *out, const char *pid, const json_t *op, const json_t *np, struct order *ord)
{
	const json_t *oc = json_object_get(op, "checks"), *nc = json_object_get(np, "checks");
	_cleanup_json_ json_t *ids = union_ids(oc, nc);
	_cleanup_json_ json_t *oi = index_by_id(oc);
	_cleanup_json_ json_t *ni = index_by_id(nc);
	for (size_t i = 0; i < json_array_size(ids); i++) {
		const char *id = json_string_value(json_array_get(ids, i));
		const json_t *ocheck = json_object_get(oi, id), *ncheck = json_object_get(ni, id);
		const json_t *ov = json_object_get(ocheck, "verdict");
		const json_t *nv = json_object_get(ncheck, "verdict");
		if (same(ov, nv) && (ocheck != NULL) == (ncheck != NULL))
			continue;
		/* a vanished provider is one regression, not one per check */
		bool gone = ocheck && !ncheck && np;
		enum change_class c = check_class(json_string_value(ov), json_string_value(nv), gone);
		add_change(out, change("provider", pid, "id", id, ov, nv), c, ord);
	}
}

static size_t count_flag(const json_t *d, const char *flag)
{
	size_t n = 0;
	const char *k;
	json_t *arr;
	json_object_foreach((json_t *)d, k, arr) {
		for (size_t i = 0; i < json_array_size(arr); i++)
			n += json_is_true(json_object_get(json_array_get(arr, i), flag));
	}
	return n;
}

json_t *agsbx_bundle_diff(const json_t *old_bundle, const json_t *new_bundle)
{
	_cleanup_json_ json_t *d = json_pack("{s:[], s:[], s:[], s:[], s:[]}", "host", "providers", "checks",
					     "claims", "versions");
	if (!d)
		return NULL;
	json_t *providers = json_object_get(d, "providers"), *checks = json_object_get(d, "checks");
	diff_host(json_object_get(d, "host"), json_object_get(old_bundle, "host"),
		  json_object_get(new_bundle, "host"));
	const json_t *op_all = json_object_get(old_bundle, "providers");
	const json_t *np_all = json_object_get(new_bundle, "providers");
	_cleanup_json_ json_t *ids = union_ids(op_all, np_all);
	_cleanup_json_ json_t *oi = index_by_id(op_all);
	_cleanup_json_ json_t *ni = index_by_id(np_all);
	struct order pord = { 0 }, cord = { 0 }, aord = { 0 };
	for (size_t i = 0; i < json_array_size(ids); i++) {
		const char *id = json_string_value(json_array_get(ids, i));
		const json_t *op = json_object_get(oi, id), *np = json_object_get(ni, id);
		const json_t *ov = json_object_get(op, "verdict"), *nv = json_object_get(np, "verdict");
		if (!same(ov, nv) || !op || !np) {
			enum change_class c = provider_class(json_string_value(ov), json_string_value(nv), op && !np);
			add_change(providers, change("id", id, NULL, NULL, ov, nv), c, &pord);
		}
		diff_checks(checks, id, op, np, &cord);
		if (op && np)
			diff_claims(json_object_get(d, "claims"), id, json_object_get(op, "claims"),
				    json_object_get(np, "claims"), agsbx_provider_verdict_of(np) == AGSBX_PROVIDER_BLOCKED,
				    &aord);
		else
			diff_keys(json_object_get(d, "claims"), id, "axis", "", json_object_get(op, "claims"),
				  json_object_get(np, "claims"), false);
		diff_keys(json_object_get(d, "versions"), id, "fact", "",
			  json_object_get(json_object_get(op, "probe"), "facts"),
			  json_object_get(json_object_get(np, "probe"), "facts"), true);
		diff_keys(json_object_get(d, "versions"), id, "fact", "versions.", exec_versions(op), exec_versions(np),
			  false);
	}
	const json_t *ot = json_object_get(json_object_get(old_bundle, "tool"), "version");
	const json_t *nt = json_object_get(json_object_get(new_bundle, "tool"), "version");
	if (!same(ot, nt))
		json_array_append_new(json_object_get(d, "versions"),
				      change("provider", NULL, "fact", "tool.version", ot, nt));
	size_t changes = 0;
	const char *k;
	json_t *v;
	json_object_foreach(d, k, v) changes += json_array_size(v);
	size_t reg = count_flag(d, "regression"), host = count_flag(d, "host_change");
	json_object_set_new(d, "regressions", json_integer((json_int_t)reg));
	json_object_set_new(d, "host_changes", json_integer((json_int_t)host));
	json_object_set_new(d, "changes", json_integer((json_int_t)changes));
	return TAKE_PTR(d);
}

/* ---- rendering ---------------------------------------------------------- */

/* What a maintainer reads first: regressions and lost evidence, in one
 * table whatever their kind; then host changes, one row per provider (a
 * provider the host stopped takes every check and claim it lost with it,
 * so 31 near-identical "pass -> blocked" rows become one); then the other
 * changes, the host facts one row per family, the mechanism versions. */
enum section { SEC_PROVIDERS, SEC_CHECKS, SEC_HOST, SEC_CLAIMS, SEC_VERSIONS, SEC_COUNT };
static const char *const sections[SEC_COUNT] = { "providers", "checks", "host", "claims", "versions" };

enum place { PLACE_REGRESSION, PLACE_HOST, PLACE_OTHER };

struct view {
	struct sbuf *b;
	const json_t *d;
	bool md;
	enum esc_mode m;
};

static const char *arrow(const struct view *v)
{
	return v->md ? " \xE2\x86\x92 " : " -> ";
}

static const char *or_q(const char *s)
{
	return s ? s : "?";
}

static const char *provider_of(enum section s, const json_t *e)
{
	return ev_jstr(e, s == SEC_PROVIDERS ? "id" : "provider");
}

/* The provider's own verdict change is a host change (now blocked). */
static bool host_stopped(const json_t *d, const char *pid)
{
	const json_t *arr = json_object_get(d, "providers");
	for (size_t i = 0; pid && i < json_array_size(arr); i++) {
		const json_t *e = json_array_get(arr, i);
		if (json_is_true(json_object_get(e, "host_change")) && ev_jstr(e, "id") && strcmp(ev_jstr(e, "id"), pid) == 0)
			return true;
	}
	return false;
}

static enum place place_of(const json_t *d, enum section s, const json_t *e)
{
	if (json_is_true(json_object_get(e, "regression")))
		return PLACE_REGRESSION;
	if (s == SEC_HOST || s == SEC_VERSIONS)
		return PLACE_OTHER;
	if (json_is_true(json_object_get(e, "host_change")) || host_stopped(d, provider_of(s, e)))
		return PLACE_HOST;
	return PLACE_OTHER;
}

/* null: the record is missing on that side. */
static void put_value(const struct view *v, enum section s, const json_t *val)
{
	if (json_is_string(val))
		ev_put_esc(v->b, json_string_value(val), v->m, 120);
	else if (json_is_null(val) || !val)
		sbuf_puts(v->b, s == SEC_PROVIDERS || s == SEC_CHECKS ? (v->md ? "*not in this bundle*" : "(not in this bundle)")
								       : "(none)");
	else
		ev_put_json_esc(v->b, val, v->m, 120);
}

static void put_name(const struct view *v, const char *s, size_t max)
{
	if (v->md)
		ev_put_code(v->b, s, max);
	else
		ev_put_esc(v->b, s, ESC_TEXT, max);
}

/* "landlock/fs.host_read_denied", "provider seatbelt", "claim landlock.network". */
static void put_subject(const struct view *v, enum section s, const json_t *e)
{
	struct sbuf name = { 0 };
	const char *kind = s == SEC_PROVIDERS ? "provider " : s == SEC_CLAIMS ? "claim " : "";
	if (s == SEC_PROVIDERS)
		sbuf_puts(&name, or_q(ev_jstr(e, "id")));
	else if (s == SEC_CHECKS)
		sbuf_printf(&name, "%s/%s", or_q(provider_of(s, e)), or_q(ev_jstr(e, "id")));
	else if (ev_jstr(e, "provider"))
		sbuf_printf(&name, "%s.%s", ev_jstr(e, "provider"), or_q(ev_jstr(e, s == SEC_CLAIMS ? "axis" : "fact")));
	else
		sbuf_puts(&name, or_q(ev_jstr(e, "fact")));
	sbuf_puts(v->b, kind);
	put_name(v, name.oom || !name.p ? "?" : name.p, 200);
	v->b->oom |= name.oom;
	sbuf_clear(&name);
}

static void put_change_row(const struct view *v, enum section s, const json_t *e, const char *text_tag)
{
	sbuf_puts(v->b, v->md ? "| " : text_tag);
	put_subject(v, s, e);
	sbuf_puts(v->b, v->md ? " | " : ": ");
	put_value(v, s, json_object_get(e, "old"));
	sbuf_puts(v->b, v->md ? " | " : " -> ");
	put_value(v, s, json_object_get(e, "new"));
	sbuf_puts(v->b, v->md ? " |\n" : "\n");
}

/* One table of every entry of the given sections placed at place. */
static void put_changes(const struct view *v, enum place place, const char *title, const char *text_tag)
{
	static const enum section order[] = { SEC_PROVIDERS, SEC_CHECKS, SEC_CLAIMS };
	bool header = false;
	for (size_t k = 0; k < AGSBX_ARRAY_SIZE(order); k++) {
		const json_t *arr = json_object_get(v->d, sections[order[k]]);
		for (size_t i = 0; i < json_array_size(arr); i++) {
			const json_t *e = json_array_get(arr, i);
			if (place_of(v->d, order[k], e) != place)
				continue;
			if (!header)
				sbuf_printf(v->b, v->md ? "\n#### %s\n\n| What | Old | New |\n|---|---|---|\n" : "\n%s:\n", title);
			header = true;
			put_change_row(v, order[k], e, text_tag);
		}
	}
}

/* ---- host changes, one row per provider ---- */

/* The entries of one provider's host change that share a transition
 * (kind, old, new): {section, old, new, ids: [check id or axis]}. */
static void group_add(json_t *groups, enum section s, const json_t *e)
{
	const json_t *o = json_object_get(e, "old"), *n = json_object_get(e, "new");
	char *os = json_dumps(o ? o : json_null(), JSON_ENCODE_ANY | JSON_COMPACT);
	char *ns = json_dumps(n ? n : json_null(), JSON_ENCODE_ANY | JSON_COMPACT);
	_cleanup_free_ char *key = NULL;
	int r = asprintf(&key, "%d %s %s", (int)s, os ? os : "?", ns ? ns : "?");
	free(os);
	free(ns);
	if (r < 0)
		return;
	json_t *g = json_object_get(groups, key);
	if (!g) {
		g = json_pack("{s:i, s:O?, s:O?, s:[]}", "section", (json_int_t)s, "old", o, "new", n, "ids");
		if (!g || json_object_set_new(groups, key, g) < 0)
			return;
	}
	const char *id = ev_jstr(e, s == SEC_CHECKS ? "id" : "axis");
	json_array_append_new(json_object_get(g, "ids"), json_string(or_q(id)));
}

/* "27 checks: pass -> blocked" or, for a few, "checks a, b: pass -> blocked". */
static void put_group(const struct view *v, const json_t *g)
{
	enum section s = (enum section)json_integer_value(json_object_get(g, "section"));
	const json_t *ids = json_object_get(g, "ids");
	size_t n = json_array_size(ids);
	const char *noun = s == SEC_CHECKS ? (n == 1 ? "check" : "checks") : (n == 1 ? "claim" : "claims");
	if (n > 3)
		sbuf_printf(v->b, "%zu %s", n, noun);
	else
		sbuf_puts(v->b, noun);
	for (size_t i = 0; n <= 3 && i < n; i++) {
		sbuf_puts(v->b, i ? ", " : " ");
		put_name(v, json_string_value(json_array_get(ids, i)), 128);
	}
	sbuf_puts(v->b, ": ");
	put_value(v, s, json_object_get(g, "old"));
	sbuf_puts(v->b, arrow(v));
	put_value(v, s, json_object_get(g, "new"));
}

static void put_host_row(const struct view *v, const char *pid)
{
	_cleanup_json_ json_t *groups = json_object();
	const json_t *verdict = NULL;
	for (enum section s = SEC_PROVIDERS; groups && s <= SEC_CLAIMS; s++) {
		const json_t *arr = json_object_get(v->d, sections[s]);
		for (size_t i = 0; s != SEC_HOST && i < json_array_size(arr); i++) {
			const json_t *e = json_array_get(arr, i);
			const char *p = provider_of(s, e);
			if (!p || strcmp(p, pid) != 0 || place_of(v->d, s, e) != PLACE_HOST)
				continue;
			if (s == SEC_PROVIDERS)
				verdict = e;
			else
				group_add(groups, s, e);
		}
	}
	sbuf_puts(v->b, v->md ? "| " : "  HOST-CHANGE ");
	put_name(v, pid, 64);
	sbuf_puts(v->b, v->md ? " | " : ": ");
	if (verdict) {
		put_value(v, SEC_PROVIDERS, json_object_get(verdict, "old"));
		sbuf_puts(v->b, arrow(v));
		put_value(v, SEC_PROVIDERS, json_object_get(verdict, "new"));
	} else if (v->md)
		sbuf_puts(v->b, "unchanged");
	sbuf_puts(v->b, v->md ? " | " : verdict && json_object_size(groups) ? "; " : "");
	const char *k;
	json_t *g;
	bool first = true;
	json_object_foreach(groups, k, g) {
		sbuf_puts(v->b, first ? "" : "; ");
		put_group(v, g);
		first = false;
	}
	sbuf_puts(v->b, v->md ? " |\n" : "\n");
}

static void put_host_changes(const struct view *v)
{
	_cleanup_json_ json_t *seen = json_object();
	for (enum section s = SEC_PROVIDERS; seen && s <= SEC_CLAIMS; s++) {
		const json_t *arr = json_object_get(v->d, sections[s]);
		for (size_t i = 0; s != SEC_HOST && i < json_array_size(arr); i++) {
			const json_t *e = json_array_get(arr, i);
			const char *p = provider_of(s, e);
			if (!p || place_of(v->d, s, e) != PLACE_HOST || json_object_get(seen, p))
				continue;
			if (json_object_size(seen) == 0)
				sbuf_puts(v->b, v->md ? "\n#### Host changes (the host stopped a mechanism)\n\n"
						      "| Provider | Verdict | Checks and claims |\n|---|---|---|\n"
						    : "\nhost changes (the host stopped a mechanism):\n");
			json_object_set_new(seen, p, json_true());
			put_host_row(v, p);
		}
	}
}

/* ---- host facts, one row per family; mechanism versions ---- */

static void put_family_row(const struct view *v, const json_t *arr, const char *fam)
{
	sbuf_puts(v->b, v->md ? "| " : "  ");
	put_name(v, fam, 64);
	sbuf_puts(v->b, v->md ? " | " : ": ");
	bool first = true;
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *e = json_array_get(arr, i);
		if (!ev_jstr(e, "family") || strcmp(ev_jstr(e, "family"), fam) != 0)
			continue;
		sbuf_puts(v->b, first ? "" : v->md ? " \xC2\xB7 " : "; ");
		first = false;
		if (ev_jstr(e, "fact")) {
			put_name(v, ev_jstr(e, "fact"), 64);
			sbuf_puts(v->b, v->md ? ": " : " ");
		}
		put_value(v, SEC_HOST, json_object_get(e, "old"));
		sbuf_puts(v->b, arrow(v));
		put_value(v, SEC_HOST, json_object_get(e, "new"));
	}
	sbuf_puts(v->b, v->md ? " |\n" : "\n");
}

static void put_host_facts(const struct view *v)
{
	const json_t *arr = json_object_get(v->d, "host");
	_cleanup_json_ json_t *seen = json_object();
	for (size_t i = 0; seen && i < json_array_size(arr); i++) {
		const char *fam = ev_jstr(json_array_get(arr, i), "family");
		if (!fam || json_object_get(seen, fam))
			continue;
		if (json_object_size(seen) == 0)
			sbuf_puts(v->b, v->md ? "\n#### Host facts\n\n| Family | Changed |\n|---|---|\n" : "\nhost facts:\n");
		json_object_set_new(seen, fam, json_true());
		put_family_row(v, arr, fam);
	}
}

static void put_versions(const struct view *v)
{
	const json_t *arr = json_object_get(v->d, "versions");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		if (i == 0)
			sbuf_puts(v->b, v->md ? "\n#### Mechanism versions\n\n| What | Old | New |\n|---|---|---|\n"
					      : "\nmechanism versions:\n");
		put_change_row(v, SEC_VERSIONS, json_array_get(arr, i), "  ");
	}
}

static void render_diff_text(struct sbuf *b, const json_t *d, bool md)
{
	const struct view v = { .b = b, .d = d, .md = md, .m = md ? ESC_MD : ESC_TEXT };
	json_int_t changes = json_integer_value(json_object_get(d, "changes"));
	json_int_t reg = json_integer_value(json_object_get(d, "regressions"));
	if (changes == 0) {
		sbuf_puts(b, md ? "**agsbx-evidence diff:** no differences\n" : "no differences\n");
		return;
	}
	json_int_t host = json_integer_value(json_object_get(d, "host_changes"));
	sbuf_printf(b, "%s%" JSON_INTEGER_FORMAT " change%s, %" JSON_INTEGER_FORMAT " regression%s",
		    md ? "### agsbx-evidence diff: " : "", changes, changes == 1 ? "" : "s", reg, reg == 1 ? "" : "s");
	if (host)
		sbuf_printf(b, ", %" JSON_INTEGER_FORMAT " host change%s", host, host == 1 ? "" : "s");
	sbuf_putc(b, '\n');
	put_changes(&v, PLACE_REGRESSION, md ? "\xE2\x9D\x8C Regressions and lost evidence" : "regressions and lost evidence",
		    "  REGRESSION ");
	put_host_changes(&v);
	put_changes(&v, PLACE_OTHER, md ? "Other changes" : "other changes", "  ");
	put_host_facts(&v);
	put_versions(&v);
}

static void render_diff_plain(struct sbuf *b, const json_t *d) { render_diff_text(b, d, false); }
static void render_diff_markdown(struct sbuf *b, const json_t *d) { render_diff_text(b, d, true); }

int agsbx_diff_render(const json_t *diff, const char *format, FILE *out)
{
	static const struct ev_format formats[] = {
		{ "text", render_diff_plain }, { "markdown", render_diff_markdown }, { "json", NULL }, { NULL, NULL },
	};
	return ev_render_as(diff, format, formats, out);
}
