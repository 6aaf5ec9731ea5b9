/* Strict loading of bundles (size cap, duplicate keys, integers only, known
 * schema, member types) and atomic writing. */
#include "evidence/bundle.h"
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/cleanup.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	T_OBJ = EV_T_OBJ,
	T_ARR = EV_T_ARR,
	T_STR = EV_T_STR,
	T_INT = EV_T_INT,
	T_BOOL = EV_T_BOOL,
	T_NULL = EV_T_NULL,
};

/* The member table's type, shared with the streaming reader (canon-stream.c
 * checks the same table as it reads): see internal.h. */
#define field ev_field

static const char *const schema_values[] = { AGSBX_BUNDLE_SCHEMA, NULL };
static const char *const roles[] = { "sandbox", "control", NULL };
static const char *const provider_kinds[] = { "external", "wrap", NULL };
static const char *const summary_formats[] = { "pytest", "ctest", "plain", "none", NULL };

#define F(k, t, ...) { .key = (k), .types = (t), __VA_ARGS__ }

static const struct field tool_fields[] = {
	F("name", T_STR), F("version", T_STR), F("git_commit", T_STR), F("binary_sha256", T_STR), { .key = NULL }
};
static const struct field subject_fields[] = {
	F("path", T_STR), F("branch", T_STR | T_NULL), F("commit", T_STR | T_NULL),
	F("dirty", T_BOOL | T_NULL), { .key = NULL }
};
static const struct field privilege_fields[] = {
	F("uid", T_INT), F("euid", T_INT), F("gid", T_INT), F("sudo", T_BOOL),
	F("run_as", T_STR | T_NULL), { .key = NULL }
};
static const struct field container_fields[] = { F("detected", T_BOOL), F("markers", T_ARR), { .key = NULL } };
static const struct field simulation_fields[] = {
	F("name", T_STR), F("providers", T_ARR, .items = T_STR), F("mechanism", T_STR), F("effect", T_STR),
	{ .key = NULL }
};
static const struct field context_fields[] = {
	F("privilege", T_OBJ, .members = privilege_fields),
	F("container", T_OBJ, .members = container_fields),
	F("representative", T_BOOL),
	F("representative_reasons", T_ARR, .items = T_STR),
	F("simulations", T_ARR, .items = T_OBJ, .item_members = simulation_fields),
	{ .key = NULL }
};
static const struct field probe_fields[] = {
	F("available", T_BOOL), F("reason", T_STR), F("capabilities", T_OBJ | T_NULL),
	F("facts", T_OBJ | T_NULL), F("detail", T_STR | T_NULL), F("hint", T_STR | T_NULL), { .key = NULL }
};
static const struct field observation_fields[] = {
	F("role", T_STR, .values = roles), F("argv", T_ARR, .items = T_STR),
	F("exit_status", T_INT), F("exited", T_BOOL), F("signal", T_INT),
	F("timed_out", T_BOOL), F("cancelled", T_BOOL), F("errno", T_STR | T_NULL),
	F("duration_us", T_INT),
	F("stdout", T_STR), F("stdout_truncated", T_BOOL), F("stdout_bytes", T_INT),
	F("stderr", T_STR), F("stderr_truncated", T_BOOL), F("stderr_bytes", T_INT),
	{ .key = NULL }
};
static const struct field check_fields[] = {
	F("id", T_STR, .required = true), F("axis", T_STR | T_NULL),
	F("verdict", T_STR, .values = agsbx_check_verdict_names), F("observed_pass", T_BOOL | T_NULL),
	F("reason", T_STR), F("duration_us", T_INT),
	F("observations", T_ARR, .items = T_OBJ, .item_members = observation_fields),
	F("facts", T_OBJ | T_NULL),
	{ .key = NULL }
};
static const struct field timings_fields[] = {
	F("probe_us", T_INT), F("ensure_us", T_INT), F("checks_us", T_INT), F("total_us", T_INT), { .key = NULL }
};
static const struct field provider_fields[] = {
	F("id", T_STR, .required = true), F("verdict", T_STR, .values = agsbx_provider_verdict_names),
	F("reason", T_STR), F("probe", T_OBJ, .members = probe_fields),
	F("claims", T_OBJ | T_NULL), F("observed", T_OBJ | T_NULL),
	F("underclaim", T_ARR, .items = T_STR), F("failing_checks", T_ARR, .items = T_STR),
	F("checks", T_ARR, .items = T_OBJ, .item_members = check_fields),
	F("timings", T_OBJ, .members = timings_fields),
	F("kind", T_STR, .values = provider_kinds), F("declared", T_OBJ),
	{ .key = NULL }
};
static const struct field att_summary_fields[] = {
	F("format", T_STR, .values = summary_formats), F("passed", T_INT), F("failed", T_INT),
	F("skipped", T_INT), { .key = NULL }
};
static const struct field attachment_fields[] = {
	F("argv", T_ARR, .items = T_STR), F("exit_status", T_INT), F("duration_us", T_INT),
	F("summary", T_OBJ, .members = att_summary_fields),
	F("stdout_tail", T_STR), F("stdout_truncated", T_BOOL),
	F("stderr_tail", T_STR), F("stderr_truncated", T_BOOL),
	{ .key = NULL }
};
static const struct field summary_fields[] = {
	F("providers", T_INT), F("conformant", T_INT), F("defective", T_INT), F("blocked", T_INT),
	F("skipped", T_INT), F("defects", T_ARR, .items = T_STR), F("exit_status", T_INT), { .key = NULL }
};
static const struct field signature_fields[] = {
	F("format", T_STR, .required = true), F("namespace", T_STR, .required = true), F("hash", T_STR, .required = true),
	F("armored", T_STR, .required = true), F("public_key", T_STR, .required = true), F("fingerprint", T_STR, .required = true),
	{ .key = NULL }
};
static const struct field bundle_fields[] = {
	F("schema", T_STR, .required = true, .values = schema_values),
	F("tool", T_OBJ, .members = tool_fields),
	F("created_at", T_STR),
	F("challenge", T_STR),
	F("subject", T_OBJ, .members = subject_fields),
	F("host", T_OBJ),
	F("context", T_OBJ, .members = context_fields),
	F("providers", T_ARR, .items = T_OBJ, .item_members = provider_fields),
	F("attachments", T_ARR, .items = T_OBJ, .item_members = attachment_fields),
	F("summary", T_OBJ, .members = summary_fields),
	F("timings", T_OBJ),
	F("signature", T_OBJ, .members = signature_fields),
	{ .key = NULL }
};

const struct ev_field *const ev_bundle_fields = bundle_fields;

static unsigned type_bit(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: return T_OBJ;
	case JSON_ARRAY: return T_ARR;
	case JSON_STRING: return T_STR;
	case JSON_INTEGER: return T_INT;
	case JSON_TRUE:
	case JSON_FALSE: return T_BOOL;
	case JSON_NULL: return T_NULL;
	default: return 0;
	}
}

static const char *type_names(unsigned t, char *buf, size_t size)
{
	static const char *const names[] = { "object", "array", "string", "integer", "boolean", "null" };
	buf[0] = '\0';
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(names); i++) {
		if (!(t & (1u << i)))
			continue;
		if (buf[0])
			strncat(buf, " or ", size - strlen(buf) - 1);
		strncat(buf, names[i], size - strlen(buf) - 1);
	}
	return buf;
}

/* Where a value sits, as a chain up to the top; only formatted when there
 * is an error (formatting every path showed up in profiles). */
struct where {
	const struct where *up;
	const char *key;          /* member name, or NULL for an array index */
	size_t index;
};

static void put_where(char *buf, size_t size, const struct where *w)
{
	if (!w) {
		buf[0] = '\0';
		return;
	}
	put_where(buf, size, w->up);
	size_t n = strlen(buf);
	if (w->key)
		snprintf(buf + n, size - n, "%s%s", n ? "." : "", w->key);
	else
		snprintf(buf + n, size - n, "[%zu]", w->index);
}

/* "<path>: <what><detail>" */
static int bad(char *err, size_t err_size, const struct where *w, const char *what, const char *detail)
{
	char path[256];
	put_where(path, sizeof path, w);
	ev_set_err(err, err_size, "%s: %s%s", path, what, detail);
	return -EINVAL;
}

static int check_members(const json_t *obj, const struct field *fields, const struct where *at, char *err,
			 size_t err_size);

static int check_value(const json_t *v, const struct field *f, const struct where *at, char *err, size_t err_size)
{
	char tn[64];
	if (!(type_bit(v) & f->types))
		return bad(err, err_size, at, "expected ", type_names(f->types, tn, sizeof tn));
	if (f->values && json_is_string(v)) {
		bool ok = false;
		for (const char *const *p = f->values; *p && !ok; p++)
			ok = strcmp(*p, json_string_value(v)) == 0;
		if (!ok) {
			char shown[67];
			snprintf(shown, sizeof shown, "\"%.64s\"", json_string_value(v));
			for (char *c = shown; *c; c++) /* keep the message on one line */
				if ((unsigned char)*c < 0x20)
					*c = '?';
			return bad(err, err_size, at, "unknown value ", shown);
		}
	}
	if (f->members && json_is_object(v))
		return check_members(v, f->members, at, err, err_size);
	if (json_is_array(v) && (f->items || f->item_members)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			const json_t *e = json_array_get(v, i);
			struct where sub = { at, NULL, i };
			if (f->items && !(type_bit(e) & f->items))
				return bad(err, err_size, &sub, "expected ", type_names(f->items, tn, sizeof tn));
			if (f->item_members && json_is_object(e)) {
				int r = check_members(e, f->item_members, &sub, err, err_size);
				if (r < 0)
					return r;
			}
		}
	}
	return 0;
}

static int check_members(const json_t *obj, const struct field *fields, const struct where *at, char *err,
			 size_t err_size)
{
	for (const struct field *f = fields; f->key; f++) {
		struct where sub = { at, f->key, 0 };
		const json_t *v = json_object_get(obj, f->key);
		if (!v) {
			if (f->required)
				return bad(err, err_size, &sub, "missing", "");
			continue;
		}
		int r = check_value(v, f, &sub, err, err_size);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Ids are what diff and matrix match on and what terminals show: a
 * duplicate would hide one entry behind another, and anything outside
 * [a-z0-9_.:-] has no business in an id. */
bool ev_bundle_id_ok(const char *id, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c && strchr("_.:-", c))))
			return false;
	}
	return true;
}

static bool id_ok(const char *id) { return ev_bundle_id_ok(id, strlen(id)); }

static int check_id_list(const json_t *arr, const struct where *at, char *err, size_t err_size)
{
	_cleanup_json_ json_t *seen = json_object();
	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(arr); i++) {
		struct where item = { at, NULL, i }, sub = { &item, "id", 0 };
		const char *id = ev_jstr(json_array_get(arr, i), "id");
		if (!id) /* the member checks said what is wrong with it */
			continue;
		if (!id_ok(id))
			return bad(err, err_size, &sub, "not an id ([a-z0-9_.:-]+)", "");
		if (json_object_get(seen, id)) {
			char shown[80];
			snprintf(shown, sizeof shown, " \"%.64s\"", id);
			return bad(err, err_size, &sub, "duplicate id", shown);
		}
		json_object_set_new(seen, id, json_true());
	}
	return 0;
}

static int check_ids(const json_t *bundle, char *err, size_t err_size)
{
	const json_t *providers = json_object_get(bundle, "providers");
	struct where at = { NULL, "providers", 0 };
	int r = check_id_list(providers, &at, err, err_size);
	for (size_t i = 0; r == 0 && i < json_array_size(providers); i++) {
		struct where item = { &at, NULL, i }, checks = { &item, "checks", 0 };
		r = check_id_list(json_object_get(json_array_get(providers, i), "checks"), &checks, err, err_size);
	}
	return r;
}

static int parse_bundle(const char *data, size_t len, json_t **bundle, struct ev_canon_out *canon, char *err,
			size_t err_size)
{
	*bundle = NULL;
	if (len > AGSBX_BUNDLE_MAX_BYTES) {
		ev_set_err(err, err_size, "bundle larger than %u MiB", AGSBX_BUNDLE_MAX_BYTES >> 20);
		return -EFBIG;
	}
	_cleanup_json_ json_t *j = NULL;
	int r = ev_json_parse_strict(data, len, &j, canon, err, err_size);
	if (r < 0)
		return r;
	const char *schema = ev_jstr(j, "schema");
	if (!schema) {
		ev_set_err(err, err_size, "not a bundle: no \"schema\" member");
		return -EINVAL;
	}
	if (strcmp(schema, AGSBX_BUNDLE_SCHEMA) != 0) {
		ev_set_err(err, err_size, "unknown schema \"%.64s\" (this tool reads %s)", schema, AGSBX_BUNDLE_SCHEMA);
		return -EINVAL;
	}
	r = check_members(j, bundle_fields, NULL, err, err_size);
	if (r == 0)
		r = check_ids(j, err, err_size);
	if (r < 0)
		return r;
	*bundle = TAKE_PTR(j);
	return 0;
}

static int bundle_parse_buf(const char *data, size_t len, json_t **bundle, char *err, size_t err_size)
{
	return parse_bundle(data, len, bundle, NULL, err, err_size);
}

/* parse_bundle, hashing the canonical form the parser writes as it goes
 * (on a second thread: see sha512-pipe.c). */
static int parse_digest_buf(const char *data, size_t len, json_t **bundle,
			    uint8_t sha512[AGSBX_BUNDLE_SHA512_BYTES], bool *sha512_ok, char *err, size_t err_size)
{
	*sha512_ok = false;
	struct ev_sha512_pipe *pipe = ev_sha512_pipe_start();
	if (!pipe)
		return parse_bundle(data, len, bundle, NULL, err, err_size);
	struct sbuf b = { .sink = ev_sha512_pipe_put, .sink_ud = pipe };
	struct ev_canon_out canon = { .out = &b, .skip_key = "signature" };
	int r = parse_bundle(data, len, bundle, &canon, err, err_size);
	*sha512_ok = r == 0 && canon.complete;
	if (*sha512_ok)
		sbuf_flush_sink(&b);
	ev_sha512_pipe_finish(pipe, *sha512_ok ? sha512 : NULL);
	sbuf_clear(&b);
	return r;
}

int agsbx_bundle_parse(const char *data, size_t len, json_t **bundle, struct agsbx_error *e)
{
	char err[512] = "";
	return ev_error(e, bundle_parse_buf(data, len, bundle, err, sizeof err), err);
}

int agsbx_bundle_parse_digest(const char *data, size_t len, json_t **bundle,
			      uint8_t sha512[AGSBX_BUNDLE_SHA512_BYTES], bool *sha512_ok, struct agsbx_error *e)
{
	char err[512] = "";
	return ev_error(e, parse_digest_buf(data, len, bundle, sha512, sha512_ok, err, sizeof err), err);
}

static int load(const char *path, json_t **bundle, uint8_t *sha512, bool *sha512_ok, char *err, size_t err_size)
{
	*bundle = NULL;
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r = agsbx_read_file(path, AGSBX_BUNDLE_MAX_BYTES, &data, &len);
	if (r == -EFBIG) {
		ev_set_err(err, err_size, "%s: larger than %u MiB", path, AGSBX_BUNDLE_MAX_BYTES >> 20);
		return r;
	}
	if (r < 0) {
		ev_set_err(err, err_size, "%s: %s", path, agsbx_file_strerror(r));
		return r;
	}
	char why[400] = "";
	r = sha512 ? parse_digest_buf(data, len, bundle, sha512, sha512_ok, why, sizeof why)
		   : parse_bundle(data, len, bundle, NULL, why, sizeof why);
	if (r < 0)
		ev_set_err(err, err_size, "%s: %s", path, why);
	return r;
}

int agsbx_bundle_load(const char *path, json_t **bundle, struct agsbx_error *e)
{
	char err[512] = "";
	return ev_error(e, load(path, bundle, NULL, NULL, err, sizeof err), err);
}

int agsbx_bundle_load_digest(const char *path, json_t **bundle, uint8_t sha512[AGSBX_BUNDLE_SHA512_BYTES],
			     bool *sha512_ok, struct agsbx_error *e)
{
	char err[512] = "";
	*sha512_ok = false;
	return ev_error(e, load(path, bundle, sha512, sha512_ok, err, sizeof err), err);
}

int agsbx_bundle_write(const char *path, const json_t *bundle)
{
	/* Refuse what could not be signed or loaded back: reals, NULs, huge
	 * integers, invalid UTF-8. */
	size_t clen;
	_cleanup_free_ char *canon = agsbx_json_canonical(bundle, NULL, &clen);
	if (!canon)
		return -errno;
	_cleanup_free_ char *text = json_dumps(bundle, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!text)
		return -ENOMEM;
	size_t n = strlen(text);
	/* Never a bundle this tool's own reader (verify, report) refuses. */
	if (n + 1 > AGSBX_BUNDLE_MAX_BYTES)
		return -EFBIG;
	_cleanup_free_ char *withnl = malloc(n + 2);
	if (!withnl)
		return -ENOMEM;
	memcpy(withnl, text, n);
	withnl[n] = '\n';
	return agsbx_write_file_atomic(path, withnl, n + 1, 0644);
}
