/* The --adapter provider: the provider contract mapped onto
 * agsbx-external/1 requests, with every response checked field by field.
 * A missing or mistyped field is a protocol violation (the provider is
 * defective), never a default. */
#include "providers/external/internal.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/util.h"

#define HARNESS_REASONS EXT_R_START, EXT_R_PROTOCOL, EXT_R_TIMEOUT, EXT_R_EXITED
static const char *const before_hello[] = { "ready", HARNESS_REASONS, NULL };

/* ---- hello ---- */

static bool reason_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static bool strings_ok(const json_t *a, bool names)
{
	if (!json_is_array(a))
		return false;
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
		if (!json_is_string(v) || (names && !reason_name_ok(json_string_value(v))))
			return false;
	return true;
}

static bool in_array(const json_t *a, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	return false;
}

static const char *const host_conds[] = { AGSBX_HOSTCOND_USERNS_BLOCKED, AGSBX_HOSTCOND_LANDLOCK_UNSUPPORTED,
					  AGSBX_HOSTCOND_DOCKER_UNREACHABLE, AGSBX_HOSTCOND_RUNTIME_UNREGISTERED, NULL };

/* The optional reason_conditions: {reason: host condition}. */
static const char *conds_invalid(const json_t *rc, const json_t *reasons)
{
	if (!rc)
		return NULL;
	if (!json_is_object(rc))
		return "reason_conditions is not an object";
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)rc, k, v) {
		if (!in_array(reasons, k))
			return "reason_conditions names a reason outside reasons";
		bool known = false;
		for (const char *const *c = host_conds; *c; c++)
			known |= json_is_string(v) && strcmp(*c, json_string_value(v)) == 0;
		if (!known)
			return "reason_conditions maps to an unknown host condition";
	}
	return NULL;
}

static const char *hello_invalid(const json_t *r)
{
	const json_t *prov = json_object_get(r, "provider"), *reasons = json_object_get(r, "reasons");
	const json_t *ready = json_object_get(r, "ready_reasons");
	if (!json_is_true(json_object_get(r, "ok")))
		return "hello refused";
	if (json_integer_value(json_object_get(r, "protocol")) != 1 || !json_is_integer(json_object_get(r, "protocol")))
		return "protocol is not 1";
	if (!json_is_object(prov) || !json_is_string(json_object_get(prov, "name")) ||
	    !json_is_string(json_object_get(prov, "version")))
		return "provider {name, version} missing or mistyped";
	/* Kept whole in the bundle, and name/version in every handle's versions. */
	if (ext_json_written_size(r, EXT_HELLO_DEPTH, EXT_PIECE_MAX) > EXT_PIECE_MAX)
		return "larger than the cap for one piece of adapter-supplied JSON";
	if (json_string_length(json_object_get(prov, "name")) > EXT_NAME_MAX ||
	    json_string_length(json_object_get(prov, "version")) > EXT_NAME_MAX)
		return "provider name or version longer than " EXT_NAME_MAX_STR " bytes";
	if (!strings_ok(reasons, true) || json_array_size(reasons) == 0)
		return "reasons missing, empty, or not [a-z0-9_] strings";
	if (ready && !strings_ok(ready, true))
		return "ready_reasons mistyped";
	for (size_t i = 0; ready && i < json_array_size(ready); i++)
		if (!in_array(reasons, json_string_value(json_array_get(ready, i))))
			return "a ready reason is outside reasons";
	if (!ready && !in_array(reasons, "ready"))
		return "reasons lacks 'ready' (and no ready_reasons)";
	if (!strings_ok(json_object_get(r, "config_keys"), false))
		return "config_keys missing or mistyped";
	return conds_invalid(json_object_get(r, "reason_conditions"), reasons);
}

/* reasons := adapter's ∪ {ready} ∪ the harness's own; conds from hello. */
static void adopt_hello(struct ext_instance *in, json_t *r)
{
	const json_t *reasons = json_object_get(r, "reasons"), *keys = json_object_get(r, "config_keys");
	size_t n = json_array_size(reasons), k = 0;
	in->reasons = calloc(n + 8, sizeof *in->reasons);
	in->config_keys = calloc(json_array_size(keys) + 1, sizeof *in->config_keys);
	if (!in->reasons || !in->config_keys)
		return;
	for (size_t i = 0; i < n; i++)
		in->reasons[k++] = ext_intern(in, json_string_value(json_array_get(reasons, i)));
	const char *extra[] = { "ready", HARNESS_REASONS };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(extra); i++)
		if (!in_array(reasons, extra[i]))
			in->reasons[k++] = extra[i];
	for (size_t i = 0; i < json_array_size(keys); i++)
		in->config_keys[i] = ext_intern(in, json_string_value(json_array_get(keys, i)));
	const json_t *rc = json_object_get(r, "reason_conditions");
	in->conds = calloc(json_object_size(rc) + 1, sizeof *in->conds);
	const char *key;
	json_t *v;
	size_t c = 0;
	json_object_foreach((json_t *)rc, key, v)
		if (in->conds)
			in->conds[c++] = (struct agsbx_reason_cond){ ext_intern(in, key), ext_intern(in, json_string_value(v)) };
	in->ops.reasons = in->reasons;
	in->ops.config_keys = in->config_keys;
	in->ops.reason_conds = in->conds;
	in->hello = json_incref(r);
}

/* The adapter of this provider run, started (and greeted) once. */
static struct ext_adapter *adapter(struct ext_instance *in, const struct agsbx_ctx *ctx, struct agsbx_error *fail)
{
	pthread_mutex_lock(&in->lock);
	if (!in->started) {
		in->started = true;
		in->ops.reasons = before_hello;
		/* Under a labelled seccomp simulation the whole adapter tree
		 * runs behind it, like a built-in provider's process tree. */
		char **argv = agsbx_provider_wrap_simulation(ctx, (const char *const *)in->argv);
		struct ext_start st = { .argv = argv, .ctx = ctx };
		struct agsbx_error why = { 0 };
		if (!argv || ext_adapter_start(&st, &in->ad, &why) < 0) {
			snprintf(in->start_error, sizeof in->start_error, "%s", argv ? why.message : "out of memory");
			agsbx_fail(fail, EXT_R_START, "%s", in->start_error);
		}
		agsbx_strv_free(argv);
		pthread_mutex_unlock(&in->lock);
		if (!in->ad)
			return NULL;
		json_t *r = NULL;
		if (ext_call(in->ad, "hello", json_pack("{s:i}", "protocol", 1), EXT_DEADLINE_MS, -1, NULL, &r, fail) == 0) {
			const char *bad = hello_invalid(r);
			if (bad)
				ext_violation(in->ad, EXT_R_PROTOCOL, r, "hello: %s", bad);
			else
				adopt_hello(in, r);
			ext_adapter_set_reasons(in->ad, in->reasons);
		}
		json_decref(r);
		pthread_mutex_lock(&in->lock);
	}
	struct ext_adapter *a = in->ad;
	pthread_mutex_unlock(&in->lock);
	if (!a)
		agsbx_fail(fail, EXT_R_START, "the adapter could not be started");
	else if (ext_broken(a, fail))
		return NULL;
	return a;
}

/* ---- probe ---- */

static bool net_ok(const char *n)
{
	return n && (!strcmp(n, AGSBX_NET_ISOLATED) || !strcmp(n, AGSBX_NET_TCP_RESTRICTED) ||
		     !strcmp(n, AGSBX_NET_INHERITED) || !strcmp(n, AGSBX_NET_CONFIGURABLE));
}

static const char *caps_parse(struct ext_instance *in, const json_t *c, struct agsbx_caps *caps)
{
	static const char *const axes[] = { "process_contained", "host_filesystem_restricted",
					    "privilege_escalation_blocked", "syscalls_restricted" };
	bool *dst[] = { &caps->process_contained, &caps->host_filesystem_restricted,
			&caps->privilege_escalation_blocked, &caps->syscalls_restricted };
	if (!json_is_object(c))
		return "capabilities missing";
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(axes); i++) {
		const json_t *v = json_object_get(c, axes[i]);
		if (!json_is_boolean(v))
			return "a capability axis is not a boolean";
		*dst[i] = json_is_true(v);
	}
	const json_t *env = json_object_get(c, "environment_scrubbed");
	if (!json_is_boolean(env) && !json_is_null(env))
		return "environment_scrubbed is neither a boolean nor null";
	caps->environment_scrubbed = json_is_true(env); /* null: not stated, not claimed */
	const char *net = json_string_value(json_object_get(c, "network"));
	const char *mech = json_string_value(json_object_get(c, "mechanism"));
	const char *cls = json_string_value(json_object_get(c, "safety_class"));
	if (!net_ok(net) || !mech || !cls)
		return "network, mechanism or safety_class missing or invalid";
	/* Names, copied into every handle's record. */
	if (strlen(mech) > EXT_NAME_MAX || strlen(cls) > EXT_NAME_MAX)
		return "mechanism or safety_class longer than " EXT_NAME_MAX_STR " bytes";
	caps->network = ext_intern(in, net);
	caps->mechanism = ext_intern(in, mech);
	caps->safety_class = ext_intern(in, cls);
	return NULL;
}

static bool reason_in(const char *const *set, const char *r)
{
	for (; set && *set; set++)
		if (strcmp(*set, r) == 0)
			return true;
	return false;
}

static bool is_ready_reason(const struct ext_instance *in, const char *r)
{
	const json_t *ready = json_object_get(in->hello, "ready_reasons");
	return ready ? in_array(ready, r) : strcmp(r, "ready") == 0;
}

/* A copy of s cut to EXT_TEXT_MAX bytes at a character boundary, marked. */
static char *text_capped(const char *s)
{
	size_t n = strlen(s);
	if (n <= EXT_TEXT_MAX)
		return strdup(s);
	while (n > EXT_TEXT_MAX || (n && ((unsigned char)s[n] & 0xC0) == 0x80))
		n--;
	char *c = NULL;
	return asprintf(&c, "%.*s [truncated: over %u bytes]", (int)n, s, EXT_TEXT_MAX) < 0 ? NULL : c;
}

/* kept: this probe's facts go into the bundle (capped and charged);
 * ensure's fresh probe only needs the capabilities. */
static const char *probe_fill(struct ext_instance *in, const json_t *r, bool kept, struct agsbx_probe *out)
{
	const json_t *av = json_object_get(r, "available"), *facts = json_object_get(r, "facts");
	const char *reason = json_string_value(json_object_get(r, "reason"));
	const json_t *detail = json_object_get(r, "detail"), *hint = json_object_get(r, "hint");
	if (!json_is_true(json_object_get(r, "ok")))
		return "probe refused";
	if (!json_is_boolean(av) || !reason || !json_is_object(facts))
		return "available, reason or facts missing or mistyped";
	if (!reason_in(in->reasons, reason))
		return "probe reason outside the declared set";
	if ((detail && !json_is_string(detail)) || (hint && !json_is_string(hint)))
		return "detail or hint is not a string";
	const char *bad = caps_parse(in, json_object_get(r, "capabilities"), &out->caps);
	if (bad)
		return bad;
	out->available = json_is_true(av);
	pthread_mutex_lock(&in->lock);
	json_decref(in->last_probe);
	in->last_probe = json_deep_copy(r);
	pthread_mutex_unlock(&in->lock);
	/* A declared ready reason stands for "ready"; the adapter's own word
	 * stays in the facts. A ready reason with available false (or the
	 * reverse) is kept as is, so probe.truthful sees the contradiction. */
	out->reason = out->available && is_ready_reason(in, reason) ? "ready" : ext_intern(in, reason);
	bool truncated = false;
	_cleanup_json_ json_t *kf = kept ? ext_supplied(in, facts, EXT_FACTS_DEPTH, EXT_PIECE_MAX, &truncated) : NULL;
	out->facts = kf ? json_deep_copy(kf) : json_object();
	json_object_set_new(out->facts, "adapter_reason", json_string(reason));
	json_object_set_new(out->facts, "adapter_supplied", json_true());
	if (detail)
		out->detail = text_capped(json_string_value(detail));
	if (hint)
		out->hint = text_capped(json_string_value(hint));
	return NULL;
}

static void probe_broken(struct agsbx_probe *out, const struct agsbx_error *f)
{
	out->available = false;
	out->reason = f->reason ? f->reason : EXT_R_START;
	out->facts = json_pack("{s:b}", "adapter_supplied", 0);
	out->detail = strdup(f->message);
}

static void probe_once(struct ext_instance *in, const struct agsbx_ctx *ctx, bool kept, struct agsbx_probe *out)
{
	memset(out, 0, sizeof *out);
	struct agsbx_error f = { 0 };
	struct ext_adapter *a = adapter(in, ctx, &f);
	json_t *r = NULL;
	if (a && ext_call(a, "probe", NULL, EXT_DEADLINE_MS, -1, NULL, &r, &f) == 0) {
		const char *bad = probe_fill(in, r, kept, out);
		if (bad) {
			ext_violation(a, EXT_R_PROTOCOL, r, "probe: %s", bad);
			agsbx_provider_probe_clear(out);
			ext_broken(a, &f);
		}
	}
	json_decref(r);
	if (!out->reason)
		probe_broken(out, &f);
}

int ext_adapter_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	probe_once(ext_instance_of(self), ctx, true, out);
	return 0;
}

/* ---- ensure ---- */

static json_t *grant_json(const struct agsbx_grant *g)
{
	json_t *roots = json_array(), *files = json_array();
	for (int i = 0; i < AGSBX_ROOT_COUNT; i++)
		json_array_append_new(roots, json_pack("{s:s, s:s, s:b}", "role", agsbx_root_role_name(i), "path",
						       g->roots[i].path, "writable", g->roots[i].writable));
	for (size_t i = 0; i < g->nfiles; i++)
		json_array_append_new(files, json_pack("{s:s, s:s, s:s, s:I, s:b}", "name", g->files[i].name, "path",
						       g->files[i].path, "sha256", g->files[i].sha256, "bytes",
						       (json_int_t)g->files[i].bytes, "executable", g->files[i].executable));
	return json_pack("{s:s, s:s, s:o, s:o}", "id", g->id, "area", g->area, "roots", roots, "files", files);
}

int ext_refusal(struct ext_instance *in, const json_t *r, const char *op, struct agsbx_error *fail)
{
	/* The reader admitted the reason (declared or generic); interned, as
	 * the failure outlives the response. */
	const char *reason = ext_intern(in, json_string_value(json_object_get(r, "reason")));
	agsbx_fail(fail, reason, "%s refused: %s", op, json_string_value(json_object_get(r, "message")));
	return -EPERM;
}

int ext_adapter_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		       struct agsbx_handle **out, struct agsbx_error *fail)
{
	struct ext_instance *in = ext_instance_of(self);
	*out = NULL;
	struct ext_adapter *a = adapter(in, ctx, fail);
	if (!a)
		return -EPROTO;
	if (agsbx_provider_check_config(&in->ops, ctx->config, fail) < 0)
		return -EINVAL;
	/* The caps ensure verified: a fresh probe's (never a cached one). */
	struct agsbx_probe p;
	probe_once(in, ctx, false, &p);
	struct agsbx_caps caps = p.caps;
	agsbx_provider_probe_clear(&p);
	json_t *req = json_pack("{s:o, s:o, s:{s:I}}", "grant", grant_json(g), "config",
				ctx->config ? json_incref((json_t *)ctx->config) : json_object(), "limits", "max_output_bytes",
				(json_int_t)AGSBX_RUN_DEFAULT_MAX_OUTPUT);
	json_t *r = NULL;
	if (ext_call(a, "ensure", req, EXT_ENSURE_DEADLINE_MS, -1, NULL, &r, fail) < 0)
		return -EPROTO;
	_cleanup_json_ json_t *guard = r;
	if (!json_is_true(json_object_get(r, "ok")))
		return ext_refusal(in, r, "ensure", fail);
	const char *hs = json_string_value(json_object_get(r, "handle"));
	if (!hs || strlen(hs) > EXT_NAME_MAX || !json_is_object(json_object_get(r, "meta"))) {
		ext_violation(a, EXT_R_PROTOCOL, r, "ensure: handle (at most " EXT_NAME_MAX_STR " bytes) or meta missing or mistyped");
		ext_broken(a, fail);
		return -EPROTO;
	}
	struct ext_handle *eh = calloc(1, sizeof *eh);
	struct agsbx_handle *h = eh ? agsbx_handle_new(&in->ops, ctx, g, &caps) : NULL;
	if (!h || !(eh->handle = strdup(hs))) {
		free(eh);
		agsbx_handle_free(h);
		return -ENOMEM;
	}
	json_object_set(h->versions, "adapter", json_object_get(in->hello, "provider"));
	h->priv = eh;
	/* Handles outlive release (health and execute after it are part of
	 * the contract), so their state lives until the run is over. */
	pthread_mutex_lock(&in->lock);
	struct ext_handle **v = realloc(in->handles, (in->nhandles + 1) * sizeof *v);
	if (v) {
		in->handles = v;
		v[in->nhandles++] = eh;
	}
	pthread_mutex_unlock(&in->lock);
	*out = h;
	return 0;
}
