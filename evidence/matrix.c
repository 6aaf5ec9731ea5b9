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

/* ---- markdown ------------------------------------------------------------ */

/* GitHub's comment column is about 760 px: the table holds what a
 * maintainer compares (host, then one verdict per provider, failing check
 * ids inline); what only qualifies a row (file, created, tool, signature,
 * representative, challenge, subject, blocked reasons) is a numbered list
 * under the table. Row flags that change how a row reads stay in the row.
 * tests/tools/render-views.sh renders it at that width. */

/* s escaped for a table cell, with a <wbr> (a line-break opportunity
 * GitHub keeps) after each '_', '.' and '/': unbroken, an identifier like
 * fs.symlink_escape_denied sets its column's minimum width, and a few of
 * them push the table past the comment column. The escaping itself is
 * ev_put_esc's: nothing from the bundle becomes markup. */
static void put_breakable(struct sbuf *b, const char *s, size_t max_chars)
{
	struct sbuf t = { 0 };
	ev_put_esc(&t, s, ESC_MD, max_chars);
	b->oom |= t.oom;
	for (size_t i = 0; i < t.len; i++) {
		sbuf_putc(b, t.p[i]);
		if (t.p[i] && strchr("_./", t.p[i]) && i + 1 < t.len)
			sbuf_puts(b, "<wbr>");
	}
	sbuf_clear(&t);
}

static void put_cell(struct sbuf *b, const json_t *cell)
{
	if (!cell) {
		sbuf_puts(b, "*not in this bundle*");
		return;
	}
	enum agsbx_provider_verdict v = agsbx_provider_verdict_of(cell);
	if (v == AGSBX_PROVIDER_VERDICT_UNKNOWN) {
		sbuf_puts(b, "\xE2\x9D\x94 *no verdict recorded*");
		return;
	}
	sbuf_puts(b, ev_provider_icon(v));
	ev_put_esc(b, ev_jstr(cell, "verdict"), ESC_MD, 32);
	/* <code>, not a code span: a span would show the <wbr> as text */
	const json_t *failing = json_object_get(cell, "failing_checks");
	for (size_t i = 0; i < json_array_size(failing); i++) {
		sbuf_puts(b, i ? ", <code>" : ": <code>");
		put_breakable(b, json_string_value(json_array_get(failing, i)), 80);
		sbuf_puts(b, "</code>");
	}
}

/* What must be read with the row, not only in the list below it. */
static void put_row_flags(struct sbuf *b, const json_t *p)
{
	const char *sig = ev_jstr(p, "signature");
	if (sig && strcmp(sig, "invalid") == 0)
		sbuf_puts(b, " \xC2\xB7 \xE2\x9D\x8C signature INVALID");
	if (json_is_false(json_object_get(p, "trusted")))
		sbuf_puts(b, " \xC2\xB7 \xE2\x9A\xA0\xEF\xB8\x8F signer NOT trusted");
	if (json_object_get(p, "trust_error")) /* the trust anchor failed (keys URL down) */
		sbuf_puts(b, " \xC2\xB7 \xE2\x9A\xA0\xEF\xB8\x8F signer not checked");
	if (json_array_size(json_object_get(p, "simulations")))
		sbuf_puts(b, " \xC2\xB7 \xE2\x9A\xA0\xEF\xB8\x8F SIMULATED");
}

/* "6.18.0-ci x86_64 · Debian GNU/Linux 12 (bookworm)", leaving out what
 * the bundle did not record ("?"). */
static void put_host(struct sbuf *b, const json_t *host)
{
	static const char *const keys[] = { "kernel", "machine", "os" }, *const seps[] = { "", " ", " \xC2\xB7 " };
	bool any = false;
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(keys); i++) {
		const char *v = ev_jstr(host, keys[i]);
		if (!v || strcmp(v, "?") == 0)
			continue;
		sbuf_puts(b, any ? seps[i] : "");
		ev_put_esc(b, v, ESC_MD, 80);
		any = true;
	}
	if (!any)
		sbuf_puts(b, "*host not recorded*");
}

static void put_row(struct sbuf *b, size_t r, const json_t *row, const json_t *ids)
{
	sbuf_printf(b, "| **%zu** ", r + 1);
	put_host(b, json_object_get(row, "host"));
	put_row_flags(b, json_object_get(row, "provenance"));
	sbuf_puts(b, " |");
	for (size_t i = 0; i < json_array_size(ids); i++) {
		sbuf_putc(b, ' ');
		put_cell(b, json_object_get(json_object_get(row, "providers"), json_string_value(json_array_get(ids, i))));
		sbuf_puts(b, " |");
	}
	sbuf_putc(b, '\n');
}

/* A member the bundle lacks (agsbx_matrix_build's "?"), in words. */
static const char *recorded(const char *s)
{
	return !s || strcmp(s, "?") == 0 ? "not recorded" : s;
}

/* Why each blocked cell of the row is blocked: "; gvisor blocked:
 * docker_unreachable". Under the table, not in the cell: a reason such as
 * bwrap_user_namespace_blocked is the widest word a column would hold. */
static void put_blocked_reasons(struct sbuf *b, const json_t *cells)
{
	const char *id;
	json_t *cell;
	json_object_foreach((json_t *)cells, id, cell) {
		if (agsbx_provider_verdict_of(cell) == AGSBX_PROVIDER_BLOCKED)
			ev_putf(b, ESC_MD, "; %.64s blocked: %.64s", id, ev_jstr(cell, "reason"));
	}
}

/* The footnotes of the rows: file, created, tool, then the provenance. */
static void put_provenance_list(struct sbuf *b, const json_t *rows)
{
	sbuf_puts(b, "\n<details><summary>Provenance of each row: file, signature and signer, representative, "
		     "simulation, challenge, subject, tool</summary>\n\n");
	for (size_t r = 0; r < json_array_size(rows); r++) {
		const json_t *row = json_array_get(rows, r), *p = json_object_get(row, "provenance");
		sbuf_printf(b, "%zu. ", r + 1);
		ev_putf(b, ESC_MD, "%.200s \xC2\xB7 created %.32s \xC2\xB7 ", ev_jstr(row, "file"),
			recorded(ev_jstr(row, "created_at")));
		if (p)
			ev_provenance_put(b, p, ESC_MD, "; ");
		else
			ev_putf(b, ESC_MD, "tool %.32s", recorded(ev_jstr(row, "tool_version")));
		put_blocked_reasons(b, json_object_get(row, "providers"));
		sbuf_putc(b, '\n');
	}
	sbuf_puts(b, "\n</details>\n");
}

static void render_markdown(struct sbuf *b, const json_t *m)
{
	const json_t *ids = json_object_get(m, "providers"), *rows = json_object_get(m, "rows");
	size_t nr = json_array_size(rows), np = json_array_size(ids);
	sbuf_printf(b, "### agsbx-evidence matrix: %zu bundle%s, %zu provider%s\n\n| Host |", nr, nr == 1 ? "" : "s", np,
		    np == 1 ? "" : "s");
	for (size_t i = 0; i < np; i++) {
		sbuf_putc(b, ' ');
		put_breakable(b, json_string_value(json_array_get(ids, i)), 64);
		sbuf_puts(b, " |");
	}
	sbuf_puts(b, "\n|---|");
	for (size_t i = 0; i < np; i++)
		sbuf_puts(b, "---|");
	sbuf_putc(b, '\n');
	for (size_t r = 0; r < nr; r++)
		put_row(b, r, json_array_get(rows, r), ids);
	put_provenance_list(b, rows);
}

int agsbx_matrix_add_provenance(json_t *matrix, const json_t *const *bundles, size_t n,
				const struct agsbx_verify_opts *trust)
{
	json_t *rows = json_object_get(matrix, "rows");
	for (size_t i = 0; i < n && i < json_array_size(rows); i++) {
		json_t *p = agsbx_bundle_provenance(bundles[i], trust);
		if (!p || json_object_set_new(json_array_get(rows, i), "provenance", p) < 0)
			return -ENOMEM;
	}
	return trust ? json_object_set_new(matrix, "trusted_only", json_true()) : 0;
}

/* With trust anchors the badge speaks only for bundles whose signature
 * verifies and whose signer is trusted: an edited or foreign bundle in
 * the directory must not change its colour. */
static bool row_counts(const json_t *m, const json_t *row)
{
	if (!json_is_true(json_object_get(m, "trusted_only")))
		return true;
	const json_t *p = json_object_get(row, "provenance");
	const char *sig = ev_jstr(p, "signature");
	return sig && strcmp(sig, "good") == 0 && json_is_true(json_object_get(p, "trusted"));
}

struct badge_counts {
	size_t n[AGSBX_PROVIDER_VERDICT_COUNT], other, excluded;
};

static struct badge_counts badge_count(const json_t *m)
{
	struct badge_counts c = { 0 };
	const json_t *rows = json_object_get(m, "rows");
	for (size_t r = 0; r < json_array_size(rows); r++) {
		const json_t *row = json_array_get(rows, r);
		if (!row_counts(m, row)) {
			c.excluded++;
			continue;
		}
		const char *id;
		json_t *cell;
		json_object_foreach(json_object_get(row, "providers"), id, cell) {
			enum agsbx_provider_verdict v = agsbx_provider_verdict_of(cell);
			if (v != AGSBX_PROVIDER_VERDICT_UNKNOWN)
				c.n[v]++;
			else
				c.other++;
		}
	}
	return c;
}

/* A shields.io endpoint badge (https://shields.io/badges/endpoint-badge)
 * over every counted cell: red when any provider is defective, yellow when
 * any is blocked or skipped, green otherwise; bundles left out for their
 * signature are named in the message. */
static void render_badge(struct sbuf *b, const json_t *m)
{
	struct badge_counts c = badge_count(m);
	char msg[200] = "";
	size_t len = 0;
	for (int k = 0; k < AGSBX_PROVIDER_VERDICT_COUNT; k++)
		if (c.n[k])
			len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%zu %s", len ? ", " : "", c.n[k],
						agsbx_provider_verdict_name(k));
	if (c.other)
		len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%zu unknown", len ? ", " : "", c.other);
	if (!len)
		len = (size_t)snprintf(msg, sizeof msg, "%s", c.excluded ? "no trusted bundle" : "no providers");
	if (c.excluded)
		snprintf(msg + len, sizeof msg - len, "; %zu bundle%s excluded (signature not verified or signer not trusted)",
			 c.excluded, c.excluded == 1 ? "" : "s");
	const char *color = c.n[AGSBX_PROVIDER_DEFECTIVE] ? "red"
			    : (c.n[AGSBX_PROVIDER_BLOCKED] || c.n[AGSBX_PROVIDER_SKIPPED] || c.other) ? "yellow"
			    : c.n[AGSBX_PROVIDER_CONFORMANT] ? "brightgreen" : "lightgrey";
	json_t *j = json_pack("{s:i, s:s, s:s, s:s}", "schemaVersion", 1, "label", "sandbox evidence", "message", msg,
			      "color", color);
	char *s = j ? json_dumps(j, JSON_SORT_KEYS) : NULL;
	if (s) {
		sbuf_puts(b, s);
		sbuf_putc(b, '\n');
	} else
		b->oom = true;
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
