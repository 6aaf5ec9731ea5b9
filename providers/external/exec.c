/* The --adapter provider after ensure: health, execute (with cancel),
 * release, and the end of the provider run. */
#include "providers/external/internal.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/defaults.h"
#include "base/util.h"

static int ext_configure_none(const struct agsbx_provider_ops *self, const json_t *config, struct agsbx_error *fail)
{
	return 0;
}

static struct ext_adapter *adapter_of(struct agsbx_handle *h, struct agsbx_error *fail)
{
	struct ext_instance *in = ext_instance_of(h->ops);
	struct ext_adapter *a = in->ad;
	if (!a) {
		agsbx_fail(fail, EXT_R_START, "no adapter");
		return NULL;
	}
	return ext_broken(a, fail) ? NULL : a;
}

static int ext_health(struct agsbx_handle *h)
{
	struct ext_handle *eh = h->priv;
	struct ext_adapter *a = adapter_of(h, NULL);
	json_t *r = NULL;
	if (!a || ext_call(a, "health", json_pack("{s:s}", "handle", eh->handle), EXT_DEADLINE_MS, -1, NULL, &r, NULL) < 0)
		return -EPROTO;
	_cleanup_json_ json_t *guard = r;
	const char *st = json_string_value(json_object_get(r, "status"));
	if (json_is_true(json_object_get(r, "ok")) && st && (!strcmp(st, "ready") || !strcmp(st, "unhealthy")))
		return strcmp(st, "ready") == 0 ? 0 : -ESTALE;
	if (json_is_false(json_object_get(r, "ok")))
		return -ESTALE;
	ext_violation(a, EXT_R_PROTOCOL, r, "health: status is neither \"ready\" nor \"unhealthy\"");
	return -EPROTO;
}

static void ext_release(struct agsbx_handle *h)
{
	struct ext_handle *eh = h->priv;
	if (!eh)
		return;
	/* No harness-side lifecycle (agsbx_handle_enter/release): health and
	 * execute after release are forwarded, so the lifecycle checks judge
	 * the adapter's own refusal; eh lives until the run is over. */
	struct ext_adapter *a = adapter_of(h, NULL);
	json_t *r = NULL;
	/* Asked every time: release must be idempotent on the adapter's side
	 * too; only a malformed answer is an error. */
	if (a && ext_call(a, "release", json_pack("{s:s}", "handle", eh->handle), EXT_DEADLINE_MS, -1, NULL, &r, NULL) == 0 &&
	    !json_is_boolean(json_object_get(r, "ok")))
		ext_violation(a, EXT_R_PROTOCOL, r, "release: malformed answer");
	json_decref(r);
}

/* ---- execute ---- */

static json_t *step_json(const struct agsbx_step *step)
{
	json_t *argv = json_array(), *env = json_object();
	for (const char *const *w = step->argv; *w; w++)
		json_array_append_new(argv, agsbx_json_string_sanitized(*w, strlen(*w)));
	for (const char *const *e = step->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (eq) {
			_cleanup_free_ char *k = strndup(*e, (size_t)(eq - *e));
			if (k)
				json_object_set_new(env, k, agsbx_json_string_sanitized(eq + 1, strlen(eq + 1)));
		}
	}
	return json_pack("{s:o, s:s, s:o}", "argv", argv, "cwd", agsbx_root_role_name(step->cwd), "env", env);
}

static bool int_or_null(const json_t *v)
{
	return json_is_null(v) || (json_is_integer(v) && json_integer_value(v) >= -(1LL << 53) &&
				   json_integer_value(v) <= (1LL << 53));
}

static const char *result_invalid(const json_t *res)
{
	static const char *const bools[] = { "timed_out", "cancelled", "stdout_truncated", "stderr_truncated" };
	static const char *const ints[] = { "exit_code", "signal", "stdout_total", "stderr_total" };
	if (!json_is_object(res))
		return "result missing";
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(bools); i++)
		if (!json_is_boolean(json_object_get(res, bools[i])))
			return "a result flag is missing or not a boolean";
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(ints); i++)
		if (!int_or_null(json_object_get(res, ints[i])))
			return "exit_code, signal or a *_total is missing or not an integer or null";
	if (!json_is_string(json_object_get(res, "stdout_b64")) || !json_is_string(json_object_get(res, "stderr_b64")))
		return "stdout_b64 or stderr_b64 missing";
	const json_t *d = json_object_get(res, "duration_us");
	if (!json_is_integer(d) || json_integer_value(d) < 0)
		return "duration_us missing or negative";
	const json_t *inf = json_object_get(res, "inferred");
	if (!json_is_object(json_object_get(res, "meta")) || !json_is_array(inf))
		return "meta or inferred missing";
	for (size_t i = 0; i < json_array_size(inf); i++)
		if (!json_is_string(json_array_get(inf, i)))
			return "inferred holds a non-string";
	return NULL;
}

/* base64 → NUL-terminated buffer, at most max bytes (more is a violation:
 * the adapter was told the limit). */
static const char *decode(const json_t *s, size_t max, char **out, size_t *len)
{
	const char *b = json_string_value(s);
	size_t blen = strlen(b), cap = blen / 4 * 3 + 3;
	*out = malloc(cap + 1);
	if (!*out)
		return "out of memory";
	if (sodium_base642bin((unsigned char *)*out, cap, b, blen, NULL, len, NULL, sodium_base64_VARIANT_ORIGINAL) != 0)
		return "stdout_b64/stderr_b64 is not base64";
	(*out)[*len] = '\0';
	return *len > max ? "more output than max_output_bytes" : NULL;
}

static void fill_status(struct agsbx_run_result *run, const json_t *res)
{
	const json_t *code = json_object_get(res, "exit_code"), *sig = json_object_get(res, "signal");
	run->timed_out = json_is_true(json_object_get(res, "timed_out"));
	run->cancelled = json_is_true(json_object_get(res, "cancelled"));
	run->status = -1;
	if (json_is_integer(code)) {
		run->exited = true;
		run->exit_code = (int)json_integer_value(code);
		run->status = run->exit_code;
	} else if (json_is_integer(sig)) {
		run->term_signal = (int)json_integer_value(sig);
		run->status = 128 + run->term_signal;
	}
	if (run->timed_out)
		run->status = AGSBX_RUN_STATUS_TIMEOUT;
	else if (run->cancelled)
		run->status = AGSBX_RUN_STATUS_CANCELLED;
	run->out_truncated = json_is_true(json_object_get(res, "stdout_truncated"));
	run->err_truncated = json_is_true(json_object_get(res, "stderr_truncated"));
	const json_t *ot = json_object_get(res, "stdout_total"), *et = json_object_get(res, "stderr_total");
	run->out_total = json_is_integer(ot) ? (uint64_t)json_integer_value(ot) : run->out_len;
	run->err_total = json_is_integer(et) ? (uint64_t)json_integer_value(et) : run->err_len;
}

/* Harness meta first; what the adapter said is kept under "adapter", and
 * where it states provider/mechanism/capabilities those are what
 * lifecycle.consistent compares with the probe. */
static json_t *meta_json(struct agsbx_handle *h, const json_t *res, struct ext_instance *in)
{
	json_t *m = agsbx_handle_meta(h);
	/* Capped and charged to the bundle's budget (confine.c); past either
	 * the adapter's word is a truncation marker and claims nothing. */
	bool truncated;
	_cleanup_json_ json_t *said = json_pack("{s:O, s:O}", "meta", json_object_get(res, "meta"), "inferred",
						json_object_get(res, "inferred"));
	_cleanup_json_ json_t *kept = ext_supplied(in, said, EXT_META_DEPTH, EXT_PIECE_MAX, &truncated);
	const json_t *am = truncated ? NULL : json_object_get(kept, "meta");
	json_t *inferred = truncated ? json_array() : json_incref(json_object_get(kept, "inferred"));
	json_object_set_new(m, "adapter",
			    json_pack("{s:O, s:o, s:O, s:b, s:b}", "meta", am ? am : kept, "inferred", inferred,
				      "duration_us", json_object_get(res, "duration_us"), "supplied_by_adapter", 1,
				      "truncated", truncated));
	/* Another check thread's probe may replace last_probe meanwhile: take
	 * a reference under the lock (CI caught the use-after-free). */
	pthread_mutex_lock(&in->lock);
	_cleanup_json_ json_t *last = json_incref(in->last_probe);
	pthread_mutex_unlock(&in->lock);
	const json_t *probe_caps = json_object_get(last, "capabilities");
	const json_t *caps = json_object_get(am, "capabilities");
	if (caps && !(probe_caps && json_equal((json_t *)caps, (json_t *)probe_caps)))
		json_object_set(m, "capabilities", (json_t *)caps);
	static const char *const keys[] = { "provider", "mechanism" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(keys); i++)
		if (json_object_get(am, keys[i]))
			json_object_set(m, keys[i], json_object_get(am, keys[i]));
	return m;
}

static int take_result(struct ext_adapter *a, struct agsbx_handle *h, const json_t *r, size_t max,
		       struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	const json_t *res = json_object_get(r, "result");
	const char *bad = result_invalid(res);
	if (!bad)
		bad = decode(json_object_get(res, "stdout_b64"), max, &out->run.out, &out->run.out_len);
	if (!bad)
		bad = decode(json_object_get(res, "stderr_b64"), max, &out->run.err, &out->run.err_len);
	if (bad) {
		ext_violation(a, EXT_R_PROTOCOL, r, "execute: %s", bad);
		ext_broken(a, fail);
		agsbx_exec_result_clear(out);
		return -EPROTO;
	}
	fill_status(&out->run, res);
	out->meta = meta_json(h, res, ext_instance_of(h->ops));
	return 0;
}

static int ext_execute(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		       struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	memset(out, 0, sizeof *out);
	struct ext_handle *eh = h->priv;
	int rc = agsbx_provider_check_step(h, step, fail);
	if (rc < 0)
		return rc;
	struct ext_adapter *a = adapter_of(h, fail);
	if (!a)
		return -EPROTO;
	char exec_id[64];
	snprintf(exec_id, sizeof exec_id, "x%lu", __atomic_add_fetch(&eh->execs, 1, __ATOMIC_RELAXED));
	int64_t timeout = limits->timeout_ms > 0 ? limits->timeout_ms : AGSBX_EXEC_TIMEOUT_MS;
	size_t max = limits->max_output_bytes ? limits->max_output_bytes : AGSBX_RUN_DEFAULT_MAX_OUTPUT;
	json_t *req = json_pack("{s:s, s:s, s:o, s:{s:I, s:I}}", "handle", eh->handle, "exec_id", exec_id, "step",
				step_json(step), "limits", "timeout_ms", (json_int_t)timeout, "max_output_bytes",
				(json_int_t)max);
	json_t *r = NULL;
	uint64_t t0 = agsbx_now_us();
	if (ext_call(a, "execute", req, timeout + EXT_EXECUTE_GRACE_MS, limits->cancel_fd, exec_id, &r, fail) < 0)
		return -EPROTO;
	_cleanup_json_ json_t *guard = r;
	if (!json_is_true(json_object_get(r, "ok"))) {
		return ext_refusal(ext_instance_of(h->ops), r, "execute", fail);
	}
	rc = take_result(a, h, r, max, out, fail);
	/* The harness's own clock; the adapter's figure is in meta. */
	out->run.duration_us = agsbx_now_us() - t0;
	return rc;
}

/* ---- the end of the provider run ---- */

static json_t *ext_finish(const struct agsbx_provider_ops *self, struct agsbx_error *defect)
{
	struct ext_instance *in = ext_instance_of(self);
	json_t *argv = json_array();
	for (size_t i = 0; i < in->argc; i++)
		json_array_append_new(argv, agsbx_json_string_sanitized(in->argv[i], strlen(in->argv[i])));
	json_t *d = json_pack("{s:o, s:o}", "argv", argv, "command",
			      agsbx_json_string_sanitized(in->decl, strlen(in->decl)));
	pthread_mutex_lock(&in->lock);
	struct ext_adapter *a = in->ad;
	in->ad = NULL;
	for (size_t i = 0; i < in->nhandles; i++) {
		free(in->handles[i]->handle);
		free(in->handles[i]);
	}
	in->nhandles = 0;
	pthread_mutex_unlock(&in->lock);
	json_t *rec = a ? ext_adapter_finish(a, defect) : json_null();
	/* How much of what it said the bundle kept (confine.c). */
	pthread_mutex_lock(&in->lock);
	if (a)
		json_object_set_new(rec, "supplied_json",
				    json_pack("{s:I, s:I, s:I}", "kept_bytes", (json_int_t)in->supplied, "share_bytes",
					      (json_int_t)ext_supplied_share(), "truncated_pieces",
					      (json_int_t)in->supplied_truncated));
	pthread_mutex_unlock(&in->lock);
	json_object_set_new(d, "adapter", rec);
	/* hello is the adapter's word, labelled as such. */
	json_object_set(d, "hello", in->hello ? in->hello : json_null());
	json_object_set_new(d, "adapter_supplied",
			    json_pack("[s, s, s, s]", "hello", "probe.capabilities", "probe.facts", "result meta"));
	if (!a && !defect->reason)
		agsbx_fail(defect, EXT_R_START, "%s", in->start_error[0] ? in->start_error : "the adapter was never started");
	return json_pack("{s:s, s:o}", "kind", "external", "declared", d);
}

/* An adapter may wrap any mechanism the host probes know, so whichever of
 * these facts it reports is held to the host's (the Agently adapter
 * reports system_abi for Landlock and bwrap_path for bubblewrap). */
static const struct agsbx_shared_fact shared_facts[] = {
	{ "system_abi", "landlock", "abi" },
	{ "bwrap_path", "bubblewrap", "path" },
	{ "bwrap_version", "bubblewrap", "version" },
	{ "server_version", "docker", "version" },
	{ 0 },
};

const struct agsbx_provider_ops ext_adapter_ops_template = {
	.summary = "declared: an adapter speaking agsbx-external/1 (--adapter)",
	.declared = true,
	/* An adapter's keys are known from its hello only: ensure checks
	 * them (config_invalid); nothing to check before the run. */
	.configure = ext_configure_none,
	.probe = ext_adapter_probe,
	.ensure = ext_adapter_ensure,
	.health = ext_health,
	.execute = ext_execute,
	.release = ext_release,
	.finish = ext_finish,
	.shared_facts = shared_facts,
};
