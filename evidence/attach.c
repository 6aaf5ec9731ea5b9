/* Attachments: a contributor's own command (e.g. the pytest run of the
 * project under test)
 * run through the bounded runner, with a parsed test summary and bounded,
 * sanitised output tails. */
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/cleanup.h"
#include "base/strv.h"
#include "base/runner.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The runner keeps the head of each stream; summaries and the tail we
 * keep are at the end, so capture generously and cut the tail ourselves.
 * Output beyond this cap is flagged truncated and its tail is lost. */
#define CAPTURE_MAX (16u << 20)

/* The --attach-command line is split as --adapter and --wrap commands are
 * (base's agsbx_split_words: a shell's simple-command rules, no expansion),
 * so one quoting rule holds wherever the CLI takes a command. */
static int split_buf(const char *cmdline, char ***argv_out, char *err, size_t err_size)
{
	*argv_out = NULL;
	char **argv = NULL;
	int n = agsbx_split_words(cmdline, &argv);
	if (n == -ENOMEM)
		return n;
	if (n < 0) {
		ev_set_err(err, err_size, "unterminated quote or trailing backslash in command: %.200s", cmdline);
		return -EINVAL;
	}
	if (n == 0) {
		agsbx_strv_free(argv);
		ev_set_err(err, err_size, "empty command");
		return -EINVAL;
	}
	*argv_out = argv;
	return 0;
}

/* ---- summaries ---------------------------------------------------------- */

struct tally {
	long passed, failed, skipped;
	bool any;
};

/* Counts come from the attached command's output: saturate at the
 * largest integer a bundle holds (no signed overflow, and the bundle stays
 * writable). */
static void add_count(long *slot, long v)
{
	const long max = (long)AGSBX_JSON_INT_MAX;
	*slot = v < 0 ? *slot : v > max - *slot ? max : *slot + v;
}

/* "N word" pairs in a line: passed / failed / skipped (and pytest's
 * error(s) as failures). */
static struct tally count_words(const char *line, size_t len)
{
	struct tally t = { 0 };
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)line[i]) || (i > 0 && isalnum((unsigned char)line[i - 1])))
			continue;
		char *end;
		long v = strtol(line + i, &end, 10);
		if (*end != ' ' || (size_t)(end - line) >= len)
			continue;
		const char *w = end + 1;
		size_t rest = len - (size_t)(w - line);
		struct {
			const char *word;
			long *slot;
		} words[] = { { "passed", &t.passed }, { "failed", &t.failed }, { "skipped", &t.skipped },
			      { "errors", &t.failed }, { "error", &t.failed } };
		for (size_t k = 0; k < AGSBX_ARRAY_SIZE(words); k++) {
			size_t wl = strlen(words[k].word);
			if (rest >= wl && strncmp(w, words[k].word, wl) == 0 &&
			    (rest == wl || !isalpha((unsigned char)w[wl]))) {
				add_count(words[k].slot, v);
				t.any = true;
				break;
			}
		}
		i = (size_t)(end - line);
	}
	return t;
}

/* pytest: "== 3 passed, 1 failed, 2 skipped in 0.12s ==" or, with -q,
 * "3 passed, 1 failed in 0.12s". */
static bool is_pytest_line(const char *line, size_t len)
{
	const char *in = NULL;
	for (size_t i = 0; i + 4 <= len; i++)
		if (memcmp(line + i, " in ", 4) == 0)
			in = line + i + 4;
	if (!in || !isdigit((unsigned char)*in))
		return false;
	while (in < line + len && (isdigit((unsigned char)*in) || *in == '.'))
		in++;
	return in < line + len && *in == 's';
}

/* ctest: "83% tests passed, 2 tests failed out of 12". */
static bool parse_ctest(const char *line, size_t len, struct tally *t)
{
	_cleanup_free_ char *s = strndup(line, len);
	int pct;
	long failed, total;
	if (!s)
		return false;
	const char *p = strstr(s, "% tests passed, ");
	if (!p)
		return false;
	while (p > s && isdigit((unsigned char)p[-1]))
		p--;
	if (sscanf(p, "%d%% tests passed, %ld tests failed out of %ld", &pct, &failed, &total) != 3 ||
	    failed < 0 || failed > total)
		return false;
	add_count(&t->failed, failed);
	add_count(&t->passed, total - failed);
	t->any = true;
	return true;
}

/* ctest lists "  5 - name (Skipped)" under "The following tests did not run:";
 * it counts them as passed in its summary line. */
static long ctest_skipped(const char *out, size_t len)
{
	const char *p = memmem(out, len, "The following tests did not run:", 32);
	long n = 0;
	while (p && (p = memmem(p, len - (size_t)(p - out), "(Skipped)", 9))) {
		n++;
		p += 9;
	}
	return n;
}

static bool candidate(const char *line, size_t ll)
{
	/* pytest's "== 2 errors in 0.3s ==" (collection errors) has neither
	 * "passed" nor "failed", yet nothing ran */
	return memmem(line, ll, "passed", 6) || memmem(line, ll, "failed", 6) || memmem(line, ll, "error", 5);
}

/* ctest prints this only when the run failed; a summary line of "0 tests
 * failed" next to it (a failed fixture, a test that could not start) must
 * not read as a clean run. */
static void ctest_errors(const char *out, size_t len, struct tally *t)
{
	if (t->failed == 0 && memmem(out, len, "Errors while running CTest", 26))
		t->failed = 1;
}

/* Test runners colour their summaries ("\033[32m3 passed\033[0m"): CSI
 * sequences (ESC [ params final) and other two-byte escapes are dropped
 * before parsing, so a colour code can neither hide a count nor glue two
 * numbers together. malloc'd copy; *n_out its length. */
static char *strip_ansi(const char *s, size_t len, size_t *n_out)
{
	char *o = malloc(len + 1);
	size_t n = 0;
	if (!o)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\033') {
			o[n++] = s[i];
			continue;
		}
		if (i + 1 < len && s[i + 1] == '[') {
			i += 2;
			while (i < len && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7E))
				i++;
		} else if (i + 1 < len) {
			i++;
		}
	}
	o[n] = '\0';
	*n_out = n;
	return o;
}

static json_t *summary_plain(const char *out, size_t len)
{
	const char *format = "none";
	struct tally best = { 0 };
	/* the last summary-looking line wins: runners print it at the end */
	for (size_t start = 0; out && start < len;) {
		const char *nl = memchr(out + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - out) : len;
		size_t ll = end - start;
		_cleanup_free_ char *line = candidate(out + start, ll) ? strndup(out + start, ll) : NULL;
		start = end + 1;
		if (!line)
			continue;
		/* a NUL in the output ends the copy early: parse what was copied
		 * (past it the parsers read beyond the copy; fuzz-text found it) */
		ll = strlen(line);
		struct tally t = { 0 };
		if (parse_ctest(line, ll, &t)) {
			/* ctest counts tests that did not run as passed */
			t.skipped = ctest_skipped(out, len);
			t.passed = t.passed > t.skipped ? t.passed - t.skipped : 0;
			ctest_errors(out, len, &t);
			best = t;
			format = "ctest";
			continue;
		}
		t = count_words(line, ll);
		if (!t.any)
			continue;
		bool pytest = is_pytest_line(line, ll);
		/* a plain line needs both counts, as "N passed, N failed" */
		bool plain = strstr(line, " passed") && strstr(line, " failed");
		if (pytest || plain) {
			best = t;
			format = pytest ? "pytest" : "plain";
		}
	}
	return json_pack("{s:s, s:I, s:I, s:I}", "format", format, "passed", (json_int_t)best.passed, "failed",
			 (json_int_t)best.failed, "skipped", (json_int_t)best.skipped);
}

json_t *agsbx_attachment_summary(const char *out, size_t len)
{
	size_t n = 0;
	_cleanup_free_ char *plain = strip_ansi(out ? out : "", out ? len : 0, &n);
	return plain ? summary_plain(plain, n) : NULL;
}

/* ---- running ------------------------------------------------------------ */

/* The last max bytes, starting on a character boundary, sanitised. */
static json_t *tail(const char *data, size_t len, size_t max, bool *cut)
{
	size_t start = 0;
	*cut = false;
	if (len > max) {
		start = len - max;
		*cut = true;
		for (int i = 0; i < 3 && start < len && ((unsigned char)data[start] & 0xC0) == 0x80; i++)
			start++;
	}
	return agsbx_json_string_sanitized(data ? data + start : "", len - start);
}

static json_t *attachment_buf(const char *cmdline, int64_t timeout_ms, size_t max_tail, char *err, size_t err_size)
{
	char **argv = NULL;
	if (split_buf(cmdline, &argv, err, err_size) < 0)
		return NULL;
	struct agsbx_run_opts o = { .argv = (const char *const *)argv, .timeout_ms = timeout_ms, .cancel_fd = -1,
				    .max_output_bytes = CAPTURE_MAX };
	struct agsbx_run_result res;
	memset(&res, 0, sizeof res);
	int r = agsbx_run(&o, &res);
	if (r < 0) {
		ev_set_err(err, err_size, "cannot run '%s': %s", argv[0], strerror(res.spawn_errno ? res.spawn_errno : -r));
		agsbx_run_result_clear(&res);
		agsbx_strv_free(argv);
		return NULL;
	}
	json_t *jargv = json_array();
	for (size_t i = 0; jargv && argv[i]; i++)
		json_array_append_new(jargv, agsbx_json_string_sanitized(argv[i], strlen(argv[i])));
	agsbx_strv_free(argv);
	/* the summary is parsed from everything kept, the tails are bounded */
	json_t *summary = agsbx_attachment_summary(res.out ? res.out : "", res.out_len);
	if (summary && strcmp(ev_jstr(summary, "format"), "none") == 0) {
		json_decref(summary);
		summary = agsbx_attachment_summary(res.err ? res.err : "", res.err_len);
	}
	bool out_cut, err_cut;
	json_t *out_tail = tail(res.out, res.out_len, max_tail, &out_cut);
	json_t *err_tail = tail(res.err, res.err_len, max_tail, &err_cut);
	json_t *a = json_pack("{s:o, s:i, s:I, s:b, s:o, s:o, s:b, s:o, s:b}", "argv", jargv ? jargv : json_array(),
			      "exit_status", res.status, "duration_us", (json_int_t)res.duration_us, "timed_out",
			      res.timed_out, "summary", summary ? summary : json_object(), "stdout_tail",
			      out_tail ? out_tail : json_string(""), "stdout_truncated", out_cut || res.out_truncated,
			      "stderr_tail", err_tail ? err_tail : json_string(""), "stderr_truncated",
			      err_cut || res.err_truncated);
	agsbx_run_result_clear(&res);
	if (!a)
		ev_set_err(err, err_size, "out of memory");
	return a;
}

int agsbx_split_cmdline(const char *cmdline, char ***argv, struct agsbx_error *e)
{
	char err[512] = "";
	return ev_error(e, split_buf(cmdline, argv, err, sizeof err), err);
}

json_t *agsbx_attachment_run(const char *cmdline, int64_t timeout_ms, size_t max_tail, struct agsbx_error *e)
{
	char err[512] = "";
	json_t *a = attachment_buf(cmdline, timeout_ms, max_tail, err, sizeof err);
	if (!a)
		ev_error(e, -EINVAL, err);
	return a;
}
