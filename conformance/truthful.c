/* capabilities.truthful: the judge-phase check that compares what a
 * provider claims with what the checks of each axis (providers/provider.h
 * agsbx_axes) observed. It walks the catalogue by axis, so a new check on
 * an existing axis counts without an edit here. */
#include "conformance/internal.h"

#include <stdio.h>
#include <string.h>

#include "base/cleanup.h"

/* What the checks of an axis showed: enforced, not enforced (a check ran
 * and saw it fail), or inconclusive (a backing check was skipped: its
 * control failed or the host could not run it, which says nothing about
 * the mechanism). */
enum axis_state { AXIS_NOT_OBSERVED, AXIS_OBSERVED, AXIS_INCONCLUSIVE };

static bool refuted(const struct check_result *r)
{
	return r->verdict != AGSBX_CHECK_SKIP && !r->observed_pass;
}

/* Any refuting check that saw the attack succeed, or any backing check
 * that failed or was blocked, decides; then a skipped backing check
 * leaves it inconclusive. An axis with no backing check is not observed. */
static enum axis_state axis_state(const struct check_result *res, size_t n, enum agsbx_axis axis)
{
	bool any = false, skipped = false;
	for (size_t i = 0; i < n; i++) {
		const struct check_result *r = &res[i];
		if (r->def->axis != axis)
			continue;
		if (r->def->evidence == CHECK_REFUTES) {
			if (refuted(r))
				return AXIS_NOT_OBSERVED;
			continue;
		}
		if (r->verdict == AGSBX_CHECK_BLOCKED)
			return AXIS_NOT_OBSERVED;
		if (r->verdict == AGSBX_CHECK_SKIP) {
			skipped = true;
			continue;
		}
		any = true;
		if (!r->observed_pass)
			return AXIS_NOT_OBSERVED;
	}
	return skipped ? AXIS_INCONCLUSIVE : any ? AXIS_OBSERVED : AXIS_NOT_OBSERVED;
}

/* The network level observed: the highest rank whose network axes (and
 * every lower one's) were all observed. */
static int observed_net_rank(const struct check_result *res, size_t n)
{
	int rank = 0;
	for (int r = 1;; r++) {
		bool found = false;
		for (int a = 0; a < AGSBX_AXIS_COUNT; a++) {
			if (agsbx_axes[a].kind != AGSBX_AXIS_KIND_NETWORK || agsbx_axes[a].net_rank != r)
				continue;
			found = true;
			if (axis_state(res, n, a) != AXIS_OBSERVED)
				return rank;
		}
		if (!found)
			return rank;
		rank = r;
	}
}

json_t *cf_observed(const struct check_result *res, size_t n)
{
	json_t *o = json_pack("{s:s}", "network", agsbx_net_of_rank(observed_net_rank(res, n)));
	for (int a = 0; o && a < AGSBX_AXIS_COUNT; a++)
		if (agsbx_axes[a].kind == AGSBX_AXIS_KIND_FLAG)
			json_object_set_new(o, agsbx_axes[a].name, json_boolean(axis_state(res, n, a) == AXIS_OBSERVED));
	return o;
}

/* Claimed network axes: one refuted decides (not inconclusive), else any
 * inconclusive one makes the claim inconclusive. */
static bool network_inconclusive(const struct check_result *res, size_t n, const struct agsbx_caps *claims)
{
	bool inconclusive = false;
	for (int a = 0; a < AGSBX_AXIS_COUNT; a++) {
		if (agsbx_axes[a].kind != AGSBX_AXIS_KIND_NETWORK || !agsbx_axis_claimed(a, claims))
			continue;
		enum axis_state st = axis_state(res, n, a);
		if (st == AXIS_NOT_OBSERVED)
			return false;
		inconclusive |= st == AXIS_INCONCLUSIVE;
	}
	return inconclusive;
}

struct verdict_lists {
	json_t *over, *under, *inconclusive;
};

/* Claimed axes whose evidence was inconclusive are neither backed nor
 * refuted, so no overclaim either way (they are listed instead). */
static void compare_flags(const struct check_result *res, size_t n, const struct agsbx_caps *claims,
			  const json_t *observed, struct verdict_lists *l)
{
	for (int a = 0; a < AGSBX_AXIS_COUNT; a++) {
		if (agsbx_axes[a].kind != AGSBX_AXIS_KIND_FLAG)
			continue;
		const char *name = agsbx_axes[a].name;
		bool c = agsbx_axis_claimed(a, claims);
		bool ob = json_is_true(json_object_get(observed, name));
		bool inc = c && axis_state(res, n, a) == AXIS_INCONCLUSIVE;
		if (inc)
			json_array_append_new(l->inconclusive, json_string(name));
		if (c && !ob && !inc)
			json_array_append_new(l->over, json_string(name));
		if (!c && ob)
			json_array_append_new(l->under, json_string(name));
	}
}

static void compare_network(const struct check_result *res, size_t n, const struct agsbx_caps *claims,
			    const json_t *observed, struct verdict_lists *l)
{
	int cn = agsbx_net_rank(claims->network);
	int on = agsbx_net_rank(json_string_value(json_object_get(observed, "network")));
	bool inc = network_inconclusive(res, n, claims);
	if (inc)
		json_array_append_new(l->inconclusive, json_string("network"));
	if (cn > on && !inc)
		json_array_append_new(l->over, json_string("network"));
	if (on > cn)
		json_array_append_new(l->under, json_string("network"));
}

static void truthful_reason(struct check_out *out, bool pass, const struct verdict_lists *l)
{
	_cleanup_free_ char *o = json_dumps(l->over, JSON_COMPACT);
	_cleanup_free_ char *u = json_dumps(l->under, JSON_COMPACT);
	_cleanup_free_ char *ic = json_dumps(l->inconclusive, JSON_COMPACT);
	char inc[300] = "";
	if (json_array_size(l->inconclusive))
		snprintf(inc, sizeof inc, "; inconclusive on this host %s", ic);
	/* An inconclusive axis is not backed either: the pass says so, not
	 * "every claimed axis is backed". */
	if (pass && json_array_size(l->inconclusive))
		cf_reason(out, "no claimed axis is refuted; backed by passing checks except %s (inconclusive on this host); "
			  "underclaim %s", ic, u);
	else if (pass)
		cf_reason(out, "every claimed axis is backed by passing checks; underclaim %s%s", u, inc);
	else
		cf_reason(out, "OVERCLAIM %s: claimed but not observed; underclaim %s%s", o, u, inc);
}

void judge_capabilities_truthful(const struct check_env *env, struct check_out *out)
{
	const struct agsbx_caps *claims = &env->probe->caps;
	_cleanup_json_ json_t *observed = cf_observed(env->results, env->nresults);
	struct verdict_lists l = { json_array(), json_array(), json_array() };
	compare_flags(env->results, env->nresults, claims, observed, &l);
	compare_network(env->results, env->nresults, claims, observed, &l);
	out->observed_pass = json_array_size(l.over) == 0;
	truthful_reason(out, out->observed_pass, &l);
	json_object_set_new(out->facts, "overclaim", l.over);
	json_object_set_new(out->facts, "underclaim", l.under);
	json_object_set_new(out->facts, "inconclusive", l.inconclusive);
}
