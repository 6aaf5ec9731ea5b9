/* The bundle's members, set here only (bundle.h): cli/ and conformance/
 * hand over facts, evidence/ decides the shape and the prose. */
#include "evidence/bundle.h"

#include <errno.h>
#include <stdio.h>

#include "base/error.h"
#include "evidence/evidence.h"

int agsbx_bundle_set_challenge(json_t *bundle, const char *nonce)
{
	return json_object_set_new(bundle, "challenge", json_string(nonce)) ? -ENOMEM : 0;
}

int agsbx_bundle_set_subject(json_t *bundle, const char *repo, struct agsbx_error *e)
{
	json_t *s = agsbx_subject_from_repo(repo, e);
	if (!s)
		return -EINVAL;
	return json_object_set_new(bundle, "subject", s) ? -ENOMEM : 0;
}

int agsbx_bundle_add_attachment(json_t *bundle, const char *cmdline, int64_t timeout_ms, size_t max_tail,
				struct agsbx_error *e)
{
	json_t *a = agsbx_attachment_run(cmdline, timeout_ms, max_tail, e);
	if (!a)
		return -EINVAL;
	return json_array_append_new(json_object_get(bundle, "attachments"), a) ? -ENOMEM : 0;
}

int agsbx_bundle_set_host(json_t *bundle, json_t *host)
{
	return json_object_set(bundle, "host", host) ? -ENOMEM : 0;
}

int agsbx_bundle_set_context(json_t *bundle, const struct agsbx_bundle_context *c)
{
	return json_object_set_new(bundle, "context", agsbx_bundle_context(c)) ? -ENOMEM : 0;
}

int agsbx_bundle_add_provider(json_t *bundle, json_t *provider)
{
	return json_array_append(json_object_get(bundle, "providers"), provider) ? -ENOMEM : 0;
}

int agsbx_bundle_set_run_timings(json_t *bundle, const struct agsbx_run_timings *t)
{
	json_t *per = json_array();
	for (size_t i = 0; i < t->n; i++)
		json_array_append_new(per, json_pack("{s:s, s:I, s:I}", "id", t->providers[i].id, "start_us",
						     (json_int_t)t->providers[i].start_us, "end_us",
						     (json_int_t)t->providers[i].end_us));
	json_t *j = json_pack("{s:s, s:I, s:{s:i, s:i, s:s}, s:o}", "method",
			      "CLOCK_MONOTONIC, integer microseconds; providers[].start_us/end_us are offsets from the "
			      "start of the provider runs (fork to reaping of each provider's worker process)",
			      "providers_us", (json_int_t)t->providers_us, "concurrency", "providers", t->max_providers,
			      "checks_per_provider", t->checks_per_provider, "isolation",
			      "one worker process per provider, each its own child subreaper", "providers", per);
	return json_object_set_new(bundle, "timings", j) ? -ENOMEM : 0;
}

/* ---- a provider record's members ---------------------------------------- */

int agsbx_bundle_provider_set_timings(json_t *provider, const struct agsbx_provider_timings *t)
{
	char method[160];
	snprintf(method, sizeof method, "CLOCK_MONOTONIC around each phase, integer microseconds; concurrent checks "
		 "on up to %d threads, exclusive checks one at a time", t->check_threads);
	json_t *j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s}", "probe_us",
			      (json_int_t)t->probe_us, "setup_us", (json_int_t)t->setup_us, "ensure_us",
			      (json_int_t)t->ensure_us, "first_exec_us", (json_int_t)t->first_exec_us, "checks_us",
			      (json_int_t)(t->concurrent_us + t->exclusive_us), "concurrent_checks_us",
			      (json_int_t)t->concurrent_us, "exclusive_checks_us", (json_int_t)t->exclusive_us,
			      "release_us", (json_int_t)t->release_us, "teardown_us", (json_int_t)t->teardown_us,
			      "total_us", (json_int_t)t->total_us, "method", method);
	return json_object_set_new(provider, "timings", j) ? -ENOMEM : 0;
}

int agsbx_bundle_provider_set_config(json_t *provider, const json_t *config)
{
	return json_object_set(provider, "config", (json_t *)config) ? -ENOMEM : 0;
}

int agsbx_bundle_provider_declare(json_t *provider, const json_t *declared, const char *reason)
{
	if (json_object_update(provider, (json_t *)declared))
		return -ENOMEM;
	return reason && json_object_set_new(provider, "reason", json_string(reason)) ? -ENOMEM : 0;
}
