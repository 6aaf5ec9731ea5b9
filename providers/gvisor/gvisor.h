/* Internals of the gvisor provider (providers/gvisor only; tests include it
 * for the pieces that can be checked without a daemon). */
#ifndef AGSBX_PROVIDERS_GVISOR_GVISOR_H
#define AGSBX_PROVIDERS_GVISOR_GVISOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "base/error.h"
#include "base/runner.h"
#include "providers/gvisor/docker-api.h"

/* Reasons (the closed set, also in gvisor.c's reasons[]). */
#define GV_R_READY "ready"
#define GV_R_UNAVAILABLE "docker_unavailable"
#define GV_R_UNREGISTERED "runsc_runtime_unregistered"
#define GV_R_REGISTRY_INVALID "runsc_runtime_registry_invalid"
#define GV_R_IMAGE_MISSING "runsc_runtime_image_missing"
#define GV_R_EXEC_FAILED "runsc_runtime_execution_failed"
#define GV_R_NOT_OBSERVED "runsc_not_observed"

/* Labels on every container: the handle's run, and the one execution. */
#define GV_LABEL_RUN "agsbx-evidence.run"
#define GV_LABEL_EXEC "agsbx-evidence.exec"
/* The harness process that created it ("<pid> <start>", base/rundir.h):
 * a container whose owner is gone is a dead run's leftover. */
#define GV_LABEL_OWNER "agsbx-evidence.owner"

/* The image: repo, tag = first GV_IMAGE_TAG_HEX hex digits of the
 * payload's sha256, and where the payload sits inside it. */
#define GV_IMAGE_REPO "agsbx-payload"
#define GV_IMAGE_TAG_HEX 32
#define GV_IMAGE_PAYLOAD "/agsbx-payload"
/* Grant roots appear at /agsbx/<role>. */
#define GV_MOUNT_BASE "/agsbx"

struct gv_image {
	char payload_sha256[65];
	char tag[GV_IMAGE_TAG_HEX + 1];
	char name[sizeof GV_IMAGE_REPO + GV_IMAGE_TAG_HEX + 2];
	bool imported;                /* this call imported it */
};

/* A ustar archive: the payload at /agsbx-payload (0755) and the empty
 * directories a container needs. *tar malloc'd. */
/* POST /images/create's JSON-lines progress stream (the daemon's bytes):
 * -EIO with fail set (GV_R_IMAGE_MISSING) when a line carries "error",
 * else 0. */
int gv_image_import_failed(const char *body, size_t len, struct agsbx_error *fail);
int gv_image_tar(const void *payload, size_t len, char **tar, size_t *tar_len);
/* GET /images/NAME/json: *present on 200, false on 404, -errno otherwise
 * (with Docker's message in fail, GV_R_IMAGE_MISSING). */
int gv_image_present(const struct gv_docker *d, const char *name, bool *present, struct agsbx_error *fail);
/* Present (by sha256 tag) or imported now; -errno with fail set
 * (GV_R_IMAGE_MISSING) otherwise. */
int gv_image_ensure(const struct gv_docker *d, const char *payload_path, struct gv_image *img,
		    struct agsbx_error *fail);

/* ---- one container run ------------------------------------------------ */

struct gv_run_spec {
	const char *image;
	const char *runtime;          /* the verified runsc runtime, never empty */
	const char *runsc_path;       /* for `runsc delete` of leaked state, may be NULL */
	const char *const *argv;
	const char *const *env;       /* KEY=VALUE, NULL-terminated */
	const char *workdir;          /* NULL: image default */
	const char *user;             /* "uid:gid" or NULL (root) */
	const char *const *binds;     /* "host:ctr:ro|rw", NULL-terminated, may be NULL */
	const char *run_label;        /* value of GV_LABEL_RUN */
	size_t max_output;            /* per stream */
	int64_t timeout_ms;           /* <= 0: none */
	int cancel_fd;                /* -1: none */
	bool inspect;                 /* record HostConfig.Runtime before removal */
	/* Value of GV_LABEL_EXEC (hex); NULL: a random one. Callers that
	 * track in-flight executions choose it before the container exists. */
	const char *exec_id;
};

struct gv_run_out {
	struct agsbx_run_result run;
	char id[65];
	char exec_id[33];
	char runtime_seen[128];       /* HostConfig.Runtime from inspect */
	struct agsbx_error err;       /* on failure: a GV_R_* reason, first wins */
	unsigned leaked_killed;       /* host processes of the container we had to kill */
	bool cleanup_failed;          /* a container or process of it may remain */
	bool started;                 /* the start call succeeded */
};

/* Creates, starts, waits (timeout/cancel), captures bounded output, then
 * removes the container and makes sure nothing of it is left on the host.
 * 0: the program ran (any status, including timeout/cancel); -errno with
 * reason/message otherwise. o->run must be freed by the caller. */
int gv_container_run(const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o);

/* Create, start, exec, kill and remove go through dockerd, containerd, the
 * shim and runsc; under load that is slower than a query, but never
 * unbounded. */
#define GV_LIFECYCLE_TIMEOUT_MS 30000L
/* cancel_fd (-1: none) is readable, or the harness was interrupted (which
 * cancels every execution). */
bool gv_cancel_requested(int fd);
/* A JSON array of the NULL-terminated strings (empty for NULL). */
json_t *gv_strv_json(const char *const *v);

/* ---- a warm container and executions in it (exec.c, serve.c) --------- */

/* Creates and starts a container running s->argv (an idle program) with
 * s->exec_id as its GV_LABEL_EXEC, and returns once it runs; o->id is the
 * container. On failure what was created is removed. */
int gv_container_start_idle(const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o);
/* POST /containers/ID/kill?signal=KILL, its answer ignored. */
void gv_container_kill(const struct gv_docker *d, const char *id);
/* Kills and removes o->id, then makes sure nothing of it is left (label
 * and /proc, as after gv_container_run): 0, or -EIO with o->err set. */
int gv_container_drop(const struct gv_docker *d, const struct gv_run_spec *s, struct gv_run_out *o);

/* One execution in a running container. */
struct gv_exec_spec {
	const char *container;        /* a running container's id */
	const char *const *argv;
	const char *const *env;       /* KEY=VALUE, NULL-terminated */
	const char *workdir;
	const char *user;             /* "uid:gid" or NULL (root) */
	size_t max_output;            /* per stream */
	int64_t timeout_ms;           /* <= 0: none */
	int cancel_fd;                /* -1: none */
	/* Called (may be NULL) just before a timeout or cancel kills the
	 * container, which ends every execution in it. */
	void (*on_kill)(void *ud);
	void *kill_ud;
	/* Readable once another execution's timeout or cancel killed the
	 * container (-1: none): this one ends at once, as dirty, with an
	 * error. */
	int killed_fd;
};
struct gv_exec_out {
	struct agsbx_run_result run;
	struct agsbx_error err;
	/* The container must not run another execution: it was killed
	 * (timeout, cancel), the execution failed, or something of it still
	 * held its output when its process had exited. */
	bool dirty;
};

/* The exec API (exec.c): POST /containers/ID/exec of s->argv as s->user
 * with s->env in s->workdir (eid: the exec's id), and its start on a
 * connection of our own, upgraded to the raw stream, whose bytes after the
 * headers go to dm; returns that socket, both ways open (the program's
 * stdin is what we write). -errno with o->err set otherwise. */
int gv_exec_create(const struct gv_docker *d, const struct gv_exec_spec *s, char eid[65], struct gv_exec_out *o);
int gv_exec_start(const struct gv_docker *d, const char *eid, struct gv_demux *dm, struct gv_exec_out *o);
/* GET /exec/EID/json: 1 still running, 0 exited (*code), -errno. */
int gv_exec_state(const struct gv_docker *d, const char *eid, int *code);

/* ---- the execution server in a shared container (serve.c) ------------ */

/* `agsbx-payload serve` running in a container through one exec, and the
 * thread reading its stream. Executions sent to it are forked and exec'd
 * inside the sandbox (conformance/payload/serve.c has the framing). */
struct gv_server;
/* Starts the server in spec->container as spec->user with spec->env and
 * spec->workdir (argv is ignored) and waits for its greeting. 0, or -errno
 * with err set (GV_R_*); nothing is left to stop then. */
int gv_server_start(const struct gv_docker *d, const struct gv_exec_spec *spec, struct gv_server **out,
		    struct agsbx_error *err);
/* One execution of s->argv through the server (s->user must be the
 * server's; s->env is laid over the server's, as Docker lays an exec's
 * over the container's), stdin at EOF, each stream capped at
 * s->max_output by this side, the deadline and cancel enforced by killing
 * the whole container (gVisor has no per-exec kill through the API, and
 * the server is not trusted to kill), killed_fd honoured. A signal death
 * is reported as Docker reports it (exit code 128+N). 0: the program ran
 * (any status, including timeout and cancel); -errno with o->err
 * otherwise. o->run must be freed by the caller. */
int gv_server_run(struct gv_server *sv, const struct gv_docker *d, const struct gv_exec_spec *s,
		  struct gv_exec_out *o);
/* Ends the stream, joins the reader, frees. NULL is fine. */
void gv_server_stop(struct gv_server *sv);
/* The server's exec id (for the evidence), "" before it started. */
const char *gv_server_exec_id(const struct gv_server *sv);

/* Containers (all states) with label KEY=VALUE (value NULL: any value):
 * the count, and in *found (may be NULL) a new array of {"id", "exec",
 * "owner"} (their GV_LABEL_EXEC and GV_LABEL_OWNER, when set). */
/* One entry of GET /containers/json as {"id", "exec", "owner"} (its
 * GV_LABEL_EXEC and GV_LABEL_OWNER labels when strings); NULL when its Id
 * is no 64-digit hex id (the id names DELETE paths and is the needle the
 * host process scan kills by: "?" or "a" would match anyone's). */
json_t *gv_container_entry(const json_t *c);
/* -errno with fail set (GV_R_UNAVAILABLE) when the daemon could not list. */
int gv_containers_with_label(const struct gv_docker *d, const char *key, const char *value, json_t **found,
			     struct agsbx_error *fail);

/* ---- host processes of a container ---------------------------------- */

/* PIDs of live processes whose cmdline contains needle (never ourselves):
 * containerd-shim, runsc-gofer and runsc-sandbox carry the container id.
 * Returns the count, *pids malloc'd (may be NULL). */
int gv_procs_matching(const char *needle, pid_t **pids);
struct gv_proc_match {
	pid_t pid;
	size_t needle;                /* index of the first needle it carries */
};
/* One /proc pass for many needles: each live process (never ourselves)
 * whose cmdline contains one of them. Returns the count; *found malloc'd. */
int gv_procs_matching_any(const char *const *needles, size_t nneedles, struct gv_proc_match **found);
/* Waits up to grace_ms for those processes to go, then SIGKILLs exactly
 * the remaining ones (pidfd, cmdline re-checked). When runsc_path is set
 * and a runsc process showed its --root, runs `runsc --root=R delete
 * --force ID` afterwards. Returns the number killed, or -errno. */
int gv_procs_reap(const char *needle, int grace_ms, const char *runsc_path);
/* The same, but done only after no process has carried needle for
 * settle_ms (processes that appear later are killed too), bounded by
 * grace + settle + 5 s. */
int gv_procs_reap_settled(const char *needle, int grace_ms, int settle_ms, const char *runsc_path);

#endif
