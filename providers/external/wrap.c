/* The --wrap provider: a command-prefix sandbox (firejail, a bwrap line,
 * unshare...) run through the harness's own bounded runner for each
 * execution. It isolates whatever the wrapped tool isolates; it claims
 * only what --config ID.claims says (default nothing), so a bare wrapper
 * yields the record of what was observed. */
#include "providers/external/internal.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/rundir.h"
#include "base/runner.h"
#include "base/strv.h"
#include "base/util.h"

static const char *const reasons[] = { "ready", "wrap_command_missing", NULL };

static bool command_found(const char *w, char *path, size_t size);
static const char *const config_keys[] = { "claims", "home", "inventory", NULL };

/* ---- claims ---- */

static int claim(struct agsbx_caps *c, const char *axis)
{
	for (int a = 0; a < AGSBX_AXIS_COUNT; a++)
		if (agsbx_axes[a].kind == AGSBX_AXIS_KIND_FLAG && !strcmp(axis, agsbx_axes[a].name)) {
			*agsbx_axis_flag(a, c) = true;
			return 0;
		}
	if (!strcmp(axis, "network_isolated"))
		c->network = AGSBX_NET_ISOLATED;
	else if (!strcmp(axis, "network_tcp_restricted"))
		c->network = AGSBX_NET_TCP_RESTRICTED;
	else
		return -EINVAL;
	return 0;
}

/* --config ID.inventory=COMMAND: split like the template; its first word
 * must be executable. */
static int configure_inventory(struct ext_instance *in, const json_t *v, struct agsbx_error *fail)
{
	if (!v)
		return 0;
	char **argv = NULL;
	char path[4096];
	int n = json_is_string(v) ? agsbx_split_words(json_string_value(v), &argv) : -EINVAL;
	if (n <= 0 || !command_found(argv[0], path, sizeof path)) {
		agsbx_fail(fail, "config_invalid",
			   "%s.inventory: expected a command line whose first word is an executable file", in->id);
		agsbx_strv_free(argv);
		return -EINVAL;
	}
	agsbx_strv_free(in->wrap_inventory);
	in->wrap_inventory = argv;
	return 0;
}

/* The harness-side config, checked before anything runs: a wrapper's keys
 * are ours (claims, home, inventory). */
static int wrap_configure(const struct agsbx_provider_ops *self, const json_t *config, struct agsbx_error *fail)
{
	struct ext_instance *in = ext_instance_of(self);
	in->wrap_claims = (struct agsbx_caps){ .network = AGSBX_NET_INHERITED, .mechanism = "wrap",
					       .safety_class = "declared_wrapper" };
	json_decref(in->wrap_claims_json); /* configured again: the last config wins */
	in->wrap_claims_json = json_array();
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)config, key, v) {
		if (strcmp(key, "claims") != 0 && strcmp(key, "home") != 0 && strcmp(key, "inventory") != 0) {
			agsbx_fail(fail, "config_invalid",
				   "%s: unknown config key '%s' (a wrapper takes 'claims', 'home' and 'inventory')",
				   in->id, key);
			return -EINVAL;
		}
	}
	if (configure_inventory(in, json_object_get(config, "inventory"), fail) < 0)
		return -EINVAL;
	const char *home = json_string_value(json_object_get(config, "home"));
	if (json_object_get(config, "home") && (!home || (strcmp(home, "build") != 0 && strcmp(home, "real") != 0))) {
		agsbx_fail(fail, "config_invalid", "%s.home: expected 'build' or 'real'", in->id);
		return -EINVAL;
	}
	in->wrap_home_real = home && strcmp(home, "real") == 0;
	const char *s = json_string_value(json_object_get(config, "claims"));
	if (json_object_get(config, "claims") && !s) {
		agsbx_fail(fail, "config_invalid", "%s.claims: expected AXIS[,AXIS...]", in->id);
		return -EINVAL;
	}
	_cleanup_free_ char *copy = s ? strdup(s) : NULL;
	char *save = NULL;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "none") == 0)
			continue;
		if (claim(&in->wrap_claims, t) < 0) {
			agsbx_fail(fail, "config_invalid",
				 "%s.claims: unknown axis '%s' (process_contained, host_filesystem_restricted, "
				 "privilege_escalation_blocked, syscalls_restricted, environment_scrubbed, network_isolated, "
				 "network_tcp_restricted)", in->id, t);
			return -EINVAL;
		}
		json_array_append_new(in->wrap_claims_json, json_string(t));
	}
	return 0;
}

/* ---- probe and ensure ---- */

/* The first word: executable as given, or found in the sandbox PATH. */
static bool command_found(const char *w, char *path, size_t size)
{
	if (strchr(w, '/')) {
		snprintf(path, size, "%s", w);
		return access(w, X_OK) == 0;
	}
	static const char *const dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(dirs); i++) {
		snprintf(path, size, "%s/%s", dirs[i], w);
		if (access(path, X_OK) == 0)
			return true;
	}
	return false;
}

static void claims_default(struct ext_instance *in)
{
	if (!in->wrap_claims.mechanism)
		wrap_configure(&in->ops, NULL, NULL);
}

static int wrap_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	struct ext_instance *in = ext_instance_of(self);
	memset(out, 0, sizeof *out);
	claims_default(in);
	char path[4096];
	bool found = command_found(in->argv[0], path, sizeof path);
	out->available = found;
	out->reason = found ? "ready" : "wrap_command_missing";
	out->caps = in->wrap_claims;
	out->facts = json_pack("{s:s, s:b, s:O}", "command", path, "executable", found, "claims_from_config",
			       in->wrap_claims_json);
	if (!found && asprintf(&out->detail, "%s is not an executable file", in->argv[0]) < 0)
		out->detail = NULL;
	return 0;
}

/* ---- resource inventory (--config ID.inventory) ---- */

static void inventory_free(void *p)
{
	json_decref(p);
}

/* The inventory command's stdout lines as a JSON array, run as the sandbox
 * user with the wrapper's environment; NULL when it could not run or
 * exited non-zero. */
static json_t *inventory_take(const struct agsbx_handle *h)
{
	struct ext_instance *in = ext_instance_of(h->ops);
	char **env = agsbx_provider_min_env(h, NULL);
	struct agsbx_run_opts o = { .argv = (const char *const *)in->wrap_inventory, .envp = (const char *const *)env,
				    .cwd = h->paths[AGSBX_ROOT_BUILD], .max_output_bytes = 1 << 20, .timeout_ms = 30000,
				    .cancel_fd = -1, .drop_privileges = h->ctx->run_as, .run_uid = h->ctx->run_uid,
				    .run_gid = h->ctx->run_gid };
	struct agsbx_run_result r = { 0 };
	int rc = env ? agsbx_run(&o, &r) : -ENOMEM;
	agsbx_strv_free(env);
	json_t *lines = rc == 0 && r.exited && r.exit_code == 0 && !r.out_truncated ? json_array() : NULL;
	for (char *l = lines ? r.out : NULL, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (len)
			json_array_append_new(lines, agsbx_json_string_sanitized(l, len));
	}
	agsbx_run_result_clear(&r);
	return lines;
}

static bool has_line(const json_t *a, const json_t *s)
{
	for (size_t i = 0; i < json_array_size(a); i++)
		if (json_equal(json_array_get(a, i), (json_t *)s))
			return true;
	return false;
}

/* The inventory's lines that were not there before the handle's first
 * execution. -EOPNOTSUPP without an inventory command (nothing was
 * inventoried), -EIO when it failed before or now. */
static int wrap_leftovers(struct agsbx_handle *h, const char *marker, json_t **found)
{
	(void)marker;
	*found = NULL;
	if (!ext_instance_of(h->ops)->wrap_inventory)
		return -EOPNOTSUPP;
	const json_t *before = h->priv;
	json_t *now = before ? inventory_take(h) : NULL;
	if (!now)
		return -EIO;
	*found = json_array();
	for (size_t i = 0; i < json_array_size(now); i++)
		if (!has_line(before, json_array_get(now, i)))
			json_array_append(*found, json_array_get(now, i));
	json_decref(now);
	return (int)json_array_size(*found);
}

static int wrap_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		       struct agsbx_handle **out, struct agsbx_error *fail)
{
	struct ext_instance *in = ext_instance_of(self);
	*out = NULL;
	claims_default(in);
	if (agsbx_provider_check_config(&in->ops, ctx->config, fail) < 0)
		return -EINVAL;
	char path[4096];
	if (!command_found(in->argv[0], path, sizeof path)) {
		agsbx_fail(fail, "wrap_command_missing", "%s is not an executable file", in->argv[0]);
		return -ENOENT;
	}
	*out = agsbx_handle_new(&in->ops, ctx, g, &in->wrap_claims);
	if (!*out)
		return -ENOMEM;
	/* What exists before this handle's first execution; a failed
	 * inventory is reported by leftovers, not here. */
	if (in->wrap_inventory) {
		(*out)->priv = inventory_take(*out);
		(*out)->priv_free = inventory_free;
	}
	return 0;
}

/* ---- execute ---- */

/* One template word with {source} {build} {output} {logs} {cwd} replaced. */
static char *expand_word(const struct agsbx_handle *h, const char *w, enum agsbx_root_role cwd)
{
	static const char *const names[] = { "{source}", "{build}", "{output}", "{logs}", "{cwd}" };
	size_t cap = strlen(w) + 1, len = 0;
	for (int i = 0; i < AGSBX_ROOT_COUNT; i++)
		cap += 5 * strlen(h->paths[i]);
	char *o = malloc(cap * 4);
	if (!o)
		return NULL;
	while (*w) {
		bool hit = false;
		for (size_t i = 0; i < AGSBX_ARRAY_SIZE(names) && !hit; i++) {
			size_t n = strlen(names[i]);
			if (strncmp(w, names[i], n) != 0)
				continue;
			const char *p = h->paths[i < AGSBX_ROOT_COUNT ? i : cwd];
			if (len + strlen(p) + 1 > cap * 4)
				break;
			memcpy(o + len, p, strlen(p));
			len += strlen(p);
			w += n;
			hit = true;
		}
		if (!hit && len + 2 <= cap * 4)
			o[len++] = *w++;
		else if (!hit)
			break;
	}
	o[len] = '\0';
	return o;
}

static char **expand(const struct agsbx_handle *h, const struct ext_instance *in, const struct agsbx_step *step)
{
	size_t n = 0;
	while (step->argv[n])
		n++;
	char **v = calloc(in->argc + n + 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; v && i < in->argc; i++) {
		if (strcmp(in->argv[i], "{argv}") == 0) {
			for (size_t j = 0; j < n; j++)
				v[k++] = strdup(step->argv[j]);
			continue;
		}
		v[k++] = expand_word(h, in->argv[i], step->cwd);
	}
	for (size_t i = 0; v && i < k; i++)
		if (!v[i]) {
			agsbx_strv_free(v);
			return NULL;
		}
	return v;
}

/* --config ID.home=real: HOME is the sandbox user's home from the
 * password database, for tools that keep their state there (podman's
 * storage, codex's helpers) instead of the build root. */
static int real_home(const struct agsbx_handle *h, char **env)
{
	struct passwd pwd, *pw = NULL;
	char buf[4096]; /* getpwuid_r: checks run executions concurrently */
	if (getpwuid_r(h->ctx->run_as ? h->ctx->run_uid : getuid(), &pwd, buf, sizeof buf, &pw) != 0 || !pw ||
	    !pw->pw_dir || pw->pw_dir[0] != '/')
		return -ENOENT;
	for (char **e = env; *e; e++)
		if (strncmp(*e, "HOME=", 5) == 0) {
			char *s = NULL;
			if (asprintf(&s, "HOME=%s", pw->pw_dir) < 0)
				return -ENOMEM;
			free(*e);
			*e = s;
		}
	return 0;
}

/* The harness's minimal environment plus its env canary: a wrapped tool
 * is started by a user whose environment it may pass on, so it gets the
 * canary standing for that environment, and env.scrubbed observes what
 * the wrapper (not the harness) does with it. */
static char **wrapper_env(const struct agsbx_handle *h, const struct agsbx_step *step)
{
	char **v = agsbx_provider_min_env(h, step);
	const char *c = h->ctx->env_canary;
	size_t n = 0;
	while (v && v[n])
		n++;
	if (v && c && agsbx_strv_push(&v, &n, strdup(c)) < 0) {
		agsbx_strv_free(v);
		return NULL;
	}
	if (v && ext_instance_of(h->ops)->wrap_home_real && real_home(h, v) < 0) {
		agsbx_strv_free(v);
		return NULL;
	}
	return v;
}

/* agsbx_provider_run, except that the end of the execution spares the
 * wrapped tool's own daemons (rootless podman's pause process, conmon:
 * killed, the tool's next run fails): only what runs the step's program,
 * carries the run's nonce (every lifecycle marker does) or descends from
 * either is the execution's, besides the wrapper's own session. */
static int run_sparing_helpers(const struct agsbx_handle *h, const struct agsbx_step *step,
			       const struct agsbx_limits *limits, char **argv, char **env,
			       struct agsbx_exec_result *out)
{
	struct agsbx_run_opts o;
	agsbx_provider_run_opts(h, limits, &o);
	o.argv = (const char *const *)argv;
	o.envp = (const char *const *)env;
	o.cwd = h->paths[step->cwd];
	o.spare_helpers = true;
	o.own_exe = step->argv[0];
	o.own_word = agsbx_run_nonce();
	int r = agsbx_run(&o, &out->run);
	out->meta = agsbx_handle_meta(h);
	/* Said, not hidden: what the execution left running as the tool's. */
	if (out->meta && r == 0)
		json_object_set_new(out->meta, "spared_helpers", json_integer(out->run.spared));
	return r;
}

static int run_step(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		    struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	struct ext_instance *in = ext_instance_of(h->ops);
	char **line = expand(h, in, step);
	char **argv = line ? agsbx_provider_wrap_simulation(h->ctx, (const char *const *)line) : NULL;
	agsbx_strv_free(line);
	char **env = wrapper_env(h, step);
	if (!argv || !env) {
		agsbx_strv_free(argv);
		agsbx_strv_free(env);
		return -ENOMEM;
	}
	int r = run_sparing_helpers(h, step, limits, argv, env, out);
	json_t *words = json_array();
	for (char **w = argv; *w; w++)
		json_array_append_new(words, agsbx_json_string_sanitized(*w, strlen(*w)));
	json_object_set_new(out->meta, "wrapped_argv", words);
	agsbx_strv_free(argv);
	agsbx_strv_free(env);
	if (r < 0 && out->run.spawn_errno)
		agsbx_fail(fail, "run_failed", "%s: cannot run %s: %s", h->ops->id, in->argv[0], strerror(-r));
	return r;
}

static int wrap_execute(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
			struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	return agsbx_handle_execute(h, step, limits, out, fail, run_step);
}

static json_t *wrap_finish(const struct agsbx_provider_ops *self, struct agsbx_error *defect)
{
	(void)defect;
	struct ext_instance *in = ext_instance_of(self);
	claims_default(in);
	json_t *argv = json_array();
	for (size_t i = 0; i < in->argc; i++)
		json_array_append_new(argv, agsbx_json_string_sanitized(in->argv[i], strlen(in->argv[i])));
	return json_pack("{s:s, s:{s:o, s:o, s:O}}", "kind", "wrap", "declared", "template", argv, "command",
			 agsbx_json_string_sanitized(in->decl, strlen(in->decl)), "claims",
			 in->wrap_claims_json);
}

/* No health or release: the command prefix is not re-probed, and each
 * execution's tree ends with it. */
const struct agsbx_provider_ops ext_wrap_ops_template = {
	.summary = "declared: a command-prefix sandbox (--wrap)",
	.declared = true,
	.configure = wrap_configure,
	.probe = wrap_probe,
	.ensure = wrap_ensure,
	.reasons = reasons,
	.config_keys = config_keys,
	.execute = wrap_execute,
	.leftovers = wrap_leftovers,
	.finish = wrap_finish,
};
