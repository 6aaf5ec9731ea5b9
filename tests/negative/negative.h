/* NEGATIVE CONTROLS — test-only providers that deliberately lie or leak,
 * compiled only into build/agsbx-evidence-negctl (never the shipped
 * binary). Each one exists to prove that a specific check can fail. */
#ifndef AGSBX_TESTS_NEGATIVE_H
#define AGSBX_TESTS_NEGATIVE_H

#include "providers/provider.h"

/* handle.c: the handle ops the controls share (their ensure takes the
 * claims of their own probe). */
int neg_ensure_with(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		    struct agsbx_handle **out, struct agsbx_error *fail);
int neg_health(struct agsbx_handle *h);
void neg_release(struct agsbx_handle *h);

extern const struct agsbx_provider_ops neg_overclaim;
extern const struct agsbx_provider_ops neg_leaky;
extern const struct agsbx_provider_ops neg_nocap;
extern const struct agsbx_provider_ops neg_meta_liar;
extern const struct agsbx_provider_ops neg_fail_open;
extern const struct agsbx_provider_ops neg_probe_liar;
extern const struct agsbx_provider_ops neg_noop;
extern const struct agsbx_provider_ops neg_mountns;
extern const struct agsbx_provider_ops neg_runs_after_release;
extern const struct agsbx_provider_ops neg_hang_on_canary;
extern const struct agsbx_provider_ops neg_hostile;
extern const struct agsbx_provider_ops neg_raw_fails;
extern const struct agsbx_provider_ops neg_nnp_caps;
extern const struct agsbx_provider_ops neg_refuses;
extern const struct agsbx_provider_ops neg_hostile_text;
extern const struct agsbx_provider_ops neg_residue;
extern const struct agsbx_provider_ops neg_status_liar;
extern const struct agsbx_provider_ops neg_cgroupns;
extern const struct agsbx_provider_ops neg_leaked_fd;
extern const struct agsbx_provider_ops neg_hang_on_key;
/* result-liars.c: claim every axis, misreport every run in one way. */
extern const struct agsbx_provider_ops neg_killed_liar;
extern const struct agsbx_provider_ops neg_timeout_liar;
extern const struct agsbx_provider_ops neg_silent_refusal;
extern const struct agsbx_provider_ops neg_deep_liar;
extern const struct agsbx_provider_ops neg_allow_liar;
extern const struct agsbx_provider_ops neg_deny_liar;
extern const struct agsbx_provider_ops neg_cut_liar;
extern const struct agsbx_provider_ops neg_ensure_refuses;
extern const struct agsbx_provider_ops neg_scripted_liar;
extern const struct agsbx_provider_ops neg_plant_liar;
extern const struct agsbx_provider_ops neg_health_liar;
extern const struct agsbx_provider_ops neg_ensure_once;
/* argv[1] of negctl that opens argv[2] O_PATH without close-on-exec and
 * execs argv[4...] (argv[3] is "--"): neg_leaked_fd's launcher. */
#define NEG_LEAK_FD_MODE "__neg-leak-fd"

#endif
