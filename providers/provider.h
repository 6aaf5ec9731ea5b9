/* The provider contract: what every sandbox provider does for the harness
 * (probe, ensure, execute, release, ...) as one struct of function
 * pointers, modelled on Agently's ExecutionResourceProvider.
 *
 * Checklist for adding a provider: at most five files.
 *  1. providers/<id>/<id>.c (or providers/<id>.c): one
 *     `const struct agsbx_provider_ops agsbx_provider_<id>` (CMake picks
 *     every providers/ source up; a helper program is a helper-*.c built
 *     with agsbx_add_helper()).
 *  2. providers/registry.c: its row in the sorted table, with its
 *     `extern` beside the others there. (The externs below are for
 *     callers that name a provider directly: tests, negative controls.)
 *  3. docs/providers/<id>.md: the mechanism, what it isolates, what it
 *     does not, every reason.
 *  4, 5. Only where it shares facts with the host probes: the probe
 *     family (probes/<family>.c, listed in probes/host.c) and its entry in
 *     schemas/host-probe.schema.json; the provider names them in
 *     `shared_facts`.
 * Hand-kept besides, and held to the registry by
 * tests/cli/providers-registry.sh: the provider named in README.md and
 * docs/agsbx-evidence.1, and the `--provider` words in
 * completion/agsbx-evidence.bash. Tests: the real mechanism in
 * tests/test-<id>.c, plus the provider in the matrix (tests/cli/).
 *
 * The ops, in the struct below:
 *  - Every op without a handle (applies, probe, ensure, configure,
 *    cleanup_dead, finish) receives `self`, the ops it was called through:
 *    call it as ops->probe(ops, ...). An op with a handle (health,
 *    execute, release, leftovers, raw_command) reaches its provider as
 *    h->ops. So one function can serve several instances (the declared
 *    providers, whose ops are copies of one template).
 *  - `reasons`: the closed set of probe/ensure reasons, NULL-terminated,
 *    containing "ready". probe.truthful fails on any reason outside it;
 *    `reason_conds` maps each blocked reason that asserts a host condition
 *    (AGSBX_HOSTCOND_*) so probe.truthful can cross-check it.
 *  - `config_keys`: every accepted config key as "name:type" (type bool
 *    or string); any other key, or a value of another type, is an error
 *    (agsbx_provider_check_config, what agsbx_provider_configure runs when
 *    `configure` is NULL; read a bool with agsbx_config_bool, the one
 *    boolean parser).
 *  - probe(): observed facts only. `available` <=> reason == "ready".
 *    Capabilities claim an axis only when the mechanism enforces it;
 *    capabilities.truthful marks an overclaim as a defect. A fact the
 *    host probes also observe is listed in `shared_facts`.
 *  - ensure(): validate config, run the real mechanism probe again,
 *    refuse (fail closed, documented reason) rather than fall back.
 *    Mounts and policies come from the grant only; never from the caller.
 *    Provider state goes into h->priv with h->priv_free to end it.
 *  - execute(): through agsbx_handle_execute, which refuses after release,
 *    holds the handle against a release on another thread and runs the
 *    step gate (a well-formed step, the TOCTOU guard on the bundle) right
 *    before the provider's own run; that runs through base/runner
 *    (bounded output, timeout, cancel, whole-tree cleanup) and fills meta
 *    with agsbx_handle_meta. Must be safe to call from several threads on
 *    one handle.
 *  - release(): agsbx_handle_release with the provider's teardown (it
 *    runs once; later calls do nothing); removes every temporary
 *    resource it created. A provider that creates none leaves release
 *    NULL: agsbx_provider_release then releases with no teardown.
 *    health(), leftovers() and raw_command() use agsbx_handle_health or
 *    agsbx_handle_enter/leave (a NULL health is agsbx_handle_health).
 * Providers declared at run time (--adapter, --wrap) live in
 * providers/external/: `declared` set, ops copied from their kind's
 * template, the instance found from self or h->ops; an adapter's handle
 * forwards health, execute and release to the adapter, whose own
 * lifecycle the checks then judge. */
#ifndef AGSBX_PROVIDERS_PROVIDER_H
#define AGSBX_PROVIDERS_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "base/error.h"
#include "base/runner.h"
#include "base/strv.h"

/* Network claims, the upstream vocabulary. */
#define AGSBX_NET_ISOLATED "isolated"
#define AGSBX_NET_TCP_RESTRICTED "tcp_restricted"
#define AGSBX_NET_INHERITED "inherited"
#define AGSBX_NET_CONFIGURABLE "configurable"

struct agsbx_caps {
	bool process_contained;
	bool host_filesystem_restricted;
	bool privilege_escalation_blocked;
	bool syscalls_restricted;
	const char *network;          /* AGSBX_NET_* (static string) */
	bool environment_scrubbed;
	const char *mechanism;        /* static string, e.g. "landlock" */
	const char *safety_class;     /* static string, e.g. "filesystem_only" */
	/* Not an upstream axis: the provider bounds processes and memory. */
	bool resources_bounded;
};

/* The capability axes: the one list every consumer iterates (the check
 * catalogue names an axis per row; capabilities.truthful, the caps JSON,
 * `providers` and adapters' claims walk this table). A check on an
 * existing axis counts for capabilities.truthful by naming it. */
enum agsbx_axis {
	AGSBX_AXIS_CONTRACT,          /* the provider contract: required of every provider */
	AGSBX_AXIS_PROCESS,
	AGSBX_AXIS_FILESYSTEM,
	AGSBX_AXIS_PRIVILEGE,
	AGSBX_AXIS_SYSCALLS,
	AGSBX_AXIS_ENVIRONMENT,
	AGSBX_AXIS_NET_NAMESPACE,     /* network = isolated needs it (and egress) */
	AGSBX_AXIS_NET_EGRESS,        /* network = tcp_restricted or isolated needs it */
	AGSBX_AXIS_RESOURCES,         /* resources_bounded (not upstream) */
	AGSBX_AXIS_COUNT
};
enum agsbx_axis_kind {
	AGSBX_AXIS_KIND_CONTRACT,
	AGSBX_AXIS_KIND_FLAG,         /* a bool member of agsbx_caps named `name` */
	AGSBX_AXIS_KIND_NETWORK,      /* one level of the `network` claim */
};
struct agsbx_axis_info {
	/* The "axis" of its checks in the bundle; for a flag also the
	 * capability key. Both network axes are "network". */
	const char *name;
	enum agsbx_axis_kind kind;
	size_t flag_offset;           /* FLAG: offsetof(struct agsbx_caps, member) */
	int net_rank;                 /* NETWORK: agsbx_net_rank() of the lowest claim it backs */
};
extern const struct agsbx_axis_info agsbx_axes[AGSBX_AXIS_COUNT];
/* 2 isolated, 1 tcp_restricted, 0 anything else (inherited, configurable, NULL). */
int agsbx_net_rank(const char *network);
/* The network claim of a rank (AGSBX_NET_ISOLATED...). */
const char *agsbx_net_of_rank(int rank);
/* Whether caps claim the axis (the contract always is). */
bool agsbx_axis_claimed(enum agsbx_axis a, const struct agsbx_caps *caps);
/* FLAG axes: the member in caps; NULL for other kinds. */
bool *agsbx_axis_flag(enum agsbx_axis a, struct agsbx_caps *caps);

/* Simulations a harness may ask for; each is labelled in the bundle and
 * makes the run non-representative. Providers that cannot honour the
 * requested one must ignore it (the harness records what was requested). */
#define AGSBX_SIM_BLOCKED_USERNS "blocked-userns"   /* seccomp: CLONE_NEWUSER -> EPERM */
#define AGSBX_SIM_NO_LANDLOCK "no-landlock"         /* seccomp: landlock_* -> ENOSYS */
#define AGSBX_SIM_DOCKER_UNREACHABLE "docker-unreachable"

/* Per-run harness context, shared read-only by all providers. */
struct agsbx_ctx {
	const char *tool_dir;         /* directory of agsbx-evidence and its helpers */
	const char *payload_path;     /* host path of the static payload */
	bool run_as;                  /* harness is root and drops to run_uid/gid */
	uid_t run_uid;
	gid_t run_gid;
	const char *run_as_name;
	const char *simulate;         /* NULL or AGSBX_SIM_* */
	const json_t *host;           /* host probe object (borrowed), may be NULL */
	int64_t probe_timeout_ms;     /* for mechanism probes (default AGSBX_PROBE_TIMEOUT_MS) */
	const json_t *config;         /* provider config object (borrowed), may be NULL */
	/* "NAME=VALUE", or NULL: the harness's env canary (a variable set in
	 * its own environment). A wrapper is given it as the caller's
	 * environment would reach it, so env.scrubbed judges the wrapper. */
	const char *env_canary;
};

struct agsbx_probe {
	bool available;
	const char *reason;           /* static string from ops->reasons */
	struct agsbx_caps caps;
	json_t *facts;                /* new reference: object, mechanism facts */
	char *detail;                 /* malloc'd human message, may be NULL */
	char *hint;                   /* malloc'd remedy, may be NULL */
};
void agsbx_provider_probe_clear(struct agsbx_probe *p);
/* {available, reason, capabilities, facts, detail?, hint?} (new ref). */
json_t *agsbx_provider_probe_to_json(const struct agsbx_probe *p);
json_t *agsbx_caps_to_json(const struct agsbx_caps *c);

/* Why ensure (or execute) refused: base's error record (first error
 * wins), its reason a static string from ops->reasons or a generic one. */
void agsbx_fail(struct agsbx_error *f, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* agsbx_fail, and hint as the remedy (NULL or empty: f's hint untouched). */
void agsbx_fail_hint(struct agsbx_error *f, const char *reason, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- grant model ------------------------------------------------------ */

enum agsbx_root_role {
	AGSBX_ROOT_SOURCE,            /* read-only: the immutable bundle */
	AGSBX_ROOT_BUILD,             /* read-write; TMPDIR points here */
	AGSBX_ROOT_OUTPUT,            /* read-write */
	AGSBX_ROOT_LOGS,              /* read-write */
	AGSBX_ROOT_COUNT
};
const char *agsbx_root_role_name(enum agsbx_root_role r);

struct agsbx_grant_root {
	char *path;                   /* canonical host path, no symlink component */
	bool writable;
};

struct agsbx_bundle_file {
	char *name;                   /* relative to the source root */
	char *path;                   /* host path */
	char sha256[65];
	uint64_t bytes;
	bool executable;
	/* Inode fingerprint at materialisation: any write to the file moves
	 * its ctime (which no unprivileged process can set), so an unchanged
	 * fingerprint lets verify skip re-hashing; a changed one re-hashes. */
	uint64_t dev, ino;
	int64_t mtime_ns, ctime_ns;
};

struct agsbx_grant {
	char id[64];                  /* "grant-<hex>" */
	char *area;                   /* execution area (parent of the roots) */
	struct agsbx_grant_root roots[AGSBX_ROOT_COUNT];
	struct agsbx_bundle_file *files;
	size_t nfiles;
	bool sealed;                  /* materialised; no more files */
};

/* Creates <parent>/<prefix>-<hex>/{source,build,output,logs} (mode 0755).
 * When owner_uid is not (uid_t)-1 the roots are chowned to it, so a
 * dropped-privilege sandbox can use them. parent must exist and contain no
 * symlink component (-ELOOP otherwise). */
int agsbx_grant_create(const char *parent, const char *prefix, uid_t owner_uid, gid_t owner_gid,
		       struct agsbx_grant **out);
/* Copies src into source/<name> with exclusive create, records sha256. */
int agsbx_grant_add_file(struct agsbx_grant *g, const char *name, const char *src, bool executable);
/* No more files after this (source stays owner-writable: see grant.c). */
int agsbx_grant_seal(struct agsbx_grant *g);
/* The TOCTOU guard: every file still a regular non-symlink file with the
 * recorded sha256 (re-hashed whenever its inode fingerprint moved since
 * materialisation). -EBADMSG on a digest change, -ELOOP on a symlink;
 * why in fail (reason "bundle_changed", may be NULL). */
int agsbx_grant_verify(const struct agsbx_grant *g, struct agsbx_error *fail);
/* Refuses a path that is, or has a component that is, a symlink. */
int agsbx_path_check_no_symlink(const char *path);
/* Removes the area recursively (never following symlinks) and frees g. */
void agsbx_grant_destroy(struct agsbx_grant *g);

/* ---- execution -------------------------------------------------------- */

struct agsbx_step {
	/* argv[0] is a path as seen inside the sandbox (agsbx_handle_path). */
	const char *const *argv;
	/* Extra "KEY=VALUE" entries on top of the provider's own environment;
	 * NULL-terminated, may be NULL. */
	const char *const *env;
	enum agsbx_root_role cwd;
};

struct agsbx_limits {
	size_t max_output_bytes;      /* per stream */
	int64_t timeout_ms;
	int cancel_fd;                /* -1 or readable => cancel */
	/* A sandbox no other execution shares, before or after: what is left
	 * once it ends is its own (the lifecycle checks). Providers that make
	 * one sandbox per execution anyway ignore it; gvisor otherwise runs
	 * executions one after another in a warm container. */
	bool own_sandbox;
};

struct agsbx_exec_result {
	struct agsbx_run_result run;
	json_t *meta;                 /* new ref: {provider, mechanism, capabilities, versions} */
};
void agsbx_exec_result_clear(struct agsbx_exec_result *r);

struct agsbx_handle {
	const struct agsbx_provider_ops *ops;
	const struct agsbx_ctx *ctx;
	const struct agsbx_grant *grant;
	struct agsbx_caps caps;       /* as claimed by the probe ensure verified */
	char *paths[AGSBX_ROOT_COUNT];/* grant roots as seen inside the sandbox */
	json_t *versions;             /* mechanism versions for result meta (owned) */
	/* Provider state. Between agsbx_handle_enter and _leave it stays
	 * valid whatever another thread's release does. */
	void *priv;
	/* Frees priv once the handle is released and no call is in flight
	 * (or at agsbx_handle_free); NULL: priv is not the handle's to free. */
	void (*priv_free)(void *priv);
	/* The lifecycle below: lock guards released, inflight and priv's
	 * lifetime. Read them only through the agsbx_handle_* calls. */
	pthread_mutex_t lock;
	unsigned inflight;
	bool released;
};
/* Allocates a handle with paths = the host paths (providers that mount the
 * roots elsewhere overwrite them). */
struct agsbx_handle *agsbx_handle_new(const struct agsbx_provider_ops *ops, const struct agsbx_ctx *ctx,
				      const struct agsbx_grant *g, const struct agsbx_caps *caps);
/* NULL-safe. Frees priv too when it is still there (never released, or a
 * release whose last call has not left: a caller bug, not a race). */
void agsbx_handle_free(struct agsbx_handle *h);

/* The handle lifecycle of the contract (refuse after release, release
 * idempotent and safe while executions run on other threads), written
 * once; each provider calls it from its own ops, so the lifecycle checks
 * still judge the provider.
 * enter: a reference for one call: 0, or -ESTALE once released (with
 * reason "released" in fail, which may be NULL). Pair every 0 with leave. */
int agsbx_handle_enter(struct agsbx_handle *h, struct agsbx_error *fail);
/* Drops the reference; the last one out after release frees priv. */
void agsbx_handle_leave(struct agsbx_handle *h);
/* Marks h released. The first call only runs teardown(h) (may be NULL),
 * holding a reference so that priv is valid during it; later calls do
 * nothing. Returns true for the first call. */
bool agsbx_handle_release(struct agsbx_handle *h, void (*teardown)(struct agsbx_handle *h));
/* Health as h's ops say: ops->health, or agsbx_handle_health when the
 * provider leaves health NULL (it has nothing to re-probe). */
int agsbx_provider_health(struct agsbx_handle *h);
/* Releases h as its ops say: ops->release, or agsbx_handle_release with no
 * teardown when the provider leaves release NULL. Every caller outside a
 * provider's own code releases through this. */
void agsbx_provider_release(struct agsbx_handle *h);
/* -ESTALE once released, else 0 (providers add their own re-probe). */
int agsbx_handle_health(struct agsbx_handle *h);
/* The shape of ops->execute. */
typedef int agsbx_execute_fn(struct agsbx_handle *h, const struct agsbx_step *step,
			     const struct agsbx_limits *limits, struct agsbx_exec_result *out,
			     struct agsbx_error *fail);
/* An execute() inside the lifecycle: out cleared; refused once released
 * (-ESTALE, reason "released"); then the step gate
 * (agsbx_provider_check_step: a malformed step or a changed bundle is
 * refused); then run() between enter and leave, its result returned. */
int agsbx_handle_execute(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
			 struct agsbx_exec_result *out, struct agsbx_error *fail, agsbx_execute_fn *run);
/* Sandbox-side path of root r joined with rel (rel may be NULL); malloc'd. */
char *agsbx_handle_path(const struct agsbx_handle *h, enum agsbx_root_role r, const char *rel);
/* meta for a result: {provider, mechanism, capabilities, versions} (new ref). */
json_t *agsbx_handle_meta(const struct agsbx_handle *h);

/* What a user would run by hand for one step with the bare mechanism and
 * the same policy; bench times it against execute(). */
struct agsbx_raw_command {
	char **argv;                  /* NULL-terminated, malloc'd; argv[0] looked up in PATH */
	char **envp;                  /* NULL-terminated, malloc'd; NULL: the harness environment */
	char *cwd;                    /* malloc'd; NULL: the harness's */
};
void agsbx_raw_command_clear(struct agsbx_raw_command *c);

struct agsbx_provider_ops {
	const char *id;
	const char *summary;
	const char *const *reasons;       /* closed set, NULL-terminated, includes "ready" */
	const char *const *config_keys;   /* accepted "name:type" keys, NULL-terminated */
	/* A simulation the harness may request to make this provider
	 * unavailable for fail.closed (AGSBX_SIM_*), or NULL. */
	const char *fail_closed_simulation;
	/* Every op that has no handle gets `self`, the ops it was called
	 * through (a declared provider's instance is found from it); an op
	 * with a handle reaches it as h->ops. */
	bool (*applies)(const struct agsbx_provider_ops *self);   /* this platform? NULL = always */
	int (*probe)(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out);
	int (*ensure)(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		      struct agsbx_handle **out, struct agsbx_error *fail);
	int (*health)(struct agsbx_handle *h);     /* 0 ready, <0 unhealthy; NULL: agsbx_handle_health */
	int (*execute)(struct agsbx_handle *h, const struct agsbx_step *step,
		       const struct agsbx_limits *limits, struct agsbx_exec_result *out,
		       struct agsbx_error *fail);
	/* NULL: nothing to tear down (agsbx_provider_release dispatches). */
	void (*release)(struct agsbx_handle *h);
	/* Optional: temporary resources of this handle still present after an
	 * execution with `marker` ended (containers, policy files...). Returns
	 * a count (>= 0) and, in *found, a new JSON array describing them. */
	int (*leftovers)(struct agsbx_handle *h, const char *marker, json_t **found);
	/* Optional, for bench: the raw-mechanism command equivalent to
	 * execute(h, step) (bwrap with the same binds, the landlock helper
	 * with the same manifest, docker run with the same mounts; for an
	 * external provider, the adapter's own execute). 0, or -errno
	 * (-EOPNOTSUPP: no raw equivalent). Never runs anything. */
	int (*raw_command)(struct agsbx_handle *h, const struct agsbx_step *step, struct agsbx_raw_command *out);
	/* True only when no process of an execution can ever be in the
	 * harness's own process tree (they are children of a container
	 * daemon, never of ours): the detached-tree lifecycle checks then run
	 * alongside the other checks instead of alone afterwards. */
	bool outside_harness_tree;
	/* True when every execution is one agsbx_run whose child lives until
	 * the step is over (the payload itself, or a launcher that waits for
	 * it): that child is a subreaper (base/runner.h), so what the step
	 * detaches stays in its own run's tree and no other run's sweep can
	 * take it; the detached-tree lifecycle checks then run alongside. */
	bool runs_keep_orphans;
	/* Optional: resources of this provider that a harness left when it
	 * died (SIGKILL, a CI timeout): those whose owning process
	 * (base/rundir.h) is gone, never a live run's. Removes them unless
	 * dry_run; appends one {kind, id, owner, removed} per resource to
	 * found. Returns the count or -errno (nothing to reach is 0). */
	int (*cleanup_dead)(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, bool dry_run,
			    json_t *found);
	/* Optional (declared providers: --adapter, --wrap): called once when
	 * the provider's run is over and every handle was released. Returns
	 * members for the provider object (kind, argv, the adapter record) as
	 * a new JSON object; sets defect->reason when the provider broke the
	 * contract outside any one check (an adapter's protocol violation,
	 * leftovers), which makes it defective. */
	json_t *(*finish)(const struct agsbx_provider_ops *self, struct agsbx_error *defect);
	/* A provider declared at run time (--adapter, --wrap): it wraps a
	 * mechanism the harness cannot name in advance, so every labelled
	 * simulation is its fail-closed test and its end of run (finish) is
	 * recorded. */
	bool declared;
	/* Optional: checks the provider's --config object before anything
	 * runs (0, or -EINVAL with the message in fail). NULL: the keys and
	 * types of config_keys (agsbx_provider_check_config). Call it through
	 * agsbx_provider_configure. */
	int (*configure)(const struct agsbx_provider_ops *self, const json_t *config, struct agsbx_error *fail);
	/* Optional: which probe reasons stand for a host condition the
	 * harness can decide itself (probe.truthful cross-checks them),
	 * NULL-terminated pairs {reason, AGSBX_HOSTCOND_*}. */
	const struct agsbx_reason_cond *reason_conds;
	/* Optional: the probe facts this provider shares with the host
	 * probes (probes/), which probe.truthful requires to agree with them
	 * when both are present; terminated by a row with fact NULL. */
	const struct agsbx_shared_fact *shared_facts;
};

/* A probe fact that is also a host probe's: facts.<fact> of the provider
 * equals host.<family>.<host_fact>.value. */
struct agsbx_shared_fact {
	const char *fact;
	const char *family;           /* probes/ family, e.g. "landlock" */
	const char *host_fact;
};

/* Host conditions a blocked reason may assert; probe.truthful decides
 * each with the harness's own probe, as the sandbox's user. */
#define AGSBX_HOSTCOND_USERNS_BLOCKED "userns_blocked"
#define AGSBX_HOSTCOND_LANDLOCK_UNSUPPORTED "landlock_unsupported"
#define AGSBX_HOSTCOND_DOCKER_UNREACHABLE "docker_unreachable"
#define AGSBX_HOSTCOND_RUNTIME_UNREGISTERED "runtime_unregistered"
struct agsbx_reason_cond {
	const char *reason;
	const char *cond;             /* AGSBX_HOSTCOND_* */
};

/* The built-in providers, for callers that name one directly (registry.c
 * declares and lists them, sorted by id). */
extern const struct agsbx_provider_ops agsbx_provider_bubblewrap;
extern const struct agsbx_provider_ops agsbx_provider_gvisor;
extern const struct agsbx_provider_ops agsbx_provider_landlock;
extern const struct agsbx_provider_ops agsbx_provider_seatbelt;
extern const struct agsbx_provider_ops agsbx_provider_trusted_local;

/* Registry (sorted by id). */
size_t agsbx_provider_count(void);
/* The first agsbx_provider_builtin_count() entries are the shipped ones;
 * extras (test-only negative controls) follow and are never selected by
 * default. */
size_t agsbx_provider_builtin_count(void);
const struct agsbx_provider_ops *agsbx_provider_at(size_t i);
const struct agsbx_provider_ops *agsbx_provider_find(const char *id);
/* Tests add negative-control providers here; never the shipped binary. */
void agsbx_provider_register_extra(const struct agsbx_provider_ops *ops);

bool agsbx_reason_in_set(const struct agsbx_provider_ops *ops, const char *reason);
/* Failure reasons about the harness's input rather than the mechanism,
 * which any provider's ensure/execute may give besides its own closed set:
 * config_invalid, grant_invalid, step_invalid, bundle_changed, released,
 * run_failed (NULL-terminated). probe() never uses them. */
extern const char *const agsbx_generic_reasons[];
/* -EINVAL with a message naming the first unknown key or the first value
 * outside its key's type. */
int agsbx_provider_check_config(const struct agsbx_provider_ops *ops, const json_t *config,
				struct agsbx_error *fail);
/* The config check before a run: ops->configure, or
 * agsbx_provider_check_config when the provider leaves it NULL. */
int agsbx_provider_configure(const struct agsbx_provider_ops *ops, const json_t *config, struct agsbx_error *fail);

/* The one boolean parser for config values: JSON true/false only; absent
 * is def. -EINVAL (message in fail, may be NULL) for anything else. */
int agsbx_config_bool(const struct agsbx_provider_ops *ops, const json_t *config, const char *key, bool def,
		      bool *out, struct agsbx_error *fail);

/* Every execute's last gate before anything runs: a well-formed step
 * (argv[0] present, a known cwd root) and the TOCTOU guard on the
 * materialised bundle. Fails with reason "step_invalid" (-EINVAL) or
 * "bundle_changed" (-EBADMSG). */
int agsbx_provider_check_step(const struct agsbx_handle *h, const struct agsbx_step *step,
			      struct agsbx_error *fail);

/* Common helpers for host-process providers. */
/* True when a program started for this context holds no capability: it
 * runs as an unprivileged --run-as user (the drop clears every set), or
 * the harness itself has empty effective, permitted and ambient sets. A
 * process that keeps capabilities can escalate whatever no_new_privs
 * says, so privilege_escalation_blocked is claimed only on this. */
bool agsbx_provider_runs_without_caps(const struct agsbx_ctx *ctx);
/* The harness's own capability sets (/proc/self/status, hex); false when
 * unreadable. */
bool agsbx_self_caps(char eff[17], char prm[17], char amb[17]);
/* Minimal environment for the sandboxed program: PATH, LANG=C.UTF-8,
 * TMPDIR=TMP=TEMP=<build root as seen inside>, HOME=<build root>, then
 * step->env. NULL-terminated, malloc'd (free with agsbx_strv_free). */
char **agsbx_provider_min_env(const struct agsbx_handle *h, const struct agsbx_step *step);
/* Fills runner options from ctx (run_as) and limits. */
void agsbx_provider_run_opts(const struct agsbx_handle *h, const struct agsbx_limits *limits,
			     struct agsbx_run_opts *o);
/* Runs argv in cwd through base/runner with the handle's run options
 * (agsbx_provider_run_opts) and envp (NULL: the harness's environment);
 * out->meta is agsbx_handle_meta(h). agsbx_run's result. */
int agsbx_provider_run(const struct agsbx_handle *h, const struct agsbx_limits *limits, const char *const *argv,
		       const char *const *envp, const char *cwd, struct agsbx_exec_result *out);
/* When ctx->simulate names a seccomp simulation, returns a new argv with
 * "<tool_dir>/agsbx-simulate --<sim> --" prepended; otherwise a copy. */
char **agsbx_provider_wrap_simulation(const struct agsbx_ctx *ctx, const char *const *argv);

#endif
