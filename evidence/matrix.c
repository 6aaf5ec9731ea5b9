/* matrix: many bundles side by side — one row per host/bundle, one column
 * per provider, cells = verdict + failing check ids. Bundles from other
 * tool versions may lack members; those show as "?". */
#include "evidence/bundle.h"
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/cleanup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static json_t *str_or_q(const char *s)
{
	return json_string(s ? s : "?");
}

static const char *host_str(const json_t *bundle, const char *family, const char *fact)
{
	return json_string_value(ev_host_value(bundle, family, fact));
}

static json_t *provider_cell(const json_t *p)
{
	json_t *failing = json_array();
	const json_t *checks = json_object_get(p, "checks");
	for (size_t i = 0; failing && i < json_array_size(checks); i++) {
		const json_t *c = json_array_get(checks, i);
		if (agsbx_check_verdict_of(c) == AGSBX_CHECK_FAIL && ev_jstr(c, "id"))
			json_array_append_new(failing, json_string(ev_jstr(c, "id")));
	}
	/* older bundles may only carry failing_checks */
	const json_t *listed = json_object_get(p, "failing_checks");
	if (failing && json_array_size(failing) == 0 && json_array_size(listed))
		json_array_extend(failing, (json_t *)listed);
	return json_pack("{s:o, s:o, s:o}", "verdict", str_or_q(ev_jstr(p, "verdict")), "reason",
			 str_or_q(ev_jstr(p, "reason")), "failing_checks", failing ? failing : json_array());
}

json_t *agsbx_matrix_build(const json_t *const *bundles, const char *const *names, size_t n)
{
	_cleanup_json_ json_t *m = json_pack("{s:[], s:[]}", "providers", "rows");
	if (!m)
		return NULL;
	json_t *ids = json_object_get(m, "providers"), *rows = json_object_get(m, "rows");
	_cleanup_json_ json_t *seen = json_object();
	for (size_t i = 0; i < n; i++) {
		const json_t *b = bundles[i];
		json_t *cells = json_object();
		const json_t *providers = json_object_get(b, "providers");
		for (size_t k = 0; cells && k < json_array_size(providers); k++) {
			const json_t *p = json_array_get(providers, k);
			const char *id = ev_jstr(p, "id");
			if (!id || json_object_get(cells, id))
				continue;
			json_object_set_new(cells, id, provider_cell(p));
			if (!json_object_get(seen, id)) {
				json_object_set_new(seen, id, json_true());
				json_array_append_new(ids, json_string(id));
			}
		}
		const json_t *tool = json_object_get(b, "tool");
		json_t *row = json_pack("{s:s, s:{s:o, s:o, s:o}, s:o, s:o, s:b, s:o}", "file", names[i] ? names[i] : "?",
					"host", "kernel", str_or_q(host_str(b, "kernel", "release")), "os",
					str_or_q(host_str(b, "os", "pretty_name")), "machine",
					str_or_q(host_str(b, "kernel", "machine")), "created_at",
					str_or_q(ev_jstr(b, "created_at")), "tool_version", str_or_q(ev_jstr(tool, "version")),
					"signed", json_object_get(b, "signature") != NULL, "providers",
					cells ? cells : json_object());
		if (!row)
			return NULL;
		json_array_append_new(rows, row);
	}
	return TAKE_PTR(m);
}

static void put_cell(struct sbuf *b, const json_t *cell)
{
	if (!cell) {
		sbuf_puts(b, "?");
		return;
	}
	ev_put_esc(b, ev_jstr(cell, "verdict"), ESC_MD, 32);
	if (agsbx_provider_verdict_of(cell) == AGSBX_PROVIDER_BLOCKED)
		ev_putf(b, ESC_MD, " (%.64s)", ev_jstr(cell, "reason"));
	const json_t *failing = json_object_get(cell, "failing_checks");
	for (size_t i = 0; i < json_array_size(failing); i++) {
		sbuf_puts(b, i ? ", " : ": ");
		ev_put_code(b, json_string_value(json_array_get(failing, i)), 80);
	}
}

static void render_markdown(struct sbuf *b, const json_t *m)
{
	const json_t *ids = json_object_get(m, "providers"), *rows = json_object_get(m, "rows");
	bool prov = json_object_get(json_array_get(rows, 0), "provenance") != NULL;
	sbuf_puts(b, prov ? "| Host | Created | Tool | Provenance |" : "| Host | Created | Tool |");
	for (size_t i = 0; i < json_array_size(ids); i++) {
		sbuf_putc(b, ' ');
		ev_put_esc(b, json_string_value(json_array_get(ids, i)), ESC_MD, 64);
		sbuf_puts(b, " |");
	}
	sbuf_puts(b, prov ? "\n|---|---|---|---|" : "\n|---|---|---|");
	for (size_t i = 0; i < json_array_size(ids); i++)
		sbuf_puts(b, "---|");
	sbuf_putc(b, '\n');
	for (size_t r = 0; r < json_array_size(rows); r++) {
		const json_t *row = json_array_get(rows, r), *host = json_object_get(row, "host");
		ev_putf(b, ESC_MD, "| %.64s %.32s, %.80s (%.80s) | %.32s | %.32s |", ev_jstr(host, "kernel"),
			ev_jstr(host, "machine"), ev_jstr(host, "os"), ev_jstr(row, "file"), ev_jstr(row, "created_at"),
			ev_jstr(row, "tool_version"));
		if (prov) {
			sbuf_putc(b, ' ');
			ev_provenance_put(b, json_object_get(row, "provenance"), ESC_MD, "; ");
			sbuf_puts(b, " |");
		}
		for (size_t i = 0; i < json_array_size(ids); i++) {
			sbuf_putc(b, ' ');
			put_cell(b, json_object_get(json_object_get(row, "providers"),
						    json_string_value(json_array_get(ids, i))));
			sbuf_puts(b, " |");
		}
		sbuf_putc(b, '\n');
	}
}

/* A shields.io endpoint badge (https://shields.io/badges/endpoint-badge)
 * over every cell: red when any provider is defective, yellow when any is
 * blocked or skipped, green otherwise. */
static void render_badge(struct sbuf *b, const json_t *m)
{
	size_t count[AGSBX_PROVIDER_VERDICT_COUNT] = { 0 }, other = 0;
	const json_t *rows = json_object_get(m, "rows");
	for (size_t r = 0; r < json_array_size(rows); r++) {
		const char *id;
		json_t *cell;
		json_object_foreach(json_object_get(json_array_get(rows, r), "providers"), id, cell) {
			enum agsbx_provider_verdict v = agsbx_provider_verdict_of(cell);
			if (v != AGSBX_PROVIDER_VERDICT_UNKNOWN)
				count[v]++;
			else
				other++;
		}
	}
	char msg[160] = "";
	size_t len = 0;
	for (int k = 0; k < AGSBX_PROVIDER_VERDICT_COUNT; k++)
		if (count[k])
			len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%zu %s", len ? ", " : "", count[k],
						agsbx_provider_verdict_name(k));
	if (other)
		snprintf(msg + len, sizeof msg - len, "%s%zu unknown", len ? ", " : "", other);
	const char *color = count[AGSBX_PROVIDER_DEFECTIVE] ? "red"
			    : (count[AGSBX_PROVIDER_BLOCKED] || count[AGSBX_PROVIDER_SKIPPED] || other) ? "yellow"
			    : count[AGSBX_PROVIDER_CONFORMANT] ? "brightgreen" : "lightgrey";
	json_t *j = json_pack("{s:i, s:s, s:s, s:s}", "schemaVersion", 1, "label", "sandbox evidence", "message",
			      len || other ? msg : "no providers", "color", color);
	char *s = j ? json_dumps(j, JSON_SORT_KEYS) : NULL;
	if (s) {
		sbuf_puts(b, s);
		sbuf_putc(b, '\n');
	}
	free(s);
	json_decref(j);
}

int agsbx_matrix_render(const json_t *matrix, const char *format, FILE *out)
{
	static const struct ev_format formats[] = {
		{ "badge", render_badge }, { "markdown", render_markdown }, { "json", NULL }, { NULL, NULL },
	};
	return ev_render_as(matrix, format, formats, out);
}
