/* The bundle document's builders and verdict vocabulary (bundle.h). */
#include "evidence/bundle.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/compat.h"
#include "base/runner.h"
#include "base/util.h"
#include "evidence/evidence.h"

const char *const agsbx_check_verdict_names[AGSBX_CHECK_VERDICT_COUNT + 1] = {
	[AGSBX_CHECK_PASS] = "pass",
	[AGSBX_CHECK_FAIL] = "fail",
	[AGSBX_CHECK_SKIP] = "skip",
	[AGSBX_CHECK_BLOCKED] = "blocked",
	[AGSBX_CHECK_NOT_CLAIMED] = "not_claimed",
};

const char *const agsbx_provider_verdict_names[AGSBX_PROVIDER_VERDICT_COUNT + 1] = {
	[AGSBX_PROVIDER_CONFORMANT] = "conformant",
	[AGSBX_PROVIDER_DEFECTIVE] = "defective",
	[AGSBX_PROVIDER_BLOCKED] = "blocked",
	[AGSBX_PROVIDER_SKIPPED] = "skipped",
};

static int name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

const char *agsbx_check_verdict_name(enum agsbx_check_verdict v)
{
	return v >= 0 && v < AGSBX_CHECK_VERDICT_COUNT ? agsbx_check_verdict_names[v] : "?";
}

const char *agsbx_provider_verdict_name(enum agsbx_provider_verdict v)
{
	return v >= 0 && v < AGSBX_PROVIDER_VERDICT_COUNT ? agsbx_provider_verdict_names[v] : "?";
}

enum agsbx_check_verdict agsbx_check_verdict_parse(const char *s)
{
	return (enum agsbx_check_verdict)name_index(agsbx_check_verdict_names, AGSBX_CHECK_VERDICT_COUNT, s);
}

enum agsbx_provider_verdict agsbx_provider_verdict_parse(const char *s)
{
	return (enum agsbx_provider_verdict)name_index(agsbx_provider_verdict_names, AGSBX_PROVIDER_VERDICT_COUNT, s);
}

enum agsbx_outcome agsbx_check_outcome(enum agsbx_check_verdict v)
{
	static const enum agsbx_outcome o[AGSBX_CHECK_VERDICT_COUNT] = {
		[AGSBX_CHECK_PASS] = AGSBX_OUTCOME_GOOD,        [AGSBX_CHECK_FAIL] = AGSBX_OUTCOME_BAD,
		[AGSBX_CHECK_SKIP] = AGSBX_OUTCOME_NOT_SHOWN,   [AGSBX_CHECK_BLOCKED] = AGSBX_OUTCOME_NOT_SHOWN,
		[AGSBX_CHECK_NOT_CLAIMED] = AGSBX_OUTCOME_NEUTRAL,
	};
	return v >= 0 && v < AGSBX_CHECK_VERDICT_COUNT ? o[v] : AGSBX_OUTCOME_NEUTRAL;
}

enum agsbx_outcome agsbx_provider_outcome(enum agsbx_provider_verdict v)
{
	static const enum agsbx_outcome o[AGSBX_PROVIDER_VERDICT_COUNT] = {
		[AGSBX_PROVIDER_CONFORMANT] = AGSBX_OUTCOME_GOOD,   [AGSBX_PROVIDER_DEFECTIVE] = AGSBX_OUTCOME_BAD,
		[AGSBX_PROVIDER_BLOCKED] = AGSBX_OUTCOME_NOT_SHOWN, [AGSBX_PROVIDER_SKIPPED] = AGSBX_OUTCOME_NOT_SHOWN,
	};
	return v >= 0 && v < AGSBX_PROVIDER_VERDICT_COUNT ? o[v] : AGSBX_OUTCOME_NEUTRAL;
}

enum agsbx_check_verdict agsbx_check_verdict_of(const json_t *check)
{
	return agsbx_check_verdict_parse(json_string_value(json_object_get(check, "verdict")));
}

enum agsbx_provider_verdict agsbx_provider_verdict_of(const json_t *provider)
{
	return agsbx_provider_verdict_parse(json_string_value(json_object_get(provider, "verdict")));
}

/* ---- records ------------------------------------------------------------ */

json_t *agsbx_bundle_check(const struct agsbx_check_record *r)
{
	return json_pack("{s:s, s:s, s:s, s:b, s:s, s:I, s:o, s:o}", "id", r->id, "axis", r->axis, "verdict",
			 agsbx_check_verdict_name(r->verdict), "observed_pass", r->observed_pass, "reason",
			 r->reason ? r->reason : "", "duration_us", (json_int_t)r->duration_us, "observations",
			 r->observations ? r->observations : json_array(), "facts", r->facts ? r->facts : json_object());
}

json_t *agsbx_bundle_provider_unrun(const char *id, enum agsbx_provider_verdict verdict, const char *reason,
				    const char *probe_reason, json_t *checks, uint64_t total_us)
{
	return json_pack("{s:s, s:s, s:s, s:{s:b, s:s, s:{}, s:{}}, s:n, s:n, s:[], s:[], s:o, s:{s:I}}", "id", id,
			 "verdict", agsbx_provider_verdict_name(verdict), "reason", reason, "probe", "available", 0,
			 "reason", probe_reason, "capabilities", "facts", "claims", "observed", "underclaim",
			 "failing_checks", "checks", checks ? checks : json_array(), "timings", "total_us",
			 (json_int_t)total_us);
}

json_t *agsbx_bundle_provider(const struct agsbx_provider_record *r)
{
	enum agsbx_provider_verdict v = json_array_size(r->failing_checks) ? AGSBX_PROVIDER_DEFECTIVE
					: r->ran ? AGSBX_PROVIDER_CONFORMANT : AGSBX_PROVIDER_BLOCKED;
	json_t *pj = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "id", r->id, "verdict",
			       agsbx_provider_verdict_name(v), "reason", r->reason, "probe", r->probe, "claims",
			       r->claims, "observed", r->observed, "underclaim", r->underclaim, "failing_checks",
			       r->failing_checks, "checks", r->checks);
	if (pj)
		json_object_set_new(pj, "confinement", r->confinement ? r->confinement : json_null());
	return pj;
}

/* ---- observations ------------------------------------------------------- */

static json_t *excerpt(const char *data, size_t len)
{
	size_t n = len > AGSBX_BUNDLE_EXCERPT_MAX ? AGSBX_BUNDLE_EXCERPT_MAX : len;
	return agsbx_json_string_sanitized(data ? data : "", n);
}

static json_t *argv_json(const char *const *argv)
{
	json_t *a = json_array();
	for (; argv && *argv; argv++)
		json_array_append_new(a, agsbx_json_string_sanitized(*argv, strlen(*argv)));
	return a;
}

json_t *agsbx_bundle_observation(const char *role, const char *const *argv, const struct agsbx_run_result *r,
				 const json_t *result)
{
	const json_t *e = result ? json_object_get(result, "errno") : NULL;
	json_t *errno_j = json_is_string(e) ? json_incref((json_t *)e) : json_null();
	if (r->spawn_errno) {
		json_decref(errno_j);
		errno_j = json_string(agsbx_errname(r->spawn_errno) ? agsbx_errname(r->spawn_errno) : "E?");
	}
	return json_pack("{s:s, s:o, s:i, s:b, s:i, s:b, s:b, s:o, s:I, s:o, s:b, s:I, s:o, s:b, s:I, s:O}",
			 "role", role, "argv", argv_json(argv), "exit_status", r->status, "exited", r->exited,
			 "signal", r->term_signal, "timed_out", r->timed_out, "cancelled", r->cancelled,
			 "errno", errno_j, "duration_us", (json_int_t)r->duration_us,
			 "stdout", excerpt(r->out, r->out_len),
			 "stdout_truncated", r->out_truncated || r->out_len > AGSBX_BUNDLE_EXCERPT_MAX,
			 "stdout_bytes", (json_int_t)r->out_total,
			 "stderr", excerpt(r->err, r->err_len),
			 "stderr_truncated", r->err_truncated || r->err_len > AGSBX_BUNDLE_EXCERPT_MAX,
			 "stderr_bytes", (json_int_t)r->err_total,
			 "result", result ? (json_t *)result : json_null());
}

json_t *agsbx_bundle_refusal(const char *const *argv, const char *reason, const char *message)
{
	return json_pack("{s:s, s:o, s:s, s:s}", "role", "sandbox", "argv", argv_json(argv), "refused", reason,
			 "message", message);
}

/* ---- the top level ------------------------------------------------------ */

/* resolved through /proc/self/exe: the binary that actually ran */
json_t *agsbx_bundle_tool(void)
{
	char hex[65] = "unknown";
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		agsbx_sha256_file(exe, hex);
	}
	return json_pack("{s:s, s:s, s:s, s:s}", "name", AGSBX_TOOL_NAME, "version", agsbx_version(), "git_commit",
			 agsbx_git_commit(), "binary_sha256", hex);
}

json_t *agsbx_bundle_new(void)
{
	char created[32];
	agsbx_utc_now(created, sizeof created);
	return json_pack("{s:s, s:o, s:s, s:[], s:[]}", "schema", AGSBX_BUNDLE_SCHEMA, "tool", agsbx_bundle_tool(),
			 "created_at", created, "attachments", "providers");
}

#define USERNS_SYSCTL "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
#define DISTRO_BWRAP_PROFILE "/usr/share/apparmor/extra-profiles/bwrap-userns-restrict"

/* What the workflow changed on the host before collect (only loading the
 * distribution's bwrap profile is accepted), read back: the run stays
 * representative only while the userns sysctl is what it was before. */
static json_t *host_policy_json(const char *before, json_t *reasons)
{
	_cleanup_free_ char *now = agsbx_read_line(USERNS_SYSCTL);
	bool untouched = now ? strcmp(now, before) == 0 : strcmp(before, "absent") == 0;
	if (!untouched)
		json_array_append_new(reasons, json_string("host_policy:sysctl_changed"));
	return json_pack("{s:s, s:s, s:s, s:s, s:b}", "change", "distro bwrap profile loaded by the workflow", "profile",
			 DISTRO_BWRAP_PROFILE, "restrict_unprivileged_userns_before", before,
			 "restrict_unprivileged_userns_now", now ? now : "absent", "sysctl_untouched", untouched);
}

static bool all_zero(const char *hex)
{
	return strspn(hex, "0") == strlen(hex);
}

/* Why the run is not representative of a normal user's. Not only root:
 * any capability the harness holds (a file capability, an ambient set, a
 * container's default set) makes results unlike a normal user's. */
static json_t *representative_reasons(const struct agsbx_bundle_context *c, bool sudo)
{
	json_t *reasons = json_array();
	if (geteuid() == 0)
		json_array_append_new(reasons, json_string("root"));
#ifdef __linux__
	/* unreadable sets cannot be shown empty */
	if (!c->have_caps || !all_zero(c->cap_eff) || !all_zero(c->cap_prm) || !all_zero(c->cap_amb))
		json_array_append_new(reasons, json_string("capabilities"));
#endif
	if (sudo)
		json_array_append_new(reasons, json_string("sudo"));
	if (c->container)
		json_array_append_new(reasons, json_string("container"));
	if (c->simulate && json_array_size(c->simulated)) {
		char r[128];
		snprintf(r, sizeof r, "simulated:%s", c->simulate);
		json_array_append_new(reasons, json_string(r));
	}
	return reasons;
}

static json_t *simulations_json(const struct agsbx_bundle_context *c)
{
	json_t *sims = json_array();
	if (c->simulate)
		json_array_append_new(sims, json_pack("{s:s, s:O, s:s, s:s}", "name", c->simulate, "providers",
						      c->simulated, "mechanism", "seccomp", "effect",
						      "clone/unshare with CLONE_NEWUSER fail with EPERM in the provider's "
						      "process tree; host settings untouched"));
	return sims;
}

json_t *agsbx_bundle_context(const struct agsbx_bundle_context *c)
{
	const char *sudo_user = getenv("SUDO_USER");
	bool sudo = sudo_user && *sudo_user;
	json_t *reasons = representative_reasons(c, sudo);
	json_t *policy = c->userns_before ? host_policy_json(c->userns_before, reasons) : NULL;
	json_t *ctxj = json_pack("{s:{s:i, s:i, s:i, s:b, s:o}, s:{s:b, s:O}, s:b, s:o, s:o}", "privilege", "uid",
				 (int)getuid(), "euid", (int)geteuid(), "gid", (int)getgid(), "sudo", sudo, "run_as",
				 c->run_as_name ? json_string(c->run_as_name) : json_null(), "container", "detected",
				 c->container, "markers",
				 c->container_markers ? (json_t *)c->container_markers : json_null(), "representative",
				 json_array_size(reasons) == 0, "representative_reasons", reasons, "simulations",
				 simulations_json(c));
	if (ctxj && c->have_caps)
		json_object_set_new(json_object_get(ctxj, "privilege"), "capabilities",
				    json_pack("{s:s, s:s, s:s}", "effective", c->cap_eff, "permitted", c->cap_prm,
					      "ambient", c->cap_amb));
	if (ctxj && policy)
		json_object_set_new(ctxj, "host_policy", policy);
	else
		json_decref(policy);
	return ctxj;
}

/* The status collect exits with: a defective provider is the one thing a
 * bundle can report as a failure (matches AGSBX_EXIT_DEFECT in cli/). */
#define BUNDLE_EXIT_DEFECT 1

int agsbx_bundle_finish(json_t *bundle)
{
	int counts[AGSBX_PROVIDER_VERDICT_COUNT] = { 0 };
	const json_t *providers = json_object_get(bundle, "providers");
	json_t *defects = json_array();
	size_t i, j;
	json_t *p, *c;
	json_array_foreach(providers, i, p) {
		enum agsbx_provider_verdict v = agsbx_provider_verdict_of(p);
		if (v != AGSBX_PROVIDER_VERDICT_UNKNOWN)
			counts[v]++;
		json_array_foreach(json_object_get(p, "failing_checks"), j, c) {
			char d[256];
			snprintf(d, sizeof d, "%s/%s", json_string_value(json_object_get(p, "id")), json_string_value(c));
			json_array_append_new(defects, json_string(d));
		}
	}
	int status = counts[AGSBX_PROVIDER_DEFECTIVE] ? BUNDLE_EXIT_DEFECT : 0;
	json_object_set_new(bundle, "summary",
			    json_pack("{s:I, s:i, s:i, s:i, s:i, s:o, s:i}", "providers",
				      (json_int_t)json_array_size(providers), "conformant",
				      counts[AGSBX_PROVIDER_CONFORMANT], "defective", counts[AGSBX_PROVIDER_DEFECTIVE],
				      "blocked", counts[AGSBX_PROVIDER_BLOCKED], "skipped", counts[AGSBX_PROVIDER_SKIPPED],
				      "defects", defects, "exit_status", status));
	return status;
}
