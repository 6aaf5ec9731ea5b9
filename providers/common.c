/* Shared pieces of the provider contract: probe/caps JSON, failures, the
 * handle and its lifecycle, environments and simulations for host-process
 * providers. */
#include "providers/provider.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/proc.h"
#include "base/util.h"

void agsbx_provider_probe_clear(struct agsbx_probe *p)
{
	json_decref(p->facts);
	free(p->detail);
	free(p->hint);
	memset(p, 0, sizeof *p);
}

json_t *agsbx_caps_to_json(const struct agsbx_caps *c)
{
	json_t *j = json_pack("{s:s, s:s, s:s}", "network", c->network ? c->network : AGSBX_NET_INHERITED,
			      "mechanism", c->mechanism ? c->mechanism : "none",
			      "safety_class", c->safety_class ? c->safety_class : "none");
	for (int a = 0; j && a < AGSBX_AXIS_COUNT; a++)
		if (agsbx_axes[a].kind == AGSBX_AXIS_KIND_FLAG)
			json_object_set_new(j, agsbx_axes[a].name, json_boolean(agsbx_axis_claimed(a, c)));
	return j;
}

json_t *agsbx_provider_probe_to_json(const struct agsbx_probe *p)
{
	json_t *j = json_pack("{s:b, s:s, s:o, s:o}", "available", p->available,
			      "reason", p->reason ? p->reason : "unknown",
			      "capabilities", agsbx_caps_to_json(&p->caps),
			      "facts", p->facts ? json_incref(p->facts) : json_object());
	if (p->detail)
		json_object_set_new(j, "detail", agsbx_json_string_sanitized(p->detail, strlen(p->detail)));
	if (p->hint)
		json_object_set_new(j, "hint", agsbx_json_string_sanitized(p->hint, strlen(p->hint)));
	return j;
}

void agsbx_fail(struct agsbx_error *f, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	agsbx_error_vset(f, reason, fmt, ap);
	va_end(ap);
}

void agsbx_fail_hint(struct agsbx_error *f, const char *reason, const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	agsbx_error_vset(f, reason, fmt, ap);
	va_end(ap);
	if (f && hint && hint[0])
		snprintf(f->hint, sizeof f->hint, "%s", hint);
}

void agsbx_exec_result_clear(struct agsbx_exec_result *r)
{
	agsbx_run_result_clear(&r->run);
	json_decref(r->meta);
	memset(r, 0, sizeof *r);
}

struct agsbx_handle *agsbx_handle_new(const struct agsbx_provider_ops *ops, const struct agsbx_ctx *ctx,
				      const struct agsbx_grant *g, const struct agsbx_caps *caps)
{
	struct agsbx_handle *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->ops = ops;
	h->ctx = ctx;
	h->grant = g;
	h->caps = *caps;
	h->versions = json_object();
	pthread_mutex_init(&h->lock, NULL);
	for (int r = 0; r < AGSBX_ROOT_COUNT; r++) {
		h->paths[r] = strdup(g->roots[r].path);
		if (!h->paths[r]) {
			agsbx_handle_free(h);
			return NULL;
		}
	}
	return h;
}

void agsbx_handle_free(struct agsbx_handle *h)
{
	if (!h)
		return;
	for (int r = 0; r < AGSBX_ROOT_COUNT; r++)
		free(h->paths[r]);
	json_decref(h->versions);
	if (h->priv && h->priv_free)
		h->priv_free(h->priv);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

int agsbx_handle_enter(struct agsbx_handle *h, struct agsbx_error *fail)
{
	pthread_mutex_lock(&h->lock);
	bool released = h->released;
	if (!released)
		h->inflight++;
	pthread_mutex_unlock(&h->lock);
	if (released) {
		agsbx_fail(fail, "released", "%s: execute after release", h->ops->id);
		return -ESTALE;
	}
	return 0;
}

void agsbx_handle_leave(struct agsbx_handle *h)
{
	pthread_mutex_lock(&h->lock);
	/* Released meanwhile and the last one out: priv is ours to free,
	 * outside the lock (freeing may take time: files, containers). */
	void *priv = --h->inflight == 0 && h->released && h->priv_free ? h->priv : NULL;
	if (priv)
		h->priv = NULL;
	pthread_mutex_unlock(&h->lock);
	if (priv)
		h->priv_free(priv);
}

bool agsbx_handle_release(struct agsbx_handle *h, void (*teardown)(struct agsbx_handle *h))
{
	/* Marked released and referenced in one step: a last call leaving
	 * meanwhile cannot free priv under the teardown. */
	pthread_mutex_lock(&h->lock);
	bool first = !h->released;
	h->released = true;
	if (first)
		h->inflight++;
	pthread_mutex_unlock(&h->lock);
	if (!first)
		return false;
	if (teardown)
		teardown(h);
	agsbx_handle_leave(h);
	return true;
}

int agsbx_provider_health(struct agsbx_handle *h)
{
	return h->ops->health ? h->ops->health(h) : agsbx_handle_health(h);
}

void agsbx_provider_release(struct agsbx_handle *h)
{
	if (h->ops->release)
		h->ops->release(h);
	else
		agsbx_handle_release(h, NULL);
}

int agsbx_handle_execute(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
			 struct agsbx_exec_result *out, struct agsbx_error *fail, agsbx_execute_fn *run)
{
	memset(out, 0, sizeof *out);
	int r = agsbx_handle_enter(h, fail);
	if (r < 0)
		return r;
	r = agsbx_provider_check_step(h, step, fail);
	if (r == 0)
		r = run(h, step, limits, out, fail);
	agsbx_handle_leave(h);
	return r;
}

int agsbx_handle_health(struct agsbx_handle *h)
{
	pthread_mutex_lock(&h->lock);
	bool released = h->released;
	pthread_mutex_unlock(&h->lock);
	return released ? -ESTALE : 0;
}

char *agsbx_handle_path(const struct agsbx_handle *h, enum agsbx_root_role r, const char *rel)
{
	if (!rel || !*rel)
		return strdup(h->paths[r]);
	return agsbx_path_join(h->paths[r], rel);
}

json_t *agsbx_handle_meta(const struct agsbx_handle *h)
{
	return json_pack("{s:s, s:s, s:o, s:O}", "provider", h->ops->id,
			 "mechanism", h->caps.mechanism ? h->caps.mechanism : "none",
			 "capabilities", agsbx_caps_to_json(&h->caps), "versions", h->versions);
}

/* The spec "name:type" of key, or NULL. */
static const char *key_spec(const struct agsbx_provider_ops *ops, const char *key)
{
	size_t n = strlen(key);
	for (const char *const *k = ops->config_keys; k && *k; k++)
		if (strncmp(*k, key, n) == 0 && ((*k)[n] == ':' || (*k)[n] == '\0'))
			return *k;
	return NULL;
}

static bool value_has_type(const json_t *v, const char *type)
{
	if (strcmp(type, "bool") == 0)
		return json_is_boolean(v);
	if (strcmp(type, "string") == 0)
		return json_is_string(v);
	return false;
}

int agsbx_provider_check_config(const struct agsbx_provider_ops *ops, const json_t *config,
				struct agsbx_error *fail)
{
	if (!config)
		return 0;
	if (!json_is_object(config)) {
		agsbx_fail(fail, "config_invalid", "%s: config must be an object", ops->id);
		return -EINVAL;
	}
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)config, key, v) {
		const char *spec = key_spec(ops, key);
		if (!spec) {
			agsbx_fail(fail, "config_invalid", "%s: unknown config key '%s'", ops->id, key);
			return -EINVAL;
		}
		const char *type = strchr(spec, ':');
		if (type && !value_has_type(v, type + 1)) {
			_cleanup_free_ char *shown = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			agsbx_fail(fail, "config_invalid", "%s: config key '%s' must be a %s%s, got %.64s", ops->id, key,
				   type + 1, strcmp(type + 1, "bool") == 0 ? " (true or false)" : "", shown ? shown : "?");
			return -EINVAL;
		}
	}
	return 0;
}

int agsbx_provider_configure(const struct agsbx_provider_ops *ops, const json_t *config, struct agsbx_error *fail)
{
	return ops->configure ? ops->configure(ops, config, fail) : agsbx_provider_check_config(ops, config, fail);
}

int agsbx_config_bool(const struct agsbx_provider_ops *ops, const json_t *config, const char *key, bool def,
		      bool *out, struct agsbx_error *fail)
{
	*out = def;
	const json_t *v = json_is_object(config) ? json_object_get(config, key) : NULL;
	if (!v)
		return 0;
	if (!json_is_boolean(v)) {
		agsbx_fail(fail, "config_invalid", "%s: config key '%s' must be a bool (true or false)", ops->id, key);
		return -EINVAL;
	}
	*out = json_is_true(v);
	return 0;
}

int agsbx_provider_check_step(const struct agsbx_handle *h, const struct agsbx_step *step,
			      struct agsbx_error *fail)
{
	if (!step || !step->argv || !step->argv[0] || !*step->argv[0] || (unsigned)step->cwd >= AGSBX_ROOT_COUNT) {
		agsbx_fail(fail, "step_invalid", "%s: empty argv or unknown cwd root", h->ops->id);
		return -EINVAL;
	}
	if (agsbx_grant_verify(h->grant, fail) < 0)
		return -EBADMSG;
	return 0;
}

static char *kv(const char *k, const char *v)
{
	char *s = NULL;
	return asprintf(&s, "%s=%s", k, v) < 0 ? NULL : s;
}

char **agsbx_provider_min_env(const struct agsbx_handle *h, const struct agsbx_step *step)
{
	/* Only what a program needs: no host variable crosses unless named
	 * here (env.scrubbed checks it). */
	const char *build = h->paths[AGSBX_ROOT_BUILD];
	char **v = NULL;
	size_t n = 0;
	int r = 0;
	r |= agsbx_strv_push(&v, &n, kv("PATH", "/usr/local/bin:/usr/bin:/bin"));
	r |= agsbx_strv_push(&v, &n, kv("LANG", "C.UTF-8"));
	r |= agsbx_strv_push(&v, &n, kv("HOME", build));
	r |= agsbx_strv_push(&v, &n, kv("TMPDIR", build));
	r |= agsbx_strv_push(&v, &n, kv("TMP", build));
	r |= agsbx_strv_push(&v, &n, kv("TEMP", build));
	for (const char *const *e = step && step->env ? step->env : NULL; e && *e; e++)
		r |= agsbx_strv_push(&v, &n, strdup(*e));
	if (r) {
		agsbx_strv_free(v);
		return NULL;
	}
	return v;
}

void agsbx_provider_run_opts(const struct agsbx_handle *h, const struct agsbx_limits *limits,
			     struct agsbx_run_opts *o)
{
	memset(o, 0, sizeof *o);
	o->max_output_bytes = limits->max_output_bytes;
	o->timeout_ms = limits->timeout_ms;
	o->cancel_fd = limits->cancel_fd;
	o->drop_privileges = h->ctx->run_as;
	o->run_uid = h->ctx->run_uid;
	o->run_gid = h->ctx->run_gid;
	o->use_cgroup = true;
}

int agsbx_provider_run(const struct agsbx_handle *h, const struct agsbx_limits *limits, const char *const *argv,
		       const char *const *envp, const char *cwd, struct agsbx_exec_result *out)
{
	struct agsbx_run_opts o;
	agsbx_provider_run_opts(h, limits, &o);
	o.argv = argv;
	o.envp = envp;
	o.cwd = cwd;
	int r = agsbx_run(&o, &out->run);
	out->meta = agsbx_handle_meta(h);
	return r;
}

char **agsbx_provider_wrap_simulation(const struct agsbx_ctx *ctx, const char *const *argv)
{
	char **v = NULL;
	size_t n = 0;
	int r = 0;
	const char *sim = ctx->simulate;
	bool seccomp_sim = sim && (strcmp(sim, AGSBX_SIM_BLOCKED_USERNS) == 0 ||
				   strcmp(sim, AGSBX_SIM_NO_LANDLOCK) == 0);
	if (seccomp_sim) {
		char *flag = NULL;
		if (asprintf(&flag, "--%s", sim) < 0)
			return NULL;
		r |= agsbx_strv_push(&v, &n, agsbx_path_join(ctx->tool_dir, "agsbx-simulate"));
		r |= agsbx_strv_push(&v, &n, flag);
		r |= agsbx_strv_push(&v, &n, strdup("--"));
	}
	for (const char *const *a = argv; *a; a++)
		r |= agsbx_strv_push(&v, &n, strdup(*a));
	if (r) {
		agsbx_strv_free(v);
		return NULL;
	}
	return v;
}

void agsbx_raw_command_clear(struct agsbx_raw_command *c)
{
	agsbx_strv_free(c->argv);
	agsbx_strv_free(c->envp);
	free(c->cwd);
	*c = (struct agsbx_raw_command){ 0 };
}

static bool status_hex(const char *text, const char *key, char out[17])
{
	_cleanup_free_ char *v = agsbx_status_field(text, key);
	return v && sscanf(v, "%16[0-9a-fA-F]", out) == 1;
}

bool agsbx_self_caps(char eff[17], char prm[17], char amb[17])
{
	_cleanup_free_ char *st = NULL;
	if (agsbx_proc_status(0, &st) < 0)
		return false;
	return status_hex(st, "CapEff", eff) && status_hex(st, "CapPrm", prm) && status_hex(st, "CapAmb", amb);
}

static bool hex_zero(const char *h)
{
	for (; *h; h++)
		if (*h != '0')
			return false;
	return true;
}

bool agsbx_provider_runs_without_caps(const struct agsbx_ctx *ctx)
{
	if (ctx->run_as)
		return ctx->run_uid != 0;
	char eff[17], prm[17], amb[17];
	return agsbx_self_caps(eff, prm, amb) && hex_zero(eff) && hex_zero(prm) && hex_zero(amb);
}
