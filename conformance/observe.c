/* Running the payload inside (through the provider) and outside (the
 * paired control), and turning each run into an observation record. */
#include "conformance/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/strv.h"
#include "base/util.h"

void cf_reason(struct check_out *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof out->reason, fmt, ap);
	va_end(ap);
}

void cf_skip(struct check_out *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof out->reason, fmt, ap);
	va_end(ap);
	out->skipped = true;
}

/* What a sandbox prints is hostile input: the bundle admits integers
 * within +-2^53 only (its canonical form must round-trip through jq), so
 * any other number from inside becomes null instead of making the whole
 * bundle unwritable. */
static bool out_of_range(const json_t *v)
{
	const json_int_t lim = (json_int_t)1 << 53;
	return json_is_real(v) || (json_is_integer(v) && (json_integer_value(v) > lim || json_integer_value(v) < -lim));
}

/* false when nested deeper than any honest payload result. */
static bool scrub_numbers(json_t *j, int depth)
{
	if (depth > 32)
		return false;
	bool ok = true;
	if (json_is_object(j)) {
		const char *k;
		json_t *v;
		void *tmp;
		json_object_foreach_safe(j, tmp, k, v) {
			if (out_of_range(v))
				json_object_set_new(j, k, json_null());
			else
				ok &= scrub_numbers(v, depth + 1);
		}
	} else if (json_is_array(j)) {
		for (size_t i = 0; i < json_array_size(j); i++) {
			json_t *v = json_array_get(j, i);
			if (out_of_range(v))
				json_array_set_new(j, i, json_null());
			else
				ok &= scrub_numbers(v, depth + 1);
		}
	}
	return ok;
}

json_t *cf_payload_result_parse(const char *out, size_t len)
{
	if (!out || len == 0)
		return NULL;
	size_t n = 0; /* up to the first newline (or NUL) */
	while (n < len && out[n] != '\n' && out[n] != '\0')
		n++;
	json_error_t jerr;
	json_t *j = json_loadb(out, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	if (!scrub_numbers(j, 0)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* The output limit ended stdout inside the first line: the result is
 * missing because of the harness's limit, not the sandbox. Only a limit
 * below the payload's longest result line counts (the CLI refuses one;
 * a library caller may not): a provider claiming truncation under a
 * sufficient limit turns no failure into a skip. */
static bool result_line_cut(const struct agsbx_run_result *r)
{
	return r->out_truncated && (!r->out || !memchr(r->out, '\n', r->out_len));
}

static json_t *parse_result(const struct agsbx_run_result *r)
{
	return cf_payload_result_parse(r->out, r->out_len);
}

/* The whole run's cancel fd, for executions without one of their own. */
static int run_cancel_fd(const struct check_env *env)
{
	return env->o->cancel_fd > 0 ? env->o->cancel_fd : -1;
}

/* The payload behind a system interpreter as argv[0]: policies derived
 * from argv[0] (toolchain roots, PATH) must hold for it too. */
static const char **build_via(enum agsbx_via via, const char *payload, const char *const *args, char **script)
{
	if (via == AGSBX_VIA_DIRECT)
		return agsbx_strv_concat((const char *const[]){ payload, NULL }, args);
	if (via == AGSBX_VIA_ENV)
		return agsbx_strv_concat((const char *const[]){ "/usr/bin/env", payload, NULL }, args);
	if (asprintf(script, "exec '%s' \"$@\"", payload) < 0)
		return NULL;
	return agsbx_strv_concat((const char *const[]){ "/bin/sh", "-c", *script, "sh", NULL }, args);
}

const char *cf_via_argv0(enum agsbx_via via)
{
	static const char *const names[] = { "payload", "/bin/sh", "/usr/bin/env" };
	return names[via];
}

/* The last bytes of what the run printed on stderr, control bytes as '?'
 * (a sandbox's text goes into a one-line reason); true when cut. */
static bool stderr_tail(const struct agsbx_run_result *r, char *buf, size_t size)
{
	size_t len = r->err_len, keep = size - 1;
	while (len && (r->err[len - 1] == '\n' || r->err[len - 1] == ' '))
		len--;
	size_t from = len > keep ? len - keep : 0, k = 0;
	for (size_t i = from; i < len && k + 1 < size; i++)
		buf[k++] = (unsigned char)r->err[i] < 0x20 || r->err[i] == 0x7f ? '?' : r->err[i];
	buf[k] = '\0';
	return from > 0;
}

static void note_no_result(struct check_out *out, const struct agsbx_run_result *r)
{
	if (out->no_result[0])
		return;
	char how[40], tail[151];
	if (r->timed_out)
		snprintf(how, sizeof how, "timed out");
	else if (r->cancelled)
		snprintf(how, sizeof how, "cancelled");
	else if (r->term_signal)
		snprintf(how, sizeof how, "killed by signal %d", r->term_signal);
	else
		snprintf(how, sizeof how, "exit status %d", r->status);
	bool cut = stderr_tail(r, tail, sizeof tail);
	snprintf(out->no_result, sizeof out->no_result, "%s; stderr %s%s%s%s", how, tail[0] ? "\"" : "empty",
		 cut ? "..." : "", tail, tail[0] ? "\"" : "");
}

void cf_no_observation(struct check_out *out, const char *attack)
{
	cf_skip(out, "no observation: %s: the payload gave no result inside (%s)", attack,
		out->no_result[0] ? out->no_result : "no run");
}

int cf_sandbox_op(const struct check_env *env, struct check_out *out, struct agsbx_handle *h,
	       const struct agsbx_limits *limits, const char *const *args, json_t **result,
	       struct agsbx_exec_result *keep)
{
	return cf_sandbox_op_via(env, out, h, limits, AGSBX_VIA_DIRECT, args, result, keep);
}

int cf_sandbox_op_via(const struct check_env *env, struct check_out *out, struct agsbx_handle *h,
		   const struct agsbx_limits *limits, enum agsbx_via via, const char *const *args, json_t **result,
		   struct agsbx_exec_result *keep)
{
	if (result)
		*result = NULL;
	_cleanup_free_ char *payload = agsbx_handle_path(h, AGSBX_ROOT_SOURCE, AGSBX_PAYLOAD_NAME);
	_cleanup_free_ char *script = NULL;
	_cleanup_free_ const char **argv = payload ? build_via(via, payload, args, &script) : NULL;
	if (!argv)
		return -ENOMEM;
	struct agsbx_limits lim = {
		.max_output_bytes = env->o->max_output_bytes,
		.timeout_ms = env->o->timeout_ms,
		.cancel_fd = -1,
	};
	if (limits)
		lim = *limits;
	if (lim.cancel_fd < 0)
		lim.cancel_fd = run_cancel_fd(env);
	struct agsbx_step step = { .argv = argv, .env = NULL, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_exec_result xr = { 0 };
	struct agsbx_error fail = { 0 };
	int r = h->ops->execute(h, &step, &lim, &xr, &fail);
	if (r < 0) {
		/* A provider that did not say why: the error itself. */
		if (!fail.reason)
			snprintf(fail.message, sizeof fail.message, "%s", strerror(-r));
		json_array_append_new(out->observations,
				      agsbx_bundle_refusal(argv, fail.reason ? fail.reason : "error", fail.message));
		agsbx_exec_result_clear(&xr);
		return r < 0 ? r : -EIO;
	}
	json_t *res = parse_result(&xr.run);
	if (!res)
		note_no_result(out, &xr.run);
	size_t cap = limits ? limits->max_output_bytes : env->o->max_output_bytes;
	out->result_cut |= !res && cap < AGSBX_PAYLOAD_RESULT_MAX && result_line_cut(&xr.run);
	json_t *obs = agsbx_bundle_observation("sandbox", argv, &xr.run, res);
	if (xr.meta)
		json_object_set(obs, "meta", xr.meta);
	json_array_append_new(out->observations, obs);
	if (result)
		*result = res;
	json_decref(res); /* the observation holds it */
	if (keep)
		*keep = xr;
	else
		agsbx_exec_result_clear(&xr);
	return 0;
}

int cf_control_op(const struct check_env *env, struct check_out *out, const char *const *args, json_t **result)
{
	*result = NULL;
	_cleanup_free_ const char **argv = agsbx_strv_concat((const char *const[]){ env->ctx->payload_path, NULL }, args);
	if (!argv)
		return -ENOMEM;
	struct agsbx_run_opts o = {
		.argv = argv,
		.max_output_bytes = env->o->max_output_bytes,
		.timeout_ms = env->o->timeout_ms,
		.cancel_fd = run_cancel_fd(env),
		.drop_privileges = env->ctx->run_as,
		.run_uid = env->ctx->run_uid,
		.run_gid = env->ctx->run_gid,
	};
	struct agsbx_run_result rr = { 0 };
	int r = agsbx_run(&o, &rr);
	json_t *res = r == 0 ? parse_result(&rr) : NULL;
	out->result_cut |= r == 0 && !res && env->o->max_output_bytes < AGSBX_PAYLOAD_RESULT_MAX && result_line_cut(&rr);
	json_array_append_new(out->observations, agsbx_bundle_observation("control", argv, &rr, res));
	*result = res;
	json_decref(res);
	agsbx_run_result_clear(&rr);
	return r;
}

static const char *alt_outcome(const json_t *o)
{
	return !o ? "no result" : cf_result_ok(o) ? "ALLOWED" : cf_result_errno(o);
}

int cf_read_alternates(const struct check_env *env, struct check_out *out, const char *path, const char *secret,
		       char *summary, size_t size)
{
	struct agsbx_exec_result xr = { 0 };
	json_t *res = NULL;
	int r = cf_sandbox_op(env, out, env->h, NULL, (const char *const[]){ "read-alt", path, NULL }, &res, &xr);
	bool leaked = r == 0 && cf_run_output_contains(&xr.run, secret);
	agsbx_exec_result_clear(&xr);
	const json_t *o2 = json_object_get(res, "openat2"), *iu = json_object_get(res, "io_uring");
	snprintf(summary, size, "openat2 %s, io_uring %s", alt_outcome(o2),
		 iu && !cf_result_ok(iu) ? cf_result_errno(iu) : alt_outcome(iu));
	json_object_set_new(out->facts, "alternate_reads",
			    json_pack("{s:s, s:s, s:s?, s:b}", "openat2", alt_outcome(o2), "io_uring", alt_outcome(iu),
				      "io_uring_failed_at", json_string_value(json_object_get(iu, "stage")),
				      "secret_in_output", leaked));
	if (leaked || cf_result_ok(o2) || cf_result_ok(iu))
		return 1;
	return o2 && iu ? 0 : -1;
}

bool cf_result_ok(const json_t *result)
{
	return json_is_true(json_object_get(result, "ok"));
}

const char *cf_result_errno(const json_t *result)
{
	const char *e = json_string_value(json_object_get(result, "errno"));
	return e ? e : "none";
}

bool cf_run_output_contains(const struct agsbx_run_result *r, const char *needle)
{
	size_t n = strlen(needle);
	return (r->out && memmem(r->out, r->out_len, needle, n)) || (r->err && memmem(r->err, r->err_len, needle, n));
}
