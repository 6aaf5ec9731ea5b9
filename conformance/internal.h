/* Private to conformance/: the environment a check runs in and what it
 * reports back. Functions and globals shared between its files carry the
 * cf_ prefix (never agsbx_, which is cross-module API). */
#ifndef AGSBX_CONFORMANCE_INTERNAL_H
#define AGSBX_CONFORMANCE_INTERNAL_H

#include "conformance/conformance.h"
#include "evidence/bundle.h"

#define AGSBX_PAYLOAD_NAME "agsbx-payload"

struct check_env {
	const struct agsbx_provider_ops *ops;
	const struct agsbx_conformance_opts *o;
	const struct agsbx_ctx *ctx;        /* the provider's context */
	const struct agsbx_grant *grant;
	struct agsbx_handle *h;             /* shared handle; NULL when blocked */
	const struct agsbx_probe *probe;
	const char *canary_file;            /* outside the grant, 0644, holds the secret */
	const char *canary_secret;
	const char *canary_wdir;            /* outside the grant, writable by the runner's user */
	const char *ro_canary;              /* host path of a canary in the source root */
	const char *ro_canary_content;
	pid_t harness_pid;
	const char *host_kernel_release;
	int64_t lifecycle_timeout_ms;       /* scaled to the provider's start-up latency */
	bool required;                      /* set per check: the provider claims its axis */
	/* Judge-phase checks only: every check's outcome so far (the whole
	 * catalogue, in its order); NULL in the run phase. */
	const struct check_result *results;
	size_t nresults;
};

struct check_out {
	json_t *observations;               /* array */
	json_t *facts;                      /* object */
	bool observed_pass;                 /* what the observation showed, claimed or not */
	bool skipped;                       /* inconclusive (skip): overrides pass/fail */
	bool result_cut;                    /* a payload result line was cut by the output limit */
	/* The first sandboxed run that gave no payload result: what it did
	 * instead (exit status or signal, stderr tail); "" while none. */
	char no_result[240];
	char reason[512];
};

/* How a check bears on its axis for capabilities.truthful. */
enum check_evidence {
	CHECK_BACKS,      /* the axis is observed only if every backing check passes (a skip: inconclusive) */
	CHECK_REFUTES,    /* a fail refutes the axis; a skip (the host could not show the attack) does not */
};
enum check_phase {
	CHECK_PHASE_RUN,  /* runs the attack, concurrently with the others */
	CHECK_PHASE_JUDGE,/* runs after every run-phase check, on their results (env->results) */
};

/* A test that makes the check fail: a negative-control provider (or
 * adapter) the test runs, and the test's path from the source root. */
struct check_negative {
	const char *test, *provider;
};
#define CHECK_NEGATIVES_MAX 4

/* One row of the catalogue. Rows live in their topic's file
 * (conformance/checks/TOPIC.c for ids "TOPIC.name"); catalogue.c sorts
 * them by id into cf_checks. Adding a check on an existing axis: its run
 * function, one row naming the axis, and its negative control. */
struct check_def {
	const char *id;
	enum agsbx_axis axis;             /* required of a provider iff it claims the axis */
	enum check_evidence evidence;
	enum check_phase phase;
	const char *title;
	void (*run)(const struct check_env *env, struct check_out *out);
	bool needs_handle;
	/* Runs alone, after the concurrent ones: its detached tree is
	 * re-parented to the harness, and another run's clean-up must not
	 * take it for its own orphan before it is seen (without a cgroup
	 * there is no way to tell whose it is). */
	/* false, true, or AGSBX_EXCLUSIVE_ORPHANS: exclusive only for the
	 * reason above, so a provider whose executions are never in our
	 * process tree (ops->outside_harness_tree) or keep their own orphans
	 * (ops->runs_keep_orphans) runs it alongside. */
	unsigned char exclusive;
	/* Takes long on any provider (a flood, a second probe, many
	 * executions): queued before the others, so it does not start last
	 * and end the run alone. */
	bool long_running;
	/* The catalogue as data (`agsbx-evidence checks`, docs/checks.md):
	 * what it does, why that matters (the escape class), its paired
	 * control, and the tests whose provider makes it fail. */
	const char *attacks, *why, *control;
	struct check_negative negative[CHECK_NEGATIVES_MAX];
};
/* What a judge sees of a finished check. */
struct check_result {
	const struct check_def *def;
	enum agsbx_check_verdict verdict;
	bool observed_pass;
};
#define AGSBX_EXCLUSIVE_ORPHANS 2

/* The catalogue the matrix runs, every topic's rows sorted by id
 * (conformance/checks/catalogue.c: assembled once, before main). */
extern const struct check_def *const cf_checks;
extern size_t cf_checks_count;

void cf_reason(struct check_out *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Inconclusive: the check is skipped with the reason (a control that
 * failed, a host that cannot run the attack), never failed. */
void cf_skip(struct check_out *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runs the payload op inside the sandbox through the provider: appends an
 * observation (role "sandbox") and returns the parsed payload result
 * (borrowed from the observation; NULL if none) in *result. rc < 0 when
 * the provider refused; run (may be NULL) receives the raw result. */
int cf_sandbox_op(const struct check_env *env, struct check_out *out, struct agsbx_handle *h,
	       const struct agsbx_limits *limits, const char *const *args, json_t **result,
	       struct agsbx_exec_result *keep);
/* argv[0] variants of the filesystem attacks: the payload itself,
 * `/bin/sh -c 'exec PAYLOAD "$@"' sh ARGS...`, `/usr/bin/env PAYLOAD ARGS...`. */
enum agsbx_via { AGSBX_VIA_DIRECT, AGSBX_VIA_SH, AGSBX_VIA_ENV, AGSBX_VIA_COUNT };
const char *cf_via_argv0(enum agsbx_via via);
int cf_sandbox_op_via(const struct check_env *env, struct check_out *out, struct agsbx_handle *h,
		   const struct agsbx_limits *limits, enum agsbx_via via, const char *const *args, json_t **result,
		   struct agsbx_exec_result *keep);
/* The paired control: the same payload op outside any sandbox, as the same
 * user the sandbox runs as (role "control"). */
int cf_control_op(const struct check_env *env, struct check_out *out, const char *const *args, json_t **result);

/* Host conditions (conformance/hostcond.c): the condition a provider's
 * reason asserts (ops->reason_conds), or NULL; and the harness's own
 * decision as the sandbox user: 1 holds, 0 does not, -1 undecidable (how
 * it was decided goes into how). */
const char *cf_reason_condition(const struct agsbx_provider_ops *ops, const char *reason);
int cf_hostcond_decide(const struct check_env *env, const char *cond, json_t *how);

/* capabilities.truthful (truthful.c): the judge, and the provider's
 * observed axes {process_contained..., network} from the results. */
void judge_capabilities_truthful(const struct check_env *env, struct check_out *out);
json_t *cf_observed(const struct check_result *results, size_t n);

/* An attack whose sandboxed run gave no payload result observed nothing:
 * the check is skipped ("no observation: ATTACK: ..." with the run's exit
 * status and stderr tail), never read as ALLOWED, denied or VISIBLE. */
void cf_no_observation(struct check_out *out, const char *attack);

/* The read of PATH through openat2(2) and io_uring (the payload's
 * read-alt), which a sandbox mediating open(2) alone does not see: 1 when
 * either read it or SECRET showed in the output, 0 when both were
 * refused, -1 when there was no result. Recorded in
 * facts.alternate_reads; summary gets "openat2 X, io_uring Y". */
int cf_read_alternates(const struct check_env *env, struct check_out *out, const char *path, const char *secret,
		       char *summary, size_t size);

bool cf_result_ok(const json_t *result);
/* The payload's result: the JSON object on the first line of its stdout
 * (len bytes, any content: sandbox-controlled), numbers beyond +-2^53 and
 * reals nulled; NULL when there is none, or it nests deeper than 32. */
json_t *cf_payload_result_parse(const char *out, size_t len);
const char *cf_result_errno(const json_t *result);
bool cf_run_output_contains(const struct agsbx_run_result *r, const char *needle);

#endif
