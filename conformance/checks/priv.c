/* The privilege axis: no_new_privs, capability sets and setuid programs. */
#include "conformance/checks/attack.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"

/* ---- priv.no_escalation ------------------------------------------------- */

/* Both halves: no_new_privs keeps a program from gaining privileges on
 * exec, and no effective capability means it has none to begin with;
 * "NoNewPrivs=1 with every capability" (bwrap or landlock as root) is
 * not blocked escalation. */
static void priv_no_escalation(const struct check_env *env, struct check_out *out)
{
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("status"), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (!res) {
		cf_no_observation(out, "NoNewPrivs and capability status");
		return;
	}
	json_t *nnp_j = json_object_get(res, "no_new_privs");
	json_int_t nnp = json_is_integer(nnp_j) ? json_integer_value(nnp_j) : -1;
	bool capzero = json_is_true(json_object_get(res, "cap_eff_zero"));
	const char *capeff = json_string_value(json_object_get(res, "cap_eff"));
	json_object_set_new(out->facts, "no_new_privs", nnp >= 0 ? json_integer(nnp) : json_null());
	json_object_set_new(out->facts, "cap_eff", capeff ? json_string(capeff) : json_null());
	out->observed_pass = res && nnp == 1 && capzero;
	cf_reason(out, "NoNewPrivs=%lld%s, effective capabilities %s%s", (long long)nnp, nnp == 1 ? "" : " (NOT set)",
		     capzero ? "none" : capeff ? capeff : "unknown", capzero ? "" : " (NOT empty)");
}

/* ---- priv.capabilities_dropped ------------------------------------------ */

static bool hex_zero(const json_t *v)
{
	const char *s = json_string_value(v);
	return s && s[strspn(s, "0")] == '\0';
}

/* A setuid-root program on the host that blocks on stdin (su waits for a
 * password), so its credentials can be read while it runs. */
static const char *setuid_program(void)
{
	static const char *const cands[] = { "/usr/bin/su", "/bin/su" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(cands); i++) {
		struct stat st;
		if (stat(cands[i], &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_ISUID) && st.st_uid == 0)
			return cands[i];
	}
	return NULL;
}

/* A gain is a change of credentials the exec caused: euid 0 after it
 * where the payload (its parent, the credentials before) was not euid 0,
 * both in the sandbox's user namespace. Root before the exec gains no
 * uid; what it holds is judged by the capability sets. Unobserved counts
 * as a gain from a non-root payload, unless NoNewPrivs is set: then the
 * kernel does not honour the setuid bit at all (prctl(2)). */
static bool setuid_gain(const json_t *caps, const json_t *setuid)
{
	const json_t *before = cf_sub(caps, "euid"), *after = cf_sub(setuid, "euid");
	if (json_is_integer(before) && json_integer_value(before) == 0)
		return false;
	if (json_is_integer(after))
		return json_integer_value(after) == 0;
	return json_integer_value(cf_sub(caps, "no_new_privs")) != 1;
}

static void check_priv_capabilities_dropped(const struct check_env *env, struct check_out *out)
{
	const char *su = setuid_program();
	json_t *res, *ctl = NULL;
	if (cf_sandbox_op(env, out, env->h, NULL, su ? ARGS("caps", su) : ARGS("caps"), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (su)
		cf_control_op(env, out, ARGS("caps", su), &ctl);
	/* Ambient is a subset of permitted (capabilities(7)): where /proc does
	 * not show CapAmb (gVisor), an empty CapPrm implies an empty CapAmb. */
	bool amb = hex_zero(cf_sub(res, "cap_amb")) || (json_is_null(cf_sub(res, "cap_amb")) && hex_zero(cf_sub(res, "cap_prm")));
	bool sets = hex_zero(cf_sub(res, "cap_eff")) && hex_zero(cf_sub(res, "cap_prm")) && amb;
	bool nnp = json_integer_value(cf_sub(res, "no_new_privs")) == 1;
	bool bnd = hex_zero(cf_sub(res, "cap_bnd")) || nnp;
	const json_t *s_in = cf_sub(res, "setuid"), *s_out = cf_sub(ctl, "setuid");
	bool ctl_gains = setuid_gain(ctl, s_out);
	bool ran_inside = cf_result_ok(s_in);
	bool gained = ran_inside && setuid_gain(res, s_in);
	json_int_t before = json_is_integer(cf_sub(res, "euid")) ? json_integer_value(cf_sub(res, "euid")) : -1;
	json_object_set_new(out->facts, "setuid_program", su ? json_string(su) : json_null());
	json_object_set_new(out->facts, "setuid_gains_outside", json_boolean(ctl_gains));
	json_object_set_new(out->facts, "setuid_gains_inside", json_boolean(gained));
	json_object_set_new(out->facts, "euid_before_exec_inside", before >= 0 ? json_integer(before) : json_null());
	if (!res) {
		cf_no_observation(out, "capability sets and a setuid-root exec");
		return;
	}
	if (!json_is_string(cf_sub(res, "cap_eff"))) {
		cf_reason(out, "the payload reported no capability sets");
		return;
	}
	out->observed_pass = sets && bnd && (!ctl_gains || !gained);
	char how[96];
	if (!su || !ran_inside)
		snprintf(how, sizeof how, "%s", !su ? "not tried" : "not executable inside");
	else if (gained)
		snprintf(how, sizeof how, "the exec RAISED euid %lld to 0 inside", (long long)before);
	else
		snprintf(how, sizeof how, "no credential change inside (euid %lld before the exec)", (long long)before);
	cf_reason(out, "inside CapEff %s CapPrm %s CapAmb %s CapBnd %s NoNewPrivs %d; setuid-root %s: %s%s",
		  json_string_value(cf_sub(res, "cap_eff")), json_string_value(cf_sub(res, "cap_prm")) ?: "?",
		  json_string_value(cf_sub(res, "cap_amb")) ?: "(not shown; empty as CapPrm is)", json_string_value(cf_sub(res, "cap_bnd")) ?: "?",
		  (int)json_integer_value(cf_sub(res, "no_new_privs")), su ? su : "(none on host)", how,
		  su && !ctl_gains ? " (control: no gain outside either, so that part shows nothing)" : "");
}

const struct check_def cf_checks_priv[] = {
	{ .id = "priv.capabilities_dropped", .axis = AGSBX_AXIS_PRIVILEGE, .evidence = CHECK_REFUTES, .run = check_priv_capabilities_dropped, .needs_handle = true,
	  .title = "no capability inside; a setuid-root program gains nothing (control: it does outside)",
	  .attacks = "reads the capability sets inside and runs a setuid-root program",
	  .why = "capabilities left inside, or a setuid bit honoured, are root in waiting",
	  .control = "the setuid program gains outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_deny_liar" } } },
	{ .id = "priv.no_escalation", .axis = AGSBX_AXIS_PRIVILEGE, .run = priv_no_escalation, .needs_handle = true,
	  .title = "NoNewPrivs is set and no effective capability is held",
	  .attacks = "reads NoNewPrivs and the effective capabilities inside",
	  .why = "the minimum for the privilege axis",
	  .control = "none: a status read",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/cli/collect-negative.sh", "neg_nnp_caps" }, { "tests/test-covA-liars.c", "neg_allow_liar" } } },
};
const size_t cf_checks_priv_count = AGSBX_ARRAY_SIZE(cf_checks_priv);
