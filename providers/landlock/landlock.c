/* landlock: the grant enforced by Landlock on the host process tree.
 *
 * The parent never runs code between fork and exec: a separate helper
 * program (agsbx-landlock-exec, helper-landlock-exec.c) is started through
 * the bounded runner, reads a rule manifest, restricts itself (best effort
 * over ABI 1-7) and exec()s the step (docs/design.md, "The Landlock helper").
 *
 * The manifest is written once per handle, at ensure, into a private
 * directory outside every grant root (no sandboxed step can write there);
 * its sha256 also travels on the helper's argv, so even a swapped file is
 * refused. Executions write no file at all. The probe is a real enforcement: the helper applies a ruleset
 * of the system read roots, checks that "/" and a TCP connect are really
 * denied, and execs /usr/bin/true. docs/providers/landlock.md says what
 * this isolates and what it does not. */
#include "providers/provider.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/defaults.h"
#include "base/rundir.h"
#include "base/util.h"

/* Both builds: the non-Linux one reports not_linux from the same set. */
static const char *const reasons[] = {
	"not_linux", "kernel_does_not_support_landlock", "landlock_disabled", "landlock_enforcement_failed",
	"ready", NULL,
};
static const char *const config_keys[] = { NULL };
static const struct agsbx_reason_cond reason_conds[] = {
	{ "kernel_does_not_support_landlock", AGSBX_HOSTCOND_LANDLOCK_UNSUPPORTED },
	{ "landlock_disabled", AGSBX_HOSTCOND_LANDLOCK_UNSUPPORTED }, { NULL, NULL },
};

#ifdef __linux__
#include "base/landlock.h"

#define HELPER_NAME "agsbx-landlock-exec"
#define HELPER_EXIT 120
#define TEMP_PREFIX ".landlock-"
#define TEMP_SUFFIX ".json"
#define REPORT_MAX (256 * 1024)


/* Read-only system roots, whichever exist: enough for a dynamically linked
 * program from /usr to start. /proc/self is the helper's own /proc entry
 * (same pid after execve), never the rest of /proc. */
static const char *const system_read_roots[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/ssl",
	"/dev/urandom", "/dev/zero", "/proc/self",
};
/* Writable file rules (a file rule carries no directory right). */
static const char *const system_write_files[] = { "/dev/null" };

static bool ll_applies(const struct agsbx_provider_ops *self)
{
	return true;
}

static struct agsbx_caps caps_for(const struct agsbx_ctx *ctx, bool ready, int effective_abi)
{
	struct agsbx_caps c = {
		.network = AGSBX_NET_INHERITED,
		.mechanism = "landlock",
		.safety_class = "filesystem_only",
	};
	if (!ready)
		return c; /* claims nothing it could not show */
	c.host_filesystem_restricted = true;
	/* no_new_privs (set by the helper) blocks gaining privileges on exec,
	 * but a sandbox that starts with capabilities (root without
	 * --run-as, or a harness holding any) already has them: claimed only
	 * without any (priv.capabilities_dropped shows the CapEff). */
	c.privilege_escalation_blocked = agsbx_provider_runs_without_caps(ctx);
	c.environment_scrubbed = true;
	/* The helper installs the shared seccomp filter after no_new_privs
	 * and its probe self-test sees it refuse (providers/seccomp-filter.c). */
	c.syscalls_restricted = true;
	if (effective_abi >= 4)
		c.network = AGSBX_NET_TCP_RESTRICTED;
	return c;
}

/* Result of one real probe: ready unless why holds a failure. */
struct ll_state {
	struct agsbx_error why; /* the first failure (later ones are its consequences) */
	int effective_abi;
	json_t *facts; /* owned */
};

static bool state_ready(const struct ll_state *st)
{
	return !agsbx_error_is_set(&st->why);
}

static const char *state_reason(const struct ll_state *st)
{
	return state_ready(st) ? "ready" : st->why.reason;
}

static void state_set(struct ll_state *st, const char *reason, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void state_set(struct ll_state *st, const char *reason, const char *hint, const char *fmt, ...)
{
	if (!state_ready(st))
		return; /* first error wins, and with it its hint */
	va_list ap;
	va_start(ap, fmt);
	agsbx_error_vset(&st->why, reason, fmt, ap);
	va_end(ap);
	snprintf(st->why.hint, sizeof st->why.hint, "%s", hint ? hint : "");
}

/* ---- manifest ---------------------------------------------------------- */

/* map path -> "read"|"write"; a write is never downgraded to a read. */
static int rule_put(json_t *map, const char *path, bool write)
{
	json_t *old = json_object_get(map, path);
	if (old && strcmp(json_string_value(old), "write") == 0)
		return 0;
	return json_object_set_new(map, path, json_string(write ? "write" : "read"));
}

static int system_rule(json_t *map, const char *path, bool write)
{
	if (strcmp(path, "/proc/self") == 0)
		return access(path, F_OK) == 0 ? rule_put(map, path, write) : 0;
	char real[PATH_MAX];
	if (!realpath(path, real))
		return 0; /* missing: skipped */
	return rule_put(map, real, write);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* {"version":1, "target_abi", "rules" (sorted by path), "restrict_tcp", "scope"} */
static json_t *manifest_from_map(json_t *map)
{
	size_t n = json_object_size(map), i = 0;
	_cleanup_free_ const char **keys = calloc(n ? n : 1, sizeof *keys);
	if (!keys)
		return NULL;
	const char *k;
	json_t *v;
	json_object_foreach(map, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof *keys, cmp_str);
	json_t *rules = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(rules, json_pack("{s:s, s:O}", "path", keys[i], "access",
						       json_object_get(map, keys[i])));
	return json_pack("{s:i, s:i, s:o, s:b, s:b}", "version", 1, "target_abi", AGSBX_LL_ABI_KNOWN,
			 "rules", rules, "restrict_tcp", 1, "scope", 1);
}

static json_t *build_manifest(const struct agsbx_grant *g)
{
	_cleanup_json_ json_t *map = json_object();
	int r = 0;
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(system_read_roots); i++)
		r |= system_rule(map, system_read_roots[i], false);
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(system_write_files); i++)
		r |= system_rule(map, system_write_files[i], true);
	for (int i = 0; g && i < AGSBX_ROOT_COUNT; i++)
		r |= rule_put(map, g->roots[i].path, g->roots[i].writable);
	return r ? NULL : manifest_from_map(map);
}

/* Writes j to <dir>/.landlock-<hex>.json (exclusive, not following, 0644
 * so a dropped-privilege helper can read it); *report gets the matching
 * report name, which the helper creates itself. */
static int write_manifest(const char *dir, const char *hex, const json_t *j, char **path, char **report,
			  char sha[65])
{
	_cleanup_free_ char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	if (!s)
		return -ENOMEM;
	_cleanup_free_ char *p = NULL, *rp = NULL;
	if (asprintf(&p, "%s/" TEMP_PREFIX "%s" TEMP_SUFFIX, dir, hex) < 0 ||
	    asprintf(&rp, "%s/" TEMP_PREFIX "%s.report" TEMP_SUFFIX, dir, hex) < 0)
		return -ENOMEM;
	_cleanup_close_ int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	size_t len = strlen(s);
	int r = 0;
	errno = 0;
	if (fchmod(fd, 0644) < 0 || write(fd, s, len) != (ssize_t)len)
		r = errno ? -errno : -EIO;
	if (r == 0 && close(TAKE_FD(fd)) < 0)
		r = -errno;
	if (r < 0) {
		unlink(p);
		return r;
	}
	agsbx_sha256_hex(s, len, sha);
	*path = TAKE_PTR(p);
	*report = TAKE_PTR(rp);
	return 0;
}

/* ---- running the helper ------------------------------------------------ */

struct helper_call {
	char tag[33];               /* nonce the helper puts in its error prefix */
	const char *manifest;
	const char *sha256;
	const char *report;
	bool probe;
	const char *const *program;
	const char *const *envp;
	const char *cwd;
};

static char *helper_path(const struct agsbx_ctx *ctx)
{
	return agsbx_path_join(ctx->tool_dir ? ctx->tool_dir : ".", HELPER_NAME);
}

/* "<helper> --manifest M --manifest-sha256 S [--report R] [--probe] -- PROGRAM..."
 * behind the requested simulation wrapper, if any. */
static char **helper_argv(const struct agsbx_ctx *ctx, const struct helper_call *c)
{
	size_t n = 0;
	while (c->program[n])
		n++;
	_cleanup_free_ const char **v = calloc(n + 16, sizeof *v);
	_cleanup_free_ char *helper = helper_path(ctx);
	if (!v || !helper)
		return NULL;
	size_t i = 0;
	v[i++] = helper;
	v[i++] = "--manifest";
	v[i++] = c->manifest;
	v[i++] = "--manifest-sha256";
	v[i++] = c->sha256;
	if (c->report) {
		v[i++] = "--report";
		v[i++] = c->report;
	}
	if (c->probe)
		v[i++] = "--probe";
	v[i++] = "--tag";
	v[i++] = c->tag;
	v[i++] = "--";
	for (size_t k = 0; k < n; k++)
		v[i++] = c->program[k];
	v[i] = NULL;
	return agsbx_provider_wrap_simulation(ctx, v);
}

static int run_helper(const struct agsbx_ctx *ctx, struct helper_call *c, const struct agsbx_limits *lim,
		      struct agsbx_run_result *res)
{
	agsbx_random_hex(c->tag, 16);
	char **argv = helper_argv(ctx, c);
	if (!argv)
		return -ENOMEM;
	/* run_opts only reads h->ctx: the probe has no handle yet. */
	struct agsbx_handle ph = { .ctx = ctx };
	struct agsbx_run_opts o;
	agsbx_provider_run_opts(&ph, lim, &o);
	o.argv = (const char *const *)argv;
	o.envp = c->envp;
	o.cwd = c->cwd;
	int r = agsbx_run(&o, res);
	agsbx_strv_free(argv);
	return r;
}

/* The helper's own refusal ("agsbx-landlock-exec: <reason>: <detail>",
 * exit 120) mapped onto the closed reason set; NULL when the helper did
 * not refuse. exec_failed counts only when exec_is_failure (the probe's
 * /usr/bin/true must start; a step's program failing to start under the
 * ruleset is an observation, not a refusal). */
static const char *helper_refusal(const struct helper_call *c, const struct agsbx_run_result *res,
				  bool exec_is_failure, char *line, size_t size)
{
	char prefix[64];
	snprintf(prefix, sizeof prefix, "%s[%s]: ", HELPER_NAME, c->tag);
	if (!res->exited || res->exit_code != HELPER_EXIT || !res->err || strncmp(res->err, prefix, strlen(prefix)) != 0)
		return NULL;
	size_t n = strcspn(res->err, "\n");
	snprintf(line, size, "%.*s", (int)n, res->err);
	const char *reason = res->err + strlen(prefix);
	size_t rl = strcspn(reason, ":\n");
#define IS(r) (rl == strlen(r) && strncmp(reason, (r), rl) == 0)
	if (IS("kernel_does_not_support_landlock"))
		return "kernel_does_not_support_landlock";
	if (IS("landlock_disabled"))
		return "landlock_disabled";
	if (IS("exec_failed") && !exec_is_failure)
		return NULL;
#undef IS
	return "landlock_enforcement_failed";
}

static const char *reason_hint(const char *reason)
{
	if (strcmp(reason, "kernel_does_not_support_landlock") == 0)
		return "the kernel lacks Landlock (CONFIG_SECURITY_LANDLOCK, Linux >= 5.13), or a seccomp filter "
		       "refuses its syscalls; use another provider";
	if (strcmp(reason, "landlock_disabled") == 0)
		return "Landlock is built in but not enabled at boot: add landlock to the lsm= kernel parameter";
	return NULL;
}

/* ---- the real probe ---------------------------------------------------- */

static json_t *json_errno_or_int(int v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static void probe_abi_facts(struct ll_state *st, json_t *facts)
{
	int abi = agsbx_ll_abi();
	int errata = abi > 0 ? agsbx_ll_errata() : -1;
	json_object_set_new(facts, "system_abi", json_errno_or_int(abi));
	json_object_set_new(facts, "target_abi", json_integer(AGSBX_LL_ABI_KNOWN));
	json_object_set_new(facts, "errata", json_errno_or_int(errata));
	json_object_set_new(facts, "newer_than_known", json_boolean(abi > AGSBX_LL_ABI_KNOWN));
	if (abi == -ENOSYS || abi == -EOPNOTSUPP) {
		const char *reason = abi == -ENOSYS ? "kernel_does_not_support_landlock" : "landlock_disabled";
		json_object_set_new(facts, "system_abi_errno", json_string(abi == -ENOSYS ? "ENOSYS" : "EOPNOTSUPP"));
		state_set(st, reason, reason_hint(reason), "landlock_create_ruleset(VERSION): %s", strerror(-abi));
	} else if (abi < 0) {
		state_set(st, "landlock_enforcement_failed", NULL, "landlock_create_ruleset(VERSION): %s",
			  strerror(-abi));
	}
}

static void probe_helper_facts(const struct agsbx_ctx *ctx, struct ll_state *st, json_t *facts)
{
	_cleanup_free_ char *path = helper_path(ctx);
	char sha[65] = "";
	int r = path ? agsbx_sha256_file(path, sha) : -ENOMEM;
	json_object_set_new(facts, "helper", json_pack("{s:s?, s:s?}", "path", path, "sha256", r == 0 ? sha : NULL));
	if (r < 0 || access(path, X_OK) < 0)
		state_set(st, "landlock_enforcement_failed", "build " HELPER_NAME " next to agsbx-evidence",
			  "helper %s: %s", path ? path : HELPER_NAME, strerror(r < 0 ? -r : errno));
}

/* Takes the helper's report of a probe run: masks, effective ABI, and the
 * self-test that proves a denial really happened. */
static void take_report(struct ll_state *st, json_t *facts, const char *report_path)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r = agsbx_read_file(report_path, REPORT_MAX, &data, &len);
	json_error_t jerr;
	_cleanup_json_ json_t *rep = r == 0 ? json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	if (!rep) {
		state_set(st, "landlock_enforcement_failed", NULL, "helper report unreadable: %s",
			  r < 0 ? strerror(-r) : jerr.text);
		return;
	}
	static const char *const keys[] = { "effective_abi", "handled_access_fs", "handled_access_net", "scoped",
					    "restrict_status", "self_test", "rules_applied", "seccomp_filter" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(keys); i++) {
		json_t *v = json_object_get(rep, keys[i]);
		/* The report lies in a directory the run-as user owns: a value
		 * the bundle cannot hold (a real, an integer past 2^53) would
		 * make the whole bundle unwritable (found by fuzz-landlock-report). */
		const char *bad = v ? agsbx_json_unbundlable(v, 1, 8) : NULL;
		if (bad) {
			state_set(st, "landlock_enforcement_failed", NULL, "helper report: %s is %s", keys[i], bad);
			v = NULL;
		}
		json_object_set(facts, keys[i], v ? v : json_null());
	}
	json_t *eff = json_object_get(rep, "effective_abi");
	st->effective_abi = json_is_integer(eff) ? (int)json_integer_value(eff) : 0;
	json_t *t = json_object_get(rep, "self_test");
	bool fs = json_is_true(json_object_get(t, "fs_denied"));
	bool tcp = st->effective_abi < 4 || json_is_true(json_object_get(t, "tcp_connect_denied"));
	/* syscalls_restricted rests on the helper's seccomp filter. */
	bool sc = json_is_true(json_object_get(t, "seccomp_denied"));
	if (st->effective_abi < 1 || !fs || !tcp || !sc)
		state_set(st, "landlock_enforcement_failed", NULL,
			  "ruleset applied but the self-test saw no denial (effective ABI %d, fs %d, tcp %d, seccomp %d)",
			  st->effective_abi, fs, tcp, sc);
}

static void take_run(struct ll_state *st, json_t *facts, int r, const struct helper_call *c,
		     const struct agsbx_run_result *res, const char *report_path)
{
	char line[512];
	const char *refusal = r == 0 ? helper_refusal(c, res, true, line, sizeof line) : NULL;
	if (r < 0)
		state_set(st, "landlock_enforcement_failed", NULL, "running %s: %s%s", HELPER_NAME, strerror(-r),
			  res->spawn_errno ? " (could not be started)" : "");
	else if (res->timed_out)
		state_set(st, "landlock_enforcement_failed", NULL, "the enforcement probe timed out");
	else if (refusal) {
		json_object_set_new(facts, "helper_error", agsbx_json_string_sanitized(line, strlen(line)));
		state_set(st, refusal, reason_hint(refusal), "%s", line);
	} else if (!res->exited || res->exit_code != 0)
		state_set(st, "landlock_enforcement_failed", NULL, "the enforcement probe ended with status %d",
			  res->status);
	else
		take_report(st, facts, report_path);
}

/* A private directory for the probe's manifest and report, owned by the
 * user the helper will run as (it creates the report). */
static int probe_dir(const struct agsbx_ctx *ctx, char **dir)
{
	const char *tmp = getenv("TMPDIR");
	char *d = NULL;
	if (asprintf(&d, "%s/agsbx-landlock-probe-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
		return -ENOMEM;
	if (!mkdtemp(d)) {
		int e = errno;
		free(d);
		return -e;
	}
	/* Owned by this process: `cleanup` removes a killed run's. */
	int e = agsbx_rundir_claim(d);
	/* The record goes to that user with the directory: the sweep trusts
	 * only a record owned like its directory. */
	_cleanup_free_ char *rec = agsbx_path_join(d, AGSBX_RUNDIR_OWNER_FILE);
	if (e == 0 && ctx->run_as &&
	    (!rec || fchownat(AT_FDCWD, rec, ctx->run_uid, ctx->run_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	     chown(d, ctx->run_uid, ctx->run_gid) < 0))
		e = rec ? -errno : -ENOMEM;
	if (e < 0) {
		agsbx_rm_tree(d);
		free(d);
		return e;
	}
	*dir = d;
	return 0;
}

static void probe_enforcement(const struct agsbx_ctx *ctx, struct ll_state *st, json_t *facts)
{
	_cleanup_free_ char *dir = NULL, *manifest = NULL, *report = NULL;
	_cleanup_json_ json_t *m = build_manifest(NULL);
	char sha[65];
	int r = m ? probe_dir(ctx, &dir) : -ENOMEM;
	char hex[33];
	agsbx_random_hex(hex, 16);
	if (r == 0)
		r = write_manifest(dir, hex, m, &manifest, &report, sha);
	if (r < 0) {
		state_set(st, "landlock_enforcement_failed", NULL, "preparing the probe manifest: %s", strerror(-r));
		if (dir)
			agsbx_rm_tree(dir);
		return;
	}
	static const char *const program[] = { "/usr/bin/true", NULL };
	static const char *const envp[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	struct helper_call c = { .manifest = manifest, .sha256 = sha, .report = report, .probe = true,
				 .program = program, .envp = envp, .cwd = "/" };
	struct agsbx_limits lim = { .max_output_bytes = 4096, .cancel_fd = -1,
				    .timeout_ms = ctx->probe_timeout_ms > 0 ? ctx->probe_timeout_ms
									    : AGSBX_PROBE_TIMEOUT_MS };
	struct agsbx_run_result res = { 0 };
	r = run_helper(ctx, &c, &lim, &res);
	take_run(st, facts, r, &c, &res, report);
	agsbx_run_result_clear(&res);
	unlink(report);
	unlink(manifest);
	agsbx_rm_tree(dir);
}

static void real_probe(const struct agsbx_ctx *ctx, struct ll_state *st)
{
	memset(st, 0, sizeof *st);
	st->facts = json_object();
	if (ctx->simulate)
		json_object_set_new(st->facts, "simulate", json_string(ctx->simulate));
	probe_abi_facts(st, st->facts);
	probe_helper_facts(ctx, st, st->facts);
	if (state_ready(st))
		probe_enforcement(ctx, st, st->facts);
	json_object_set_new(st->facts, "effective_abi", st->effective_abi > 0 ? json_integer(st->effective_abi)
									 : json_null());
}

static int ll_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	memset(out, 0, sizeof *out);
	struct ll_state st;
	real_probe(ctx, &st);
	bool ready = state_ready(&st);
	out->available = ready;
	out->reason = state_reason(&st);
	out->caps = caps_for(ctx, ready, st.effective_abi);
	out->facts = st.facts;
	if (!ready) {
		out->detail = strdup(st.why.message);
		out->hint = st.why.hint[0] ? strdup(st.why.hint) : NULL;
	}
	return 0;
}

/* ---- handle ------------------------------------------------------------ */

/* The handle's state (h->priv): immutable after ensure, freed by the
 * handle lifecycle once released and no execution is in flight. */
struct ll_priv {
	char *dir;          /* private directory holding the manifest */
	char *manifest;     /* written at ensure; immutable afterwards */
	char sha[65];
};

static void priv_free(void *priv)
{
	struct ll_priv *p = priv;
	if (!p)
		return;
	if (p->manifest)
		unlink(p->manifest);
	if (p->dir)
		agsbx_rm_tree(p->dir);
	free(p->dir);
	free(p->manifest);
	free(p);
}

/* The handle's manifest, once: a private dir (readable by a run-as user,
 * writable by the harness only) and the rules derived from the grant. */
static int priv_write_manifest(const struct agsbx_ctx *ctx, const struct agsbx_grant *g, struct ll_priv *p)
{
	_cleanup_json_ json_t *m = build_manifest(g);
	if (!m)
		return -ENOMEM;
	const char *tmp = getenv("TMPDIR");
	if (asprintf(&p->dir, "%s/agsbx-landlock-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
		p->dir = NULL;
		return -ENOMEM;
	}
	if (!mkdtemp(p->dir)) {
		int e = -errno;
		free(p->dir);
		p->dir = NULL;
		return e;
	}
	if (chmod(p->dir, 0755) < 0)
		return -errno;
	int r = agsbx_rundir_claim(p->dir);   /* `cleanup` removes a killed run's */
	if (r < 0)
		return r;
	(void)ctx;
	_cleanup_free_ char *unused_report = NULL;
	return write_manifest(p->dir, "handle", m, &p->manifest, &unused_report, p->sha);
}

/* Same keys and values as the probe's facts, so meta matches the probe. */
static json_t *versions_from_facts(const json_t *facts)
{
	json_t *v = json_object();
	static const char *const keys[] = { "system_abi", "target_abi", "effective_abi", "errata",
					    "newer_than_known" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(keys); i++) {
		json_t *x = json_object_get(facts, keys[i]);
		json_object_set(v, keys[i], x ? x : json_null());
	}
	json_t *sha = json_object_get(json_object_get(facts, "helper"), "sha256");
	json_object_set(v, "helper_sha256", sha ? sha : json_null());
	return v;
}

static int check_grant(const struct agsbx_grant *g, struct agsbx_error *fail)
{
	for (int i = 0; i < AGSBX_ROOT_COUNT; i++) {
		int r = agsbx_path_check_no_symlink(g->roots[i].path);
		if (r < 0) {
			agsbx_fail(fail, "grant_invalid", "grant root %s (%s): %s", agsbx_root_role_name(i),
				   g->roots[i].path, strerror(-r));
			return r;
		}
	}
	return 0;
}

static int ll_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		     struct agsbx_handle **out, struct agsbx_error *fail)
{
	*out = NULL;
	if (agsbx_provider_check_config(&agsbx_provider_landlock, ctx->config, fail) < 0)
		return -EINVAL;
	int r = check_grant(g, fail);
	if (r < 0)
		return r;
	struct ll_state st;
	real_probe(ctx, &st);
	if (!state_ready(&st)) {
		/* Fail closed: no fallback to running without the ruleset. */
		agsbx_fail_hint(fail, st.why.reason, st.why.hint, "landlock: %s", st.why.message);
		json_decref(st.facts);
		return strcmp(st.why.reason, "kernel_does_not_support_landlock") == 0 ? -ENOSYS : -EOPNOTSUPP;
	}
	struct agsbx_caps caps = caps_for(ctx, true, st.effective_abi);
	struct ll_priv *p = calloc(1, sizeof *p);
	struct agsbx_handle *h = p ? agsbx_handle_new(&agsbx_provider_landlock, ctx, g, &caps) : NULL;
	r = h ? priv_write_manifest(ctx, g, p) : -ENOMEM;
	if (r < 0) {
		agsbx_handle_free(h);
		priv_free(p);
		json_decref(st.facts);
		agsbx_fail(fail, "landlock_enforcement_failed", "landlock: writing the manifest: %s", strerror(-r));
		return r;
	}
	json_decref(h->versions);
	h->versions = versions_from_facts(st.facts);
	json_decref(st.facts);
	h->priv = p;
	h->priv_free = priv_free;
	*out = h;
	return 0;
}

static int ll_health(struct agsbx_handle *h)
{
	if (agsbx_handle_health(h) < 0)
		return -ESTALE;
	struct ll_state st;
	real_probe(h->ctx, &st);
	json_decref(st.facts);
	return state_ready(&st) ? 0 : -EOPNOTSUPP;
}

static int run_step(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		    struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	const struct ll_priv *p = h->priv;
	char **env = agsbx_provider_min_env(h, step);
	struct helper_call c = { .manifest = p->manifest, .sha256 = p->sha, .report = NULL,
				 .program = step->argv, .envp = (const char *const *)env, .cwd = h->paths[step->cwd] };
	int r = env ? run_helper(h->ctx, &c, limits, &out->run) : -ENOMEM;
	agsbx_strv_free(env);
	out->meta = agsbx_handle_meta(h);
	char line[512];
	const char *refusal = r == 0 ? helper_refusal(&c, &out->run, false, line, sizeof line) : NULL;
	if (r < 0) {
		agsbx_fail(fail, "run_failed", "landlock: running %s: %s", HELPER_NAME, strerror(-r));
		return r;
	}
	if (refusal) {
		agsbx_fail(fail, refusal, "%s", line);
		return -EPERM;
	}
	return 0;
}

static int ll_execute(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		      struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	return agsbx_handle_execute(h, step, limits, out, fail, run_step);
}

/* By hand: the helper with the same manifest, environment and directory. */
static int ll_raw_command(struct agsbx_handle *h, const struct agsbx_step *step, struct agsbx_raw_command *out)
{
	*out = (struct agsbx_raw_command){ 0 };
	if (agsbx_handle_enter(h, NULL) < 0)
		return -ESTALE;
	const struct ll_priv *p = h->priv;
	struct helper_call c = { .manifest = p->manifest, .sha256 = p->sha, .program = step->argv };
	agsbx_random_hex(c.tag, 16);
	out->argv = helper_argv(h->ctx, &c);
	out->envp = agsbx_provider_min_env(h, step);
	out->cwd = strdup(h->paths[step->cwd]);
	agsbx_handle_leave(h);
	if (!out->argv || !out->envp || !out->cwd) {
		agsbx_raw_command_clear(out);
		return -ENOMEM;
	}
	return 0;
}

static bool is_temp_name(const char *n)
{
	size_t l = strlen(n);
	return strncmp(n, TEMP_PREFIX, strlen(TEMP_PREFIX)) == 0 && l > strlen(TEMP_PREFIX TEMP_SUFFIX) &&
	       strcmp(n + l - strlen(TEMP_SUFFIX), TEMP_SUFFIX) == 0;
}

/* Lists (and with unlink_them removes) stray .landlock-*.json policy files
 * in the logs root (none is ever written there by this provider; older
 * versions and other tools did); unlinkat never follows a planted link. */
static int scan_temps(const struct agsbx_handle *h, bool unlink_them, json_t *found)
{
	int dfd = open(h->grant->roots[AGSBX_ROOT_LOGS].path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -errno;
	DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		return -e;
	}
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!is_temp_name(e->d_name))
			continue;
		n++;
		if (found)
			json_array_append_new(found, json_pack("{s:s, s:s}", "kind", "landlock_manifest", "name",
							       e->d_name));
		if (unlink_them)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	return n;
}

static int ll_leftovers(struct agsbx_handle *h, const char *marker, json_t **found)
{
	(void)marker; /* the handle's own manifest lives outside the grant until release */
	json_t *arr = json_array();
	int n = scan_temps(h, false, arr);
	if (found)
		*found = arr;
	else
		json_decref(arr);
	return n;
}

static void remove_temps(struct agsbx_handle *h)
{
	scan_temps(h, true, NULL);
}

/* The manifest goes with the last execution still in flight (priv_free). */
static void ll_release(struct agsbx_handle *h)
{
	agsbx_handle_release(h, remove_temps);
}

#else /* !__linux__ */

static bool ll_applies(const struct agsbx_provider_ops *self)
{
	return false;
}

static int ll_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	(void)ctx;
	memset(out, 0, sizeof *out);
	out->reason = "not_linux";
	out->caps = (struct agsbx_caps){ .network = AGSBX_NET_INHERITED, .mechanism = "landlock",
					 .safety_class = "filesystem_only" };
	out->facts = json_object();
	out->detail = strdup("Landlock is a Linux security module");
	return 0;
}

static int ll_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		     struct agsbx_handle **out, struct agsbx_error *fail)
{
	(void)ctx;
	(void)g;
	*out = NULL;
	agsbx_fail(fail, "not_linux", "landlock: Landlock is a Linux security module");
	return -EOPNOTSUPP;
}

static int ll_health(struct agsbx_handle *h)
{
	(void)h;
	return -EOPNOTSUPP;
}

static int ll_execute(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		      struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	(void)h;
	(void)step;
	(void)limits;
	memset(out, 0, sizeof *out);
	agsbx_fail(fail, "not_linux", "landlock: Landlock is a Linux security module");
	return -EOPNOTSUPP;
}

static void ll_release(struct agsbx_handle *h)
{
	agsbx_handle_release(h, NULL);
}

static int ll_leftovers(struct agsbx_handle *h, const char *marker, json_t **found)
{
	(void)h;
	(void)marker;
	if (found)
		*found = json_array();
	return 0;
}

static int ll_raw_command(struct agsbx_handle *h, const struct agsbx_step *step, struct agsbx_raw_command *out)
{
	(void)h;
	(void)step;
	*out = (struct agsbx_raw_command){ 0 };
	return -EOPNOTSUPP;
}

#endif /* __linux__ */

static const struct agsbx_shared_fact shared_facts[] = { { "system_abi", "landlock", "abi" }, { 0 } };

const struct agsbx_provider_ops agsbx_provider_landlock = {
	.id = "landlock",
	.summary = "Landlock ruleset (grant roots + system read roots, TCP at ABI >= 4, scoping at ABI >= 6) "
		   "applied by a helper that then execs the step",
	.reasons = reasons,
	.config_keys = config_keys,
	.reason_conds = reason_conds,
	.shared_facts = shared_facts,
	.fail_closed_simulation = AGSBX_SIM_NO_LANDLOCK,
	.runs_keep_orphans = true,   /* the helper execs the step */
	.applies = ll_applies,
	.probe = ll_probe,
	.ensure = ll_ensure,
	.health = ll_health,
	.execute = ll_execute,
	.release = ll_release,
	.leftovers = ll_leftovers,
	.raw_command = ll_raw_command,
};
