/* collect's terminal output (progress.h). */
#include "cli/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/escape.h"
#include "base/log.h"
#include "base/util.h"
#include "cli/collect-workers.h"
#include "cli/commands.h"
#include "conformance/conformance.h"
#include "evidence/bundle.h"
#include "evidence/evidence.h"

/* green shown good, red shown bad, yellow nothing shown (blocked, skip) */
static const char *outcome_color(enum agsbx_outcome o)
{
	static const char *const colors[] = { [AGSBX_OUTCOME_GOOD] = "\033[32m", [AGSBX_OUTCOME_BAD] = "\033[31m",
					      [AGSBX_OUTCOME_NOT_SHOWN] = "\033[33m", [AGSBX_OUTCOME_NEUTRAL] = "" };
	return colors[o];
}

/* Every string below can come from a provider, an adapter or a sandbox:
 * escaped for the terminal (base/escape.h) before it is printed. */
static char *esc(const json_t *obj, const char *key)
{
	return agsbx_term_escape(json_string_value(json_object_get(obj, key)), 0);
}

static void full_line(const struct agsbx_progress *p, const char *provider, const json_t *check)
{
	enum agsbx_check_verdict v = agsbx_check_verdict_of(check);
	json_int_t us = json_integer_value(json_object_get(check, "duration_us"));
	_cleanup_free_ char *pid = agsbx_term_escape(provider, 0), *id = esc(check, "id"), *ev = esc(check, "verdict");
	_cleanup_free_ char *reason = esc(check, "reason");
	fprintf(stderr, "agsbx-evidence: %-14s %-26s %s%-11s%s %6lld ms  %s\n", pid, id,
		p->color ? outcome_color(agsbx_check_outcome(v)) : "", ev, p->color ? "\033[0m" : "", (long long)(us / 1000), reason);
}

/* A line per finished check; on a TTY one live line instead (the latest
 * check of whichever provider reported last), with failures kept on
 * screen. Providers run concurrently, so lines interleave. */
void agsbx_progress_on_check(void *ud, const struct agsbx_collect_worker *w, const json_t *check)
{
	struct agsbx_progress *p = ud;
	const char *provider = w->ops->id;
	if (p->quiet)
		return;
	if (!p->tty) {
		full_line(p, provider, check);
		return;
	}
	fputs("\r\033[K", stderr);
	if (agsbx_check_verdict_of(check) == AGSBX_CHECK_FAIL)
		full_line(p, provider, check);
	_cleanup_free_ char *pid = agsbx_term_escape(provider, 0), *id = esc(check, "id"), *ev = esc(check, "verdict");
	fprintf(stderr, "agsbx-evidence: %s %zu/%zu %s %s", pid, w->done, agsbx_conformance_check_count(), id, ev);
	fflush(stderr);
}

void agsbx_progress_end(const struct agsbx_progress *p)
{
	if (p->tty && !p->quiet)
		fputs("\r\033[K", stderr);
}

static void print_failures(const json_t *p)
{
	_cleanup_free_ char *pid = esc(p, "id");
	size_t j;
	json_t *c;
	json_array_foreach(json_object_get(p, "checks"), j, c) {
		if (agsbx_check_verdict_of(c) != AGSBX_CHECK_FAIL)
			continue;
		_cleanup_free_ char *id = esc(c, "id"), *reason = esc(c, "reason");
		fprintf(stderr, "  FAIL %s %s: %s\n", pid, id, reason);
	}
	const json_t *hint = json_object_get(json_object_get(p, "probe"), "hint");
	if (json_is_string(hint) && agsbx_provider_verdict_of(p) == AGSBX_PROVIDER_BLOCKED) {
		_cleanup_free_ char *h = agsbx_term_escape(json_string_value(hint), 0);
		fprintf(stderr, "hint: %s: %s\n", pid, h);
	}
}

/* Per provider, its isolation axes grouped by what the run showed (the
 * axis view of `report`): "observed, unclaimed: network (isolated); ...". */
static void print_axes(const json_t *p)
{
	if (!json_is_object(json_object_get(p, "observed")))
		return;
	_cleanup_free_ char *pid = esc(p, "id");
	fprintf(stderr, "  %s axes:", pid);
	const char *sep = " ";
	for (int v = 0; v <= AGSBX_AXIS_VIEW_NOT_OBSERVED; v++) {
		bool any = false;
		for (size_t a = 0; agsbx_view_axes[a]; a++) {
			if ((int)agsbx_axis_view_of(p, agsbx_view_axes[a]) != v)
				continue;
			fprintf(stderr, "%s%s%s", any ? ", " : sep, any ? "" : agsbx_axis_view_name(v), any ? "" : ": ");
			fprintf(stderr, "%s", agsbx_view_axes[a]);
			if (strcmp(agsbx_view_axes[a], "network") == 0 && v != AGSBX_AXIS_VIEW_NOT_OBSERVED) {
				_cleanup_free_ char *lvl = esc(json_object_get(p, "observed"), "network");
				fprintf(stderr, " (%s)", lvl);
			}
			any = true;
			sep = "; ";
		}
	}
	fputc('\n', stderr);
}

static void print_summary(const json_t *providers, bool color)
{
	fprintf(stderr, "\n%-16s %-11s %s\n", "provider", "verdict", "reason");
	size_t i;
	json_t *p;
	json_array_foreach(providers, i, p) {
		enum agsbx_provider_verdict v = agsbx_provider_verdict_of(p);
		_cleanup_free_ char *pid = esc(p, "id"), *ev = esc(p, "verdict"), *reason = esc(p, "reason");
		size_t n[AGSBX_CHECK_VERDICT_COUNT] = { 0 }, j;
		json_t *c;
		json_array_foreach(json_object_get(p, "checks"), j, c)
			if ((unsigned)agsbx_check_verdict_of(c) < AGSBX_CHECK_VERDICT_COUNT)
				n[agsbx_check_verdict_of(c)]++;
		fprintf(stderr, "%-16s %s%-11s%s %s (checks: %zu pass, %zu fail, %zu observed unclaimed, %zu skip)\n", pid,
			color ? outcome_color(agsbx_provider_outcome(v)) : "", ev, color ? "\033[0m" : "", reason,
			n[AGSBX_CHECK_PASS], n[AGSBX_CHECK_FAIL], n[AGSBX_CHECK_NOT_CLAIMED],
			n[AGSBX_CHECK_SKIP] + n[AGSBX_CHECK_BLOCKED]);
	}
	json_array_foreach(providers, i, p)
		print_axes(p);
	json_array_foreach(providers, i, p)
		print_failures(p);
}

/* What a contributor does with the bundle: sign it (unsigned ones fail
 * verify, so no verify step until then), check it as a maintainer would,
 * attach it to the pull request. Commands name the binary as it was
 * invoked (./build/agsbx-evidence), so they can be pasted as they are. */
static void print_next_steps(const json_t *bundle, const char *file)
{
	const json_t *sig = json_object_get(bundle, "signature");
	const char *me = agsbx_cli_argv0();
	fprintf(stderr, "\nnext steps:\n");
	if (json_is_object(sig)) {
		fprintf(stderr, "  signed:  by %s\n", json_string_value(json_object_get(sig, "fingerprint")));
		fprintf(stderr, "  verify:  %s verify %s --keys-url https://github.com/USER.keys\n", me, file);
	} else {
		fprintf(stderr, "  sign:    %s collect --sign-key ~/.ssh/id_ed25519 ...  (or make collect "
				"SIGN_KEY=~/.ssh/id_ed25519);\n"
				"           maintainers' verify rejects unsigned bundles\n", me);
	}
	fprintf(stderr, "  attach:  upload %s to the pull request and post its report:\n"
			"           %s report %s --format markdown > report.md && "
			"gh pr comment --body-file report.md\n", file, me, file);
}

static void append_step_summary(const json_t *bundle)
{
	const char *path = getenv("GITHUB_STEP_SUMMARY");
	if (!path || !*path)
		return;
	_cleanup_fclose_ FILE *f = fopen(path, "ae");
	if (!f || agsbx_report_render(bundle, "markdown", f) < 0)
		agsbx_warn("cannot append the report to $GITHUB_STEP_SUMMARY (%s)", path);
}

static void print_json_summary(const char *output, const json_t *summary, const json_t *providers)
{
	json_t *s = json_pack("{s:s, s:O, s:o}", "output", output, "summary", summary, "verdicts", json_object());
	size_t i;
	json_t *p;
	json_array_foreach(providers, i, p)
		json_object_set(json_object_get(s, "verdicts"), json_string_value(json_object_get(p, "id")),
				json_object_get(p, "verdict"));
	agsbx_cli_print_json(s, JSON_SORT_KEYS);
	json_decref(s);
}

void agsbx_progress_init(struct agsbx_progress *p, bool quiet)
{
	*p = (struct agsbx_progress){ .quiet = quiet, .color = agsbx_use_color(STDERR_FILENO),
				      .tty = agsbx_term_capable(STDERR_FILENO) };
}

void agsbx_progress_written(const struct collect_opts *o, const json_t *bundle, const char *output)
{
	append_step_summary(bundle);
	const json_t *providers = json_object_get(bundle, "providers");
	if (!o->quiet) {
		print_summary(providers, agsbx_use_color(STDERR_FILENO));
		agsbx_note("wrote %s (%s)", agsbx_is_stdout(output) ? "the bundle to stdout" : output,
			   o->sign_key ? "signed" : "unsigned");
		print_next_steps(bundle, agsbx_is_stdout(output) ? "BUNDLE.json" : output);
	}
	if (o->json)
		print_json_summary(output, json_object_get(bundle, "summary"), providers);
}
