/* The acceptance matrix: every check of docs/checks.md with its paired
 * control, run against one provider at a time; the provider verdict and
 * capabilities.truthful. */
#ifndef AGSBX_CONFORMANCE_CONFORMANCE_H
#define AGSBX_CONFORMANCE_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "providers/provider.h"

/* The longest result line the payload prints (docs/payload.md): a
 * --max-output-bytes below it cannot yield a verdict and is bad usage. */
#define AGSBX_PAYLOAD_RESULT_MAX 1024

struct agsbx_conformance_opts {
	const struct agsbx_ctx *ctx;  /* tool_dir, payload, run_as, simulate, host */
	const char *work_dir;         /* parent of execution areas and canaries; no symlink */
	const char *env_canary_name;  /* a variable the harness set in its own environment */
	const char *env_canary_value;
	size_t max_output_bytes;      /* per stream (default 20000) */
	int64_t timeout_ms;           /* per execution (default AGSBX_EXEC_TIMEOUT_MS) */
	int jobs;                     /* concurrent checks (default: online cores) */
	/* Readable => cancel every execution that has no cancel fd of its own
	 * (an eventfd a signal handler writes). 0 or -1: none (stdin is never
	 * one, and a zero-initialised opts must not cancel on it). */
	int cancel_fd;
	/* Called (serialised) as each check finishes. */
	void (*progress)(void *ud, const char *provider, const json_t *check);
	void *progress_ud;
};

struct agsbx_error;
/* Runs probe + every check for one provider and returns the provider object
 * of the bundle (new reference): {id, verdict, reason, probe, claims,
 * observed, underclaim, failing_checks, checks[], timings}. NULL only on
 * out-of-memory or an internal error (err set). */
json_t *agsbx_conformance_run(const struct agsbx_provider_ops *ops, const struct agsbx_conformance_opts *opts,
			      struct agsbx_error *err);

/* Number of checks in a provider's result (the catalogue, sorted by id,
 * plus capabilities.truthful). */
size_t agsbx_conformance_check_count(void);

/* The catalogue as data: every check a bundle can contain (those run for
 * every provider, and those the matrix adds for declared providers only),
 * sorted by id, each {id, axis, evidence, phase, title, attacks, why,
 * control, negative_control: [{test, provider}], needs_handle, exclusive,
 * declared_only} (docs/checks.md). New reference; NULL on out-of-memory. */
json_t *agsbx_conformance_catalogue(void);

/* Removes any canary the checks placed outside the work dir (the one in
 * the user's real $HOME). Async-signal-safe: a CLI calls it from its
 * SIGINT/SIGTERM/SIGHUP handler, so an interrupted run leaves nothing. */
void agsbx_conformance_remove_canaries(void);
/* The same for the key secrets.keyring_denied placed in the sandbox user's
 * keyrings (revoked and unlinked; it also expires by itself). A separate
 * call: the $HOME check removes its own canary while this one may be in
 * use. Async-signal-safe. */
void agsbx_conformance_remove_keyring_canary(void);

/* env.scrubbed's canary: a random AGSBX_CANARY_<hex>=<hex> the harness
 * sets in its own environment before any provider runs (a provider that
 * passes the host environment through shows it to the payload), and
 * removes after. name and value go to agsbx_conformance_opts, assignment
 * ("NAME=VALUE") to agsbx_ctx.env_canary. 0 or -errno. */
struct agsbx_env_canary {
	char name[64], value[65], assignment[130];
};
int agsbx_env_canary_set(struct agsbx_env_canary *c);
void agsbx_env_canary_unset(const struct agsbx_env_canary *c);


#endif
