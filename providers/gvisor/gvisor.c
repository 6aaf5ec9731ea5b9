/* gvisor: programs run in Docker containers on a runtime whose binary is
 * runsc, driven through the Engine API over a unix socket.
 *
 * The verification chain fails closed at each step with its own reason:
 *   daemon reachable (docker_unavailable)
 *   -> a runtime whose path is runsc in /info Runtimes
 *      (runsc_runtime_unregistered / runsc_runtime_registry_invalid)
 *   -> our own image, imported from the static payload, never pulled
 *      (runsc_runtime_image_missing)
 *   -> real containers on that runtime run (runsc_runtime_execution_failed)
 *      and are observed to be gVisor: the kernel release inside differs
 *      from the host's and inspect names the runtime (runsc_not_observed).
 * Never runc, never the daemon's default runtime, never a fallback. */
#include "providers/provider.h"
#include "providers/gvisor/gvisor.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/defaults.h"
#include "base/dockerhost.h"
#include "base/cleanup.h"
#include "base/rundir.h"
#include "base/util.h"

static const char *const reasons[] = {
	GV_R_READY, GV_R_UNAVAILABLE, GV_R_UNREGISTERED, GV_R_REGISTRY_INVALID,
	GV_R_IMAGE_MISSING, GV_R_EXEC_FAILED, GV_R_NOT_OBSERVED, NULL,
};
static const char *const config_keys[] = { "runtime:string", NULL };
static const struct agsbx_reason_cond reason_conds[] = {
	{ GV_R_UNAVAILABLE, AGSBX_HOSTCOND_DOCKER_UNREACHABLE },
	{ GV_R_UNREGISTERED, AGSBX_HOSTCOND_RUNTIME_UNREGISTERED }, { NULL, NULL },
};

#define MECHANISM "gvisor_container"
/* A container start goes through dockerd, containerd, the shim and runsc
 * (about 0.5 s here); never give a verification container less. */
#define MIN_VERIFY_TIMEOUT_MS 10000

/* What the verification chain established. */
struct gv_env {
	struct gv_docker d;
	char *runtime;                /* verified runtime name */
	char *runtime_path;
	bool runtime_network_none;
	struct gv_image img;
	struct agsbx_caps caps;
	json_t *versions;
	unsigned leaked_killed;       /* host processes a failed start left, stopped by us */
};

typedef char gv_id[65];

/* The shared container of a handle: started once (at ensure, while the
 * caller goes on), then running every execution that did not ask for a
 * sandbox of its own, concurrently (exec.c). Heap-allocated: executions
 * still running in a retired one hold it until the last ends. */
struct gv_warm {
	gv_id id;
	char exec_id[33];             /* its GV_LABEL_EXEC, in active while it lives */
	unsigned runs;                /* executions started in it */
	unsigned inflight;            /* executions running in it now */
	/* Takes no new execution; dropped (killed, removed, checked gone)
	 * when the last one in it ends. */
	bool retired;
	/* A timeout or cancel killed it: every other execution still in it
	 * ended with it and reports so instead of a status. */
	bool killed;
	/* Written once it is killed: the executions in it stop waiting for
	 * their streams (Docker may hold them open long after the kill). */
	int kill_pipe[2];
	/* Its execution server (serve.c): every execution in it goes there. */
	struct gv_server *server;
};

/* What starting a shared container needs, copied out of the handle: the
 * start may run on a thread of its own after ensure returned. */
struct warm_args {
	char *binds[AGSBX_ROOT_COUNT + 1];
	char **env;
	char *user;
	char *workdir;
	char exec_id[33];
};

struct gv_priv {
	struct gv_env env;
	char run_id[33];
	pthread_mutex_t lock;         /* guards the lists and the shared container */
	/* Executions in flight (their GV_LABEL_EXEC values): their containers
	 * are not leftovers, whatever a concurrent leftovers() sees. */
	gv_id *active;
	size_t nactive;
	/* Containers of finished executions: none of their host processes
	 * may remain. */
	gv_id *done;
	size_t ndone;
	/* The shared container taking executions (NULL: none yet, or the
	 * last one was retired), and whether one is being started. */
	struct gv_warm *warm;
	bool warm_starting;
	pthread_cond_t warm_cond;     /* warm_starting went false */
	/* The start ensure set off, joined by release and priv_free. */
	pthread_t starter;
	bool starter_joinable;
	struct warm_args *starter_args;
	int64_t obs_age_ms;           /* of the observation ensure reused; -1: its own */
};

static int id_push(gv_id **v, size_t *n, const char *id)
{
	gv_id *nv = realloc(*v, (*n + 1) * sizeof *nv);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	snprintf(nv[(*n)++], sizeof(gv_id), "%s", id);
	return 0;
}

static void id_remove(gv_id *v, size_t *n, const char *id)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(v[i], id) == 0) {
			memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof *v);
			(*n)--;
			return;
		}
}

static bool id_in(gv_id *v, size_t n, const char *id)
{
	for (size_t i = 0; i < n && id; i++)
		if (strcmp(v[i], id) == 0)
			return true;
	return false;
}

static void env_clear(struct gv_env *e)
{
	gv_docker_close(&e->d);
	free(e->runtime);
	free(e->runtime_path);
	json_decref(e->versions);
	memset(e, 0, sizeof *e);
}

/* ---- verification steps ------------------------------------------------ */

/* Why verification stopped, in the one error record: each step returns
 * at its first failure, so the first error is the only one. Returns the
 * reason, for `return set_verdict(...)`. */
static const char *set_verdict(struct agsbx_error *v, const char *reason, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static const char *set_verdict(struct agsbx_error *v, const char *reason, const char *hint, const char *fmt, ...)
{
	bool first = !agsbx_error_is_set(v);
	va_list ap;
	va_start(ap, fmt);
	agsbx_error_vset(v, reason, fmt, ap);
	va_end(ap);
	if (first && hint)
		snprintf(v->hint, sizeof v->hint, "%s", hint);
	return v->reason;
}

static const char HINT_DAEMON[] =
	"start dockerd and point DOCKER_HOST at its unix socket (unix:///path), or use /var/run/docker.sock";
static const char HINT_REGISTER[] =
	"register runsc in daemon.json: \"runtimes\": {\"runsc\": {\"path\": \"/usr/bin/runsc\", "
	"\"runtimeArgs\": [\"--network=none\"]}} and restart dockerd (see docs/providers/gvisor.md)";

/* The endpoint: the labelled simulation points at a socket that cannot
 * exist (inside a directory we created and removed). */
static int endpoint_socket(const struct agsbx_ctx *ctx, json_t *facts, char **sock, struct agsbx_error *v)
{
	if (ctx->simulate && strcmp(ctx->simulate, AGSBX_SIM_DOCKER_UNREACHABLE) == 0) {
		char dir[] = "/tmp/agsbx-gv-sim-XXXXXX";
		if (!mkdtemp(dir))
			return -errno;
		rmdir(dir);
		json_object_set_new(facts, "simulated", json_string(ctx->simulate));
		*sock = agsbx_path_join(dir, "docker.sock");
		return *sock ? 0 : -ENOMEM;
	}
	const char *dh = getenv("DOCKER_HOST");
	json_object_set_new(facts, "docker_host", dh ? json_string(dh) : json_null());
	struct agsbx_error err = { 0 };
	int r = agsbx_dockerhost_socket(dh, sock, &err);
	if (r < 0)
		set_verdict(v, GV_R_UNAVAILABLE, HINT_DAEMON, "%s", err.message[0] ? err.message : strerror(-r));
	return r;
}

static bool is_runsc_path(const char *path)
{
	if (!path)
		return false;
	const char *b = strrchr(path, '/');
	return strcmp(b ? b + 1 : path, "runsc") == 0;
}

static bool args_have_network_none(const json_t *args)
{
	size_t i;
	json_t *a;
	json_array_foreach(args, i, a) {
		const char *s = json_string_value(a);
		if (s && (strcmp(s, "--network=none") == 0 || strcmp(s, "-network=none") == 0))
			return true;
		/* "--network" "none" as two words */
		const char *next = json_string_value(json_array_get(args, i + 1));
		if (s && next && (strcmp(s, "--network") == 0 || strcmp(s, "-network") == 0) &&
		    strcmp(next, "none") == 0)
			return true;
	}
	return false;
}

/* Records every runtime, then picks: the configured name (must be runsc),
 * else a runsc runtime with --network=none, else any runsc runtime. */
static const char *pick_runtime(const struct agsbx_ctx *ctx, const json_t *info, json_t *facts, struct gv_env *e,
				struct agsbx_error *v)
{
	json_t *rts = json_object_get(info, "Runtimes");
	if (!json_is_object(rts))
		return set_verdict(v, GV_R_REGISTRY_INVALID, HINT_REGISTER,
				   "/info has no Runtimes object: the runtime registry cannot be read");
	/* "runtimes" has the host probe's shape ({path, runtimeArgs}); what
	 * we make of each runsc one goes to "runsc_runtimes". */
	json_t *rec = json_object(), *mine = json_object();
	json_object_set_new(facts, "runtimes", rec);
	json_object_set_new(facts, "runsc_runtimes", mine);
	const char *best = NULL;
	bool best_nonet = false;
	const char *name;
	json_t *rt;
	/* jansson iterates in insertion order; pick by sorted name so the
	 * choice does not depend on Docker's JSON order. */
	json_object_foreach(rts, name, rt) {
		const char *path = json_string_value(json_object_get(rt, "path"));
		json_t *args = json_object_get(rt, "runtimeArgs");
		bool runsc = is_runsc_path(path), nonet = args_have_network_none(args);
		json_t *entry = json_pack("{s:s?}", "path", path);
		if (json_is_array(args))
			json_object_set_new(entry, "runtimeArgs", json_deep_copy(args));
		json_object_set_new(rec, name, entry);
		if (!runsc)
			continue;
		json_object_set_new(mine, name, json_pack("{s:b}", "network_none", nonet));
		if (!best || (nonet && !best_nonet) || (nonet == best_nonet && strcmp(name, best) < 0)) {
			best = name;
			best_nonet = nonet;
		}
	}
	json_t *cfg = json_object_get(ctx->config, "runtime");
	if (cfg && !json_is_string(cfg))
		return set_verdict(v, GV_R_REGISTRY_INVALID, NULL, "config 'runtime' must be a string");
	if (cfg) {
		const char *want = json_string_value(cfg);
		json_t *w = json_object_get(rts, want);
		if (!json_is_object(w))
			return set_verdict(v, GV_R_REGISTRY_INVALID, HINT_REGISTER,
					   "configured runtime '%s' is not registered with the daemon", want);
		if (!is_runsc_path(json_string_value(json_object_get(w, "path"))))
			return set_verdict(v, GV_R_REGISTRY_INVALID, HINT_REGISTER,
					   "configured runtime '%s' runs '%s', not runsc", want,
					   json_string_value(json_object_get(w, "path")) ?: "?");
		best = want;
		best_nonet = args_have_network_none(json_object_get(w, "runtimeArgs"));
	}
	if (!best)
		return set_verdict(v, GV_R_UNREGISTERED, HINT_REGISTER,
				   "no runtime whose path is runsc is registered with the daemon");
	e->runtime = strdup(best);
	e->runtime_path = strdup(json_string_value(json_object_get(json_object_get(rts, best), "path")));
	e->runtime_network_none = best_nonet;
	json_object_set_new(facts, "runtime", json_string(best));
	json_object_set_new(facts, "runtime_network_none", json_boolean(best_nonet));
	return e->runtime && e->runtime_path ? NULL : set_verdict(v, GV_R_UNAVAILABLE, NULL, "out of memory");
}

/* `<runtime path> --version` through the bounded runner: a fact, never a
 * gate (the container observation is the gate). */
static json_t *runsc_version(const char *path, int64_t timeout_ms)
{
	const char *argv[] = { path && path[0] == '/' ? path : "runsc", "--version", NULL };
	struct agsbx_run_opts o = { .argv = argv, .timeout_ms = timeout_ms, .cancel_fd = -1,
				    .max_output_bytes = 4096 };
	struct agsbx_run_result r;
	int rc = agsbx_run(&o, &r);
	json_t *out;
	if (rc < 0 || !r.exited || r.exit_code != 0 || !r.out) {
		out = json_pack("{s:b, s:s}", "absent", 1, "reason",
				rc < 0 ? strerror(-rc) : "runsc --version failed");
	} else {
		/* "runsc version 0.0~20221219.0\nspec: 1.0.2-dev\n" */
		size_t n = strcspn(r.out, "\n");
		const char *s = r.out;
		if (strncmp(s, "runsc version ", 14) == 0) {
			s += 14;
			n -= 14;
		}
		out = json_pack("{s:o, s:s}", "value", agsbx_json_string_sanitized(s, n), "source",
				argv[0]);
	}
	agsbx_run_result_clear(&r);
	return out;
}

/* ---- observation containers ------------------------------------------- */

struct observed {
	json_t *uname, *status, *ns, *read;
	char runtime_seen[128];
};

static int64_t verify_timeout(const struct agsbx_ctx *ctx)
{
	int64_t t = ctx->probe_timeout_ms > 0 ? ctx->probe_timeout_ms : AGSBX_PROBE_TIMEOUT_MS;
	return t < MIN_VERIFY_TIMEOUT_MS ? MIN_VERIFY_TIMEOUT_MS : t;
}

/* The container runs as whoever the sandbox runs as on the host: the
 * --run-as user, or the calling user when that is not root (a normal
 * user with access to the Docker socket). As the image's root instead,
 * the grant roots (owned by the caller, 0755) are not writable, and files
 * it did write would be root's on the host. Root without --run-as keeps
 * the image default. */
static char *run_as_user(const struct agsbx_ctx *ctx)
{
	char *u = NULL;
	if (ctx->run_as) {
		if (asprintf(&u, "%u:%u", (unsigned)ctx->run_uid, (unsigned)ctx->run_gid) < 0)
			return NULL;
	} else if (geteuid() != 0) {
		if (asprintf(&u, "%u:%u", (unsigned)geteuid(), (unsigned)getegid()) < 0)
			return NULL;
	}
	return u;
}

/* One payload op in a throw-away container; the parsed JSON it printed. */
static const char *observe(const struct agsbx_ctx *ctx, struct gv_env *e, const char *const *args,
			   json_t **obj, char *seen, size_t seen_size, struct agsbx_error *v)
{
	const char *argv[8] = { GV_IMAGE_PAYLOAD };
	for (size_t i = 0; args[i] && i + 2 < AGSBX_ARRAY_SIZE(argv); i++)
		argv[i + 1] = args[i];
	static const char *const env[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	char label[40] = "probe-";
	agsbx_random_hex(label + 6, 12);
	_cleanup_free_ char *user = run_as_user(ctx);
	struct gv_run_spec s = {
		.image = e->img.name, .runtime = e->runtime, .runsc_path = e->runtime_path,
		.argv = argv, .env = env, .workdir = "/", .user = user, .run_label = label,
		.max_output = 65536, .timeout_ms = verify_timeout(ctx), .cancel_fd = -1, .inspect = seen != NULL,
	};
	struct gv_run_out o;
	int r = gv_container_run(&e->d, &s, &o);
	e->leaked_killed += o.leaked_killed;
	const char *reason = NULL;
	if (r < 0) {
		const char *why = o.err.reason && strcmp(o.err.reason, GV_R_UNAVAILABLE) == 0 ? GV_R_UNAVAILABLE :
				  o.err.reason && strcmp(o.err.reason, GV_R_IMAGE_MISSING) == 0 ? GV_R_IMAGE_MISSING :
				  GV_R_EXEC_FAILED;
		reason = set_verdict(v, why, e->runtime_network_none ? NULL :
				     "this runsc runtime lacks --network=none: on this kernel runsc's default network "
				     "mode cannot start (see docs/providers/gvisor.md)",
				     "payload '%s' did not run on runtime '%s': %s", args[0], e->runtime, o.err.message);
	} else if (o.run.timed_out) {
		reason = set_verdict(v, GV_R_EXEC_FAILED, NULL, "payload '%s' timed out on runtime '%s'", args[0],
				     e->runtime);
	} else if (o.run.status != 0) {
		reason = set_verdict(v, GV_R_EXEC_FAILED, NULL, "payload '%s' exited %d on runtime '%s': %.200s",
				     args[0], o.run.status, e->runtime, o.run.err ? o.run.err : "");
	} else {
		*obj = json_loadb(o.run.out, o.run.out_len, 0, NULL);
		if (!json_is_object(*obj))
			reason = set_verdict(v, GV_R_NOT_OBSERVED, NULL, "payload '%s' printed no JSON object",
					     args[0]);
		if (seen)
			snprintf(seen, seen_size, "%s", o.runtime_seen);
	}
	agsbx_run_result_clear(&o.run);
	return reason;
}

static json_t *ns_inode(const char *name)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/ns/%s", name);
	struct stat st;
	return stat(path, &st) == 0 ? json_integer((json_int_t)st.st_ino) : json_null();
}

static bool differs(const json_t *inside, const json_t *host)
{
	return json_is_integer(inside) && json_is_integer(host) &&
	       json_integer_value(inside) != json_integer_value(host);
}

/* Capabilities from what the containers showed, nothing more. */
static void derive_caps(const struct agsbx_ctx *ctx, const struct observed *ob, bool kernel_differs,
			json_t *facts, struct agsbx_caps *c)
{
	_cleanup_json_ json_t *host_ns = json_pack("{s:o, s:o}", "pid", ns_inode("pid"), "net", ns_inode("net"));
	json_t *in_ns = json_object_get(ob->ns, "ns");
	bool pid_distinct = differs(json_object_get(in_ns, "pid"), json_object_get(host_ns, "pid"));
	bool net_distinct = differs(json_object_get(in_ns, "net"), json_object_get(host_ns, "net"));
	bool nnp = json_integer_value(json_object_get(ob->status, "no_new_privs")) == 1;
	bool cap0 = json_is_true(json_object_get(ob->status, "cap_eff_zero"));
	/* The payload's own host path must not be visible inside. */
	bool host_hidden = json_is_false(json_object_get(ob->read, "ok")) &&
			   access(ctx->payload_path, R_OK) == 0;
	memset(c, 0, sizeof *c);
	c->mechanism = MECHANISM;
	c->safety_class = "isolated";
	/* Syscalls are served by gVisor's Sentry: the foreign kernel release
	 * on the verified runtime is the observation. */
	c->syscalls_restricted = kernel_differs;
	c->process_contained = kernel_differs && pid_distinct;
	c->privilege_escalation_blocked = nnp && cap0;
	c->host_filesystem_restricted = host_hidden;
	c->network = net_distinct ? AGSBX_NET_ISOLATED : AGSBX_NET_INHERITED;
	/* Env is built from scratch for every container (agsbx_provider_min_env). */
	c->environment_scrubbed = true;
	/* The container's PidsLimit and Memory (container.c): the resource
	 * checks show the runtime ending a fork loop and a balloon below
	 * their caps. */
	c->resources_bounded = kernel_differs;
	json_object_set_new(facts, "observed", json_pack("{s:O, s:O, s:O, s:O, s:O, s:{s:b, s:b, s:b, s:b, s:b}}",
							 "uname", ob->uname, "status", ob->status, "ns", ob->ns,
							 "read_host_path", ob->read, "host_ns", host_ns, "evidence",
							 "kernel_differs", kernel_differs, "pid_ns_distinct",
							 pid_distinct, "net_ns_distinct", net_distinct,
							 "no_new_privs_and_no_caps", nnp && cap0,
							 "host_path_hidden", host_hidden));
}

/* The four observations (uname, status, ns, a read of the payload's host
 * path) come from one fresh container running the payload's `observe`
 * op: the same facts as four containers, a quarter of the start-ups. */
static const char *observe_gvisor(const struct agsbx_ctx *ctx, struct gv_env *e, json_t *facts, struct agsbx_error *v)
{
	struct observed ob = { 0 };
	const char *const a_observe[] = { "observe", ctx->payload_path ? ctx->payload_path : "/", NULL };
	json_t *all = NULL;
	const char *reason = observe(ctx, e, a_observe, &all, ob.runtime_seen, sizeof ob.runtime_seen, v);
	ob.uname = json_incref(json_object_get(all, "uname"));
	ob.status = json_incref(json_object_get(all, "status"));
	ob.ns = json_incref(json_object_get(all, "ns"));
	ob.read = json_incref(json_object_get(all, "read"));
	json_decref(all);
	struct utsname host;
	uname(&host);
	const char *inside = json_string_value(json_object_get(ob.uname, "release"));
	json_object_set_new(facts, "kernel_release_host", json_string(host.release));
	json_object_set_new(facts, "kernel_release_inside", inside ? json_string(inside) : json_null());
	json_object_set_new(facts, "inspect_runtime", json_string(ob.runtime_seen));
	if (!reason && (!ob.uname || !ob.status || !ob.ns || !ob.read))
		reason = set_verdict(v, GV_R_NOT_OBSERVED, NULL, "payload 'observe' printed an incomplete observation");
	if (!reason && strcmp(ob.runtime_seen, e->runtime) != 0)
		reason = set_verdict(v, GV_R_NOT_OBSERVED, NULL,
				     "inspect shows runtime '%s', not the verified '%s'", ob.runtime_seen, e->runtime);
	if (!reason && (!inside || strcmp(inside, host.release) == 0))
		reason = set_verdict(v, GV_R_NOT_OBSERVED, NULL,
				     "kernel release inside (%s) is the host's (%s): not a gVisor sandbox",
				     inside ? inside : "unknown", host.release);
	if (!reason)
		derive_caps(ctx, &ob, true, facts, &e->caps);
	json_decref(ob.uname);
	json_decref(ob.status);
	json_decref(ob.ns);
	json_decref(ob.read);
	return reason;
}

/* ---- the observation, reused by ensure --------------------------------- */

/* A collect probes, then ensures a handle (and lifecycle.consistent and
 * bundle.integrity_enforced ensure two more): each verification would
 * start its own observation container (0.35-0.5 s). ensure reuses the
 * last successful observation of this process when everything it rests
 * on is unchanged: the daemon (socket, ID, version), the chosen runtime's
 * registry entry (name, path, runtimeArgs), the image, the user and the
 * payload path, and it is under OBS_REUSE_MAX_MS old. The rest of the
 * chain (daemon, registry, image) still runs every time, so a runtime
 * re-registered or removed meanwhile fails closed as before. probe never
 * reuses one: probe.truthful's second probe must be an observation of its
 * own. Every execution of the handle says what ensure reused
 * (meta.sandbox.ensure_observation). */
#define OBS_REUSE_MAX_MS 120000

struct obs_cache {
	bool valid;
	uint64_t at_us;
	char *key;
	struct agsbx_caps caps;
};
static struct obs_cache obs_cache;
static pthread_mutex_t obs_lock = PTHREAD_MUTEX_INITIALIZER;

static char *obs_key(const struct agsbx_ctx *ctx, const struct gv_env *e, const json_t *info)
{
	json_t *rt = json_object_get(json_object_get(info, "Runtimes"), e->runtime);
	_cleanup_free_ char *rts = rt ? json_dumps(rt, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	_cleanup_free_ char *user = run_as_user(ctx);
	char *key = NULL;
	if (!rts || asprintf(&key, "%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s", e->d.socket,
			     json_string_value(json_object_get(info, "ID")) ?: "", e->d.server_version, e->runtime,
			     rts, e->img.name, user ? user : "", ctx->payload_path ? ctx->payload_path : "") < 0)
		return NULL;
	return key;
}

/* The age in ms of a reusable observation for key, or -1. */
static int64_t obs_get(const char *key, struct agsbx_caps *caps)
{
	int64_t age = -1;
	pthread_mutex_lock(&obs_lock);
	uint64_t now = agsbx_now_us();
	if (key && obs_cache.valid && strcmp(obs_cache.key, key) == 0 &&
	    now - obs_cache.at_us <= (uint64_t)OBS_REUSE_MAX_MS * 1000) {
		*caps = obs_cache.caps;
		age = (int64_t)((now - obs_cache.at_us) / 1000);
	}
	pthread_mutex_unlock(&obs_lock);
	return age;
}

static void obs_put(char *key, const struct agsbx_caps *caps)
{
	pthread_mutex_lock(&obs_lock);
	free(obs_cache.key);
	obs_cache = (struct obs_cache){ .valid = key != NULL, .at_us = agsbx_now_us(), .key = key, .caps = *caps };
	pthread_mutex_unlock(&obs_lock);
}

static void obs_forget(void)
{
	pthread_mutex_lock(&obs_lock);
	obs_cache.valid = false;
	pthread_mutex_unlock(&obs_lock);
}

/* The observation step: reused (ensure only) or made now. */
static const char *observe_step(const struct agsbx_ctx *ctx, struct gv_env *e, const json_t *info, bool reuse,
				json_t *facts, struct agsbx_error *v)
{
	char *key = obs_key(ctx, e, info);
	int64_t age = reuse ? obs_get(key, &e->caps) : -1;
	if (age >= 0) {
		json_object_set_new(facts, "observation",
				    json_pack("{s:b, s:I}", "reused", 1, "age_ms", (json_int_t)age));
		free(key);
		return NULL;
	}
	const char *reason = observe_gvisor(ctx, e, facts, v);
	if (reason) {
		free(key);
		obs_forget(); /* a failed observation ends reuse */
	} else {
		obs_put(key, &e->caps);
	}
	return reason;
}

/* ---- the chain -------------------------------------------------------- */

static const char *chain(const struct agsbx_ctx *ctx, struct gv_env *e, bool reuse, json_t *facts,
			 struct agsbx_error *v)
{
	_cleanup_free_ char *sock = NULL;
	if (endpoint_socket(ctx, facts, &sock, v) < 0)
		return set_verdict(v, GV_R_UNAVAILABLE, NULL, "no endpoint");
	json_object_set_new(facts, "endpoint", json_sprintf("unix://%s", sock));
	long t = ctx->probe_timeout_ms > 0 ? (long)ctx->probe_timeout_ms : AGSBX_PROBE_TIMEOUT_MS;
	struct agsbx_error open_err = { 0 };
	if (gv_docker_open(&e->d, sock, t, &open_err) < 0)
		return set_verdict(v, GV_R_UNAVAILABLE, HINT_DAEMON, "%s", open_err.message);
	json_object_set_new(facts, "server_version", json_string(e->d.server_version));
	json_object_set_new(facts, "api_version", json_string(e->d.server_api_version));
	json_object_set_new(facts, "api_version_used", json_string(e->d.api_version));
	long st;
	_cleanup_json_ json_t *info = NULL;
	char err[512] = "";
	if (gv_docker_call(&e->d, "GET", "/info", NULL, 0, &st, &info, err, sizeof err) < 0 || st != 200 ||
	    !json_is_object(info))
		return set_verdict(v, GV_R_UNAVAILABLE, HINT_DAEMON, "GET /info failed: %s",
				   err[0] ? err : "not a JSON object");
	gv_info_facts(info, facts);
	if (pick_runtime(ctx, info, facts, e, v))
		return v->reason;
	json_t *ver = runsc_version(e->runtime_path, t);
	json_object_set_new(facts, "runsc_version", ver);
	const char *rv = json_string_value(json_object_get(ver, "value"));
	if (gv_image_ensure(&e->d, ctx->payload_path, &e->img, v) < 0)
		return set_verdict(v, GV_R_IMAGE_MISSING, NULL, "%s", ""); /* the image's own record, if it set one */
	json_object_set_new(facts, "image", json_pack("{s:s, s:s, s:b}", "name", e->img.name, "payload_sha256",
						      e->img.payload_sha256, "imported", e->img.imported));
	e->versions = json_pack("{s:s, s:s, s:s, s:s, s:s}", "docker_server", e->d.server_version, "docker_api",
				e->d.api_version, "runtime", e->runtime, "runsc", rv ? rv : "unknown", "image",
				e->img.name);
	json_object_set_new(facts, "versions", json_incref(e->versions));
	return observe_step(ctx, e, info, reuse, facts, v);
}

/* reuse: ensure's verification may reuse this process's observation. */
static const char *verify(const struct agsbx_ctx *ctx, struct gv_env *e, bool reuse, json_t *facts,
			  struct agsbx_error *v)
{
	memset(e, 0, sizeof *e);
	*v = (struct agsbx_error){ 0 };
	const char *reason = chain(ctx, e, reuse, facts, v);
	if (!reason)
		reason = GV_R_READY;
	bool ready = strcmp(reason, GV_R_READY) == 0;
	json_object_set_new(facts, "verified", json_boolean(ready));
	json_object_set_new(facts, "leaked_host_processes_killed", json_integer(e->leaked_killed));
	if (!ready) {
		/* Nothing is claimed for a mechanism that was not observed. */
		memset(&e->caps, 0, sizeof e->caps);
		e->caps.mechanism = MECHANISM;
		e->caps.network = AGSBX_NET_INHERITED;
		e->caps.safety_class = "none";
	}
	return reason;
}

/* ---- provider ops ----------------------------------------------------- */

static int gv_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	memset(out, 0, sizeof *out);
	out->facts = json_object();
	if (!out->facts)
		return -ENOMEM;
	struct gv_env e;
	struct agsbx_error v;
	out->reason = verify(ctx, &e, false, out->facts, &v);
	out->available = strcmp(out->reason, GV_R_READY) == 0;
	out->caps = e.caps;
	if (v.message[0])
		out->detail = strdup(v.message);
	if (v.hint[0])
		out->hint = strdup(v.hint);
	env_clear(&e);
	return 0;
}

static void starter_begin(struct agsbx_handle *h, struct gv_priv *p);
static void starter_join(struct gv_priv *p);
static void warm_free(struct gv_warm *w);

/* h->priv_free: called by the handle lifecycle once released and idle. */
static void priv_free(void *priv)
{
	struct gv_priv *p = priv;
	starter_join(p);
	pthread_cond_destroy(&p->warm_cond);
	pthread_mutex_destroy(&p->lock);
	free(p->active);
	free(p->done);
	warm_free(p->warm);
	env_clear(&p->env);
	free(p);
}

static int gv_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		     struct agsbx_handle **out, struct agsbx_error *fail)
{
	*out = NULL;
	if (agsbx_provider_check_config(&agsbx_provider_gvisor, ctx->config, fail) < 0)
		return -EINVAL;
	json_t *rt = json_object_get(ctx->config, "runtime");
	if (rt && !json_is_string(rt)) {
		agsbx_fail(fail, "config_invalid", "gvisor: config 'runtime' must be a string");
		return -EINVAL;
	}
	struct gv_priv *p = calloc(1, sizeof *p);
	_cleanup_json_ json_t *facts = json_object();
	if (!p || !facts) {
		free(p);
		return -ENOMEM;
	}
	struct agsbx_error v;
	if (strcmp(verify(ctx, &p->env, true, facts, &v), GV_R_READY) != 0) {
		agsbx_fail_hint(fail, v.reason, v.hint, "gvisor: %s", v.message);
		env_clear(&p->env);
		free(p);
		return -ENODEV;
	}
	json_t *age = json_object_get(json_object_get(facts, "observation"), "age_ms");
	p->obs_age_ms = json_is_integer(age) ? (int64_t)json_integer_value(age) : -1;
	struct agsbx_handle *h = agsbx_handle_new(&agsbx_provider_gvisor, ctx, g, &p->env.caps);
	if (!h) {
		env_clear(&p->env);
		free(p);
		return -ENOMEM;
	}
	for (int r = 0; r < AGSBX_ROOT_COUNT; r++) {
		free(h->paths[r]);
		if (asprintf(&h->paths[r], GV_MOUNT_BASE "/%s", agsbx_root_role_name(r)) < 0)
			h->paths[r] = NULL;
	}
	json_decref(h->versions);
	h->versions = json_incref(p->env.versions);
	agsbx_random_hex(p->run_id, 16);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->warm_cond, NULL);
	h->priv = p;
	h->priv_free = priv_free;
	for (int r = 0; r < AGSBX_ROOT_COUNT; r++)
		if (!h->paths[r]) {
			h->ops->release(h);
			agsbx_handle_free(h);
			return -ENOMEM;
		}
	/* The shared container boots while the caller goes on. */
	starter_begin(h, p);
	*out = h;
	return 0;
}

/* "host:/agsbx/<role>:ro|rw" per grant root. Docker's Binds syntax splits
 * on ':', so a root path containing one is refused, not mangled. */
static int grant_binds(const struct agsbx_handle *h, char *binds[AGSBX_ROOT_COUNT + 1], struct agsbx_error *fail)
{
	memset(binds, 0, (AGSBX_ROOT_COUNT + 1) * sizeof *binds);
	for (int r = 0; r < AGSBX_ROOT_COUNT; r++) {
		const struct agsbx_grant_root *root = &h->grant->roots[r];
		if (strchr(root->path, ':') || agsbx_path_check_no_symlink(root->path) < 0) {
			agsbx_fail(fail, GV_R_EXEC_FAILED, "gvisor: grant root %s cannot be bound (':' or symlink)",
				   root->path);
			return -EINVAL;
		}
		if (asprintf(&binds[r], "%s:%s:%s", root->path, h->paths[r], root->writable ? "rw" : "ro") < 0) {
			binds[r] = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

/* Whether an absolute argv[0] can name a file inside our containers. The
 * image (image.c) holds the payload and empty directories only; files
 * appear under the grant binds (GV_MOUNT_BASE) and the runtime's own
 * mounts (/proc, /dev, /sys, Docker's files in /etc). /bin/sh or
 * /usr/bin/env (the conformance checks' interpreter variants) cannot
 * exist. Relative names are left to the runtime. */
static bool argv0_may_exist(const char *argv0)
{
	static const char *const dirs[] = { GV_MOUNT_BASE "/", "/proc/", "/dev/", "/sys/", "/etc/", "/tmp/" };
	if (!argv0 || argv0[0] != '/' || strcmp(argv0, GV_IMAGE_PAYLOAD) == 0)
		return true;
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(dirs); i++)
		if (strncmp(argv0, dirs[i], strlen(dirs[i])) == 0)
			return true;
	return false;
}

/* A container whose program does not exist fails in its start, and
 * Docker (20.10) cannot delete the task of a failed start ("task must be
 * stopped before deletion"): the container's containerd shim stays
 * behind, root's, and only a root harness can stop it. So a program the
 * container cannot have fails here, as its start would have, with no
 * container. */
static int refuse_absent_argv0(const struct gv_priv *p, const struct agsbx_step *step,
			       struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	out->run.out = strdup("");
	out->run.err = strdup("");
	agsbx_fail(fail, GV_R_EXEC_FAILED,
		   "gvisor: container not started on runtime '%s': %s is not in the container (the image holds only "
		   GV_IMAGE_PAYLOAD "; the grant roots are under " GV_MOUNT_BASE ")",
		   p->env.runtime, step->argv[0]);
	return -EIO;
}

/* What every execution of a handle passes to Docker. */
struct step_args {
	char *binds[AGSBX_ROOT_COUNT + 1];
	char **env;
	char *user;
};

static void step_args_clear(struct step_args *a)
{
	for (int i = 0; i < AGSBX_ROOT_COUNT; i++)
		free(a->binds[i]);
	agsbx_strv_free(a->env);
	free(a->user);
}

static int step_args_get(struct agsbx_handle *h, const struct agsbx_step *step, struct step_args *a,
			 struct agsbx_error *fail)
{
	memset(a, 0, sizeof *a);
	int r = grant_binds(h, a->binds, fail);
	a->env = r == 0 ? agsbx_provider_min_env(h, step) : NULL;
	a->user = run_as_user(h->ctx);
	if (r == 0 && (!a->env || (h->ctx->run_as && !a->user)))
		r = -ENOMEM;
	return r;
}

/* Where an execution ran, for its meta. */
struct gv_where {
	char container[13];
	unsigned earlier;             /* executions started in the container before it */
	unsigned concurrent;          /* others running in it when it started */
	bool warm;                    /* the handle's shared container (see gv_warm) */
	char server_exec[13];         /* warm: the exec of its execution server */
};

/* Why an execution may run where it ran (meta.sandbox.sharing). */
static const char WHY_SHARED[] =
	"no own_sandbox asked: its evidence is its own result and what it did to the host, not what the sandbox "
	"holds afterwards; the other executions in the container are this run's own steps";
static const char WHY_OWN[] = "own_sandbox asked: whatever is left once it ends is this execution's alone";
/* How it was started (meta.sandbox.started_by). */
static const char BY_SERVER[] = "the container's execution server (agsbx-payload serve, one docker exec): a fork and "
				"exec inside the sandbox, as the same user, new session, stdin at EOF";
static const char BY_CONTAINER[] = "the container's own process (docker create and start)";

/* obs_age_ms: how old the observation ensure reused was, or -1 (ensure
 * observed gVisor itself). */
static void where_json(const struct gv_where *w, int64_t obs_age_ms, json_t *meta)
{
	json_t *ob = obs_age_ms < 0 ? json_pack("{s:b}", "reused", 0)
				    : json_pack("{s:b, s:I}", "reused", 1, "age_ms", (json_int_t)obs_age_ms);
	if (meta && w->container[0]) {
		json_t *sb = json_pack("{s:s, s:b, s:b, s:i, s:i, s:s, s:s, s:o}", "container", w->container, "warm",
				       w->warm, "shared", w->warm, "earlier_executions", (json_int_t)w->earlier,
				       "concurrent_executions", (json_int_t)w->concurrent, "sharing",
				       w->warm ? WHY_SHARED : WHY_OWN, "started_by", w->warm ? BY_SERVER : BY_CONTAINER,
				       "ensure_observation", ob);
		if (sb && w->warm)
			json_object_set_new(sb, "server_exec", json_string(w->server_exec));
		json_object_set_new(meta, "sandbox", sb);
	} else
		json_decref(ob);
}

static int run_fresh(struct agsbx_handle *h, struct gv_priv *p, const struct agsbx_step *step,
		     const struct agsbx_limits *limits, const struct step_args *a, struct agsbx_exec_result *out,
		     struct gv_where *where, struct agsbx_error *fail)
{
	char exec_id[33];
	agsbx_random_hex(exec_id, 16);
	pthread_mutex_lock(&p->lock);
	int r = id_push(&p->active, &p->nactive, exec_id);
	pthread_mutex_unlock(&p->lock);
	if (r < 0)
		return r;
	struct gv_run_spec s = {
		.image = p->env.img.name, .runtime = p->env.runtime, .runsc_path = p->env.runtime_path,
		.argv = step->argv, .env = (const char *const *)a->env, .workdir = h->paths[step->cwd],
		.user = a->user, .binds = (const char *const *)a->binds, .run_label = p->run_id,
		.max_output = limits->max_output_bytes, .timeout_ms = limits->timeout_ms,
		.cancel_fd = limits->cancel_fd, .exec_id = exec_id,
	};
	struct gv_run_out o;
	r = gv_container_run(&p->env.d, &s, &o);
	pthread_mutex_lock(&p->lock);
	id_remove(p->active, &p->nactive, exec_id);
	if (o.id[0] && id_push(&p->done, &p->ndone, o.id) < 0 && r == 0)
		r = -ENOMEM;
	pthread_mutex_unlock(&p->lock);
	snprintf(where->container, sizeof where->container, "%.12s", o.id);
	out->run = o.run;
	out->run.killed = o.leaked_killed;
	if (r < 0)
		agsbx_fail(fail, o.err.reason ? o.err.reason : GV_R_EXEC_FAILED, "gvisor: %s", o.err.message);
	return r;
}

static void warm_args_free(struct warm_args *wa)
{
	if (!wa)
		return;
	for (int i = 0; i < AGSBX_ROOT_COUNT; i++)
		free(wa->binds[i]);
	agsbx_strv_free(wa->env);
	free(wa->user);
	free(wa->workdir);
	free(wa);
}

/* The shared container's binds, user and directory are the handle's; its
 * own environment is the minimal one alone: an exec inherits the
 * container's environment, so no step's own variables may be in it. */
static struct warm_args *warm_args_new(struct agsbx_handle *h)
{
	struct warm_args *wa = calloc(1, sizeof *wa);
	if (!wa)
		return NULL;
	int r = grant_binds(h, wa->binds, NULL);
	wa->env = r == 0 ? agsbx_provider_min_env(h, NULL) : NULL;
	wa->user = run_as_user(h->ctx);
	wa->workdir = strdup(h->paths[AGSBX_ROOT_BUILD]);
	agsbx_random_hex(wa->exec_id, 16);
	if (r < 0 || !wa->env || !wa->workdir || (h->ctx->run_as && !wa->user)) {
		warm_args_free(wa);
		return NULL;
	}
	return wa;
}

static void warm_free(struct gv_warm *w)
{
	if (!w)
		return;
	for (int i = 0; i < 2; i++)
		if (w->kill_pipe[i] >= 0)
			close(w->kill_pipe[i]);
	gv_server_stop(w->server);
	free(w);
}

static struct gv_warm *warm_new(void)
{
	struct gv_warm *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	/* A pipe, not an eventfd: exec.c builds in the portable subset. */
	if (pipe(w->kill_pipe) < 0) {
		free(w);
		return NULL;
	}
	for (int i = 0; i < 2; i++)
		fcntl(w->kill_pipe[i], F_SETFD, FD_CLOEXEC);
	return w;
}

/* The container's execution server, as the handle's user, in its
 * directory, with its environment (each execution's is laid over it, as
 * Docker lays an exec's over the container's). */
static int server_start(struct gv_priv *p, const struct warm_args *wa, const char *id, struct gv_warm *w,
			struct agsbx_error *err)
{
	struct gv_exec_spec s = { .container = id, .env = (const char *const *)wa->env, .workdir = wa->workdir,
				  .user = wa->user, .cancel_fd = -1, .killed_fd = -1 };
	return gv_server_start(&p->env.d, &s, &w->server, err);
}

/* Starts a shared container: the payload idling (linger ignores every
 * signal but SIGKILL) under the handle's image, runtime, binds, user,
 * limits and labels. Its label is in active from before it exists. */
static int warm_start(struct gv_priv *p, const struct warm_args *wa, struct gv_warm **out, struct agsbx_error *err)
{
	*out = NULL;
	pthread_mutex_lock(&p->lock);
	int r = id_push(&p->active, &p->nactive, wa->exec_id);
	pthread_mutex_unlock(&p->lock);
	if (r < 0)
		return r;
	char marker[64];
	snprintf(marker, sizeof marker, "agsbx-gvisor-warm-%s", p->run_id);
	const char *const argv[] = { GV_IMAGE_PAYLOAD, "linger", marker, NULL };
	struct gv_run_spec s = {
		.image = p->env.img.name, .runtime = p->env.runtime, .runsc_path = p->env.runtime_path,
		.argv = argv, .env = (const char *const *)wa->env, .workdir = wa->workdir, .user = wa->user,
		.binds = (const char *const *)wa->binds, .run_label = p->run_id, .exec_id = wa->exec_id,
	};
	struct gv_run_out o = { 0 };
	r = gv_container_start_idle(&p->env.d, &s, &o);
	bool up = r == 0; /* else start_idle removed what it created */
	struct gv_warm *w = up ? warm_new() : NULL;
	if (up && !w) {
		agsbx_error_set(&o.err, GV_R_EXEC_FAILED, "out of memory");
		r = -ENOMEM;
	}
	if (w)
		r = server_start(p, wa, o.id, w, &o.err);
	if (up && r < 0) {
		warm_free(w);
		gv_container_drop(&p->env.d, &s, &o);
	}
	if (r < 0) {
		pthread_mutex_lock(&p->lock);
		id_remove(p->active, &p->nactive, wa->exec_id);
		if (o.id[0])
			id_push(&p->done, &p->ndone, o.id);
		pthread_mutex_unlock(&p->lock);
		agsbx_error_set(err, o.err.reason ? o.err.reason : GV_R_EXEC_FAILED, "%s", o.err.message);
		return r;
	}
	snprintf(w->id, sizeof w->id, "%s", o.id);
	snprintf(w->exec_id, sizeof w->exec_id, "%s", wa->exec_id);
	*out = w;
	return 0;
}

/* The start ensure sets off: the container boots while the caller goes
 * on (its first execution waits for it). A failure is not reported here:
 * the next execution starts one itself, and fails with the reason. */
static void *starter_main(void *arg)
{
	struct gv_priv *p = arg;
	struct gv_warm *w = NULL;
	struct agsbx_error err = { 0 };
	int r = warm_start(p, p->starter_args, &w, &err);
	pthread_mutex_lock(&p->lock);
	p->warm_starting = false;
	if (r == 0)
		p->warm = w;
	pthread_cond_broadcast(&p->warm_cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void starter_begin(struct agsbx_handle *h, struct gv_priv *p)
{
	p->starter_args = warm_args_new(h);
	if (!p->starter_args)
		return;
	p->warm_starting = true;
	if (pthread_create(&p->starter, NULL, starter_main, p) == 0)
		p->starter_joinable = true;
	else
		p->warm_starting = false;
}

static void starter_join(struct gv_priv *p)
{
	if (p->starter_joinable)
		pthread_join(p->starter, NULL);
	p->starter_joinable = false;
	warm_args_free(p->starter_args);
	p->starter_args = NULL;
}

/* Under p->lock: it takes no new execution. */
static void warm_retire_locked(struct gv_priv *p, struct gv_warm *w)
{
	w->retired = true;
	if (p->warm == w)
		p->warm = NULL;
}

static void warm_enter_locked(struct gv_warm *w, struct gv_where *where)
{
	where->earlier = w->runs++;
	where->concurrent = w->inflight++;
	where->warm = true;
	snprintf(where->container, sizeof where->container, "%.12s", w->id);
	snprintf(where->server_exec, sizeof where->server_exec, "%.12s", gv_server_exec_id(w->server));
}

/* The shared container (waiting while one is being started), or a new
 * one started now. */
static int warm_take(struct agsbx_handle *h, struct gv_priv *p, struct gv_warm **out, struct gv_where *where,
		     struct agsbx_error *fail)
{
	pthread_mutex_lock(&p->lock);
	while (!p->warm && p->warm_starting)
		pthread_cond_wait(&p->warm_cond, &p->lock);
	struct gv_warm *w = p->warm;
	if (w)
		warm_enter_locked(w, where);
	else
		p->warm_starting = true;
	pthread_mutex_unlock(&p->lock);
	*out = w;
	if (w)
		return 0;
	struct warm_args *wa = warm_args_new(h);
	struct agsbx_error err = { 0 };
	int r = wa ? warm_start(p, wa, &w, &err) : -ENOMEM;
	warm_args_free(wa);
	pthread_mutex_lock(&p->lock);
	p->warm_starting = false;
	if (r == 0) {
		p->warm = w;
		warm_enter_locked(w, where);
	}
	pthread_cond_broadcast(&p->warm_cond);
	pthread_mutex_unlock(&p->lock);
	if (r < 0)
		agsbx_fail(fail, err.reason ? err.reason : GV_R_EXEC_FAILED, "gvisor: %s",
			   err.reason ? err.message : "out of memory");
	*out = w;
	return r;
}

/* Killed, removed and checked gone exactly as a container of its own. */
static int warm_drop(struct gv_priv *p, struct gv_warm *w)
{
	struct gv_run_spec s = { .runtime = p->env.runtime, .runsc_path = p->env.runtime_path,
				 .run_label = p->run_id, .exec_id = w->exec_id };
	struct gv_run_out o = { 0 };
	snprintf(o.id, sizeof o.id, "%s", w->id);
	snprintf(o.exec_id, sizeof o.exec_id, "%s", w->exec_id);
	o.started = true;
	int r = gv_container_drop(&p->env.d, &s, &o);
	pthread_mutex_lock(&p->lock);
	id_remove(p->active, &p->nactive, w->exec_id);
	id_push(&p->done, &p->ndone, w->id);
	pthread_mutex_unlock(&p->lock);
	warm_free(w);
	return r;
}

/* The end of one execution in w. dirty: w takes no new one, and the last
 * execution out drops it. *victim: a concurrent execution's timeout or
 * cancel killed w while this one ran (killer: this one's own did). */
static int warm_put(struct gv_priv *p, struct gv_warm *w, bool dirty, bool killer, bool *victim)
{
	pthread_mutex_lock(&p->lock);
	w->inflight--;
	*victim = w->killed && !killer;
	if (dirty)
		warm_retire_locked(p, w);
	bool drop = w->retired && w->inflight == 0;
	pthread_mutex_unlock(&p->lock);
	return drop ? warm_drop(p, w) : 0;
}

struct warm_kill {
	struct gv_priv *p;
	struct gv_warm *w;
};

/* exec.c, just before it kills the container at a deadline or cancel:
 * the others in it are to report that, not the status the kill gave. */
static void warm_on_kill(void *ud)
{
	struct warm_kill *k = ud;
	pthread_mutex_lock(&k->p->lock);
	bool first = !k->w->killed;
	k->w->killed = true;
	warm_retire_locked(k->p, k->w);
	pthread_mutex_unlock(&k->p->lock);
	if (first && write(k->w->kill_pipe[1], "k", 1) < 0) {
		/* the others then end at their own deadlines, still as killed */
	}
}

/* An execution in the handle's shared container, alongside the others. */
static int run_warm(struct agsbx_handle *h, struct gv_priv *p, const struct agsbx_step *step,
		    const struct agsbx_limits *limits, const struct step_args *a, struct agsbx_exec_result *out,
		    struct gv_where *where, struct agsbx_error *fail)
{
	struct gv_warm *w;
	int r = warm_take(h, p, &w, where, fail);
	if (r < 0)
		return r;
	struct warm_kill k = { p, w };
	struct gv_exec_spec s = {
		.container = w->id, .argv = step->argv, .env = (const char *const *)a->env,
		.workdir = h->paths[step->cwd], .user = a->user, .max_output = limits->max_output_bytes,
		.timeout_ms = limits->timeout_ms, .cancel_fd = limits->cancel_fd, .on_kill = warm_on_kill,
		.kill_ud = &k, .killed_fd = w->kill_pipe[0],
	};
	struct gv_exec_out o;
	r = gv_server_run(w->server, &p->env.d, &s, &o);
	out->run = o.run;
	bool victim = false;
	if (warm_put(p, w, o.dirty || r < 0, o.run.timed_out || o.run.cancelled, &victim) < 0 && r == 0) {
		r = -EIO;
		agsbx_error_set(&o.err, GV_R_EXEC_FAILED, "shared container %s may remain after removal",
				where->container);
	}
	if (victim) {
		/* Its end came from the kill, whatever status that gave. */
		o.err = (struct agsbx_error){ 0 };
		agsbx_error_set(&o.err, GV_R_EXEC_FAILED, "shared container %s was killed at the deadline or cancel of "
				"another execution in it; this one did not complete", where->container);
		r = -EIO;
	}
	if (r < 0)
		agsbx_fail(fail, o.err.reason ? o.err.reason : GV_R_EXEC_FAILED, "gvisor: %s", o.err.message);
	return r;
}

static int run_step(struct agsbx_handle *h, struct gv_priv *p, const struct agsbx_step *step,
		    const struct agsbx_limits *limits, struct agsbx_exec_result *out, struct gv_where *where,
		    struct agsbx_error *fail)
{
	if (!argv0_may_exist(step->argv[0]))
		return refuse_absent_argv0(p, step, out, fail);
	struct step_args a;
	int r = step_args_get(h, step, &a, fail);
	if (r == 0)
		r = limits->own_sandbox ? run_fresh(h, p, step, limits, &a, out, where, fail)
					: run_warm(h, p, step, limits, &a, out, where, fail);
	step_args_clear(&a);
	return r;
}

static int run_with_meta(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
			 struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	struct gv_where where = { 0 };
	int r = run_step(h, h->priv, step, limits, out, &where, fail);
	out->meta = agsbx_handle_meta(h);
	where_json(&where, ((struct gv_priv *)h->priv)->obs_age_ms, out->meta);
	return r;
}

static int gv_execute(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		      struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	return agsbx_handle_execute(h, step, limits, out, fail, run_with_meta);
}

/* Cheap re-verification (no container): the daemon answers, the verified
 * runtime is still registered as runsc, and the image is still there. A
 * full observation per health check would cost ~2 s; execute() itself
 * fails closed if the runtime stops working. */
static int health_of(struct gv_priv *p)
{
	long st;
	_cleanup_json_ json_t *info = NULL;
	char err[256];
	int r = gv_docker_call(&p->env.d, "GET", "/info", NULL, 0, &st, &info, err, sizeof err);
	if (r < 0)
		return r;
	json_t *rt = json_object_get(json_object_get(info, "Runtimes"), p->env.runtime);
	if (st != 200 || !is_runsc_path(json_string_value(json_object_get(rt, "path"))))
		return -ENODEV;
	bool present = false;
	r = gv_image_present(&p->env.d, p->env.img.name, &present, NULL);
	return r < 0 ? r : present ? 0 : -ENODEV;
}

static int gv_health(struct agsbx_handle *h)
{
	if (agsbx_handle_enter(h, NULL) < 0)
		return -ESTALE;
	int r = health_of(h->priv);
	agsbx_handle_leave(h);
	return r;
}

/* Containers with the handle's run label that belong to no execution in
 * flight, host processes naming a container of a finished execution, and
 * host processes carrying the marker. */
static int leftovers_of(struct gv_priv *p, const char *marker, json_t **found)
{
	_cleanup_json_ json_t *list = json_array();
	_cleanup_json_ json_t *ctrs = NULL;
	int n = gv_containers_with_label(&p->env.d, GV_LABEL_RUN, p->run_id, &ctrs, NULL);
	if (n < 0)
		return n;
	/* Snapshot under the lock; scan /proc (once) outside it. */
	pthread_mutex_lock(&p->lock);
	size_t i;
	json_t *c;
	json_array_foreach(ctrs, i, c) {
		if (!id_in(p->active, p->nactive, json_string_value(json_object_get(c, "exec"))))
			json_array_append_new(list, json_pack("{s:s, s:O}", "kind", "container", "id",
							      json_object_get(c, "id")));
	}
	size_t nneedles = p->ndone + 1;
	_cleanup_free_ char **needles = calloc(nneedles, sizeof *needles);
	for (size_t k = 0; needles && k < p->ndone; k++)
		needles[k] = strdup(p->done[k]);
	pthread_mutex_unlock(&p->lock);
	if (!needles)
		return -ENOMEM;
	needles[nneedles - 1] = marker && *marker ? strdup(marker) : NULL;
	_cleanup_free_ struct gv_proc_match *m = NULL;
	int np = gv_procs_matching_any((const char *const *)needles, nneedles, &m);
	for (int j = 0; j < np; j++) {
		bool is_marker = m[j].needle == nneedles - 1;
		json_array_append_new(list, json_pack("{s:s, s:i, s:s}", "kind", "process", "pid", (int)m[j].pid,
						      is_marker ? "marker" : "container", needles[m[j].needle]));
	}
	for (size_t k = 0; k < nneedles; k++)
		free(needles[k]);
	if (np < 0)
		return np;
	*found = TAKE_PTR(list);
	return (int)json_array_size(*found);
}

static int gv_leftovers(struct agsbx_handle *h, const char *marker, json_t **found)
{
	*found = NULL;
	if (agsbx_handle_enter(h, NULL) < 0)
		return -ESTALE;
	int r = leftovers_of(h->priv, marker, found);
	agsbx_handle_leave(h);
	return r;
}

struct strv {
	char **v;
	size_t n, cap;
	bool nomem;
};

static void strv_add(struct strv *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void strv_add(struct strv *sv, const char *fmt, ...)
{
	if (sv->nomem)
		return;
	if (sv->n + 2 > sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 32;
		char **v = realloc(sv->v, cap * sizeof *v);
		if (!v) {
			sv->nomem = true;
			return;
		}
		sv->v = v;
		sv->cap = cap;
	}
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf(&sv->v[sv->n], fmt, ap);
	va_end(ap);
	if (r < 0) {
		sv->nomem = true;
		return;
	}
	sv->v[++sv->n] = NULL;
}

/* By hand: `docker run --rm --runtime=<runsc>` on the same daemon with the
 * same mounts, user, directory, environment and limits as execute()'s
 * create request (labelled with the run, so release removes a leftover). */
static int raw_docker_argv(struct agsbx_handle *h, struct gv_priv *p, const struct agsbx_step *step, struct strv *sv)
{
	char *binds[AGSBX_ROOT_COUNT + 1];
	int r = grant_binds(h, binds, NULL);
	char **env = r == 0 ? agsbx_provider_min_env(h, step) : NULL;
	_cleanup_free_ char *user = run_as_user(h->ctx);
	if (r == 0 && !env)
		r = -ENOMEM;
	if (r == 0) {
		strv_add(sv, "docker");
		strv_add(sv, "--host=%s", p->env.d.endpoint);
		strv_add(sv, "run");
		strv_add(sv, "--rm");
		/* The container's stdin is a pipe, as in create_body(): without
		 * it runsc chowns the host's /dev/null to the sandbox user. */
		strv_add(sv, "--interactive");
		strv_add(sv, "--runtime=%s", p->env.runtime);
		strv_add(sv, "--network=none");
		strv_add(sv, "--read-only");
		strv_add(sv, "--cap-drop=ALL");
		strv_add(sv, "--security-opt=no-new-privileges");
		strv_add(sv, "--pids-limit=256");
		strv_add(sv, "--memory=512m");
		strv_add(sv, "--memory-swap=512m");
		strv_add(sv, "--log-driver=none");
		strv_add(sv, "--label=%s=%s", GV_LABEL_RUN, p->run_id);
		for (int i = 0; binds[i]; i++)
			strv_add(sv, "--volume=%s", binds[i]);
		strv_add(sv, "--workdir=%s", h->paths[step->cwd]);
		if (user)
			strv_add(sv, "--user=%s", user);
		for (int i = 0; env[i]; i++)
			strv_add(sv, "--env=%s", env[i]);
		strv_add(sv, "%s", p->env.img.name);
		for (int i = 0; step->argv[i]; i++)
			strv_add(sv, "%s", step->argv[i]);
		if (sv->nomem)
			r = -ENOMEM;
	}
	for (int i = 0; i < AGSBX_ROOT_COUNT; i++)
		free(binds[i]);
	agsbx_strv_free(env);
	return r;
}

static int gv_raw_command(struct agsbx_handle *h, const struct agsbx_step *step, struct agsbx_raw_command *out)
{
	*out = (struct agsbx_raw_command){ 0 };
	if (agsbx_handle_enter(h, NULL) < 0)
		return -ESTALE;
	struct strv sv = { 0 };
	int r = raw_docker_argv(h, h->priv, step, &sv);
	agsbx_handle_leave(h);
	out->argv = sv.v;
	if (r < 0)
		agsbx_raw_command_clear(out);
	return r;
}

/* Removes every container of the run (executions in flight see theirs
 * killed and end) and stops any host process still naming one. */
static void remove_run(struct gv_priv *p)
{
	_cleanup_json_ json_t *ctrs = NULL;
	char err[256];
	if (gv_containers_with_label(&p->env.d, GV_LABEL_RUN, p->run_id, &ctrs, NULL) > 0) {
		size_t i;
		json_t *c;
		json_array_foreach(ctrs, i, c) {
			const char *id = json_string_value(json_object_get(c, "id"));
			_cleanup_free_ char *path = NULL;
			long st;
			if (asprintf(&path, "/containers/%s?force=1&v=1", id) >= 0)
				gv_docker_call(&p->env.d, "DELETE", path, NULL, 0, &st, NULL, err, sizeof err);
			gv_procs_reap(id, 1000, p->env.runtime_path);
		}
	}
	/* One /proc pass; reap only the containers something still names.
	 * The list is copied under its lock: executions may still add to it. */
	pthread_mutex_lock(&p->lock);
	size_t ndone = p->ndone;
	_cleanup_free_ gv_id *done = ndone ? malloc(ndone * sizeof *done) : NULL;
	if (done)
		memcpy(done, p->done, ndone * sizeof *done);
	pthread_mutex_unlock(&p->lock);
	_cleanup_free_ const char **needles = calloc(ndone + 1, sizeof *needles);
	for (size_t k = 0; needles && done && k < ndone; k++)
		needles[k] = done[k];
	_cleanup_free_ struct gv_proc_match *m = NULL;
	int np = needles && done ? gv_procs_matching_any(needles, ndone, &m) : 0;
	for (int j = 0; j < np; j++)
		gv_procs_reap(done[m[j].needle], 1000, p->env.runtime_path);
}

static void release_run(struct agsbx_handle *h)
{
	struct gv_priv *p = h->priv;
	/* The shared container goes with the run's, and after that none of
	 * its host processes may remain either. One still running executions
	 * is killed by remove_run(); the last of them to end drops it. */
	starter_join(p);
	pthread_mutex_lock(&p->lock);
	struct gv_warm *w = p->warm;
	if (w) {
		warm_retire_locked(p, w);
		if (w->inflight == 0) {
			id_remove(p->active, &p->nactive, w->exec_id);
			id_push(&p->done, &p->ndone, w->id);
		} else {
			w = NULL;
		}
	}
	pthread_mutex_unlock(&p->lock);
	warm_free(w);
	remove_run(p);
}

/* Idempotent. Removes the run's containers and processes; health, execute
 * and leftovers refuse afterwards. The provider state is freed here, or by
 * the last execution still in flight on another thread. */
static void gv_release(struct agsbx_handle *h)
{
	agsbx_handle_release(h, release_run);
}

/* Containers (with their host processes) whose owning harness is gone.
 * No reachable daemon means nothing of ours can be running there. */
static int gv_cleanup_dead(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, bool dry_run,
			   json_t *found)
{
	_cleanup_json_ json_t *facts = json_object();
	_cleanup_free_ char *sock = NULL;
	struct agsbx_error v = { 0 };
	struct agsbx_ctx c = *ctx;
	c.simulate = NULL;
	if (endpoint_socket(&c, facts, &sock, &v) < 0)
		return 0;
	struct gv_docker d = { 0 };
	char err[256] = "";
	if (gv_docker_open(&d, sock, AGSBX_PROBE_TIMEOUT_MS, NULL) < 0) {
		gv_docker_close(&d);
		return 0;
	}
	_cleanup_json_ json_t *ctrs = NULL;
	int n = gv_containers_with_label(&d, GV_LABEL_OWNER, NULL, &ctrs, NULL);
	int count = 0;
	size_t i;
	json_t *ct;
	json_array_foreach(n > 0 ? ctrs : NULL, i, ct) {
		const char *id = json_string_value(json_object_get(ct, "id"));
		const char *owner = json_string_value(json_object_get(ct, "owner"));
		if (!id || agsbx_owner_token_alive(owner))
			continue;
		bool removed = false;
		_cleanup_free_ char *path = NULL;
		long st = 0;
		if (!dry_run && asprintf(&path, "/containers/%s?force=1&v=1", id) >= 0 &&
		    gv_docker_call(&d, "DELETE", path, NULL, 0, &st, NULL, err, sizeof err) == 0 &&
		    (st == 204 || st == 404)) {
			gv_procs_reap(id, 1000, NULL);
			removed = true;
		}
		json_array_append_new(found, json_pack("{s:s, s:s, s:s, s:b}", "kind", "container", "id", id,
						       "owner", owner, "removed", removed));
		count++;
	}
	gv_docker_close(&d);
	return n < 0 ? n : count;
}

/* The Docker daemon the host probe reached is the one gvisor uses. */
static const struct agsbx_shared_fact shared_facts[] = { { "server_version", "docker", "version" }, { 0 } };

const struct agsbx_provider_ops agsbx_provider_gvisor = {
	.id = "gvisor",
	.summary = "Docker containers on a runsc (gVisor) runtime, observed from the inside",
	.reasons = reasons,
	.config_keys = config_keys,
	.reason_conds = reason_conds,
	.shared_facts = shared_facts,
	.fail_closed_simulation = AGSBX_SIM_DOCKER_UNREACHABLE,
	.probe = gv_probe,
	.ensure = gv_ensure,
	.health = gv_health,
	.execute = gv_execute,
	.release = gv_release,
	.leftovers = gv_leftovers,
	.raw_command = gv_raw_command,
	/* Containers are children of containerd's shim; the harness only
	 * speaks HTTP to dockerd (its own children are runsc-delete clean-ups
	 * through the runner, never sandboxed work). */
	.outside_harness_tree = true,
	.cleanup_dead = gv_cleanup_dead,
};
