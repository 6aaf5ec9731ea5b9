/* Evidence renderers and context capture: report (text, markdown, JUnit,
 * TAP), diff, matrix, embedded schemas, attachments (argv splitting,
 * summaries, bounded tails) and the git subject. */
#include "evidence/evidence.h"

#include "base/cleanup.h"
#include "base/strv.h"
#include "base/runner.h"
#include "base/util.h"
#include "tests/lib/testlib.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *tmp;

static void setup(void)
{
	tmp = agsbx_test_tmpdir("agsbx-evrender-test");
	ck_assert_ptr_nonnull(tmp);
}

static void teardown(void)
{
	agsbx_test_rmtree(tmp);
	free(tmp);
	tmp = NULL;
}

static json_t *load_src(const char *rel)
{
	_cleanup_free_ char *p = agsbx_test_source_path(rel);
	struct agsbx_error err = { 0 };
	json_t *b = NULL;
	ck_assert_msg(agsbx_bundle_load(p, &b, &err) == 0, "%s", err.message);
	return b;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = NULL;
	ck_assert_int_ge(vasprintf(&cmd, fmt, ap), 0);
	va_end(ap);
	int st = system(cmd);
	free(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Renders into memory. */
static char *render(int (*fn)(const json_t *, const char *, FILE *), const json_t *j, const char *format, int *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	*r = fn(j, format, f);
	fclose(f);
	return buf;
}

static char *report(const json_t *b, const char *format)
{
	int r;
	char *out = render(agsbx_report_render, b, format, &r);
	ck_assert_msg(r == 0, "report %s: %d", format, r);
	return out;
}

static bool has_raw_control(const char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\n') || *s == 0x7f)
			return true;
	return false;
}

/* Raw bytes no target may carry: ESC and other C0 (but newline and, where
 * allowed, TAB), DEL, C1 (U+0080-U+009F), bidi controls (U+202A-U+202E,
 * U+2066-U+2069, U+200E/F, U+061C). */
static const char *raw_hostile(const char *s, bool tab_ok)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; u[i]; i++) {
		if ((u[i] < 0x20 && u[i] != '\n' && !(tab_ok && u[i] == '\t')) || u[i] == 0x7f)
			return s + i;
		if (u[i] == 0xC2 && u[i + 1] >= 0x80 && u[i + 1] <= 0x9F)
			return s + i;
		if (u[i] == 0xE2 && u[i + 1] == 0x80 && ((u[i + 2] >= 0xAA && u[i + 2] <= 0xAE) || u[i + 2] == 0x8E || u[i + 2] == 0x8F))
			return s + i;
		if (u[i] == 0xE2 && u[i + 1] == 0x81 && u[i + 2] >= 0xA6 && u[i + 2] <= 0xA9)
			return s + i;
		if (u[i] == 0xD8 && u[i + 1] == 0x9C)
			return s + i;
	}
	return NULL;
}

#define HOSTILE "@octocat see https://evil.example, HTTP://x.example and www.evil.example \u202e\u2066rev\u2069 " \
		"\x1b[2J\x1b]0;pwned\x07 \xc2\x9b" "31m \u200f<done>"

static json_t *diff(const json_t *a, const json_t *b);

/* Hostile text in every field a renderer shows stays
 * inert in every target: terminal text, markdown (GitHub: no mention, no
 * link), JUnit XML, TAP, diff and matrix. */
START_TEST(test_hostile_text_all_targets)
{
	_cleanup_json_ json_t *b = load_src("tests/data/bundles/full.json");
	json_t *bw = json_array_get(json_object_get(b, "providers"), 1);
	json_object_set_new(json_array_get(json_object_get(bw, "checks"), 1), "reason", json_string(HOSTILE));
	json_object_set_new(bw, "reason", json_string(HOSTILE));
	json_object_set_new(json_object_get(json_object_get(json_object_get(b, "host"), "os"), "pretty_name"), "value",
			    json_string(HOSTILE));
	static const char *const formats[] = { "text", "markdown", "junit", "tap" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(formats); i++) {
		_cleanup_free_ char *out = report(b, formats[i]);
		const char *bad = raw_hostile(out, strcmp(formats[i], "text") == 0);
		ck_assert_msg(!bad, "%s: raw control at: %.40s", formats[i], bad);
		ck_assert_msg(strstr(out, "202e"), "%s: the bidi override is not shown", formats[i]);
	}
	_cleanup_free_ char *t = report(b, "text");
	ck_assert_ptr_nonnull(strstr(t, "\\u202e\\u2066rev\\u2069 \\x1b[2J\\x1b]0;pwned\\x07 \\x9b31m \\u200f"));
	/* markdown: the mention and the links are broken by a ZWSP, bidi shown */
	_cleanup_free_ char *m = report(b, "markdown");
	ck_assert_ptr_null(strstr(m, "@octocat"));
	ck_assert_ptr_nonnull(strstr(m, "@\xE2\x80\x8Boctocat"));
	ck_assert_ptr_null(strstr(m, "https://"));
	ck_assert_ptr_null(strstr(m, "HTTP://"));
	ck_assert_ptr_null(strstr(m, "www.evil"));
	ck_assert_ptr_nonnull(strstr(m, "www\xE2\x80\x8B.evil"));
	ck_assert_ptr_nonnull(strstr(m, "\\u202e"));
	/* the terminal escaper itself */
	_cleanup_free_ char *e = agsbx_text_oneline(HOSTILE "\xff", 0);
	ck_assert(!raw_hostile(e, false));
	ck_assert_ptr_nonnull(strstr(e, "\\xff")); /* invalid UTF-8 shown as its byte */
	/* diff and matrix carry the same text */
	_cleanup_json_ json_t *a = load_src("tests/data/bundles/full.json");
	_cleanup_json_ json_t *d = diff(a, b);
	static const char *const dformats[] = { "text", "markdown" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(dformats); i++) {
		int r;
		_cleanup_free_ char *out = render(agsbx_diff_render, d, dformats[i], &r);
		ck_assert_int_eq(r, 0);
		ck_assert_msg(!raw_hostile(out, dformats[i][0] == 't'), "diff %s: %s", dformats[i], raw_hostile(out, false));
		if (dformats[i][0] == 'm') {
			ck_assert_ptr_null(strstr(out, "@octocat"));
			ck_assert_ptr_null(strstr(out, "https://"));
		}
	}
	/* a blocked provider's reason: in the matrix's list under the table */
	json_object_set_new(json_array_get(json_object_get(b, "providers"), 2), "reason", json_string(HOSTILE));
	const json_t *bundles[] = { b };
	const char *names[] = { "@octocat-https://evil.example-\xe2\x80\xae.json" };
	_cleanup_json_ json_t *mx = agsbx_matrix_build(bundles, names, 1);
	int r;
	_cleanup_free_ char *mm = render(agsbx_matrix_render, mx, "markdown", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_msg(!raw_hostile(mm, false), "matrix: %s", raw_hostile(mm, false));
	ck_assert_ptr_null(strstr(mm, "@octocat"));
	ck_assert_ptr_null(strstr(mm, "https://"));
	ck_assert_ptr_null(strstr(mm, "<done>"));
	ck_assert_ptr_nonnull(strstr(mm, "gvisor blocked: @\xE2\x80\x8Boctocat"));
}
END_TEST

/* ---- report ---------------------------------------------------------------- */

START_TEST(test_report_text)
{
	_cleanup_json_ json_t *b = load_src("tests/data/bundles/signed.json");
	_cleanup_free_ char *t = report(b, "text");
	ck_assert_ptr_nonnull(strstr(t, "Linux 6.18.0-ci x86_64, Debian GNU/Linux 12 (bookworm)"));
	ck_assert_ptr_nonnull(strstr(t, "good signature by SHA256:"));
	ck_assert_ptr_nonnull(strstr(t, "bubblewrap/proc.pid_hidden: host pid 1 visible"));
	ck_assert_ptr_nonnull(strstr(t, "4 providers: 1 conformant, 1 defective, 1 blocked, 1 skipped"));
	ck_assert_ptr_nonnull(strstr(t, "pytest: 3 passed, 1 failed, 2 skipped"));
	ck_assert(!has_raw_control(t));
	/* a terminal escape from a sandbox is shown, not executed */
	_cleanup_json_ json_t *e = json_deep_copy(b);
	json_t *c = json_array_get(json_object_get(json_array_get(json_object_get(e, "providers"), 1), "checks"), 1);
	json_object_set_new(c, "reason", json_string("\x1b]0;pwned\x07\x1b[2J"));
	_cleanup_free_ char *t2 = report(e, "text");
	ck_assert(!has_raw_control(t2));
	ck_assert_ptr_nonnull(strstr(t2, "\\x1b]0;pwned\\x07"));
	ck_assert_ptr_nonnull(strstr(t2, "INVALID")); /* the edit broke the signature */
	/* nor can a newline in a field forge the lines after it */
	json_object_set_new(c, "reason", json_string("r\nsignature:  good signature by SHA256:forged"));
	json_object_set_new(e, "created_at", json_string("2026\nsignature:  good"));
	_cleanup_free_ char *t4 = report(e, "text");
	ck_assert_ptr_null(strstr(t4, "\nsignature:  good"));
	ck_assert_ptr_nonnull(strstr(t4, "r\\nsignature:  good signature by SHA256:forged"));
	ck_assert_ptr_nonnull(strstr(t4, "created 2026\\nsignature:  good by"));
	/* unsigned bundles say so */
	_cleanup_json_ json_t *u = load_src("tests/data/bundles/full.json");
	_cleanup_free_ char *t3 = report(u, "text");
	ck_assert_ptr_nonnull(strstr(t3, "signature:  unsigned"));
}
END_TEST

START_TEST(test_report_markdown)
{
	_cleanup_json_ json_t *b = load_src("tests/data/bundles/signed.json");
	_cleanup_free_ char *m = report(b, "markdown");
	ck_assert_ptr_nonnull(strstr(m, "| Provider | Verdict | Reason | Checks pass / fail / observed unclaimed / skip |"));
	ck_assert_ptr_nonnull(strstr(m, "| `bubblewrap` | \xE2\x9D\x8C defective | ready | 1 / 1 / 0 / 1 |"));
	ck_assert_ptr_nonnull(strstr(m, "| `landlock` | \xE2\x9C\x85 conformant | ready | 2 / 0 / 1 / 0 |"));
	ck_assert_ptr_nonnull(strstr(m, "#### Failing checks"));
	ck_assert_ptr_nonnull(strstr(m, "| `bubblewrap` | `proc.pid_hidden` | `process_contained` |"));
	ck_assert_ptr_nonnull(strstr(m, "&lt;&amp;&gt;")); /* markup in a reason is text */
	ck_assert_ptr_nonnull(strstr(m, "**Signature:**"));
	ck_assert_ptr_nonnull(strstr(m, "**Host:** Linux 6.18.0-ci"));
	/* a reason cannot break out of its table row or cell */
	_cleanup_json_ json_t *e = json_deep_copy(b);
	json_t *c = json_array_get(json_object_get(json_array_get(json_object_get(e, "providers"), 1), "checks"), 1);
	json_object_set_new(c, "reason", json_string("a | b\n| injected | row |\n<img src=x>"));
	json_object_set_new(c, "id", json_string("id`with|pipe"));
	_cleanup_free_ char *m2 = report(e, "markdown");
	ck_assert_ptr_null(strstr(m2, "\n| injected"));
	ck_assert_ptr_null(strstr(m2, "<img"));
	ck_assert_ptr_nonnull(strstr(m2, "a \\| b"));
	ck_assert_ptr_nonnull(strstr(m2, "`id'with\\|pipe`"));
}
END_TEST

START_TEST(test_report_junit)
{
	_cleanup_json_ json_t *b = load_src("tests/data/bundles/signed.json");
	/* hostile strings everywhere XML cares */
	json_t *c = json_array_get(json_object_get(json_array_get(json_object_get(b, "providers"), 1), "checks"), 1);
	json_object_set_new(c, "reason", json_string("]]> <x a=\"'\"> & \x01\x1b \xef\xbf\xbe end"));
	_cleanup_free_ char *x = report(b, "junit");
	ck_assert_int_eq(strncmp(x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", 50), 0);
	/* junit-10.xsd allows no skipped on <testsuites> */
	ck_assert_ptr_nonnull(strstr(x, "<testsuites name=\"agsbx-evidence\" tests=\"8\" failures=\"1\" errors=\"0\">\n"));
	/* every suite says where and when: hostname, timestamp (UTC, Ant form) */
	size_t suites = 0;
	for (const char *t = x; (t = strstr(t, "<testsuite ")); t++, suites++) {
		const char *end = strchr(t, '>');
		ck_assert_ptr_nonnull(end);
		_cleanup_free_ char *open_tag = strndup(t, (size_t)(end - t));
		ck_assert_msg(strstr(open_tag, " hostname=\"Linux 6.18.0-ci x86_64, Debian GNU/Linux 12 (bookworm)\""), "%s",
			      open_tag);
		ck_assert_msg(strstr(open_tag, " timestamp=\"2026-11-30T02:40:00\""), "%s", open_tag);
	}
	ck_assert_uint_eq(suites, 4);
	ck_assert_ptr_nonnull(strstr(x, "<testsuite name=\"bubblewrap\" tests=\"3\" failures=\"1\" skipped=\"1\""));
	ck_assert_ptr_nonnull(strstr(x, "<failure type=\"fail\" message=\"]]&gt; &lt;x a=&quot;&apos;&quot;&gt; &amp;"));
	ck_assert_ptr_nonnull(strstr(x, "<skipped message=\"not_claimed: host pid visible"));
	ck_assert_ptr_nonnull(strstr(x, "<skipped message=\"blocked: docker_unreachable\"/>"));
	ck_assert(!has_raw_control(x));
	ck_assert_ptr_null(strstr(x, "\xef\xbf\xbe")); /* U+FFFE is not an XML character */
	_cleanup_free_ char *path = agsbx_path_join(tmp, "junit.xml");
	ck_assert_int_eq(agsbx_write_file_atomic(path, x, strlen(x), 0644), 0);
	/* xmllint is a test dependency: missing on the CI host, it is a failure.
	 * Valid against Jenkins' junit-10.xsd (a copy in tests/data/junit). */
	_cleanup_free_ char *xsd = agsbx_test_source_path("tests/data/junit/junit-10.xsd");
	if (sh("command -v xmllint >/dev/null") == 0)
		ck_assert_int_eq(sh("xmllint --noout --schema '%s' '%s'", xsd, path), 0);
	else
		ck_assert_msg(!agsbx_test_require_mechanisms(), "xmllint missing (libxml2-utils)");
	/* a bundle that recorded no host and no time: still valid, and says so */
	_cleanup_json_ json_t *bare = json_pack("{s:s, s:[{s:s, s:s, s:s, s:[]}]}", "schema", "agsbx-evidence/v1",
						"providers", "id", "landlock", "verdict", "skipped", "reason", "r", "checks");
	_cleanup_free_ char *bx = report(bare, "junit");
	ck_assert_ptr_nonnull(strstr(bx, " hostname=\"unknown\" time="));
	_cleanup_free_ char *bpath = agsbx_path_join(tmp, "bare.xml");
	ck_assert_int_eq(agsbx_write_file_atomic(bpath, bx, strlen(bx), 0644), 0);
	if (sh("command -v xmllint >/dev/null") == 0)
		ck_assert_int_eq(sh("xmllint --noout --schema '%s' '%s'", xsd, bpath), 0);
	ck_assert_int_eq(sh("/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; "
			    "r = E.parse(sys.argv[1]).getroot(); "
			    "assert r.tag == \"testsuites\" and len(r.findall(\"testsuite\")) == 4; "
			    "assert len(r.findall(\".//failure\")) == 1 and len(r.findall(\".//skipped\")) == 4' '%s'",
			    path),
			 0);
}
END_TEST

START_TEST(test_report_tap)
{
	_cleanup_json_ json_t *b = load_src("tests/data/bundles/signed.json");
	json_t *c = json_array_get(json_object_get(json_array_get(json_object_get(b, "providers"), 1), "checks"), 1);
	json_object_set_new(c, "reason", json_string("multi\nline # not a directive \"q\" \\ \x7f \xe2\x80\xa8 end"));
	_cleanup_free_ char *t = report(b, "tap");
	ck_assert_int_eq(strncmp(t, "TAP version 13\n1..8\n", 20), 0);
	ck_assert_ptr_nonnull(strstr(t, "\nok 1 - landlock fs.host_read_denied\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nnot ok 5 - bubblewrap proc.pid_hidden\n  ---\n"));
	ck_assert_ptr_nonnull(strstr(t, "ok 3 - landlock proc.pid_hidden # SKIP not_claimed: "));
	ck_assert_ptr_nonnull(strstr(t, "ok 7 - gvisor # SKIP blocked: docker_unreachable\n"));
	ck_assert_ptr_nonnull(
		strstr(t, "  reason: \"multi\\nline # not a directive \\\"q\\\" \\\\ \\x7f \\u2028 end\"\n  ...\n"));
	ck_assert(!has_raw_control(t));
	/* every test line is numbered in order, no line escapes the plan */
	int n = 0;
	for (char *l = t; (l = strstr(l, "ok ")); l += 3)
		if (l == t || l[-1] == '\n' || (l >= t + 4 && strncmp(l - 4, "not ", 4) == 0))
			n++;
	ck_assert_int_eq(n, 8);
	/* the YAML block parses (PyYAML when present) */
	_cleanup_free_ char *path = agsbx_path_join(tmp, "out.tap");
	ck_assert_int_eq(agsbx_write_file_atomic(path, t, strlen(t), 0644), 0);
	ck_assert_msg(sh("/usr/bin/python3 -c 'import yaml' 2>/dev/null") == 0 || !agsbx_test_require_mechanisms(),
		      "PyYAML missing (python3-yaml)");
	if (sh("/usr/bin/python3 -c 'import yaml' 2>/dev/null") == 0)
		ck_assert_int_eq(sh("/usr/bin/python3 -c 'import sys, yaml; t = open(sys.argv[1]).read(); "
				    "y = t.split(\"  ---\\n\")[1].split(\"  ...\")[0]; "
				    "d = yaml.safe_load(y); assert d[\"check\"] == \"proc.pid_hidden\", d; "
				    "assert d[\"reason\"].startswith(\"multi\\nline # not\"), d' '%s'",
				    path),
				 0);
}
END_TEST

/* The axis view: per provider and axis, claimed and evidenced, claimed
 * and refuted, claimed and inconclusive, observed but unclaimed, or not
 * observed; in every report format and apart from the check counts. */
START_TEST(test_report_axis_view)
{
	_cleanup_json_ json_t *b = load_src("tests/data/bundles/signed.json");
	json_t *ll = json_array_get(json_object_get(b, "providers"), 0);
	json_object_set_new(json_object_get(ll, "observed"), "process_contained", json_true());
	json_t *bw = json_array_get(json_object_get(b, "providers"), 1);
	ck_assert_int_eq(agsbx_axis_view_of(ll, "process_contained"), AGSBX_AXIS_VIEW_UNCLAIMED);
	ck_assert_int_eq(agsbx_axis_view_of(ll, "syscalls_restricted"), AGSBX_AXIS_VIEW_NOT_OBSERVED);
	ck_assert_int_eq(agsbx_axis_view_of(ll, "network"), AGSBX_AXIS_VIEW_EVIDENCED);
	ck_assert_int_eq(agsbx_axis_view_of(bw, "process_contained"), AGSBX_AXIS_VIEW_REFUTED);
	ck_assert_int_eq(agsbx_axis_view_of(json_array_get(json_object_get(b, "providers"), 2), "network"),
			 AGSBX_AXIS_VIEW_NOT_OBSERVED);
	/* a claim the truthful judge found inconclusive is not refuted */
	json_t *truthful = json_pack("{s:s, s:s, s:{s:[s]}}", "id", "capabilities.truthful", "verdict", "pass", "facts",
				     "inconclusive", "process_contained");
	json_array_append_new(json_object_get(bw, "checks"), truthful);
	ck_assert_int_eq(agsbx_axis_view_of(bw, "process_contained"), AGSBX_AXIS_VIEW_INCONCLUSIVE);
	/* lower network than claimed: refuted */
	json_object_set_new(json_object_get(bw, "observed"), "network", json_string("tcp_restricted"));
	ck_assert_int_eq(agsbx_axis_view_of(bw, "network"), AGSBX_AXIS_VIEW_REFUTED);
	_cleanup_free_ char *t = report(b, "text");
	ck_assert_ptr_nonnull(strstr(t, "PROVIDER       VERDICT      PASS  FAIL OBSERVED  SKIP  REASON\n"));
	ck_assert_ptr_nonnull(strstr(t, "landlock       conformant      2     0        1     0  ready\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nlandlock       observed      evidenced     evidenced     -             evidenced"
					 "     evidenced: tcp_restricted\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nbubblewrap     inconclusive  evidenced"));
	_cleanup_free_ char *m = report(b, "markdown");
	ck_assert_ptr_nonnull(strstr(m, "| `landlock` | observed | evidenced | evidenced | - | evidenced | evidenced: tcp\\_restricted |"));
	_cleanup_free_ char *x = report(b, "junit");
	ck_assert_ptr_nonnull(strstr(x, "<property name=\"axis.process_contained\" value=\"observed, unclaimed\"/>"));
	ck_assert_ptr_nonnull(strstr(x, "<property name=\"axis.network\" value=\"claimed, REFUTED\"/>"));
	_cleanup_free_ char *tap = report(b, "tap");
	ck_assert_ptr_nonnull(strstr(tap, "\n# axis bubblewrap process_contained: claimed, inconclusive\n"));
	ck_assert_ptr_nonnull(strstr(tap, "\n# axis gvisor network: not observed\n"));
}
END_TEST

START_TEST(test_report_unknown_format)
{
	_cleanup_json_ json_t *b = load_src("tests/data/bundles/minimal.json");
	int r;
	_cleanup_free_ char *out = render(agsbx_report_render, b, "html", &r);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_uint_eq(strlen(out), 0);
	/* minimal bundles (no providers, no subject) render in every format */
	static const char *const formats[] = { "text", "markdown", "junit", "tap" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(formats); i++) {
		_cleanup_free_ char *o = report(b, formats[i]);
		ck_assert_uint_gt(strlen(o), 10);
	}
}
END_TEST

/* ---- diff --------------------------------------------------------------------- */

static json_t *diff(const json_t *a, const json_t *b)
{
	json_t *d = agsbx_bundle_diff(a, b);
	ck_assert_ptr_nonnull(d);
	return d;
}

START_TEST(test_diff_self_is_empty)
{
	static const char *const files[] = { "tests/data/bundles/full.json", "tests/data/bundles/signed.json",
					     "tests/data/bundles/minimal.json" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(files); i++) {
		_cleanup_json_ json_t *b = load_src(files[i]);
		_cleanup_json_ json_t *d = diff(b, b);
		ck_assert_int_eq(json_integer_value(json_object_get(d, "changes")), 0);
		ck_assert_int_eq(json_integer_value(json_object_get(d, "regressions")), 0);
		int r;
		_cleanup_free_ char *t = render(agsbx_diff_render, d, "text", &r);
		ck_assert_str_eq(t, "no differences\n");
	}
	/* signing changes nothing the diff looks at */
	_cleanup_json_ json_t *a = load_src("tests/data/bundles/full.json");
	_cleanup_json_ json_t *s = load_src("tests/data/bundles/signed.json");
	_cleanup_json_ json_t *d = diff(a, s);
	ck_assert_int_eq(json_integer_value(json_object_get(d, "changes")), 0);
}
END_TEST

START_TEST(test_diff_changes_and_regressions)
{
	_cleanup_json_ json_t *a = load_src("tests/data/bundles/full.json");
	_cleanup_json_ json_t *b = json_deep_copy(a);
	json_t *providers = json_object_get(b, "providers");
	json_t *landlock = json_array_get(providers, 0), *bwrap = json_array_get(providers, 1);
	json_t *gvisor = json_array_get(providers, 2);
	/* an improvement first in bundle order, regressions later */
	json_object_set_new(gvisor, "verdict", json_string("conformant"));
	json_object_set_new(json_array_get(json_object_get(bwrap, "checks"), 1), "verdict", json_string("pass"));
	json_object_set_new(json_array_get(json_object_get(landlock, "checks"), 0), "verdict", json_string("fail"));
	json_object_set_new(json_array_get(json_object_get(landlock, "checks"), 1), "verdict", json_string("blocked"));
	json_object_set_new(landlock, "verdict", json_string("defective"));
	json_object_set_new(json_object_get(landlock, "claims"), "network", json_string("inherited"));
	json_object_set_new(json_object_get(json_object_get(bwrap, "probe"), "facts"), "version", json_string("0.9.0"));
	json_object_set_new(json_object_get(json_object_get(bwrap, "probe"), "facts"), "setuid", json_true());
	json_object_set_new(json_object_get(json_object_get(json_object_get(b, "host"), "kernel"), "release"),
			    "value", json_string("6.19.0"));
	json_object_set_new(json_object_get(json_object_get(b, "host"), "docker"), "version",
			    json_pack("{s:s, s:s}", "value", "24.0.7", "source", "GET /version"));
	json_array_remove(providers, 3); /* seatbelt gone */
	json_object_set_new(json_object_get(b, "tool"), "version", json_string("0.2.0"));

	_cleanup_json_ json_t *d = diff(a, b);
	ck_assert_int_eq(json_integer_value(json_object_get(d, "regressions")), 3);
	const json_t *checks = json_object_get(d, "checks");
	ck_assert_int_eq(json_array_size(checks), 3);
	/* regressions first, in bundle order; then the rest */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(checks, 0), "id")), "fs.host_read_denied");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(checks, 1), "id")), "net.connect_denied");
	/* pass -> blocked: the host changed, not the provider */
	ck_assert(json_is_false(json_object_get(json_array_get(checks, 1), "regression")));
	ck_assert(json_is_true(json_object_get(json_array_get(checks, 1), "host_change")));
	ck_assert_int_eq(json_integer_value(json_object_get(d, "host_changes")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(checks, 2), "provider")), "bubblewrap");
	ck_assert(json_is_false(json_object_get(json_array_get(checks, 2), "regression")));
	const json_t *prov = json_object_get(d, "providers");
	ck_assert_int_eq(json_array_size(prov), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(prov, 0), "id")), "landlock");
	ck_assert(json_is_true(json_object_get(json_array_get(prov, 0), "regression")));
	/* a provider that is gone lost its evidence: a regression */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(prov, 1), "id")), "seatbelt");
	ck_assert(json_is_null(json_object_get(json_array_get(prov, 1), "new")));
	ck_assert(json_is_true(json_object_get(json_array_get(prov, 1), "regression")));
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(prov, 2), "id")), "gvisor");
	ck_assert_int_eq(json_array_size(json_object_get(d, "host")), 2);
	ck_assert_int_eq(json_array_size(json_object_get(d, "claims")), 1);
	/* versions: bwrap's version (not setuid) and the tool version */
	const json_t *v = json_object_get(d, "versions");
	ck_assert_int_eq(json_array_size(v), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 0), "fact")), "version");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 1), "fact")), "tool.version");

	int r;
	_cleanup_free_ char *t = render(agsbx_diff_render, d, "text", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(strstr(t, "REGRESSION landlock/fs.host_read_denied: pass -> fail"));
	/* host facts: one line per family */
	ck_assert_ptr_nonnull(strstr(t, "\n  kernel: release 6.18.0-ci -> 6.19.0\n"));
	ck_assert_ptr_nonnull(strstr(t, "\n  docker: version (none) -> 24.0.7\n"));
	_cleanup_free_ char *m = render(agsbx_diff_render, d, "markdown", &r);
	ck_assert_ptr_nonnull(strstr(m, "#### \xE2\x9D\x8C Regressions and lost evidence\n\n| What | Old | New |\n|---|---|---|\n"
					"| provider `landlock` | conformant | defective |\n"
					"| provider `seatbelt` | skipped | *not in this bundle* |\n"
					"| `landlock/fs.host_read_denied` | pass | fail |\n"));
	ck_assert_ptr_nonnull(strstr(m, "| `kernel` | `release`: 6.18.0-ci \xE2\x86\x92 6.19.0 |\n"));
	_cleanup_free_ char *j = render(agsbx_diff_render, d, "json", &r);
	json_error_t je;
	_cleanup_json_ json_t *back = json_loads(j, JSON_REJECT_DUPLICATES, &je);
	ck_assert(json_equal(back, d));
	_cleanup_free_ char *bad = render(agsbx_diff_render, d, "yaml", &r);
	ck_assert_int_eq(r, -EINVAL);

	ck_assert_ptr_nonnull(strstr(t, "HOST-CHANGE landlock: check net.connect_denied: pass -> blocked\n"));
	ck_assert_ptr_nonnull(strstr(t, "3 regressions, 1 host change\n"));
	ck_assert_ptr_nonnull(strstr(m, "| `landlock` | unchanged | check `net.connect_denied`: pass \xE2\x86\x92 blocked |"));
	/* the rest after both: an improvement, a claim that changed value */
	ck_assert_ptr_nonnull(strstr(m, "#### Other changes\n\n| What | Old | New |\n|---|---|---|\n| provider `gvisor` | blocked | conformant |\n"));
	ck_assert(strstr(m, "Regressions") < strstr(m, "#### Host changes"));
	ck_assert(strstr(m, "#### Host changes") < strstr(m, "#### Other changes"));

	/* the other direction: bubblewrap/proc.pid_hidden pass -> fail regresses,
	 * gvisor conformant -> blocked is a host change */
	_cleanup_json_ json_t *rev = diff(b, a);
	ck_assert_int_eq(json_integer_value(json_object_get(rev, "regressions")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(rev, "host_changes")), 1);
}
END_TEST

/* Losing evidence is a regression, whatever verdict it hides behind. */
START_TEST(test_diff_lost_evidence)
{
	struct {
		const char *what, *path, *value; /* value NULL: remove the member at path */
		int regressions, host_changes;
	} cases[] = {
		{ "pass -> skip", "providers/0/checks/0/verdict", "skip", 1, 0 },
		{ "pass -> not_claimed", "providers/0/checks/1/verdict", "not_claimed", 1, 0 },
		{ "pass -> blocked", "providers/0/checks/1/verdict", "blocked", 0, 1 },
		{ "check gone", "providers/0/checks/1", NULL, 1, 0 },
		{ "skip -> pass", "providers/1/checks/2/verdict", "pass", 0, 0 },
		{ "not_claimed -> skip", "providers/0/checks/2/verdict", "skip", 0, 0 },
		{ "conformant -> skipped", "providers/0/verdict", "skipped", 1, 0 },
		{ "conformant -> blocked", "providers/0/verdict", "blocked", 0, 1 },
		{ "blocked -> skipped", "providers/2/verdict", "skipped", 0, 0 },
		{ "provider gone (its checks are not counted again)", "providers/0", NULL, 1, 0 },
		{ "claim true -> false", "providers/0/claims/host_filesystem_restricted", "false", 1, 0 },
		{ "claim true -> gone", "providers/0/claims/environment_scrubbed", NULL, 1, 0 },
		{ "claim false -> true", "providers/0/claims/process_contained", "true", 0, 0 },
	};
	_cleanup_json_ json_t *a = load_src("tests/data/bundles/full.json");
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(cases); i++) {
		_cleanup_json_ json_t *b = json_deep_copy(a);
		/* walk to the parent of the last path component */
		char path[128];
		snprintf(path, sizeof path, "%s", cases[i].path);
		char *last = strrchr(path, '/');
		*last++ = '\0';
		json_t *parent = b;
		for (char *save = NULL, *tok = strtok_r(path, "/", &save); tok; tok = strtok_r(NULL, "/", &save))
			parent = json_is_array(parent) ? json_array_get(parent, strtoul(tok, NULL, 10))
						       : json_object_get(parent, tok);
		ck_assert_ptr_nonnull(parent);
		json_t *v = !cases[i].value ? NULL
			    : !strcmp(cases[i].value, "true") ? json_true()
			    : !strcmp(cases[i].value, "false") ? json_false()
							       : json_string(cases[i].value);
		if (json_is_array(parent))
			ck_assert_int_eq(json_array_remove(parent, strtoul(last, NULL, 10)), 0);
		else if (v)
			json_object_set_new(parent, last, v);
		else
			ck_assert_int_eq(json_object_del(parent, last), 0);
		_cleanup_json_ json_t *d = diff(a, b);
		ck_assert_msg(json_integer_value(json_object_get(d, "regressions")) == cases[i].regressions,
			      "%s: %lld regressions", cases[i].what,
			      (long long)json_integer_value(json_object_get(d, "regressions")));
		ck_assert_msg(json_integer_value(json_object_get(d, "host_changes")) == cases[i].host_changes,
			      "%s: %lld host changes", cases[i].what,
			      (long long)json_integer_value(json_object_get(d, "host_changes")));
	}
	/* A provider the host now blocks claims nothing: losing its claims is
	 * part of that host change, not a regression. */
	_cleanup_json_ json_t *blk = json_deep_copy(a);
	json_t *p0 = json_array_get(json_object_get(blk, "providers"), 0);
	json_object_set_new(p0, "verdict", json_string("blocked"));
	json_object_set_new(json_object_get(p0, "claims"), "host_filesystem_restricted", json_false());
	_cleanup_json_ json_t *bd = diff(a, blk);
	ck_assert_int_eq(json_integer_value(json_object_get(bd, "regressions")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(bd, "host_changes")), 2);
}
END_TEST

START_TEST(test_diff_mechanism_versions)
{
	static const char tmpl[] =
		"{\"schema\": \"agsbx-evidence/v1\", \"providers\": [{\"id\": \"landlock\", \"verdict\": \"conformant\","
		" \"probe\": {\"facts\": {\"system_abi\": %d, \"rules_applied\": %d}},"
		" \"checks\": [{\"id\": \"a\", \"verdict\": \"pass\", \"observations\": [{\"role\": \"control\"},"
		" {\"role\": \"sandbox\", \"meta\": {\"versions\": {\"bwrap\": \"%s\"}}}]}]}]}";
	char a[1024], b[1024];
	snprintf(a, sizeof a, tmpl, 6, 10, "0.8.0");
	snprintf(b, sizeof b, tmpl, 7, 12, "0.9.0");
	json_t *ja, *jb;
	struct agsbx_error err = { 0 };
	ck_assert_int_eq(agsbx_bundle_parse(a, strlen(a), &ja, &err), 0);
	ck_assert_int_eq(agsbx_bundle_parse(b, strlen(b), &jb, &err), 0);
	_cleanup_json_ json_t *d = diff(ja, jb);
	const json_t *v = json_object_get(d, "versions");
	/* system_abi and the executed bwrap version; rules_applied is not a version */
	ck_assert_int_eq(json_array_size(v), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 0), "fact")), "system_abi");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 1), "fact")), "versions.bwrap");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 1), "new")), "0.9.0");
	ck_assert_int_eq(json_integer_value(json_object_get(d, "regressions")), 0);
	json_decref(ja);
	json_decref(jb);
}
END_TEST

START_TEST(test_diff_tolerates_missing_members)
{
	_cleanup_json_ json_t *a = load_src("tests/data/bundles/full.json");
	_cleanup_json_ json_t *b = json_pack("{s:s}", "schema", "agsbx-evidence/v1");
	_cleanup_json_ json_t *d = diff(a, b);
	ck_assert_int_gt(json_integer_value(json_object_get(d, "changes")), 4);
	/* every provider is gone: each one is lost evidence */
	ck_assert_int_eq(json_integer_value(json_object_get(d, "regressions")), 4);
	_cleanup_json_ json_t *d2 = diff(b, a);
	/* a provider that appears defective counts as a regression */
	ck_assert_int_ge(json_integer_value(json_object_get(d2, "regressions")), 1);
}
END_TEST

/* ---- matrix ------------------------------------------------------------------- */

START_TEST(test_matrix)
{
	_cleanup_json_ json_t *a = load_src("tests/data/bundles/full.json");
	_cleanup_json_ json_t *m = load_src("tests/data/bundles/minimal.json");
	_cleanup_json_ json_t *old = json_pack("{s:s, s:[{s:s}]}", "schema", "agsbx-evidence/v1", "providers", "id",
					       "landlock");
	const json_t *bundles[] = { a, m, old };
	const char *names[] = { "a.json", "m.json", "old.json" };
	_cleanup_json_ json_t *mx = agsbx_matrix_build(bundles, names, 3);
	ck_assert_ptr_nonnull(mx);
	ck_assert_int_eq(json_array_size(json_object_get(mx, "providers")), 4);
	const json_t *rows = json_object_get(mx, "rows");
	ck_assert_int_eq(json_array_size(rows), 3);
	const json_t *r0 = json_array_get(rows, 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r0, "host"), "kernel")), "6.18.0-ci");
	const json_t *bw = json_object_get(json_object_get(r0, "providers"), "bubblewrap");
	ck_assert_str_eq(json_string_value(json_object_get(bw, "verdict")), "defective");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(bw, "failing_checks"), 0)), "proc.pid_hidden");
	const json_t *r2 = json_array_get(rows, 2);
	ck_assert_str_eq(json_string_value(json_object_get(r2, "created_at")), "?");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(r2, "providers"), "landlock"),
							   "verdict")),
			 "?");
	int r;
	_cleanup_free_ char *md = render(agsbx_matrix_render, mx, "markdown", &r);
	ck_assert_int_eq(r, 0);
	/* host and verdicts only; icons as report's; failing ids inline */
	ck_assert_ptr_nonnull(strstr(md, "\n| Host | landlock | bubblewrap | gvisor | seatbelt |\n|---|---|---|---|---|\n"
					 "| **1** 6.18.0-ci x86\\_64 \xC2\xB7 Debian GNU/Linux 12 (bookworm) | \xE2\x9C\x85 conformant | "
					 "\xE2\x9D\x8C defective: <code>proc.<wbr>pid\\_<wbr>hidden</code> | "
					 "\xE2\x9B\x94 blocked | \xE2\x9E\x96 skipped |\n"));
	/* minimal has no providers: spelled out, not "?" */
	ck_assert_ptr_nonnull(strstr(md, "| **2** 6.1.0-28-amd64 \xC2\xB7 Debian GNU/Linux 12 (bookworm) | *not in this bundle* | "
					 "*not in this bundle* | *not in this bundle* | *not in this bundle* |\n"));
	/* members another tool version left out are named, not "?" */
	ck_assert_ptr_nonnull(strstr(md, "| **3** *host not recorded* | \xE2\x9D\x94 *no verdict recorded* | *not in this bundle* |"));
	ck_assert_ptr_null(strstr(md, "| ? |"));
	/* file, created, tool and blocked reasons: the numbered list under the table */
	ck_assert_ptr_nonnull(strstr(md, "\n<details><summary>"));
	ck_assert_ptr_nonnull(strstr(md, "\n1. a.json \xC2\xB7 created 2026-11-30T02:40:00Z \xC2\xB7 tool 0.1.0; "
					 "gvisor blocked: docker\\_unreachable\n"));
	ck_assert_ptr_nonnull(strstr(md, "\n3. old.json \xC2\xB7 created not recorded \xC2\xB7 tool not recorded\n"));
	_cleanup_free_ char *js = render(agsbx_matrix_render, mx, "json", &r);
	ck_assert_int_eq(r, 0);
	_cleanup_free_ char *bad = render(agsbx_matrix_render, mx, "text", &r);
	ck_assert_int_eq(r, -EINVAL);
}
END_TEST

/* The markdown matrix fits GitHub's comment column (760 px) by
 * construction: only host and verdict columns, and no run of text a
 * browser cannot break wider than a cell can be. Chromium is not a test
 * dependency: tests/tools/render-views.sh shows the real rendering (and
 * checks it at 728 px, inside the comment body's padding); this is its
 * structural guard. Per column the widest unbreakable run (spaces, <wbr>
 * and hyphens break; markup, escapes and italics are invisible) at 8.5 px
 * a character, plus 26 px of cell padding, summed over the columns. Against
 * Chromium's min-content width of the table below that errs high: 736 px
 * estimated, 709 px rendered (no column more than 1 px under). */
static size_t longest_run(const char *cell, size_t len)
{
	size_t best = 0, run = 0;
	for (size_t i = 0; i < len; i++) {
		if (strncmp(cell + i, "<wbr>", 5) == 0 || cell[i] == ' ') {
			run = 0;
			i += cell[i] == ' ' ? 0 : 4;
			continue;
		}
		if (strncmp(cell + i, "<code>", 6) == 0 || strncmp(cell + i, "</code>", 7) == 0) {
			i += cell[i + 1] == '/' ? 6 : 5;
			continue;
		}
		if (cell[i] == '\\' || cell[i] == '*' || ((unsigned char)cell[i] & 0xC0) == 0x80)
			continue;
		if (++run > best)
			best = run;
		/* a browser breaks after a hyphen, but not before a digit (UAX #14) */
		if (cell[i] == '-' && i + 1 < len && (cell[i + 1] < '0' || cell[i + 1] > '9'))
			run = 0;
	}
	return best;
}

/* Min-content estimate of the table starting at md (px) and its column count. */
static size_t table_min_px(const char *md, size_t *columns)
{
	size_t widest[32] = { 0 }, ncol = 0;
	for (const char *l = md; l && *l == '|'; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n') ? strchr(l, '\n') : l + strlen(l);
		if (l[1] == '-')
			continue; /* the delimiter row */
		size_t col = 0;
		for (const char *c = l + 1; c < end && col < 32; col++) {
			const char *bar = c;
			while (bar < end && (*bar != '|' || bar[-1] == '\\'))
				bar++;
			size_t run = longest_run(c, (size_t)(bar - c));
			widest[col] = run > widest[col] ? run : widest[col];
			c = bar + 1;
		}
		ncol = col;
	}
	size_t px = 0;
	for (size_t i = 0; i < ncol; i++)
		px += 26 + (17 * widest[i] + 1) / 2;
	*columns = ncol;
	return px;
}

/* Bundles as a maintainer's matrix has them: real providers' longest
 * check ids failing, long blocked reasons, six providers. */
static json_t *wide_bundle(const char *base, const char *failing, const char *reason)
{
	json_t *b = load_src(base);
	json_t *providers = json_object_get(b, "providers");
	json_t *bw = json_array_get(providers, 1), *gv = json_array_get(providers, 2);
	json_object_set_new(json_array_get(json_object_get(bw, "checks"), 1), "id", json_string(failing));
	json_object_set_new(gv, "reason", json_string(reason));
	static const char *const extra[] = { "trusted_local", "firejail_negative_control" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(extra); i++)
		json_array_append_new(providers, json_pack("{s:s, s:s, s:s, s:[]}", "id", extra[i], "verdict", "blocked",
							   "reason", "bwrap_user_namespace_blocked", "checks"));
	return b;
}

START_TEST(test_matrix_fits_comment_width)
{
	_cleanup_json_ json_t *a = wide_bundle("tests/data/bundles/full.json", "priv.capabilities_dropped",
					       "docker_daemon_unreachable");
	_cleanup_json_ json_t *s = wide_bundle("tests/data/bundles/signed.json", "bundle.integrity_enforced",
					       "runsc_platform_unavailable");
	_cleanup_json_ json_t *m = load_src("tests/data/bundles/minimal.json");
	const json_t *bundles[] = { a, s, m };
	const char *names[] = { "bundles/agsbx-evidence-runner-ubuntu-24.04-root-20261130T024000Z.json", "s.json",
				"m.json" };
	_cleanup_json_ json_t *mx = agsbx_matrix_build(bundles, names, 3);
	ck_assert_int_eq(agsbx_matrix_add_provenance(mx, bundles, 3, NULL), 0);
	int r;
	_cleanup_free_ char *md = render(agsbx_matrix_render, mx, "markdown", &r);
	ck_assert_int_eq(r, 0);
	const char *table = strncmp(md, "| Host |", 8) == 0 ? md : strstr(md, "\n| Host |");
	ck_assert_ptr_nonnull(table);
	table += *table == '\n';
	size_t cols;
	size_t px = table_min_px(table, &cols);
	fprintf(stderr, "matrix: %zu columns, %zu px estimated\n", cols, px);
	ck_assert_uint_eq(cols, 1 + json_array_size(json_object_get(mx, "providers")));
	ck_assert_msg(px <= 760, "the matrix needs at least %zu px:\n%s", px, md);
	/* provenance (fingerprints, paths) is under the table, not in it */
	ck_assert_ptr_null(strstr(table, "| Provenance"));
	ck_assert_ptr_nonnull(strstr(strstr(md, "</summary>"), "SHA256:"));
	/* GitHub's renderer (cmark-gfm) reads it as one table of 3 rows and 7
	 * columns, and a list of 3 under it */
	_cleanup_free_ char *path = agsbx_path_join(tmp, "matrix.md");
	ck_assert_int_eq(agsbx_write_file_atomic(path, md, strlen(md), 0644), 0);
	if (sh("command -v cmark-gfm >/dev/null") != 0) {
		ck_assert_msg(!agsbx_test_require_mechanisms(), "cmark-gfm missing");
		fprintf(stderr, "note: cmark-gfm not installed: the GFM rendering is not checked\n");
		return;
	}
	ck_assert_int_eq(sh("cmark-gfm --unsafe -e table '%s' >'%s.html'", path, path), 0);
	ck_assert_int_eq(sh("h='%s.html'; test $(grep -c '<th>' $h) = 7 && test $(grep -c '<tr>' $h) = 4 && "
			    "grep -q '^<th>Host</th>$' $h && test $(grep -c '^<li>' $h) = 3 && "
			    "grep -q '<td><strong>1</strong> 6.18.0-ci' $h && ! grep -q '^<p>|' $h",
			    path),
			 0);
}
END_TEST

/* With trust anchors the badge speaks for trusted bundles only: a forged
 * one (a verdict edited after signing) changes nothing, and is counted as
 * excluded. */
START_TEST(test_matrix_badge_trust)
{
	_cleanup_json_ json_t *s = load_src("tests/data/bundles/signed.json");
	_cleanup_json_ json_t *forged = json_deep_copy(s);
	json_t *p = json_array_get(json_object_get(forged, "providers"), 0);
	json_object_set_new(p, "verdict", json_string("defective"));
	const json_t *bundles[] = { s, forged };
	const char *names[] = { "s.json", "forged.json" };
	_cleanup_free_ char *pub = agsbx_test_source_path("tests/data/bundles/keys/fixture_ed25519.pub");
	struct agsbx_verify_opts trust = { .key_path = pub };
	_cleanup_json_ json_t *mx = agsbx_matrix_build(bundles, names, 2);
	ck_assert_int_eq(agsbx_matrix_add_provenance(mx, bundles, 2, &trust), 0);
	int r;
	_cleanup_free_ char *badge = render(agsbx_matrix_render, mx, "badge", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(badge, "{\"color\": \"red\", \"label\": \"sandbox evidence\", \"message\": \"1 conformant, 1 defective, "
				"1 blocked, 1 skipped; 1 bundle excluded (signature not verified or signer not trusted)\", "
				"\"schemaVersion\": 1}\n");
	/* only the forged one: nothing trusted, grey, and it says so */
	_cleanup_json_ json_t *only = agsbx_matrix_build(bundles + 1, names + 1, 1);
	ck_assert_int_eq(agsbx_matrix_add_provenance(only, bundles + 1, 1, &trust), 0);
	_cleanup_free_ char *grey = render(agsbx_matrix_render, only, "badge", &r);
	ck_assert_ptr_nonnull(strstr(grey, "\"color\": \"lightgrey\""));
	ck_assert_ptr_nonnull(strstr(grey, "no trusted bundle; 1 bundle excluded"));
	/* a good signature by a key the anchors do not hold: excluded too */
	_cleanup_free_ char *other = agsbx_path_join(tmp, "other");
	char fp[64];
	struct agsbx_error err = { 0 };
	ck_assert_int_eq(agsbx_keygen(other, "other", fp, &err), 0);
	_cleanup_free_ char *other_pub = agsbx_path_join(tmp, "other.pub");
	struct agsbx_verify_opts untrusted = { .key_path = other_pub };
	_cleanup_json_ json_t *u = agsbx_matrix_build(bundles, names, 1);
	ck_assert_int_eq(agsbx_matrix_add_provenance(u, bundles, 1, &untrusted), 0);
	_cleanup_free_ char *ub = render(agsbx_matrix_render, u, "badge", &r);
	ck_assert_ptr_nonnull(strstr(ub, "no trusted bundle; 1 bundle excluded"));
	/* a trust anchor that fails (a keys URL down, a key file gone): nothing
	 * is trusted, and the row says its signer was not checked */
	_cleanup_free_ char *gone = agsbx_path_join(tmp, "gone.pub");
	struct agsbx_verify_opts failing = { .key_path = gone };
	_cleanup_json_ json_t *f = agsbx_matrix_build(bundles, names, 1);
	ck_assert_int_eq(agsbx_matrix_add_provenance(f, bundles, 1, &failing), 0);
	_cleanup_free_ char *fb = render(agsbx_matrix_render, f, "badge", &r);
	ck_assert_ptr_nonnull(strstr(fb, "no trusted bundle; 1 bundle excluded"));
	_cleanup_free_ char *fm = render(agsbx_matrix_render, f, "markdown", &r);
	ck_assert_ptr_nonnull(strstr(fm, " \xC2\xB7 \xE2\x9A\xA0\xEF\xB8\x8F signer not checked |"));
	/* without trust anchors every bundle counts, as before */
	_cleanup_json_ json_t *all = agsbx_matrix_build(bundles, names, 2);
	ck_assert_int_eq(agsbx_matrix_add_provenance(all, bundles, 2, NULL), 0);
	_cleanup_free_ char *ab = render(agsbx_matrix_render, all, "badge", &r);
	ck_assert_ptr_nonnull(strstr(ab, "\"message\": \"1 conformant, 3 defective, 2 blocked, 2 skipped\""));
}
END_TEST

/* A provider the host stopped is one row under "Host changes", whatever
 * number of checks and claims it lost with it; regressions come first. */
START_TEST(test_diff_host_changes_grouped)
{
	_cleanup_json_ json_t *a = load_src("tests/data/bundles/full.json");
	json_t *ll = json_array_get(json_object_get(a, "providers"), 0);
	for (int i = 0; i < 26; i++) {
		char id[32];
		snprintf(id, sizeof id, "extra.check_%02d", i);
		json_array_append_new(json_object_get(ll, "checks"),
				      json_pack("{s:s, s:s, s:s}", "id", id, "axis", "process_contained", "verdict", "pass"));
	}
	_cleanup_json_ json_t *b = json_deep_copy(a);
	json_t *nl = json_array_get(json_object_get(b, "providers"), 0);
	json_object_set_new(nl, "verdict", json_string("blocked"));
	json_t *checks = json_object_get(nl, "checks");
	for (size_t i = 0; i < json_array_size(checks); i++)
		json_object_set_new(json_array_get(checks, i), "verdict", json_string("blocked"));
	json_t *claims = json_object_get(nl, "claims");
	const char *k;
	json_t *v;
	json_object_foreach(claims, k, v) if (json_is_true(v)) json_object_set_new(claims, k, json_false());
	/* and one real regression elsewhere */
	json_t *bw = json_array_get(json_object_get(b, "providers"), 1);
	json_object_set_new(json_array_get(json_object_get(bw, "checks"), 0), "verdict", json_string("fail"));
	_cleanup_json_ json_t *d = diff(a, b);
	ck_assert_int_eq(json_integer_value(json_object_get(d, "regressions")), 1);
	ck_assert_int_ge(json_integer_value(json_object_get(d, "host_changes")), 29);
	int r;
	_cleanup_free_ char *m = render(agsbx_diff_render, d, "markdown", &r);
	ck_assert_int_eq(r, 0);
	ck_assert_msg(strstr(m, "\n#### \xE2\x9D\x8C Regressions and lost evidence\n\n| What | Old | New |\n|---|---|---|\n"
				"| `bubblewrap/fs.host_read_denied` | pass | fail |\n\n#### Host changes"),
		      "%s", m);
	const char *host = strstr(m, "#### Host changes");
	const char *row = strstr(host, "\n| `landlock` | conformant \xE2\x86\x92 blocked | 28 checks: pass \xE2\x86\x92 blocked; "
				       "check `proc.pid_hidden`: not\\_claimed \xE2\x86\x92 blocked; ");
	ck_assert_msg(row, "%s", m);
	/* one row: landlock appears nowhere else */
	ck_assert_msg(!strstr(strchr(row + 1, '\n'), "landlock"), "%s", m);
	_cleanup_free_ char *t = render(agsbx_diff_render, d, "text", &r);
	ck_assert_ptr_nonnull(strstr(t, "\n  HOST-CHANGE landlock: conformant -> blocked; 28 checks: pass -> blocked; "));
	ck_assert_uint_eq(strstr(t, "REGRESSION") < strstr(t, "HOST-CHANGE"), 1);
}
END_TEST

/* ---- goldens ------------------------------------------------------------------ */

/* The renders a maintainer sees, byte for byte against reviewed copies in
 * tests/data/views: a renderer change shows up as a diff of these files.
 * AGSBX_UPDATE_GOLDENS=1 rewrites them (then review git diff). */
static void golden(const char *name, const char *got)
{
	_cleanup_free_ char *rel = NULL;
	ck_assert_int_ge(asprintf(&rel, "tests/data/views/%s", name), 0);
	_cleanup_free_ char *path = agsbx_test_source_path(rel);
	if (getenv("AGSBX_UPDATE_GOLDENS")) {
		ck_assert_int_eq(agsbx_write_file_atomic(path, got, strlen(got), 0644), 0);
		return;
	}
	char *want = NULL;
	size_t len;
	ck_assert_msg(agsbx_read_file(path, 1 << 20, &want, &len) == 0, "%s missing (AGSBX_UPDATE_GOLDENS=1)", rel);
	ck_assert_msg(len == strlen(got) && memcmp(want, got, len) == 0,
		      "%s differs (review, then AGSBX_UPDATE_GOLDENS=1 to rewrite it); got:\n%s", rel, got);
	free(want);
}

START_TEST(test_golden_views)
{
	_cleanup_json_ json_t *full = load_src("tests/data/bundles/full.json");
	_cleanup_json_ json_t *sig = load_src("tests/data/bundles/signed.json");
	_cleanup_json_ json_t *min = load_src("tests/data/bundles/minimal.json");
	_cleanup_json_ json_t *chg = load_src("tests/data/views/changed.json");
	_cleanup_json_ json_t *forged = json_deep_copy(sig);
	json_object_set_new(json_array_get(json_object_get(forged, "providers"), 1), "verdict", json_string("conformant"));
	const json_t *bundles[] = { full, sig, forged, min, chg };
	const char *names[] = { "full.json", "signed.json", "forged.json", "minimal.json", "changed.json" };
	_cleanup_free_ char *pub = agsbx_test_source_path("tests/data/bundles/keys/fixture_ed25519.pub");
	struct agsbx_verify_opts trust = { .key_path = pub, .now = 1795000000 };
	_cleanup_json_ json_t *mx = agsbx_matrix_build(bundles, names, 5);
	ck_assert_int_eq(agsbx_matrix_add_provenance(mx, bundles, 5, &trust), 0);
	int r;
	_cleanup_free_ char *mmd = render(agsbx_matrix_render, mx, "markdown", &r);
	golden("matrix.md", mmd);
	_cleanup_free_ char *badge = render(agsbx_matrix_render, mx, "badge", &r);
	golden("badge.json", badge);
	_cleanup_json_ json_t *d = diff(full, chg);
	_cleanup_free_ char *dmd = render(agsbx_diff_render, d, "markdown", &r);
	golden("diff.md", dmd);
	_cleanup_free_ char *dtxt = render(agsbx_diff_render, d, "text", &r);
	golden("diff.txt", dtxt);
	_cleanup_free_ char *junit = report(sig, "junit");
	golden("report-junit.xml", junit);
}
END_TEST

/* ---- schemas ------------------------------------------------------------------- */

START_TEST(test_embedded_schema)
{
	size_t len;
	const char *s = agsbx_schema_get("evidence-bundle", &len);
	ck_assert_ptr_nonnull(s);
	_cleanup_free_ char *path = agsbx_test_source_path("schemas/evidence-bundle.schema.json");
	char *file = NULL;
	size_t flen;
	ck_assert_int_eq(agsbx_read_file(path, 1 << 22, &file, &flen), 0);
	ck_assert_uint_eq(len, flen);
	ck_assert_int_eq(memcmp(s, file, len), 0);
	free(file);
	ck_assert_ptr_null(agsbx_schema_get("nope", NULL));
	ck_assert_ptr_null(agsbx_schema_get(NULL, NULL));
	bool found = false;
	for (const char *const *n = agsbx_schema_names(); *n; n++)
		found |= strcmp(*n, "evidence-bundle") == 0;
	ck_assert(found);
}
END_TEST

/* ---- attachments ---------------------------------------------------------------- */

struct split_case {
	const char *line;
	const char *want[6];
	int rc;
};

static const struct split_case split_cases[] = {
	{ "python -m pytest -q", { "python", "-m", "pytest", "-q" }, 0 },
	{ "  spaced\t\targs  ", { "spaced", "args" }, 0 },
	{ "sh -c 'echo \"hi\"; exit 3'", { "sh", "-c", "echo \"hi\"; exit 3" }, 0 },
	{ "a \"b c\" \"d\\\"e\" f\\ g", { "a", "b c", "d\"e", "f g" }, 0 },
	{ "x'y'z \"\"", { "xyz", "" }, 0 },
	{ "$HOME `id` ; | &&", { "$HOME", "`id`", ";", "|", "&&" }, 0 },
	{ "unterminated 'quote", { NULL }, -EINVAL },
	{ "unterminated \"dq", { NULL }, -EINVAL },
	{ "   ", { NULL }, -EINVAL },
	/* the --wrap/--adapter rules: \$ in double quotes, a trailing backslash */
	{ "echo \"\\$HOME\"", { "echo", "$HOME" }, 0 },
	{ "trailing\\", { NULL }, -EINVAL },
};

START_TEST(test_split_cmdline)
{
	const struct split_case *c = &split_cases[_i];
	char **argv = NULL;
	struct agsbx_error err = { 0 };
	int r = agsbx_split_cmdline(c->line, &argv, &err);
	ck_assert_int_eq(r, c->rc);
	if (r < 0) {
		ck_assert_ptr_null(argv);
		ck_assert(err.message[0]);
		return;
	}
	size_t n = 0;
	for (; c->want[n]; n++) {
		ck_assert_ptr_nonnull(argv[n]);
		ck_assert_str_eq(argv[n], c->want[n]);
	}
	ck_assert_ptr_null(argv[n]);
	agsbx_strv_free(argv);
}
END_TEST

struct summary_case {
	const char *out;
	const char *format;
	int passed, failed, skipped;
};

static const struct summary_case summary_cases[] = {
	{ "collected 6 items\n...\n==== 3 passed, 1 failed, 2 skipped in 0.12s ====\n", "pytest", 3, 1, 2 },
	{ "F.s\n1 failed, 2 passed, 1 skipped, 3 warnings in 1.05s\n", "pytest", 2, 1, 1 },
	{ "===== 12 passed in 3.40s =====", "pytest", 12, 0, 0 },
	{ "= 1 failed, 4 passed, 2 errors in 0.5s (0:00:00) =\n", "pytest", 4, 3, 0 },
	{ "== 2 passed, 1 xfailed, 1 deselected in 0.01s ==\n", "pytest", 2, 0, 0 },
	{ "100% tests passed, 0 tests failed out of 12\n\nTotal Test time (real) =   4.21 sec\n", "ctest", 12, 0, 0 },
	{ "83% tests passed, 2 tests failed out of 12\n", "ctest", 10, 2, 0 },
	{ "100% tests passed, 0 tests failed out of 5\n\nThe following tests did not run:\n\t  3 - a (Skipped)\n"
	  "\t  4 - b (Skipped)\n",
	  "ctest", 3, 0, 2 },
	{ "results: 7 passed, 2 failed\n", "plain", 7, 2, 0 },
	{ "7 passed, 0 failed, 1 skipped\n", "plain", 7, 0, 1 },
	{ "the build passed\nall good\n", "none", 0, 0, 0 },
	{ "3 passed\n", "none", 0, 0, 0 },
	{ "", "none", 0, 0, 0 },
	/* the last summary wins (re-runs print several) */
	{ "== 1 failed in 0.1s ==\nrerun\n== 1 passed in 0.1s ==\n", "pytest", 1, 0, 0 },
	/* collection errors: nothing passed or failed, yet the run is broken */
	{ "==== 2 errors in 0.30s ====\n", "pytest", 0, 2, 0 },
	{ "=== 1 error in 0.05s ===\n", "pytest", 0, 1, 0 },
	{ "= 3 passed, 1 warning, 1 error in 0.5s =\n", "pytest", 3, 1, 0 },
	/* colour codes neither hide a count nor glue numbers to words */
	{ "\033[31m= \033[31m\033[1m1 failed\033[0m, \033[32m3 passed\033[0m, \033[33m2 skipped\033[0m"
	  "\033[31m in 0.12s\033[0m\033[31m =\033[0m\n",
	  "pytest", 3, 1, 2 },
	{ "\033[32m\033[1m== 5 passed\033[0m\033[32m in 0.02s\033[0m\033[32m ==\033[0m\n", "pytest", 5, 0, 0 },
	/* ctest says "Errors while running CTest" only when the run failed */
	{ "100% tests passed, 0 tests failed out of 2\n\nErrors while running CTest\n", "ctest", 2, 1, 0 },
	{ "50% tests passed, 1 tests failed out of 2\n\nThe following tests FAILED:\n\t  2 - b (Failed)\n"
	  "Errors while running CTest\n",
	  "ctest", 1, 1, 0 },
};

START_TEST(test_attachment_summary)
{
	const struct summary_case *c = &summary_cases[_i];
	_cleanup_json_ json_t *s = agsbx_attachment_summary(c->out, strlen(c->out));
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(strcmp(json_string_value(json_object_get(s, "format")), c->format) == 0, "case %d: format %s", _i,
		      json_string_value(json_object_get(s, "format")));
	ck_assert_int_eq(json_integer_value(json_object_get(s, "passed")), c->passed);
	ck_assert_int_eq(json_integer_value(json_object_get(s, "failed")), c->failed);
	ck_assert_int_eq(json_integer_value(json_object_get(s, "skipped")), c->skipped);
}
END_TEST

/* Counts printed by the attached command are hostile: huge ones saturate
 * at 2^53 (no signed overflow; the bundle stays canonicalisable). */
START_TEST(test_attachment_summary_huge)
{
	static const char *const outs[] = {
		"9223372036854775807 passed, 9223372036854775807 passed, 99999999999999999999 failed in 1s\n",
		"50% tests passed, 9223372036854775806 tests failed out of 9223372036854775807\n",
	};
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(outs); i++) {
		_cleanup_json_ json_t *s = agsbx_attachment_summary(outs[i], strlen(outs[i]));
		ck_assert_ptr_nonnull(s);
		ck_assert_int_eq(json_integer_value(json_object_get(s, "failed")), 9007199254740992LL);
		size_t n;
		_cleanup_free_ char *c = agsbx_json_canonical(s, NULL, &n);
		ck_assert_msg(c != NULL, "case %zu: no canonical form", i);
	}
	/* a negative ctest count is not a summary */
	const char *neg = "50% tests passed, -5 tests failed out of -3\n";
	_cleanup_json_ json_t *s = agsbx_attachment_summary(neg, strlen(neg));
	ck_assert_str_eq(json_string_value(json_object_get(s, "format")), "none");
}
END_TEST

START_TEST(test_attachment_run)
{
	struct agsbx_error err = { 0 };
	_cleanup_json_ json_t *a = agsbx_attachment_run(
		"sh -c 'echo collected 6 items; echo oops >&2; echo \"== 3 passed, 1 failed, 2 skipped in 0.12s ==\"; exit 1'",
		10000, 4096, &err);
	ck_assert_msg(a != NULL, "%s", err.message);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "exit_status")), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(a, "argv"), 0)), "sh");
	ck_assert_int_eq(json_array_size(json_object_get(a, "argv")), 3);
	const json_t *s = json_object_get(a, "summary");
	ck_assert_str_eq(json_string_value(json_object_get(s, "format")), "pytest");
	ck_assert_int_eq(json_integer_value(json_object_get(s, "failed")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(a, "stderr_tail")), "oops\n");
	ck_assert(json_is_false(json_object_get(a, "stdout_truncated")));
	ck_assert(json_is_false(json_object_get(a, "timed_out")));
	ck_assert_int_gt(json_integer_value(json_object_get(a, "duration_us")), 0);

	/* long output: the tail is kept, bounded, flagged; the summary is found */
	_cleanup_json_ json_t *l = agsbx_attachment_run(
		"sh -c 'i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done; echo 5 passed, 0 failed'", 20000,
		100, &err);
	ck_assert_msg(l != NULL, "%s", err.message);
	const char *tail = json_string_value(json_object_get(l, "stdout_tail"));
	ck_assert_uint_le(strlen(tail), 100);
	ck_assert_ptr_nonnull(strstr(tail, "line 2999\n5 passed, 0 failed\n"));
	ck_assert(json_is_true(json_object_get(l, "stdout_truncated")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(l, "summary"), "format")), "plain");

	/* bytes that are not UTF-8 become U+FFFD; a cut multibyte char is dropped */
	_cleanup_json_ json_t *u = agsbx_attachment_run("printf 'x\\303\\251\\377\\000y'", 10000, 5, &err);
	ck_assert_msg(u != NULL, "%s", err.message);
	ck_assert_str_eq(json_string_value(json_object_get(u, "stdout_tail")), "\xc3\xa9\xef\xbf\xbd\xef\xbf\xbdy");
	size_t clen;
	_cleanup_free_ char *canon = agsbx_json_canonical(u, NULL, &clen);
	ck_assert_ptr_nonnull(canon);

	/* timeout: killed, flagged, status 124 */
	_cleanup_json_ json_t *t = agsbx_attachment_run("sleep 30", 300, 100, &err);
	ck_assert_ptr_nonnull(t);
	ck_assert(json_is_true(json_object_get(t, "timed_out")));
	ck_assert_int_eq(json_integer_value(json_object_get(t, "exit_status")), 124);

	/* a command that does not exist is an error, not an attachment */
	ck_assert_ptr_null(agsbx_attachment_run("/nonexistent/agsbx-cmd --x", 1000, 100, &err));
	ck_assert(strstr(err.message, "/nonexistent/agsbx-cmd"));
	ck_assert_ptr_null(agsbx_attachment_run("sh -c 'unterminated", 1000, 100, &err));
	ck_assert(strstr(err.message, "unterminated"));
}
END_TEST

/* ---- subject ------------------------------------------------------------------ */

START_TEST(test_subject_from_repo)
{
	if (sh("command -v git >/dev/null") != 0)
		agsbx_test_skip("git", true, "git not installed");
	struct agsbx_error err = { 0 };
	/* not a repository */
	ck_assert_ptr_null(agsbx_subject_from_repo(tmp, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "git"));
	_cleanup_free_ char *missing = agsbx_path_join(tmp, "missing");
	ck_assert_ptr_null(agsbx_subject_from_repo(missing, &err));
	/* an empty repository: no commit yet */
	ck_assert_int_eq(sh("cd '%s' && git init -q -b feature/x repo", tmp), 0);
	_cleanup_free_ char *repo = agsbx_path_join(tmp, "repo");
	_cleanup_json_ json_t *e = agsbx_subject_from_repo(repo, &err);
	ck_assert_msg(e != NULL, "%s", err.message);
	ck_assert(json_is_null(json_object_get(e, "commit")));
	ck_assert(json_is_false(json_object_get(e, "dirty")));
	ck_assert_int_eq(sh("cd '%s' && echo a > f && git add f && git -c user.name=t -c user.email=t@x commit -qm one",
			    repo),
			 0);
	_cleanup_json_ json_t *s = agsbx_subject_from_repo(repo, &err);
	ck_assert_msg(s != NULL, "%s", err.message);
	ck_assert_str_eq(json_string_value(json_object_get(s, "branch")), "feature/x");
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(s, "commit"))), 40);
	ck_assert(json_is_false(json_object_get(s, "dirty")));
	ck_assert_str_eq(json_string_value(json_object_get(s, "path")), repo);
	/* reading the subject writes nothing into the repository */
	ck_assert_int_eq(sh("cd '%s' && echo b > f && cp .git/index ../index.before", repo), 0);
	_cleanup_json_ json_t *d = agsbx_subject_from_repo(repo, &err);
	ck_assert(json_is_true(json_object_get(d, "dirty")));
	ck_assert_int_eq(sh("cmp -s '%s/.git/index' '%s/index.before'", repo, tmp), 0);
	/* untracked files count as dirty too; a subdirectory resolves to the repo */
	ck_assert_int_eq(sh("cd '%s' && git checkout -q f && mkdir sub && touch sub/new", repo), 0);
	_cleanup_free_ char *sub = agsbx_path_join(repo, "sub");
	_cleanup_json_ json_t *u = agsbx_subject_from_repo(sub, &err);
	ck_assert(json_is_true(json_object_get(u, "dirty")));
	ck_assert_str_eq(json_string_value(json_object_get(u, "commit")), json_string_value(json_object_get(s, "commit")));
}
END_TEST

/* A repository whose configuration names programs (a clean filter, a
 * long-running process filter marked required, an fsmonitor hook, hooks):
 * reading the subject runs none of them, and still sees the content. */
START_TEST(test_subject_runs_no_repo_program)
{
	if (sh("command -v git >/dev/null") != 0)
		agsbx_test_skip("git", true, "git not installed");
	_cleanup_free_ char *repo = agsbx_path_join(tmp, "hostile");
	_cleanup_free_ char *marks = agsbx_path_join(tmp, "marks");
	ck_assert_int_eq(sh("mkdir -p '%s' '%s' && cd '%s' && git init -q . && echo a > f && echo b > g && "
			    "printf 'f filter=evil\\ng filter=proc\\n' > .gitattributes && "
			    "git add -A && git -c user.name=t -c user.email=t@x commit -qm one",
			    marks, repo, repo),
			 0);
	/* the programs, configured after the commit so the commit runs none */
	ck_assert_int_eq(sh("cd '%s' && printf '#!/bin/sh\\ntouch %s/$(basename $0)\\ncat\\n' > .git/prog && "
			    "chmod +x .git/prog && for h in clean process fsmonitor post-index-change; do "
			    "ln -s prog .git/$h; done && cp .git/prog .git/hooks/post-index-change && "
			    "git config filter.evil.clean \"$PWD/.git/clean\" && git config filter.evil.smudge \"$PWD/.git/clean\" && "
			    "git config filter.proc.process \"$PWD/.git/process\" && git config filter.proc.required true && "
			    "git config core.fsmonitor \"$PWD/.git/fsmonitor\" && "
			    "touch -d '2001-01-01' f g",
			    repo, marks),
			 0);
	struct agsbx_error err = { 0 };
	_cleanup_json_ json_t *s = agsbx_subject_from_repo(repo, &err);
	ck_assert_msg(s != NULL, "%s", err.message);
	ck_assert_msg(json_is_false(json_object_get(s, "dirty")), "stat-dirty files with the same bytes are clean");
	ck_assert_msg(sh("test -z \"$(ls -A '%s')\"", marks) == 0, "a repository program ran: %s",
		      sh("ls -A '%s' >&2", marks) == 0 ? "see stderr" : "?");
	/* the content is still compared: a real change is dirty */
	ck_assert_int_eq(sh("cd '%s' && echo changed > f", repo), 0);
	_cleanup_json_ json_t *d = agsbx_subject_from_repo(repo, &err);
	ck_assert_msg(d != NULL, "%s", err.message);
	ck_assert(json_is_true(json_object_get(d, "dirty")));
	ck_assert_int_eq(sh("test -z \"$(ls -A '%s')\"", marks), 0);
	/* the marks directory works: the same git status without our guards runs them */
	ck_assert_int_eq(sh("cd '%s' && git status --porcelain >/dev/null 2>&1; test -n \"$(ls -A '%s')\"", repo, marks),
			 0);
}
END_TEST

int main(void)
{
	if (!getenv("AGSBX_SOURCE_DIR"))
		setenv("AGSBX_SOURCE_DIR", ".", 0);
	agsbx_runner_init();
	Suite *s = suite_create("evidence-render");
	TCase *t = tcase_create("report");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_report_text);
	tcase_add_test(t, test_report_markdown);
	tcase_add_test(t, test_report_junit);
	tcase_add_test(t, test_report_tap);
	tcase_add_test(t, test_report_axis_view);
	tcase_add_test(t, test_report_unknown_format);
	suite_add_tcase(s, t);

	t = tcase_create("diff-matrix");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_diff_self_is_empty);
	tcase_add_test(t, test_diff_changes_and_regressions);
	tcase_add_test(t, test_diff_lost_evidence);
	tcase_add_test(t, test_hostile_text_all_targets);
	tcase_add_test(t, test_diff_mechanism_versions);
	tcase_add_test(t, test_diff_tolerates_missing_members);
	tcase_add_test(t, test_matrix);
	tcase_add_test(t, test_matrix_fits_comment_width);
	tcase_add_test(t, test_matrix_badge_trust);
	tcase_add_test(t, test_diff_host_changes_grouped);
	tcase_add_test(t, test_golden_views);
	tcase_add_test(t, test_embedded_schema);
	suite_add_tcase(s, t);

	t = tcase_create("context");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, test_split_cmdline, 0, (int)AGSBX_ARRAY_SIZE(split_cases));
	tcase_add_loop_test(t, test_attachment_summary, 0, (int)AGSBX_ARRAY_SIZE(summary_cases));
	tcase_add_test(t, test_attachment_summary_huge);
	tcase_add_test(t, test_attachment_run);
	tcase_add_test(t, test_subject_from_repo);
	tcase_add_test(t, test_subject_runs_no_repo_program);
	suite_add_tcase(s, t);
	return agsbx_test_run_suite(s);
}
