/* The provider contract itself (providers/provider.h): every op without a
 * handle receives self, so declared providers (--adapter, --wrap) are
 * ordinary providers found from their own ops (no per-slot entry points);
 * the declared flag and the configure op replace the CLI's special cases;
 * each provider's shared facts name a fact its host probe family has.
 * Wrappers are probed for real (a command looked up on disk); no adapter
 * is started. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/probes.h"
#include "providers/external/external.h"
#include "providers/provider.h"
#include "tests/lib/testlib.h"

static const struct agsbx_ctx ctx = { .probe_timeout_ms = 1000 };

static const struct agsbx_provider_ops *declare(const char *decl, bool wrap)
{
	struct agsbx_error f = { 0 };
	ck_assert_msg(agsbx_external_declare(decl, wrap, &f) == 0, "%s", f.message);
	char id[64];
	snprintf(id, sizeof id, "%.*s", (int)(strchr(decl, '=') - decl), decl);
	const struct agsbx_provider_ops *ops = agsbx_provider_find(id);
	ck_assert_ptr_nonnull(ops);
	return ops;
}

/* Two wrappers probed through their own ops each see their own command:
 * self alone tells them apart. */
START_TEST(test_self_finds_the_instance)
{
	const struct agsbx_provider_ops *a = declare("wa=/bin/true {argv}", true);
	const struct agsbx_provider_ops *b = declare("wb=/nonexistent/agsbx-wrapper {argv}", true);
	ck_assert_ptr_ne(a->probe, NULL);
	ck_assert_ptr_eq(a->probe, b->probe); /* one function serves every declared wrapper */
	struct agsbx_probe pa = { 0 }, pb = { 0 };
	ck_assert_int_eq(b->probe(b, &ctx, &pb), 0);
	ck_assert_int_eq(a->probe(a, &ctx, &pa), 0);
	ck_assert(pa.available);
	ck_assert_str_eq(pa.reason, "ready");
	ck_assert_str_eq(json_string_value(json_object_get(pa.facts, "command")), "/bin/true");
	ck_assert(!pb.available);
	ck_assert_str_eq(pb.reason, "wrap_command_missing");
	ck_assert_str_eq(json_string_value(json_object_get(pb.facts, "command")), "/nonexistent/agsbx-wrapper");
	agsbx_provider_probe_clear(&pa);
	agsbx_provider_probe_clear(&pb);
	/* The end-of-run record is the instance's too. */
	struct agsbx_error defect = { 0 };
	json_t *rec = b->finish(b, &defect);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rec, "declared"), "command")),
			 "/nonexistent/agsbx-wrapper {argv}");
	json_decref(rec);
}
END_TEST

/* declared marks exactly the providers of --adapter and --wrap, in the
 * order they were declared. */
START_TEST(test_declared_flag)
{
	for (size_t i = 0; i < agsbx_provider_builtin_count(); i++)
		ck_assert_msg(!agsbx_provider_at(i)->declared, "%s", agsbx_provider_at(i)->id);
	const struct agsbx_provider_ops *w = declare("dw=/bin/true {argv}", true);
	const struct agsbx_provider_ops *ad = declare("da=/bin/true", false);
	ck_assert(w->declared && ad->declared);
	ck_assert_ptr_eq(agsbx_external_at(agsbx_external_count() - 2), w);
	ck_assert_ptr_eq(agsbx_external_at(agsbx_external_count() - 1), ad);
	ck_assert_str_eq(ad->summary, "declared: an adapter speaking agsbx-external/1 (--adapter)");
}
END_TEST

/* A bad declaration is one error record naming the problem. */
START_TEST(test_declare_error_record)
{
	struct agsbx_error f = { 0 };
	ck_assert_int_eq(agsbx_external_declare("Bad=/bin/true", true, &f), -EINVAL);
	ck_assert_str_eq(f.reason, "config_invalid");
	ck_assert_str_eq(f.message, "--wrap: id 'Bad' does not match [a-z][a-z0-9_-]{0,31}");
	f = (struct agsbx_error){ 0 };
	ck_assert_int_eq(agsbx_external_declare("landlock=/bin/true", false, &f), -EINVAL);
	ck_assert_str_eq(f.message, "--adapter: id 'landlock' is already a provider");
}
END_TEST

static int configure(const struct agsbx_provider_ops *ops, const char *json, struct agsbx_error *f)
{
	json_t *c = json_loads(json, 0, NULL);
	ck_assert_ptr_nonnull(c);
	int r = agsbx_provider_configure(ops, c, f);
	json_decref(c);
	return r;
}

/* One entry point checks every provider's config before a run: a
 * wrapper's own keys, an adapter's none (its hello declares them), a
 * built-in provider's config_keys. */
START_TEST(test_configure_op)
{
	const struct agsbx_provider_ops *w = declare("cw=/bin/true {argv}", true);
	const struct agsbx_provider_ops *ad = declare("ca=/bin/true", false);
	struct agsbx_error f = { 0 };
	ck_assert_int_eq(configure(w, "{\"claims\": \"process_contained,network_isolated\"}", &f), 0);
	struct agsbx_probe p = { 0 };
	ck_assert_int_eq(w->probe(w, &ctx, &p), 0);
	ck_assert(p.caps.process_contained && !p.caps.host_filesystem_restricted);
	ck_assert_str_eq(p.caps.network, AGSBX_NET_ISOLATED);
	agsbx_provider_probe_clear(&p);
	ck_assert_int_eq(configure(w, "{\"colour\": \"red\"}", &f), -EINVAL);
	ck_assert_str_eq(f.reason, "config_invalid");
	ck_assert_str_eq(f.message,
			 "cw: unknown config key 'colour' (a wrapper takes 'claims', 'home' and 'inventory')");
	f = (struct agsbx_error){ 0 };
	ck_assert_int_eq(configure(w, "{\"home\": \"elsewhere\"}", &f), -EINVAL);
	ck_assert_str_eq(f.message, "cw.home: expected 'build' or 'real'");
	f = (struct agsbx_error){ 0 };
	ck_assert_int_eq(configure(ad, "{\"anything\": 1}", &f), 0);
	ck_assert_ptr_null(f.reason);
	ck_assert_int_eq(configure(&agsbx_provider_landlock, "{\"colour\": \"red\"}", &f), -EINVAL);
	ck_assert_ptr_nonnull(strstr(f.message, "colour"));
	f = (struct agsbx_error){ 0 };
	ck_assert_int_eq(configure(&agsbx_provider_bubblewrap, "{\"network\": true}", &f), 0);
}
END_TEST

static const struct agsbx_probe_family *family(const char *name)
{
	size_t n = 0;
	const struct agsbx_probe_family *f = agsbx_probe_families(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			return &f[i];
	return NULL;
}

static size_t check_shared(const struct agsbx_provider_ops *ops)
{
	size_t n = 0;
	for (const struct agsbx_shared_fact *s = ops->shared_facts; s && s->fact; s++, n++) {
		const struct agsbx_probe_family *fam = family(s->family);
		ck_assert_msg(fam && fam->probe, "%s: no host probe family '%s'", ops->id, s->family);
		/* Present even when absent on this host ({absent, reason}). */
		struct agsbx_probe_opts o = { .docker_host = "unix:///nonexistent/agsbx-docker.sock",
					      .docker_timeout_ms = 1000 };
		json_t *facts = fam->probe(&o);
		ck_assert_msg(json_object_get(facts, s->host_fact), "%s: %s.%s not a host fact", ops->id, s->family,
			      s->host_fact);
		json_decref(facts);
	}
	return n;
}

/* The facts each provider shares with the host probes, as probe.truthful
 * compares them: landlock's ABI, gvisor's Docker version, and for an
 * adapter whichever of the four it reports. */
START_TEST(test_shared_facts)
{
	ck_assert_uint_eq(check_shared(&agsbx_provider_landlock), 1);
	ck_assert_str_eq(agsbx_provider_landlock.shared_facts[0].fact, "system_abi");
	ck_assert_uint_eq(check_shared(&agsbx_provider_gvisor), 1);
	ck_assert_str_eq(agsbx_provider_gvisor.shared_facts[0].fact, "server_version");
	ck_assert_uint_eq(check_shared(&agsbx_provider_bubblewrap), 0);
	ck_assert_uint_eq(check_shared(&agsbx_provider_trusted_local), 0);
	ck_assert_uint_eq(check_shared(declare("sa=/bin/true", false)), 4);
	ck_assert_uint_eq(check_shared(declare("sw=/bin/true {argv}", true)), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("providers");
	TCase *tc = tcase_create("contract");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_self_finds_the_instance);
	tcase_add_test(tc, test_declared_flag);
	tcase_add_test(tc, test_declare_error_record);
	tcase_add_test(tc, test_configure_op);
	tcase_add_test(tc, test_shared_facts);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
