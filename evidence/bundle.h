/* The evidence bundle document: one owner for its verdict vocabulary and
 * for the shape of its records. conformance/ fills records and calls the
 * builders; cli/ only orchestrates. Every member of the top level and of
 * a provider record is set by evidence/ (the setters below): cli/ and
 * conformance/ hand over facts, never JSON members (tests/cli/bundle-writers.sh
 * fails otherwise). Diff, report, matrix and render read
 * verdicts through the enums. The schema is schemas/evidence-bundle.schema.json
 * (embedded by evidence/CMakeLists.txt), the reader evidence/parse.c and
 * evidence/load.c: writer, reader and schema are all evidence/'s. */
#ifndef AGSBX_EVIDENCE_BUNDLE_H
#define AGSBX_EVIDENCE_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* A check's verdict. Order is the vocabulary's, not a ranking. */
enum agsbx_check_verdict {
	AGSBX_CHECK_PASS,
	AGSBX_CHECK_FAIL,
	AGSBX_CHECK_SKIP,         /* inconclusive on this host (control failed, interrupted, cut result) */
	AGSBX_CHECK_BLOCKED,      /* the mechanism is unavailable: nothing could run */
	AGSBX_CHECK_NOT_CLAIMED,  /* the provider does not claim the check's axis */
	AGSBX_CHECK_VERDICT_COUNT,
	AGSBX_CHECK_VERDICT_UNKNOWN = -1,
};

/* A provider's verdict. */
enum agsbx_provider_verdict {
	AGSBX_PROVIDER_CONFORMANT,
	AGSBX_PROVIDER_DEFECTIVE,
	AGSBX_PROVIDER_BLOCKED,
	AGSBX_PROVIDER_SKIPPED,
	AGSBX_PROVIDER_VERDICT_COUNT,
	AGSBX_PROVIDER_VERDICT_UNKNOWN = -1,
};

/* Every spelling, indexed by the enum, NULL-terminated (load.c validates
 * against them). */
extern const char *const agsbx_check_verdict_names[AGSBX_CHECK_VERDICT_COUNT + 1];
extern const char *const agsbx_provider_verdict_names[AGSBX_PROVIDER_VERDICT_COUNT + 1];
/* The bundle's spelling ("pass", "not_claimed", "conformant"...); "?" for
 * a value outside the enum. */
const char *agsbx_check_verdict_name(enum agsbx_check_verdict v);
const char *agsbx_provider_verdict_name(enum agsbx_provider_verdict v);
/* The enum for a spelling; *_UNKNOWN for NULL or anything else (a bundle
 * is input: an unknown verdict is data, not a crash). */
enum agsbx_check_verdict agsbx_check_verdict_parse(const char *s);
enum agsbx_provider_verdict agsbx_provider_verdict_parse(const char *s);
/* What a verdict says at a glance, for colours and icons: shown good,
 * shown bad, nothing shown (blocked, skip, skipped), or neither
 * (not_claimed, unknown). */
enum agsbx_outcome { AGSBX_OUTCOME_GOOD, AGSBX_OUTCOME_BAD, AGSBX_OUTCOME_NOT_SHOWN, AGSBX_OUTCOME_NEUTRAL };
enum agsbx_outcome agsbx_check_outcome(enum agsbx_check_verdict v);
enum agsbx_outcome agsbx_provider_outcome(enum agsbx_provider_verdict v);
/* The "verdict" member of a check / provider record. */
enum agsbx_check_verdict agsbx_check_verdict_of(const json_t *check);
enum agsbx_provider_verdict agsbx_provider_verdict_of(const json_t *provider);

/* One check record: {id, axis, verdict, observed_pass, reason,
 * duration_us, observations, facts}. observations and facts are stolen
 * (NULL: empty). */
struct agsbx_check_record {
	const char *id;
	const char *axis;
	enum agsbx_check_verdict verdict;
	bool observed_pass;
	const char *reason;
	uint64_t duration_us;
	json_t *observations;
	json_t *facts;
};
json_t *agsbx_bundle_check(const struct agsbx_check_record *r);

/* The longest stdout/stderr excerpt an observation keeps (bytes); the
 * full sizes are recorded beside it. */
#define AGSBX_BUNDLE_EXCERPT_MAX 2048
struct agsbx_run_result;
/* One execution as a check saw it: {role, argv, exit_status, exited,
 * signal, timed_out, cancelled, errno, duration_us, stdout, stdout_truncated,
 * stdout_bytes, stderr..., result}. result (the payload's parsed result
 * line, may be NULL) is borrowed; every string is sanitised (it is
 * sandbox output). */
json_t *agsbx_bundle_observation(const char *role, const char *const *argv, const struct agsbx_run_result *r,
				 const json_t *result);
/* An execution the provider refused: {role: "sandbox", argv, refused, message}. */
json_t *agsbx_bundle_refusal(const char *const *argv, const char *reason, const char *message);

/* A provider record that never reached its checks: {id, verdict, reason,
 * probe: {available:false, reason: probe_reason, capabilities:{}, facts:{}},
 * claims:null, observed:null, underclaim:[], failing_checks:[], checks,
 * timings:{total_us}}. checks is stolen (NULL: []). */
json_t *agsbx_bundle_provider_unrun(const char *id, enum agsbx_provider_verdict verdict, const char *reason,
				    const char *probe_reason, json_t *checks, uint64_t total_us);

/* A provider record that ran: every json_t member is stolen. The verdict
 * follows from failing_checks (defective) and ran (conformant/blocked). */
struct agsbx_provider_record {
	const char *id;
	bool ran;                 /* a handle existed: the checks ran */
	const char *reason;
	json_t *probe, *claims, *observed, *underclaim, *failing_checks, *checks, *confinement;
};
json_t *agsbx_bundle_provider(const struct agsbx_provider_record *r);

/* What ran: {name, version, git_commit, binary_sha256} of the running
 * executable. */
json_t *agsbx_bundle_tool(void);

/* The run's context (who ran it, where, what was simulated or changed on
 * the host): the facts the caller gathered, turned into
 * context.{privilege, container, representative, representative_reasons,
 * simulations, host_policy?}. */
struct agsbx_bundle_context {
	const char *run_as_name;          /* NULL: no --run-as */
	bool container;                   /* the host probe detected a container */
	const json_t *container_markers;  /* borrowed, may be NULL */
	/* The harness's capability sets (hex); have_caps false: unreadable. */
	bool have_caps;
	const char *cap_eff, *cap_prm, *cap_amb;
	const char *simulate;             /* NULL: none requested */
	const json_t *simulated;          /* ids of the providers it applied to (borrowed array) */
	/* The userns sysctl before the workflow loaded the distro bwrap
	 * profile (--host-policy); NULL: no host policy change. */
	const char *userns_before;
};
json_t *agsbx_bundle_context(const struct agsbx_bundle_context *c);

/* The top level before the providers run: {schema, tool, created_at,
 * attachments: [], providers: []}. */
json_t *agsbx_bundle_new(void);

/* ---- setters: the only writers of the top level (0 or -errno) ---------- */

struct agsbx_error;
/* challenge: a maintainer's nonce, recorded as given. */
int agsbx_bundle_set_challenge(json_t *bundle, const char *nonce);
/* subject: branch, commit and dirty state of the git repository at repo
 * (agsbx_subject_from_repo); -EINVAL with e set when it is none. */
int agsbx_bundle_set_subject(json_t *bundle, const char *repo, struct agsbx_error *e);
/* attachments[]: cmdline run through the bounded runner
 * (agsbx_attachment_run); -EINVAL with e set for a bad command. */
int agsbx_bundle_add_attachment(json_t *bundle, const char *cmdline, int64_t timeout_ms, size_t max_tail,
				struct agsbx_error *e);
/* host: the host probe (a reference is taken). */
int agsbx_bundle_set_host(json_t *bundle, json_t *host);
/* context: agsbx_bundle_context of c. */
int agsbx_bundle_set_context(json_t *bundle, const struct agsbx_bundle_context *c);
/* providers[]: one provider record (a reference is taken). */
int agsbx_bundle_add_provider(json_t *bundle, json_t *provider);

/* The run's timings: when each provider's worker ran (monotonic
 * microseconds from the start of the provider runs) and how concurrent
 * the run was; the method is evidence/'s prose. */
struct agsbx_run_timing {
	const char *id;
	uint64_t start_us, end_us;
};
struct agsbx_run_timings {
	const struct agsbx_run_timing *providers;
	size_t n;
	uint64_t providers_us;            /* the start of the runs to now */
	int max_providers;                /* providers run at once */
	int checks_per_provider;
};
int agsbx_bundle_set_run_timings(json_t *bundle, const struct agsbx_run_timings *t);

/* ---- setters of a provider record's late members ----------------------- */

/* timings: where the provider's time went, phase by phase (microseconds). */
struct agsbx_provider_timings {
	uint64_t probe_us, setup_us, ensure_us, first_exec_us, concurrent_us, exclusive_us, release_us,
		teardown_us, total_us;
	int check_threads;                /* concurrent checks ran on up to this many */
};
int agsbx_bundle_provider_set_timings(json_t *provider, const struct agsbx_provider_timings *t);
/* config: the provider's --config values (a reference is taken). */
int agsbx_bundle_provider_set_config(json_t *provider, const json_t *config);
/* What a declared provider's finish added (merged into the record), and
 * the reason naming a contract break outside any one check (NULL: the
 * record's own stays). */
int agsbx_bundle_provider_declare(json_t *provider, const json_t *declared, const char *reason);

/* Completes the bundle from its providers: adds summary {providers,
 * conformant, defective, blocked, skipped, defects, exit_status} and
 * returns the exit status it records (1 on any defective provider). */
int agsbx_bundle_finish(json_t *bundle);

#endif
