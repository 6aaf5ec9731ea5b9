/* report: one bundle as text, markdown (PR comments, $GITHUB_STEP_SUMMARY),
 * JUnit XML or TAP 13. Rendered into memory first: no partial output. */
#include "evidence/bundle.h"
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "base/cleanup.h"

/* skip counts every check that is neither pass nor fail (JUnit and TAP
 * have nothing else); observed is the part of it that is a recorded
 * observation of an unclaimed axis (not_claimed); the text and markdown
 * views show it apart from the rest (skip, blocked: nothing observed). */
struct counts {
	size_t pass, fail, skip, total, observed;
};

static const char *verdict_of(const json_t *j)
{
	const char *v = ev_jstr(j, "verdict");
	return v ? v : "?";
}

static struct counts count_checks(const json_t *provider)
{
	struct counts c = { 0 };
	const json_t *checks = json_object_get(provider, "checks");
	for (size_t i = 0; i < json_array_size(checks); i++) {
		enum agsbx_check_verdict v = agsbx_check_verdict_of(json_array_get(checks, i));
		c.total++;
		if (v == AGSBX_CHECK_PASS)
			c.pass++;
		else if (v == AGSBX_CHECK_FAIL)
			c.fail++;
		else
			c.skip++;
		c.observed += v == AGSBX_CHECK_NOT_CLAIMED;
	}
	return c;
}

/* "4 providers: 1 conformant, 1 defective, 1 blocked, 1 skipped" from the
 * providers themselves (the summary member may be absent or stale). */
static void put_totals(struct sbuf *b, const json_t *bundle)
{
	const json_t *providers = json_object_get(bundle, "providers");
	size_t n[AGSBX_PROVIDER_VERDICT_COUNT] = { 0 };
	for (size_t i = 0; i < json_array_size(providers); i++) {
		enum agsbx_provider_verdict v = agsbx_provider_verdict_of(json_array_get(providers, i));
		if (v != AGSBX_PROVIDER_VERDICT_UNKNOWN)
			n[v]++;
	}
	sbuf_printf(b, "%zu provider%s: ", json_array_size(providers), json_array_size(providers) == 1 ? "" : "s");
	for (int k = 0; k < AGSBX_PROVIDER_VERDICT_COUNT; k++)
		sbuf_printf(b, "%s%zu %s", k ? ", " : "", n[k], agsbx_provider_verdict_name(k));
}

/* Signature state without trust anchors (trust is 'verify''s job). */
static void put_signature(struct sbuf *b, const json_t *bundle, enum esc_mode mode)
{
	struct agsbx_verify_result res;
	char err[256];
	if (ev_bundle_verify(bundle, NULL, &res, err, sizeof err) < 0) {
		sbuf_puts(b, "unknown");
		return;
	}
	const char *md = mode == ESC_MD ? "`" : "";
	if (res.status == AGSBX_VERIFY_UNSIGNED)
		sbuf_puts(b, mode == ESC_MD ? "\xE2\x9A\xA0\xEF\xB8\x8F unsigned" : "unsigned");
	else if (!res.signature_valid) {
		sbuf_puts(b, mode == ESC_MD ? "\xE2\x9D\x8C INVALID: " : "INVALID: ");
		ev_put_esc(b, res.reason, mode, 200);
	} else
		sbuf_printf(b, "%sgood signature by %s%s%s (%s); signer not checked here, use 'agsbx-evidence verify'",
			    mode == ESC_MD ? "\xE2\x9C\x85 " : "", md, res.fingerprint, md, res.key_type);
}

static void put_argv(struct sbuf *b, const json_t *argv, enum esc_mode mode)
{
	for (size_t i = 0; i < json_array_size(argv); i++) {
		if (i)
			sbuf_putc(b, ' ');
		ev_put_esc(b, json_string_value(json_array_get(argv, i)), mode, 80);
	}
}

static void put_attachment_line(struct sbuf *b, const json_t *a, enum esc_mode mode)
{
	const json_t *s = json_object_get(a, "summary");
	sbuf_printf(b, "exit %" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(a, "exit_status")));
	if (ev_jstr(s, "format") && strcmp(ev_jstr(s, "format"), "none") != 0)
		sbuf_printf(b, ", %s: %" JSON_INTEGER_FORMAT " passed, %" JSON_INTEGER_FORMAT
			       " failed, %" JSON_INTEGER_FORMAT " skipped",
			    ev_jstr(s, "format"), json_integer_value(json_object_get(s, "passed")),
			    json_integer_value(json_object_get(s, "failed")),
			    json_integer_value(json_object_get(s, "skipped")));
	(void)mode;
}

/* Why each blocked provider could not run here and what would let it:
 * the probe's detail and hint (a maintainer reading a PR needs both). */
static void put_blocked(struct sbuf *b, const json_t *providers, bool md)
{
	enum esc_mode m = md ? ESC_MD : ESC_TEXT;
	bool header = false;
	for (size_t i = 0; i < json_array_size(providers); i++) {
		const json_t *p = json_array_get(providers, i);
		if (agsbx_provider_verdict_of(p) != AGSBX_PROVIDER_BLOCKED)
			continue;
		const json_t *probe = json_object_get(p, "probe");
		if (!header)
			sbuf_puts(b, md ? "\n#### Blocked providers\n\n| Provider | Reason | Detail | Hint |\n|---|---|---|---|\n"
					: "\nblocked providers:\n");
		header = true;
		const char *detail = ev_jstr(probe, "detail"), *hint = ev_jstr(probe, "hint");
		if (md) {
			ev_putf(b, ESC_MDCODE, "| `%.64s` | `%.80s` | ", ev_jstr(p, "id"), ev_jstr(p, "reason"));
			ev_putf(b, m, "%.400s | %.400s |\n", detail ? detail : "", hint ? hint : "");
			continue;
		}
		ev_putf(b, m, "  %.64s: %.80s", ev_jstr(p, "id"), ev_jstr(p, "reason"));
		if (detail)
			ev_putf(b, m, "\n    detail: %.400s", detail);
		if (hint)
			ev_putf(b, m, "\n    hint:   %.400s", hint);
		sbuf_putc(b, '\n');
	}
}

/* ---- the axis view: what each sandbox was seen to isolate ------------------ */

const char *const agsbx_view_axes[] = { "process_contained", "host_filesystem_restricted",
					"privilege_escalation_blocked", "syscalls_restricted",
					"environment_scrubbed", "network", NULL };

static int net_rank(const char *n)
{
	return !n ? 0 : strcmp(n, "isolated") == 0 ? 2 : strcmp(n, "tcp_restricted") == 0 ? 1 : 0;
}

static bool listed(const json_t *a, const char *s)
{
	for (size_t i = 0; i < json_array_size(a); i++)
		if (json_is_string(json_array_get(a, i)) && strcmp(json_string_value(json_array_get(a, i)), s) == 0)
			return true;
	return false;
}

/* capabilities.truthful's list of claimed axes whose evidence was
 * inconclusive on this host. */
static const json_t *inconclusive_axes(const json_t *provider)
{
	const json_t *checks = json_object_get(provider, "checks");
	for (size_t i = 0; i < json_array_size(checks); i++) {
		const json_t *c = json_array_get(checks, i);
		if (ev_jstr(c, "id") && strcmp(ev_jstr(c, "id"), "capabilities.truthful") == 0)
			return json_object_get(json_object_get(c, "facts"), "inconclusive");
	}
	return NULL;
}

/* One axis of one provider, from its claims and what the checks observed
 * (the bundle's own members, not recomputed). */
enum agsbx_axis_view agsbx_axis_view_of(const json_t *provider, const char *axis)
{
	const json_t *cl = json_object_get(provider, "claims"), *ob = json_object_get(provider, "observed");
	if (!json_is_object(ob))
		return AGSBX_AXIS_VIEW_NOT_OBSERVED;
	bool net = strcmp(axis, "network") == 0;
	int crank = net ? net_rank(ev_jstr(cl, "network")) : 0, orank = net ? net_rank(ev_jstr(ob, "network")) : 0;
	bool claimed = net ? crank > 0 : json_is_true(json_object_get(cl, axis));
	bool observed = net ? orank > 0 : json_is_true(json_object_get(ob, axis));
	if (claimed && (net ? orank >= crank : observed))
		return AGSBX_AXIS_VIEW_EVIDENCED;
	if (claimed)
		return listed(inconclusive_axes(provider), axis) ? AGSBX_AXIS_VIEW_INCONCLUSIVE : AGSBX_AXIS_VIEW_REFUTED;
	return observed ? AGSBX_AXIS_VIEW_UNCLAIMED : AGSBX_AXIS_VIEW_NOT_OBSERVED;
}

const char *agsbx_axis_view_name(enum agsbx_axis_view v)
{
	static const char *const names[] = { "claimed, evidenced", "claimed, REFUTED", "claimed, inconclusive",
					     "observed, unclaimed", "not observed" };
	return (unsigned)v < AGSBX_ARRAY_SIZE(names) ? names[v] : "?";
}

/* A cell: the state, and for the network the level observed. */
static void put_axis_cell(struct sbuf *b, const json_t *p, const char *axis, enum esc_mode mode)
{
	static const char *const shorts[] = { "evidenced", "REFUTED", "inconclusive", "observed", "-" };
	enum agsbx_axis_view v = agsbx_axis_view_of(p, axis);
	const char *lvl = ev_jstr(json_object_get(p, "observed"), "network");
	if (strcmp(axis, "network") == 0 && lvl && v != AGSBX_AXIS_VIEW_NOT_OBSERVED)
		ev_putf(b, mode, "%s: %.20s", shorts[v], lvl);
	else
		sbuf_puts(b, shorts[v]);
}

static const char *const axis_legend =
	"evidenced = claimed and evidenced, REFUTED = claimed and refuted, inconclusive = claimed and inconclusive "
	"on this host, observed = observed but unclaimed, - = not observed";

static void put_axes_text(struct sbuf *b, const json_t *providers)
{
	sbuf_printf(b, "\naxes (%s):\n%-14s", axis_legend, "PROVIDER");
	static const char *const heads[] = { "PROCESS", "FILESYSTEM", "PRIVILEGE", "SYSCALLS", "ENVIRONMENT", "NETWORK" };
	for (size_t a = 0; a < AGSBX_ARRAY_SIZE(heads); a++)
		sbuf_printf(b, a + 1 < AGSBX_ARRAY_SIZE(heads) ? " %-13s" : " %s", heads[a]);
	sbuf_putc(b, '\n');
	for (size_t i = 0; i < json_array_size(providers); i++) {
		const json_t *p = json_array_get(providers, i);
		struct sbuf id = { 0 };
		ev_put_esc(&id, ev_jstr(p, "id"), ESC_TEXT, 14);
		sbuf_printf(b, "%-14s", id.p ? id.p : "?");
		sbuf_clear(&id);
		for (size_t a = 0; agsbx_view_axes[a]; a++) {
			struct sbuf cell = { 0 };
			put_axis_cell(&cell, p, agsbx_view_axes[a], ESC_TEXT);
			sbuf_printf(b, agsbx_view_axes[a + 1] ? " %-13s" : " %s", cell.p ? cell.p : "");
			sbuf_clear(&cell);
		}
		sbuf_putc(b, '\n');
	}
}

static void put_axes_markdown(struct sbuf *b, const json_t *providers)
{
	sbuf_puts(b, "\n#### What each sandbox was observed to isolate\n\n| Provider |");
	for (size_t a = 0; agsbx_view_axes[a]; a++)
		sbuf_printf(b, " `%s` |", agsbx_view_axes[a]);
	sbuf_puts(b, "\n|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < json_array_size(providers); i++) {
		const json_t *p = json_array_get(providers, i);
		ev_putf(b, ESC_MDCODE, "| `%.64s` |", ev_jstr(p, "id"));
		for (size_t a = 0; agsbx_view_axes[a]; a++) {
			sbuf_putc(b, ' ');
			put_axis_cell(b, p, agsbx_view_axes[a], ESC_MD);
			sbuf_puts(b, " |");
		}
		sbuf_putc(b, '\n');
	}
	ev_putf(b, ESC_MD, "\n%s\n", axis_legend);
}

/* ---- shared by text and markdown ---------------------------------------- */

/* " (root, sudo)" after the representative flag. */
static void put_reasons(struct sbuf *b, const json_t *ctx, enum esc_mode mode)
{
	const json_t *reasons = json_object_get(ctx, "representative_reasons");
	for (size_t i = 0; i < json_array_size(reasons); i++) {
		sbuf_puts(b, i ? ", " : " (");
		ev_put_esc(b, json_string_value(json_array_get(reasons, i)), mode, 64);
		if (i + 1 == json_array_size(reasons))
			sbuf_putc(b, ')');
	}
}

/* Every failing check of every provider, one row each, under a header
 * written before the first. */
static void put_failing(struct sbuf *b, const json_t *providers, bool md)
{
	bool header = false;
	for (size_t i = 0; i < json_array_size(providers); i++) {
		const json_t *p = json_array_get(providers, i);
		const json_t *checks = json_object_get(p, "checks");
		for (size_t k = 0; k < json_array_size(checks); k++) {
			const json_t *c = json_array_get(checks, k);
			if (agsbx_check_verdict_of(c) != AGSBX_CHECK_FAIL)
				continue;
			if (!header)
				sbuf_puts(b, md ? "\n#### Failing checks\n\n| Provider | Check | Axis | Reason |\n|---|---|---|---|\n"
						: "\nfailing checks:\n");
			header = true;
			if (!md) {
				ev_putf(b, ESC_TEXT, "  %.64s/%.128s: %.400s\n", ev_jstr(p, "id"), ev_jstr(c, "id"),
					ev_jstr(c, "reason"));
				continue;
			}
			ev_putf(b, ESC_MDCODE, "| `%.64s` | `%.128s` | `%.64s` | ", ev_jstr(p, "id"), ev_jstr(c, "id"),
				ev_jstr(c, "axis"));
			ev_putf(b, ESC_MD, "%.300s |\n", ev_jstr(c, "reason"));
		}
	}
}

static void put_attachments(struct sbuf *b, const json_t *bundle, bool md)
{
	const json_t *atts = json_object_get(bundle, "attachments");
	if (json_array_size(atts))
		sbuf_puts(b, md ? "\n#### Attachments\n\n| Command | Result |\n|---|---|\n" : "\nattachments:\n");
	for (size_t i = 0; i < json_array_size(atts); i++) {
		const json_t *a = json_array_get(atts, i);
		sbuf_puts(b, md ? "| `" : "  ");
		put_argv(b, json_object_get(a, "argv"), md ? ESC_MDCODE : ESC_TEXT);
		sbuf_puts(b, md ? "` | " : ": ");
		put_attachment_line(b, a, md ? ESC_MD : ESC_TEXT);
		sbuf_puts(b, md ? " |\n" : "\n");
	}
}

/* The host's advisories worth a look (a version inside an upstream range,
 * an exposed hardening knob), never counted as verdicts; nothing for a
 * bundle from before advisories were recorded. */
static size_t count_flagged(const json_t *list, const char *status)
{
	size_t i, n = 0;
	const json_t *f;
	json_array_foreach(list, i, f) n += ev_jstr(f, "status") && strcmp(ev_jstr(f, "status"), status) == 0;
	return n;
}

static void put_advisories(struct sbuf *b, const json_t *bundle, bool md)
{
	const json_t *adv = json_object_get(json_object_get(bundle, "host"), "advisories");
	const json_t *ranges = json_object_get(json_object_get(adv, "upstream_ranges"), "value");
	const json_t *knobs = json_object_get(json_object_get(adv, "hardening"), "value");
	if (!count_flagged(ranges, "in_range") && !count_flagged(knobs, "exposed"))
		return;
	sbuf_puts(b, md ? "\n#### Advisories (not verdicts; distributions backport fixes)\n\n"
			: "\nadvisories (not verdicts; distributions backport fixes):\n");
	size_t i;
	const json_t *f;
	json_array_foreach(ranges, i, f) {
		if (strcmp(ev_jstr(f, "status") ? ev_jstr(f, "status") : "", "in_range") != 0)
			continue;
		ev_putf(b, md ? ESC_MD : ESC_TEXT, md ? "- %.32s (%.80s): %.32s %.64s is inside the upstream range\n"
						   : "  %.32s (%.80s): %.32s %.64s is inside the upstream range\n",
			ev_jstr(f, "id"), ev_jstr(f, "name"), ev_jstr(f, "component"), ev_jstr(f, "observed"));
	}
	json_array_foreach(knobs, i, f) {
		if (strcmp(ev_jstr(f, "status") ? ev_jstr(f, "status") : "", "exposed") != 0)
			continue;
		/* ev_putf escapes strings only: the value goes in through sbuf */
		ev_putf(b, md ? ESC_MD : ESC_TEXT, md ? "- %.40s" : "  %.40s", ev_jstr(f, "fact"));
		sbuf_printf(b, " = %lld: ", (long long)json_integer_value(json_object_get(f, "value")));
		ev_putf(b, md ? ESC_MD : ESC_TEXT, "%.160s\n", ev_jstr(f, "why"));
	}
}

/* ---- text ------------------------------------------------------------- */

static void put_subject(struct sbuf *b, const json_t *subject)
{
	ev_putf(b, ESC_TEXT, "\nsubject:    %.200s %.80s@%.12s", ev_jstr(subject, "path"), ev_jstr(subject, "branch"),
		ev_jstr(subject, "commit"));
	sbuf_puts(b, json_is_true(json_object_get(subject, "dirty")) ? " (dirty)" : "");
}

static void text_header(struct sbuf *b, const json_t *bundle)
{
	const json_t *tool = json_object_get(bundle, "tool");
	ev_putf(b, ESC_TEXT, "bundle:     %.64s, created %.64s by %.64s %.64s\nhost:       ", ev_jstr(bundle, "schema"),
		ev_jstr(bundle, "created_at"), ev_jstr(tool, "name"), ev_jstr(tool, "version"));
	ev_put_host_line(b, bundle, ESC_TEXT);
	const json_t *ctx = json_object_get(bundle, "context");
	const json_t *rep = json_object_get(ctx, "representative");
	sbuf_printf(b, "; representative: %s", json_is_true(rep) ? "yes" : json_is_false(rep) ? "no" : "?");
	put_reasons(b, ctx, ESC_TEXT);
	if (json_object_get(bundle, "subject"))
		put_subject(b, json_object_get(bundle, "subject"));
	if (ev_jstr(bundle, "challenge"))
		ev_putf(b, ESC_TEXT, "\nchallenge:  %.128s", ev_jstr(bundle, "challenge"));
	sbuf_puts(b, "\nsignature:  ");
	put_signature(b, bundle, ESC_TEXT);
	sbuf_puts(b, "\nsummary:    ");
	put_totals(b, bundle);
	sbuf_puts(b, "\n\n");
}

static void render_text(struct sbuf *b, const json_t *bundle)
{
	text_header(b, bundle);
	const json_t *providers = json_object_get(bundle, "providers");
	sbuf_printf(b, "%-14s %-11s %5s %5s %8s %5s  %s\n", "PROVIDER", "VERDICT", "PASS", "FAIL", "OBSERVED", "SKIP",
		    "REASON");
	for (size_t i = 0; i < json_array_size(providers); i++) {
		const json_t *p = json_array_get(providers, i);
		struct counts c = count_checks(p);
		struct sbuf id = { 0 };
		ev_put_esc(&id, ev_jstr(p, "id"), ESC_TEXT, 14);
		sbuf_printf(b, "%-14s %-11s %5zu %5zu %8zu %5zu  ", id.p ? id.p : "?", verdict_of(p), c.pass, c.fail,
			    c.observed, c.skip - c.observed);
		sbuf_clear(&id);
		ev_putf(b, ESC_TEXT, "%.80s\n", ev_jstr(p, "reason"));
	}
	sbuf_puts(b, "(OBSERVED: checks of unclaimed axes, recorded observations; SKIP: nothing observed)\n");
	put_axes_text(b, providers);
	put_failing(b, providers, false);
	put_blocked(b, providers, false);
	put_attachments(b, bundle, false);
	put_advisories(b, bundle, false);
}

/* ---- markdown ----------------------------------------------------------- */

static void markdown_header(struct sbuf *b, const json_t *bundle)
{
	sbuf_puts(b, "### agsbx-evidence: ");
	put_totals(b, bundle);
	sbuf_puts(b, "\n\n**Host:** ");
	ev_put_host_line(b, bundle, ESC_MD);
	const json_t *ctx = json_object_get(bundle, "context");
	const json_t *rep = json_object_get(ctx, "representative");
	sbuf_puts(b, json_is_true(rep) ? " · representative" : json_is_false(rep) ? " · **not representative**" : "");
	put_reasons(b, ctx, ESC_MD);
	const json_t *tool = json_object_get(bundle, "tool");
	ev_putf(b, ESC_MD, " · created %.64s · %.64s %.64s  \n**Signature:** ", ev_jstr(bundle, "created_at"),
		ev_jstr(tool, "name"), ev_jstr(tool, "version"));
	put_signature(b, bundle, ESC_MD);
	if (ev_jstr(bundle, "challenge"))
		ev_putf(b, ESC_MD, "  \n**Challenge:** %.128s", ev_jstr(bundle, "challenge"));
}

static void render_markdown(struct sbuf *b, const json_t *bundle)
{
	markdown_header(b, bundle);
	const json_t *providers = json_object_get(bundle, "providers");
	sbuf_puts(b, "\n\n| Provider | Verdict | Reason | Checks pass / fail / observed unclaimed / skip |\n"
		     "|---|---|---|---|\n");
	for (size_t i = 0; i < json_array_size(providers); i++) {
		const json_t *p = json_array_get(providers, i);
		struct counts c = count_checks(p);
		ev_putf(b, ESC_MDCODE, "| `%.64s` | ", ev_jstr(p, "id"));
		sbuf_puts(b, ev_provider_icon(agsbx_provider_verdict_of(p)));
		ev_putf(b, ESC_MD, "%.32s | %.120s", verdict_of(p), ev_jstr(p, "reason"));
		sbuf_printf(b, " | %zu / %zu / %zu / %zu |\n", c.pass, c.fail, c.observed, c.skip - c.observed);
	}
	put_axes_markdown(b, providers);
	put_failing(b, providers, true);
	put_blocked(b, providers, true);
	put_attachments(b, bundle, true);
	put_advisories(b, bundle, true);
}

/* ---- JUnit XML ------------------------------------------------------------ */

static void put_seconds(struct sbuf *b, const json_t *us)
{
	json_int_t v = json_integer_value(us);
	if (v < 0)
		v = 0;
	sbuf_printf(b, "%" JSON_INTEGER_FORMAT ".%06" JSON_INTEGER_FORMAT, v / 1000000, v % 1000000);
}

/* "<verdict>: <reason>" for a skipped message. */
static void junit_skipped(struct sbuf *b, const char *verdict, const char *reason)
{
	ev_putf(b, ESC_XML, "      <skipped message=\"%s: %s\"/>\n", verdict, reason);
}

static void junit_case(struct sbuf *b, const json_t *p, const json_t *ch)
{
	ev_putf(b, ESC_XML, "    <testcase classname=\"%s\" name=\"%s\" time=\"", ev_jstr(p, "id"), ev_jstr(ch, "id"));
	put_seconds(b, json_object_get(ch, "duration_us"));
	sbuf_puts(b, "\"");
	enum agsbx_check_verdict v = agsbx_check_verdict_of(ch);
	if (v == AGSBX_CHECK_PASS) {
		sbuf_puts(b, "/>\n");
		return;
	}
	sbuf_puts(b, ">\n");
	if (v == AGSBX_CHECK_FAIL) {
		ev_putf(b, ESC_XML, "      <failure type=\"fail\" message=\"%s\">axis: %s\nreason: %s</failure>\n",
			ev_jstr(ch, "reason"), ev_jstr(ch, "axis"), ev_jstr(ch, "reason"));
	} else
		junit_skipped(b, verdict_of(ch), ev_jstr(ch, "reason"));
	sbuf_puts(b, "    </testcase>\n");
}

/* "YYYY-MM-DDTHH:MM:SSZ", every other character a digit. */
static bool is_utc_seconds(const char *ts)
{
	static const char form[] = "dddd-dd-ddTdd:dd:ddZ";
	if (!ts || strlen(ts) != sizeof form - 1)
		return false;
	for (size_t i = 0; i < sizeof form - 1; i++)
		if (form[i] == 'd' ? (ts[i] < '0' || ts[i] > '9') : ts[i] != form[i])
			return false;
	return true;
}

/* hostname and timestamp tell apart the suites of one provider merged from
 * several bundles. The bundle records no network host name, so hostname
 * is the host as it does record it (kernel, machine, OS); timestamp is
 * created_at in the Ant form (UTC, no zone suffix). */
static void junit_host(struct sbuf *b, const json_t *bundle)
{
	sbuf_puts(b, "\" hostname=\"");
	if (json_object_get(bundle, "host"))
		ev_put_host_line(b, bundle, ESC_XML);
	else
		sbuf_puts(b, "unknown");
	const char *ts = ev_jstr(bundle, "created_at");
	if (is_utc_seconds(ts)) {
		sbuf_puts(b, "\" timestamp=\"");
		sbuf_put(b, ts, 19);
	}
}

static void junit_suite(struct sbuf *b, const json_t *bundle, const json_t *p)
{
	const json_t *checks = json_object_get(p, "checks");
	struct counts c = count_checks(p);
	bool empty = c.total == 0;
	ev_putf(b, ESC_XML, "  <testsuite name=\"%s", ev_jstr(p, "id"));
	sbuf_printf(b, "\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\" errors=\"0", empty ? 1 : c.total, c.fail,
		    empty ? 1 : c.skip);
	junit_host(b, bundle);
	sbuf_puts(b, "\" time=\"");
	put_seconds(b, json_object_get(json_object_get(p, "timings"), "total_us"));
	ev_putf(b, ESC_XML,
		"\">\n    <properties>\n      <property name=\"verdict\" value=\"%s\"/>\n"
		"      <property name=\"reason\" value=\"%s\"/>\n"
		"      <property name=\"created_at\" value=\"%s\"/>\n",
		verdict_of(p), ev_jstr(p, "reason"), ev_jstr(bundle, "created_at"));
	for (size_t a = 0; agsbx_view_axes[a]; a++)
		ev_putf(b, ESC_XML, "      <property name=\"axis.%s\" value=\"%s\"/>\n", agsbx_view_axes[a],
			agsbx_axis_view_name(agsbx_axis_view_of(p, agsbx_view_axes[a])));
	sbuf_puts(b, "    </properties>\n");
	if (empty) {
		ev_putf(b, ESC_XML, "    <testcase classname=\"%s\" name=\"provider\" time=\"0.000000\">\n", ev_jstr(p, "id"));
		junit_skipped(b, verdict_of(p), ev_jstr(p, "reason"));
		sbuf_puts(b, "    </testcase>\n");
	}
	for (size_t k = 0; k < json_array_size(checks); k++)
		junit_case(b, p, json_array_get(checks, k));
	sbuf_puts(b, "  </testsuite>\n");
}

static void render_junit(struct sbuf *b, const json_t *bundle)
{
	const json_t *providers = json_object_get(bundle, "providers");
	struct counts all = { 0 };
	for (size_t i = 0; i < json_array_size(providers); i++) {
		struct counts c = count_checks(json_array_get(providers, i));
		if (c.total == 0) /* a provider without checks is one skipped case */
			c.total = c.skip = 1;
		all.total += c.total;
		all.fail += c.fail;
	}
	sbuf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	/* junit-10.xsd (Jenkins) has no skipped on <testsuites>: per suite only */
	sbuf_printf(b, "<testsuites name=\"agsbx-evidence\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", all.total,
		    all.fail);
	for (size_t i = 0; i < json_array_size(providers); i++)
		junit_suite(b, bundle, json_array_get(providers, i));
	sbuf_puts(b, "</testsuites>\n");
}

/* ---- TAP 13 ------------------------------------------------------------ */

static void yaml_line(struct sbuf *b, const char *key, const char *value)
{
	ev_putf(b, ESC_YAML, "  %s: \"%s\"\n", key, value ? value : "");
}

static void render_tap(struct sbuf *b, const json_t *bundle)
{
	const json_t *providers = json_object_get(bundle, "providers");
	size_t total = 0;
	for (size_t i = 0; i < json_array_size(providers); i++) {
		size_t n = json_array_size(json_object_get(json_array_get(providers, i), "checks"));
		total += n ? n : 1;
	}
	sbuf_printf(b, "TAP version 13\n1..%zu\n", total);
	size_t num = 0;
	for (size_t i = 0; i < json_array_size(providers); i++) {
		const json_t *p = json_array_get(providers, i);
		const json_t *checks = json_object_get(p, "checks");
		for (size_t a = 0; agsbx_view_axes[a]; a++)
			ev_putf(b, ESC_TAP, "# axis %.64s %s: %s\n", ev_jstr(p, "id"), agsbx_view_axes[a],
				agsbx_axis_view_name(agsbx_axis_view_of(p, agsbx_view_axes[a])));
		if (json_array_size(checks) == 0) {
			sbuf_printf(b, "ok %zu - ", ++num);
			ev_putf(b, ESC_TAP, "%.64s # SKIP %.32s: %.200s\n", ev_jstr(p, "id"), verdict_of(p), ev_jstr(p, "reason"));
			continue;
		}
		for (size_t k = 0; k < json_array_size(checks); k++) {
			const json_t *c = json_array_get(checks, k);
			const char *v = verdict_of(c);
			enum agsbx_check_verdict ev = agsbx_check_verdict_of(c);
			bool fail = ev == AGSBX_CHECK_FAIL;
			sbuf_printf(b, "%s %zu - ", fail ? "not ok" : "ok", ++num);
			ev_putf(b, ESC_TAP, "%.64s %.128s", ev_jstr(p, "id"), ev_jstr(c, "id"));
			if (!fail && ev != AGSBX_CHECK_PASS) /* skip, not_claimed, blocked */
				ev_putf(b, ESC_TAP, " # SKIP %.32s: %.200s", v, ev_jstr(c, "reason"));
			sbuf_putc(b, '\n');
			if (fail) {
				sbuf_puts(b, "  ---\n");
				yaml_line(b, "provider", ev_jstr(p, "id"));
				yaml_line(b, "check", ev_jstr(c, "id"));
				yaml_line(b, "axis", ev_jstr(c, "axis"));
				yaml_line(b, "verdict", v);
				yaml_line(b, "reason", ev_jstr(c, "reason"));
				sbuf_puts(b, "  ...\n");
			}
		}
	}
}

int agsbx_report_render(const json_t *bundle, const char *format, FILE *out)
{
	static const struct ev_format formats[] = {
		{ "text", render_text }, { "markdown", render_markdown }, { "junit", render_junit }, { "tap", render_tap },
		{ NULL, NULL },
	};
	return ev_render_as(bundle, format, formats, out);
}
