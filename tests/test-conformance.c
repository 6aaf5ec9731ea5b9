/* The conformance verdict logic: capabilities.truthful's judge rules on
 * the catalogue's own rows (each rule made to fail once), the axis table's
 * consistency with the catalogue, and whole provider runs in-process
 * against the NEGATIVE-CONTROL providers (tests/negative/, deliberate
 * liars) and real ones, asserting check and provider verdicts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/runner.h"
#include "base/util.h"
#include "conformance/checks/attack.h"
#include "conformance/internal.h"
#include "evidence/bundle.h"
#include "evidence/evidence.h"
#include "tests/lib/provider-run.h"
#include "tests/lib/testlib.h"
#include "tests/negative/negative.h"

static char *tool_dir, *payload, *work;

/* ---- the judge on synthetic results ------------------------------------- */

/* Every row with a verdict; observed_pass follows pass. */
struct judged {
	struct check_result res[128];
	size_t n;
	struct agsbx_probe probe;
	struct check_out out;
};

static void results_all(struct judged *j, enum agsbx_check_verdict v)
{
	ck_assert_uint_le(cf_checks_count, AGSBX_ARRAY_SIZE(j->res));
	j->n = cf_checks_count;
	for (size_t i = 0; i < j->n; i++)
		j->res[i] = (struct check_result){ &cf_checks[i], v, v == AGSBX_CHECK_PASS };
}

static void set(struct judged *j, const char *id, enum agsbx_check_verdict v, bool observed_pass)
{
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->res[i].def->id, id) == 0) {
			j->res[i].verdict = v;
			j->res[i].observed_pass = observed_pass;
			return;
		}
	ck_abort_msg("no check %s in the catalogue", id);
}

static void judge(struct judged *j, const struct agsbx_caps *claims)
{
	j->probe.caps = *claims;
	j->out = (struct check_out){ .observations = json_array(), .facts = json_object() };
	struct check_env env = { .probe = &j->probe, .results = j->res, .nresults = j->n };
	judge_capabilities_truthful(&env, &j->out);
}

static bool listed(const struct judged *j, const char *list, const char *axis)
{
	const json_t *a = json_object_get(j->out.facts, list);
	ck_assert_msg(json_is_array(a), "facts.%s missing", list);
	for (size_t i = 0; i < json_array_size(a); i++)
		if (strcmp(json_string_value(json_array_get(a, i)), axis) == 0)
			return true;
	return false;
}

static void judged_free(struct judged *j)
{
	json_decref(j->out.observations);
	json_decref(j->out.facts);
}

static const struct agsbx_caps fs_only = { .host_filesystem_restricted = true, .network = AGSBX_NET_INHERITED };

/* The paired control of the rules below: claims exactly what passed. */
START_TEST(test_judge_backed_claim_passes)
{
	struct judged j;
	results_all(&j, AGSBX_CHECK_PASS);
	const struct agsbx_caps all = { true, true, true, true, AGSBX_NET_ISOLATED, true, NULL, NULL, true };
	judge(&j, &all);
	ck_assert_msg(j.out.observed_pass, "%s", j.out.reason);
	ck_assert_uint_eq(json_array_size(json_object_get(j.out.facts, "overclaim")), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(j.out.facts, "underclaim")), 0);
	judged_free(&j);
}
END_TEST

/* Rule: a backing check that fails refutes its axis. */
START_TEST(test_judge_backing_fail_is_overclaim)
{
	struct judged j;
	results_all(&j, AGSBX_CHECK_PASS);
	set(&j, "fs.remount_denied", AGSBX_CHECK_FAIL, false);
	judge(&j, &fs_only);
	ck_assert(!j.out.observed_pass);
	ck_assert(listed(&j, "overclaim", "host_filesystem_restricted"));
	ck_assert_ptr_nonnull(strstr(j.out.reason, "OVERCLAIM"));
	judged_free(&j);
}
END_TEST

/* Rule: a blocked backing check shows nothing: not observed. */
START_TEST(test_judge_backing_blocked_is_overclaim)
{
	struct judged j;
	results_all(&j, AGSBX_CHECK_PASS);
	set(&j, "fs.host_read_denied", AGSBX_CHECK_BLOCKED, false);
	judge(&j, &fs_only);
	ck_assert(!j.out.observed_pass);
	ck_assert(listed(&j, "overclaim", "host_filesystem_restricted"));
	judged_free(&j);
}
END_TEST

/* Rule: a skipped backing check leaves the axis inconclusive: listed,
 * neither backed nor an overclaim. */
START_TEST(test_judge_backing_skip_is_inconclusive)
{
	struct judged j;
	results_all(&j, AGSBX_CHECK_PASS);
	set(&j, "fs.host_write_denied", AGSBX_CHECK_SKIP, false);
	judge(&j, &fs_only);
	ck_assert_msg(j.out.observed_pass, "%s", j.out.reason);
	ck_assert(listed(&j, "inconclusive", "host_filesystem_restricted"));
	ck_assert(!listed(&j, "overclaim", "host_filesystem_restricted"));
	ck_assert_ptr_nonnull(strstr(j.out.reason, "inconclusive on this host"));
	/* the pass does not call an inconclusive axis backed */
	ck_assert_msg(!strstr(j.out.reason, "every claimed axis is backed"), "%s", j.out.reason);
	ck_assert_ptr_nonnull(strstr(j.out.reason, "except [\"host_filesystem_restricted\"]"));
	judged_free(&j);
}
END_TEST

/* Rule: a refuting check that saw the attack succeed refutes the axis
 * even though every backing check passed. */
START_TEST(test_judge_refuter_fail_is_overclaim)
{
	struct judged j;
	results_all(&j, AGSBX_CHECK_PASS);
	set(&j, "secrets.home_denied", AGSBX_CHECK_FAIL, false);
	judge(&j, &fs_only);
	ck_assert(!j.out.observed_pass);
	ck_assert(listed(&j, "overclaim", "host_filesystem_restricted"));
	judged_free(&j);
}
END_TEST

/* Rule: a skipped refuter (the host could not show the attack) neither
 * refutes nor makes the axis inconclusive. */
START_TEST(test_judge_refuter_skip_does_not_refute)
{
	struct judged j;
	results_all(&j, AGSBX_CHECK_PASS);
	set(&j, "fs.hardlink_alias_denied", AGSBX_CHECK_SKIP, false);
	judge(&j, &fs_only);
	ck_assert_msg(j.out.observed_pass, "%s", j.out.reason);
	ck_assert(!listed(&j, "inconclusive", "host_filesystem_restricted"));
	judged_free(&j);
}
END_TEST

/* Rule: an axis observed but not claimed is an underclaim (no defect). */
START_TEST(test_judge_underclaim)
{
	struct judged j;
	results_all(&j, AGSBX_CHECK_PASS);
	const struct agsbx_caps none = { .network = AGSBX_NET_INHERITED };
	judge(&j, &none);
	ck_assert(j.out.observed_pass);
	ck_assert(listed(&j, "underclaim", "process_contained"));
	ck_assert(listed(&j, "underclaim", "network"));
	ck_assert(!listed(&j, "overclaim", "process_contained"));
	judged_free(&j);
}
END_TEST

/* Rule: network levels. Egress observed without a distinct namespace is
 * tcp_restricted: claiming isolated is an overclaim, tcp_restricted is
 * backed. */
START_TEST(test_judge_network_levels)
{
	struct judged j;
	results_all(&j, AGSBX_CHECK_PASS);
	set(&j, "net.namespace_distinct", AGSBX_CHECK_FAIL, false);
	_cleanup_json_ json_t *obs = cf_observed(j.res, j.n);
	ck_assert_str_eq(json_string_value(json_object_get(obs, "network")), AGSBX_NET_TCP_RESTRICTED);
	const struct agsbx_caps iso = { .network = AGSBX_NET_ISOLATED };
	judge(&j, &iso);
	ck_assert(!j.out.observed_pass);
	ck_assert(listed(&j, "overclaim", "network"));
	judged_free(&j);
	const struct agsbx_caps tcp = { .network = AGSBX_NET_TCP_RESTRICTED };
	judge(&j, &tcp);
	ck_assert_msg(j.out.observed_pass, "%s", j.out.reason);
	judged_free(&j);
	/* a refuter of egress failing drops the level to inherited */
	set(&j, "net.egress_ipv6_denied", AGSBX_CHECK_FAIL, false);
	judge(&j, &tcp);
	ck_assert(!j.out.observed_pass);
	ck_assert(listed(&j, "overclaim", "network"));
	judged_free(&j);
}
END_TEST

/* The catalogue and the axis table agree: sorted unique ids, every axis
 * in range, every claimable axis backed by at least one run-phase check,
 * and "required" is exactly "the provider claims the axis". */
START_TEST(test_catalogue_axes)
{
	for (size_t i = 1; i < cf_checks_count; i++)
		ck_assert_msg(strcmp(cf_checks[i - 1].id, cf_checks[i].id) < 0, "%s is out of order",
			      cf_checks[i].id);
	for (int a = 0; a < AGSBX_AXIS_COUNT; a++) {
		size_t backing = 0;
		for (size_t i = 0; i < cf_checks_count; i++)
			backing += cf_checks[i].axis == (enum agsbx_axis)a && cf_checks[i].evidence == CHECK_BACKS &&
				   cf_checks[i].phase == CHECK_PHASE_RUN;
		ck_assert_msg(backing > 0, "axis %d (%s) has no backing check", a, agsbx_axes[a].name);
	}
	const struct agsbx_caps none = { 0 };
	ck_assert(agsbx_axis_claimed(AGSBX_AXIS_CONTRACT, &none));
	ck_assert(!agsbx_axis_claimed(AGSBX_AXIS_FILESYSTEM, &none));
	ck_assert(agsbx_axis_claimed(AGSBX_AXIS_FILESYSTEM, &fs_only));
	const struct agsbx_caps tcp = { .network = AGSBX_NET_TCP_RESTRICTED };
	ck_assert(agsbx_axis_claimed(AGSBX_AXIS_NET_EGRESS, &tcp));
	ck_assert(!agsbx_axis_claimed(AGSBX_AXIS_NET_NAMESPACE, &tcp));
	ck_assert_uint_eq(agsbx_conformance_check_count(), cf_checks_count);
}
END_TEST

/* The catalogue is every topic's rows, each once (nothing cut), and a
 * topic's ids start with its name (contract.c's are the contract's own
 * prefixes); every row carries its catalogue text and a negative control. */
START_TEST(test_catalogue_assembled)
{
	static const struct { const char *topic, *prefixes; const struct check_def *rows; const size_t *n; } t[] = {
		{ "contract", " bundle capabilities config exec fail output probe ", cf_checks_contract, &cf_checks_contract_count },
		{ "env", " env ", cf_checks_env, &cf_checks_env_count },
		{ "fs", " fs ", cf_checks_fs, &cf_checks_fs_count },
		{ "ipc", " ipc ", cf_checks_ipc, &cf_checks_ipc_count },
		{ "lifecycle", " lifecycle ", cf_checks_lifecycle, &cf_checks_lifecycle_count },
		{ "net", " net ", cf_checks_net, &cf_checks_net_count },
		{ "priv", " priv ", cf_checks_priv, &cf_checks_priv_count },
		{ "proc", " proc ", cf_checks_proc, &cf_checks_proc_count },
		{ "resources", " resources ", cf_checks_resources, &cf_checks_resources_count },
		{ "secrets", " secrets ", cf_checks_secrets, &cf_checks_secrets_count },
		{ "syscalls", " syscalls ", cf_checks_syscalls, &cf_checks_syscalls_count },
	};
	size_t total = 0;
	for (size_t k = 0; k < AGSBX_ARRAY_SIZE(t); k++)
		for (size_t i = 0; i < *t[k].n; i++, total++) {
			const struct check_def *d = &t[k].rows[i];
			char prefix[40];
			snprintf(prefix, sizeof prefix, " %.*s ", (int)strcspn(d->id, "."), d->id);
			ck_assert_msg(strstr(t[k].prefixes, prefix), "%s is in %s.c", d->id, t[k].topic);
			ck_assert_msg(d->run && d->title && d->attacks && d->why && d->control && d->negative[0].test &&
					      d->negative[0].provider, "%s lacks a field", d->id);
			size_t found = 0;
			for (size_t j = 0; j < cf_checks_count; j++)
				found += cf_checks[j].run == d->run && strcmp(cf_checks[j].id, d->id) == 0;
			ck_assert_msg(found == 1, "%s is %zu times in the catalogue", d->id, found);
		}
	ck_assert_uint_eq(total, cf_checks_count);
	/* The printable catalogue: these and the declared providers' own, sorted. */
	json_t *all = agsbx_conformance_catalogue();
	ck_assert_uint_eq(json_array_size(all), cf_checks_count + cf_checks_declared_count);
	for (size_t i = 1; i < json_array_size(all); i++)
		ck_assert(strcmp(json_string_value(json_object_get(json_array_get(all, i - 1), "id")),
				 json_string_value(json_object_get(json_array_get(all, i), "id"))) < 0);
	json_decref(all);
}
END_TEST

/* The verdict vocabulary round-trips; anything else is unknown. */
START_TEST(test_verdict_names)
{
	for (int v = 0; v < AGSBX_CHECK_VERDICT_COUNT; v++)
		ck_assert_int_eq(agsbx_check_verdict_parse(agsbx_check_verdict_name(v)), v);
	for (int v = 0; v < AGSBX_PROVIDER_VERDICT_COUNT; v++)
		ck_assert_int_eq(agsbx_provider_verdict_parse(agsbx_provider_verdict_name(v)), v);
	ck_assert_int_eq(agsbx_check_verdict_parse("passed"), AGSBX_CHECK_VERDICT_UNKNOWN);
	ck_assert_int_eq(agsbx_check_verdict_parse(NULL), AGSBX_CHECK_VERDICT_UNKNOWN);
	ck_assert_int_eq(agsbx_provider_verdict_parse("conformant "), AGSBX_PROVIDER_VERDICT_UNKNOWN);
	ck_assert_str_eq(agsbx_check_verdict_name(AGSBX_CHECK_NOT_CLAIMED), "not_claimed");
}
END_TEST

/* finish: the summary counts the providers' verdicts, lists every failing
 * check as provider/check, and exits 1 only on a defective provider. */
START_TEST(test_bundle_finish)
{
	_cleanup_json_ json_t *b = agsbx_bundle_new();
	ck_assert_ptr_nonnull(b);
	ck_assert_str_eq(json_string_value(json_object_get(b, "schema")), AGSBX_BUNDLE_SCHEMA);
	json_t *ps = json_array();
	json_object_set_new(b, "providers", ps);
	json_array_append_new(ps, agsbx_bundle_provider_unrun("a", AGSBX_PROVIDER_SKIPPED, "r", "not_probed", NULL, 0));
	json_array_append_new(ps, agsbx_bundle_provider(&(struct agsbx_provider_record){
		.id = "b", .ran = true, .reason = "ready", .probe = json_object(), .claims = json_object(),
		.observed = json_object(), .underclaim = json_array(), .failing_checks = json_array(),
		.checks = json_array() }));
	ck_assert_int_eq(agsbx_bundle_finish(b), 0);
	const json_t *sum = json_object_get(b, "summary");
	ck_assert_int_eq(json_integer_value(json_object_get(sum, "conformant")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(sum, "skipped")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(sum, "exit_status")), 0);
	json_array_append_new(ps, agsbx_bundle_provider(&(struct agsbx_provider_record){
		.id = "c", .ran = true, .reason = "ready", .probe = json_object(), .claims = json_object(),
		.observed = json_object(), .underclaim = json_array(), .failing_checks = json_pack("[s]", "x.y"),
		.checks = json_array() }));
	ck_assert_int_eq(agsbx_bundle_finish(b), 1);
	sum = json_object_get(b, "summary");
	ck_assert_int_eq(json_integer_value(json_object_get(sum, "defective")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(sum, "providers")), 3);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(sum, "defects"), 0)), "c/x.y");
	ck_assert_int_eq(json_integer_value(json_object_get(sum, "exit_status")), 1);
	/* a provider that did not run and failed nothing is blocked */
	_cleanup_json_ json_t *blocked = agsbx_bundle_provider(&(struct agsbx_provider_record){
		.id = "d", .ran = false, .reason = "unavailable", .probe = json_object(), .claims = json_object(),
		.observed = json_object(), .underclaim = json_array(), .failing_checks = json_array(),
		.checks = json_array() });
	ck_assert_int_eq(agsbx_provider_verdict_of(blocked), AGSBX_PROVIDER_BLOCKED);
}
END_TEST

/* The setters are the only writers of the top level and of a provider
 * record's late members (tests/cli/bundle-writers.sh): each writes the
 * member collect wrote before they existed, method prose included. */
START_TEST(test_bundle_setters)
{
	_cleanup_json_ json_t *b = agsbx_bundle_new();
	ck_assert(json_is_array(json_object_get(b, "attachments")));
	ck_assert_int_eq(agsbx_bundle_set_challenge(b, "n0nce"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(b, "challenge")), "n0nce");
	struct agsbx_error e = { 0 };
	ck_assert_int_eq(agsbx_bundle_add_attachment(b, "sh -c 'echo 2 passed'", 10000, 64, &e), 0);
	ck_assert_int_eq(json_array_size(json_object_get(b, "attachments")), 1);
	ck_assert_int_eq(agsbx_bundle_add_attachment(b, "/nonexistent/agsbx-cmd", 1000, 64, &e), -EINVAL);
	ck_assert_int_eq(json_array_size(json_object_get(b, "attachments")), 1);
	ck_assert_msg(e.reason && e.message[0], "no reason for a bad attachment");
	ck_assert_int_eq(agsbx_bundle_set_subject(b, "/nonexistent/agsbx-repo", &e), -EINVAL);
	ck_assert_ptr_null(json_object_get(b, "subject"));
	_cleanup_json_ json_t *pj = agsbx_bundle_provider_unrun("p", AGSBX_PROVIDER_SKIPPED, "r", "not_probed", NULL, 0);
	ck_assert_int_eq(agsbx_bundle_add_provider(b, pj), 0);
	ck_assert_ptr_eq(json_array_get(json_object_get(b, "providers"), 0), pj);
	struct agsbx_run_timing per[] = { { .id = "p", .start_us = 3, .end_us = 9 } };
	ck_assert_int_eq(agsbx_bundle_set_run_timings(b, &(struct agsbx_run_timings){
		.providers = per, .n = 1, .providers_us = 10, .max_providers = 1, .checks_per_provider = 4 }), 0);
	const json_t *t = json_object_get(b, "timings");
	const json_t *t0 = json_array_get(json_object_get(t, "providers"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(t0, "end_us")), 9);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(t, "concurrency"), "checks_per_provider")), 4);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(t, "method")), "CLOCK_MONOTONIC"));
	ck_assert_int_eq(agsbx_bundle_provider_set_timings(pj, &(struct agsbx_provider_timings){
		.concurrent_us = 2, .exclusive_us = 5, .total_us = 8, .check_threads = 3 }), 0);
	const json_t *pt = json_object_get(pj, "timings");
	ck_assert_int_eq(json_integer_value(json_object_get(pt, "checks_us")), 7);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(pt, "method")), "on up to 3 threads"));
	_cleanup_json_ json_t *config = json_pack("{s:b}", "network", 1);
	ck_assert_int_eq(agsbx_bundle_provider_set_config(pj, config), 0);
	ck_assert_ptr_eq(json_object_get(pj, "config"), config);
	_cleanup_json_ json_t *declared = json_pack("{s:s}", "kind", "external");
	ck_assert_int_eq(agsbx_bundle_provider_declare(pj, declared, NULL), 0);
	ck_assert_str_eq(json_string_value(json_object_get(pj, "reason")), "r");
	ck_assert_int_eq(agsbx_bundle_provider_declare(pj, declared, "adapter_crashed"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(pj, "kind")), "external");
	ck_assert_str_eq(json_string_value(json_object_get(pj, "reason")), "adapter_crashed");
}
END_TEST

/* ---- whole provider runs -------------------------------------------------- */

static json_t *run_provider(const struct agsbx_provider_ops *ops, const char *simulate)
{
	const struct agsbx_test_run_opts t = { .tool_dir = tool_dir, .payload = payload, .work = work,
						.simulate = simulate, .max_output_bytes = 20000 };
	return agsbx_test_run_provider(ops, &t);
}


static enum agsbx_check_verdict verdict(const json_t *prov, const char *id)
{
	return agsbx_check_verdict_of(agsbx_test_check_of(prov, id));
}

static bool in_array(const json_t *a, const char *s)
{
	for (size_t i = 0; i < json_array_size(a); i++)
		if (strcmp(json_string_value(json_array_get(a, i)), s) == 0)
			return true;
	return false;
}

/* Every record is in catalogue order and the catalogue is complete. */
static void assert_complete(const json_t *p)
{
	const json_t *checks = json_object_get(p, "checks");
	ck_assert_uint_eq(json_array_size(checks), agsbx_conformance_check_count());
	for (size_t i = 0; i < cf_checks_count; i++)
		ck_assert_str_eq(json_string_value(json_object_get(json_array_get(checks, i), "id")), cf_checks[i].id);
}

/* NEGATIVE CONTROL neg_overclaim claims every axis and enforces none:
 * every axis is an overclaim, capabilities.truthful fails first. */
START_TEST(test_run_overclaim_is_defective)
{
	_cleanup_json_ json_t *p = run_provider(&neg_overclaim, NULL);
	assert_complete(p);
	ck_assert_int_eq(agsbx_provider_verdict_of(p), AGSBX_PROVIDER_DEFECTIVE);
	ck_assert_int_eq(verdict(p, "capabilities.truthful"), AGSBX_CHECK_FAIL);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(p, "failing_checks"), 0)),
			 "capabilities.truthful");
	const json_t *over = json_object_get(json_object_get(agsbx_test_check_of(p, "capabilities.truthful"), "facts"), "overclaim");
	for (int a = 0; a < AGSBX_AXIS_COUNT; a++)
		if (a != AGSBX_AXIS_CONTRACT)
			ck_assert_msg(in_array(over, agsbx_axes[a].name), "%s not an overclaim", agsbx_axes[a].name);
	ck_assert_int_eq(verdict(p, "fs.host_read_denied"), AGSBX_CHECK_FAIL);
}
END_TEST

/* NEGATIVE CONTROL neg_mountns claims only the filesystem and lets the
 * program mount: fs.remount_denied fails, and so the one claimed axis is
 * the one overclaim. */
START_TEST(test_run_one_failing_backing_check)
{
	_cleanup_json_ json_t *p = run_provider(&neg_mountns, NULL);
	ck_assert_int_eq(agsbx_provider_verdict_of(p), AGSBX_PROVIDER_DEFECTIVE);
	ck_assert_int_eq(verdict(p, "fs.remount_denied"), AGSBX_CHECK_FAIL);
	ck_assert_int_eq(verdict(p, "capabilities.truthful"), AGSBX_CHECK_FAIL);
	const json_t *over = json_object_get(json_object_get(agsbx_test_check_of(p, "capabilities.truthful"), "facts"), "overclaim");
	ck_assert_uint_eq(json_array_size(over), 1);
	ck_assert(in_array(over, "host_filesystem_restricted"));
	ck_assert_int_eq(verdict(p, "proc.contained"), AGSBX_CHECK_NOT_CLAIMED);
	ck_assert(!json_is_true(json_object_get(json_object_get(p, "observed"), "host_filesystem_restricted")));
}
END_TEST

/* The paired control: trusted_local claims nothing and is conformant;
 * what it does not claim is "not_claimed", never "fail". */
START_TEST(test_run_honest_provider_is_conformant)
{
	_cleanup_json_ json_t *p = run_provider(&agsbx_provider_trusted_local, NULL);
	assert_complete(p);
	ck_assert_msg(agsbx_provider_verdict_of(p) == AGSBX_PROVIDER_CONFORMANT, "failing: %s",
		      json_string_value(json_array_get(json_object_get(p, "failing_checks"), 0)));
	ck_assert_int_eq(verdict(p, "capabilities.truthful"), AGSBX_CHECK_PASS);
	ck_assert_int_eq(verdict(p, "proc.contained"), AGSBX_CHECK_NOT_CLAIMED);
	ck_assert_int_eq(verdict(p, "exec.status_fidelity"), AGSBX_CHECK_PASS);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(p, "observed"), "network")),
			 AGSBX_NET_INHERITED);
}
END_TEST

/* An unavailable mechanism (landlock under the labelled no-landlock
 * simulation): every check that needs a sandbox, capabilities.truthful
 * included, is blocked, and the provider is blocked, not defective. */
START_TEST(test_run_unavailable_is_blocked)
{
	_cleanup_json_ json_t *p = run_provider(&agsbx_provider_landlock, AGSBX_SIM_NO_LANDLOCK);
	assert_complete(p);
	ck_assert_msg(agsbx_provider_verdict_of(p) == AGSBX_PROVIDER_BLOCKED, "verdict %s",
		      json_string_value(json_object_get(p, "verdict")));
	ck_assert_int_eq(verdict(p, "capabilities.truthful"), AGSBX_CHECK_BLOCKED);
	ck_assert_int_eq(verdict(p, "fs.host_read_denied"), AGSBX_CHECK_BLOCKED);
	ck_assert_int_eq(verdict(p, "fail.closed"), AGSBX_CHECK_PASS);
	ck_assert_uint_eq(json_array_size(json_object_get(p, "underclaim")), 0);
}
END_TEST

/* Not for this platform: skipped, no checks. */
START_TEST(test_run_not_applicable_is_skipped)
{
	_cleanup_json_ json_t *p = run_provider(&agsbx_provider_seatbelt, NULL);
	ck_assert_int_eq(agsbx_provider_verdict_of(p), AGSBX_PROVIDER_SKIPPED);
	ck_assert_uint_eq(json_array_size(json_object_get(p, "checks")), 0);
}
END_TEST

int main(void)
{
	agsbx_runner_init();
	tool_dir = getenv("AGSBX_BUILD_DIR") ? strdup(getenv("AGSBX_BUILD_DIR")) : NULL;
	if (!tool_dir)
		agsbx_test_skip("conformance", true, "AGSBX_BUILD_DIR is not set (run through ctest)");
	payload = agsbx_test_build_path("agsbx-payload");
	work = agsbx_test_tmpdir("agsbx-conformance");
	Suite *s = suite_create("conformance");
	TCase *j = tcase_create("judge");
	tcase_add_test(j, test_judge_backed_claim_passes);
	tcase_add_test(j, test_judge_backing_fail_is_overclaim);
	tcase_add_test(j, test_judge_backing_blocked_is_overclaim);
	tcase_add_test(j, test_judge_backing_skip_is_inconclusive);
	tcase_add_test(j, test_judge_refuter_fail_is_overclaim);
	tcase_add_test(j, test_judge_refuter_skip_does_not_refute);
	tcase_add_test(j, test_judge_underclaim);
	tcase_add_test(j, test_judge_network_levels);
	tcase_add_test(j, test_catalogue_axes);
	tcase_add_test(j, test_catalogue_assembled);
	tcase_add_test(j, test_verdict_names);
	tcase_add_test(j, test_bundle_finish);
	tcase_add_test(j, test_bundle_setters);
	suite_add_tcase(s, j);
	TCase *r = tcase_create("providers");
	tcase_set_timeout(r, 300);
	tcase_add_test(r, test_run_overclaim_is_defective);
	tcase_add_test(r, test_run_one_failing_backing_check);
	tcase_add_test(r, test_run_honest_provider_is_conformant);
	tcase_add_test(r, test_run_unavailable_is_blocked);
	tcase_add_test(r, test_run_not_applicable_is_skipped);
	suite_add_tcase(s, r);
	int rc = agsbx_test_run_suite(s);
	agsbx_test_rmtree(work);
	return rc;
}
