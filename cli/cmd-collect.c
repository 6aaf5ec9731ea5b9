/* collect: host probes + the acceptance matrix for the selected providers,
 * written as one evidence bundle (temp name, then rename). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/escape.h"
#include "base/fsat.h"
#include "base/log.h"
#include "base/rundir.h"
#include "base/util.h"
#include "cli/collect-workers.h"
#include "cli/commands.h"
#include "cli/harness.h"
#include "conformance/conformance.h"
#include "evidence/bundle.h"
#include "evidence/evidence.h"
#include "probes/probes.h"
#include "providers/external/external.h"

const char agsbx_help_collect[] =
	"usage: agsbx-evidence collect [options]\n"
	"\n"
	"Runs the acceptance matrix against sandbox providers and writes an evidence bundle.\n"
	"\n"
	"  --provider ID          a provider to test (repeatable; default: every provider for this platform\n"
	"                         and every declared one)\n"
	"  --adapter ID=COMMAND   declare a provider run by an adapter speaking agsbx-external/1 (repeatable)\n"
	"  --wrap ID=TEMPLATE     declare a command-prefix sandbox; claims from --config ID.claims=AXIS,...\n"
	"  -o, --output FILE      bundle path, '-' for stdout (default: agsbx-evidence-<host>-<UTC time>.json)\n"
	"  --unsigned             write an unsigned bundle (the default without --sign-key)\n"
	"  --sign-key FILE        sign with an OpenSSH key: Ed25519, RSA or ECDSA (SSHSIG, namespace\n"
	"                         agsbx-evidence); checked before any provider runs\n"
	"  --run-as USER          when root: run every sandbox as this unprivileged user\n"
	"  --timeout-ms N         per-execution timeout (default 20000)\n"
	"  --max-output-bytes N   per-stream capture limit (default 20000)\n"
	"  --jobs N               providers run at once, and concurrent checks per provider\n"
	"                         (default: every selected provider at once, checks: online cores)\n"
	"  --config ID.KEY=VALUE  provider config (repeatable), e.g. bubblewrap.network=true\n"
	"  --simulate NAME        labelled simulation: blocked-userns (the run is marked non-representative)\n"
	"  --work-dir DIR         parent of the execution areas (default: $TMPDIR or /tmp)\n"
	"  --challenge NONCE      record a maintainer's nonce (checked by verify --expect-challenge)\n"
	"  --subject-repo PATH    record branch, commit and dirty state of the code under test\n"
	"  --attach-command CMD   run CMD (no shell) and attach its summary and output tails (repeatable)\n"
	"  --host-policy distro-bwrap-profile\n"
	"                         record that the workflow loaded the distribution's bwrap AppArmor profile\n"
	"  --userns-sysctl-before V  kernel.apparmor_restrict_unprivileged_userns read before that (or 'absent')\n"
	"  --json                 print a JSON summary on stdout\n"
	"  -q, --quiet            no progress lines, no next-steps block\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 no defect (blocked-by-host is not a defect), 1 a provider defect,\n"
	"2 bad usage or input, 3 internal or I/O error\n"
	"\n"
	"example: agsbx-evidence collect --provider landlock --sign-key ~/.ssh/id_ed25519 -o evidence.json\n";

#define MAX_LIST 32

struct collect_opts {
	const char *providers[MAX_LIST];
	int nproviders;
	const char *configs[MAX_LIST];
	int nconfigs;
	const char *attach[MAX_LIST];
	int nattach;
	const char *declared[MAX_LIST];
	bool declared_wrap[MAX_LIST];
	int ndeclared;
	const char *output, *sign_key, *run_as, *simulate, *work_dir, *challenge, *subject_repo;
	const char *host_policy, *userns_before;
	bool unsigned_, json, quiet;
	long long timeout_ms, max_output, jobs;
};

static int push(const char **list, int *n, const char *v, const char *flag)
{
	if (*n >= MAX_LIST)
		return agsbx_usage_error("collect", "%s given more than %d times", flag, MAX_LIST);
	list[(*n)++] = v;
	return 0;
}

enum { O_PROVIDER = AGSBX_OPT_LOCAL, O_UNSIGNED, O_SIGN, O_TIMEOUT, O_MAXOUT, O_JOBS, O_CONFIG, O_SIM, O_WORK,
       O_CHALLENGE, O_SUBJECT, O_ATTACH, O_HOSTPOL, O_USERNS_BEFORE, O_ADAPTER, O_WRAP };

/* One option into o: 0 or a usage error's exit status. */
static int store_option(struct collect_opts *o, int c, const char *v)
{
	switch (c) {
	case O_PROVIDER: return push(o->providers, &o->nproviders, v, "--provider");
	case 'o': o->output = v; return 0;
	case O_UNSIGNED: o->unsigned_ = true; return 0;
	case O_SIGN: o->sign_key = v; return 0;
	case AGSBX_OPT_RUN_AS: o->run_as = v; return 0;
	case O_TIMEOUT: return agsbx_parse_count("collect", "--timeout-ms", v, 100, 3600000, &o->timeout_ms);
	case O_MAXOUT: /* below the payload's result line nothing could be judged */
		return agsbx_parse_count("collect", "--max-output-bytes", v, AGSBX_PAYLOAD_RESULT_MAX, 64 << 20,
					 &o->max_output);
	case O_JOBS: return agsbx_parse_count("collect", "--jobs", v, 1, 64, &o->jobs);
	case O_CONFIG: return push(o->configs, &o->nconfigs, v, "--config");
	case O_SIM: o->simulate = v; return 0;
	case O_WORK: o->work_dir = v; return 0;
	case O_CHALLENGE: o->challenge = v; return 0;
	case O_SUBJECT: o->subject_repo = v; return 0;
	case O_ATTACH: return push(o->attach, &o->nattach, v, "--attach-command");
	case AGSBX_OPT_JSON: o->json = true; return 0;
	case O_HOSTPOL: o->host_policy = v; return 0;
	case O_USERNS_BEFORE: o->userns_before = v; return 0;
	case O_ADAPTER:
	case O_WRAP:
		o->declared_wrap[o->ndeclared < MAX_LIST ? o->ndeclared : 0] = c == O_WRAP;
		return push(o->declared, &o->ndeclared, v, c == O_WRAP ? "--wrap" : "--adapter");
	default: o->quiet = true; return 0; /* 'q' */
	}
}

/* The options that exclude, or need, each other. */
static int check_opts(const struct collect_opts *o)
{
	if (o->unsigned_ && o->sign_key)
		return agsbx_usage_error("collect", "--unsigned and --sign-key exclude each other");
	if (o->json && agsbx_is_stdout(o->output))
		return agsbx_usage_error("collect", "--json and --output - both write to stdout");
	if (o->simulate && strcmp(o->simulate, AGSBX_SIM_BLOCKED_USERNS) != 0)
		return agsbx_usage_error("collect", "--simulate: unknown simulation '%s' (known: blocked-userns)", o->simulate);
	if (o->host_policy && strcmp(o->host_policy, "distro-bwrap-profile") != 0)
		return agsbx_usage_error("collect", "--host-policy: unknown value '%s' (known: distro-bwrap-profile)",
					 o->host_policy);
	if (!o->host_policy != !o->userns_before)
		return agsbx_usage_error("collect", "--host-policy and --userns-sysctl-before go together");
	long long sysctl;
	if (o->userns_before && strcmp(o->userns_before, "absent") != 0 &&
	    agsbx_parse_count("collect", "--userns-sysctl-before", o->userns_before, 0, 16, &sysctl))
		return AGSBX_EXIT_USAGE;
	if (o->challenge && (!*o->challenge || strlen(o->challenge) > 256))
		return agsbx_usage_error("collect", "--challenge: expected 1 to 256 characters");
	return 0;
}

static int parse_args(int argc, char **argv, struct collect_opts *o)
{
	static const struct option lo[] = {
		{ "provider", required_argument, NULL, O_PROVIDER }, AGSBX_OPTION_OUTPUT,
		{ "unsigned", no_argument, NULL, O_UNSIGNED }, { "sign-key", required_argument, NULL, O_SIGN },
		AGSBX_OPTION_RUN_AS, { "timeout-ms", required_argument, NULL, O_TIMEOUT },
		{ "max-output-bytes", required_argument, NULL, O_MAXOUT }, { "jobs", required_argument, NULL, O_JOBS },
		{ "config", required_argument, NULL, O_CONFIG }, { "simulate", required_argument, NULL, O_SIM },
		{ "work-dir", required_argument, NULL, O_WORK }, { "challenge", required_argument, NULL, O_CHALLENGE },
		{ "subject-repo", required_argument, NULL, O_SUBJECT },
		{ "attach-command", required_argument, NULL, O_ATTACH }, AGSBX_OPTION_JSON,
		{ "quiet", no_argument, NULL, 'q' }, { "host-policy", required_argument, NULL, O_HOSTPOL },
		{ "userns-sysctl-before", required_argument, NULL, O_USERNS_BEFORE },
		{ "adapter", required_argument, NULL, O_ADAPTER }, { "wrap", required_argument, NULL, O_WRAP }, { 0 },
	};
	o->timeout_ms = 20000;
	o->max_output = AGSBX_RUN_DEFAULT_MAX_OUTPUT;
	struct agsbx_args a = { .cmd = "collect", .argc = argc, .argv = argv };
	int c, r;
	while ((c = agsbx_args_next(&a, lo)) > 0)
		if ((r = store_option(o, c, a.value)))
			return r;
	if (c < 0 || agsbx_args_operands(&a, 0, 0, NULL, NULL))
		return AGSBX_EXIT_USAGE;
	return check_opts(o);
}

/* A simulation tests one provider's fail-closed path; every other
 * provider runs on the real host (a seccomp filter around landlock would
 * otherwise show up as its "syscall restriction"). */
static const char *simulation_for(const struct collect_opts *o, const struct agsbx_provider_ops *p)
{
	const char *s = p->fail_closed_simulation;
	/* A declared provider (--adapter, --wrap) wraps a mechanism the
	 * harness cannot name in advance: the labelled simulation is its
	 * fail-closed test too. */
	if (o->simulate && p->declared)
		return o->simulate;
	return o->simulate && s && strcmp(o->simulate, s) == 0 ? o->simulate : NULL;
}

/* A simulation none of the selected providers tests simulates nothing:
 * said once; the bundle records the request with no provider, and the
 * run is not marked simulated. */
static void check_simulation_scope(const struct collect_opts *o, const struct agsbx_provider_ops **sel, int n)
{
	if (!o->simulate)
		return;
	for (int i = 0; i < n; i++)
		if (simulation_for(o, sel[i]))
			return;
	if (!o->quiet)
		agsbx_warn("--simulate %s applies to none of the selected providers (it tests bubblewrap's fail-closed "
			   "path): nothing is simulated", o->simulate);
}

/* ---- validation before anything runs (bad input → 2, nothing written) --- */

/* --adapter / --wrap: registered before selection, so --provider and
 * --config see them; a bad declaration stops everything (exit 2). */
static int declare_providers(const struct collect_opts *o)
{
	for (int i = 0; i < o->ndeclared; i++) {
		struct agsbx_error f = { 0 };
		const char *eq = strchr(o->declared[i], '=');
		for (int j = 0; j < i && eq; j++)
			if (strncmp(o->declared[j], o->declared[i], (size_t)(eq - o->declared[i]) + 1) == 0)
				return agsbx_usage_error("collect", "%s: id '%.*s' declared twice",
							 o->declared_wrap[i] ? "--wrap" : "--adapter",
							 (int)(eq - o->declared[i]), o->declared[i]);
		if (agsbx_external_declare(o->declared[i], o->declared_wrap[i], &f) < 0)
			return agsbx_usage_error("collect", "%s", f.message);
	}
	return 0;
}

static int select_providers(const struct collect_opts *o, const struct agsbx_provider_ops **sel, int *n)
{
	*n = 0;
	if (o->nproviders == 0) {
		for (size_t i = 0; i < agsbx_provider_builtin_count(); i++) {
			const struct agsbx_provider_ops *p = agsbx_provider_at(i);
			if (!p->applies || p->applies(p))
				sel[(*n)++] = p;
		}
		for (size_t i = 0; i < agsbx_external_count(); i++)
			sel[(*n)++] = agsbx_external_at(i);
		return 0;
	}
	for (int i = 0; i < o->nproviders; i++) {
		const struct agsbx_provider_ops *p = agsbx_provider_find(o->providers[i]);
		if (!p)
			return agsbx_usage_error("collect", "unknown provider '%s' (see 'agsbx-evidence providers')",
						 o->providers[i]);
		for (int j = 0; j < *n; j++)
			if (sel[j] == p)
				return agsbx_usage_error("collect", "provider '%s' given twice", p->id);
		sel[(*n)++] = p;
	}
	return 0;
}

static json_t *parse_configs(const struct collect_opts *o, const struct agsbx_provider_ops **sel, int n, int *rc)
{
	json_t *all = json_object();
	for (int i = 0; i < o->nconfigs; i++) {
		const char *s = o->configs[i];
		const char *dot = strchr(s, '.'), *eq = strchr(s, '=');
		if (!dot || !eq || dot > eq || dot == s || eq == dot + 1) {
			*rc = agsbx_usage_error("collect", "--config: expected ID.KEY=VALUE, got '%s'", s);
			json_decref(all);
			return NULL;
		}
		_cleanup_free_ char *id = strndup(s, (size_t)(dot - s));
		_cleanup_free_ char *key = strndup(dot + 1, (size_t)(eq - dot - 1));
		bool selected = false;
		for (int j = 0; j < n; j++)
			selected |= strcmp(sel[j]->id, id) == 0;
		if (!selected) {
			*rc = agsbx_usage_error("collect", "--config: provider '%s' is not selected", id);
			json_decref(all);
			return NULL;
		}
		json_error_t jerr;
		json_t *v = json_loads(eq + 1, JSON_DECODE_ANY, &jerr);
		if (!v)
			v = json_string(eq + 1);
		json_t *pc = json_object_get(all, id);
		if (!pc) {
			pc = json_object();
			json_object_set_new(all, id, pc);
		}
		json_object_set_new(pc, key, v);
	}
	/* Unknown keys are bad input: refuse before anything runs. */
	for (int j = 0; j < n; j++) {
		struct agsbx_error f = { 0 };
		if (agsbx_provider_configure(sel[j], json_object_get(all, sel[j]->id), &f) < 0) {
			*rc = agsbx_usage_error("collect", "--config: %s", f.message);
			json_decref(all);
			return NULL;
		}
	}
	return all;
}

static char *default_output(void)
{
	char host[256] = "host", ts[32];
	gethostname(host, sizeof host - 1);
	for (char *p = host; *p; p++)
		if (!(*p == '-' || *p == '.' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			*p = '_';
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
	char *p = NULL;
	return asprintf(&p, "agsbx-evidence-%s-%s.json", host, ts) < 0 ? NULL : p;
}

static int check_output_path(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);
	if (!copy)
		return AGSBX_EXIT_INTERNAL;
	char *slash = strrchr(copy, '/');
	const char *dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return agsbx_usage_error("collect", "--output %s is a directory", path);
	/* the bundle replaces a regular file only: a FIFO, socket or device
	 * there is a mistake (or a trap), refused before anything runs */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return agsbx_usage_error("collect", "--output %s: %s", path, agsbx_file_strerror(-EINVAL));
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return agsbx_usage_error("collect", "--output: directory %s does not exist", dir);
	if (access(dir, W_OK) < 0)
		return agsbx_usage_error("collect", "--output: directory %s is not writable", dir);
	return 0;
}

static int make_work_dir(const char *parent, bool run_as, char **out)
{
	const char *base = parent ? parent : getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	char real[PATH_MAX];
	if (!realpath(base, real))
		return agsbx_usage_error("collect", "--work-dir %s: %s", base, strerror(errno));
	/* The path as given must not route through a symlink: grant paths are
	 * derived from it, and a symlink could point them anywhere. */
	if (base[0] == '/' && agsbx_path_check_no_symlink(base) == -ELOOP)
		return agsbx_usage_error("collect", "--work-dir %s contains a symlink; give the real path (%s)", base, real);
	/* Root works by path above the grant roots: with --run-as no other user
	 * may be able to rename or replace anything on the way (base/fsat.h). */
	char bad[PATH_MAX];
	if (run_as && agsbx_path_check_private(real, bad, sizeof bad) == -EPERM)
		return agsbx_usage_error("collect", "--work-dir %s: %s can be changed by a user other than root; "
				       "with --run-as use a directory only root can write", base, bad);
	char *d = NULL;
	if (asprintf(&d, "%s/agsbx-run-XXXXXX", real) < 0 || !mkdtemp(d)) {
		free(d);
		return agsbx_usage_error("collect", "cannot create a work dir in %s: %s", real, strerror(errno));
	}
	/* Traversable by a --run-as user; the areas inside carry their own modes. */
	chmod(d, 0755);
	/* Owned by this process: after a SIGKILL the next run or `cleanup`
	 * can tell it is a dead run's. */
	int r = agsbx_rundir_claim(d);
	if (r < 0) {
		rmdir(d);
		free(d);
		agsbx_error_errno(r, "cannot record the owner of the work dir");
		return AGSBX_EXIT_INTERNAL;
	}
	agsbx_rundir_set_primary(d);   /* home canaries are noted there */
	*out = d;
	return 0;
}

/* ---- progress and summary -------------------------------------------- */

struct progress {
	bool quiet, color, tty;
};

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

static void full_line(const struct progress *p, const char *provider, const json_t *check)
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
static void on_check(void *ud, const struct agsbx_collect_worker *w, const json_t *check)
{
	struct progress *p = ud;
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

static void end_progress(struct progress *p)
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

/* ---- the bundle ------------------------------------------------------- */

/* The facts context.* is made of, gathered here (the host probe, the
 * harness's capability sets, the selection); evidence/ shapes them. */
static json_t *context_json(const struct agsbx_harness *hs, const struct collect_opts *o, const json_t *host,
			    const struct agsbx_provider_ops **sel, int n)
{
	_cleanup_json_ json_t *ids = json_array();
	for (int i = 0; o->simulate && i < n; i++)
		if (simulation_for(o, sel[i]))
			json_array_append_new(ids, json_string(sel[i]->id));
	struct agsbx_bundle_context c = {
		.run_as_name = hs->run_as_name,
		.container = json_is_true(agsbx_probe_value(host, "container", "detected")),
		.container_markers = agsbx_probe_value(host, "container", "markers"),
		.simulate = o->simulate, .simulated = ids,
		.userns_before = o->host_policy ? o->userns_before : NULL,
	};
	char eff[17] = "", prm[17] = "", amb[17] = "";
	c.have_caps = agsbx_self_caps(eff, prm, amb);
	c.cap_eff = eff, c.cap_prm = prm, c.cap_amb = amb;
	return agsbx_bundle_context(&c);
}

static int add_context_members(json_t *bundle, const struct collect_opts *o)
{
	if (o->challenge)
		json_object_set_new(bundle, "challenge", json_string(o->challenge));
	if (o->subject_repo) {
		char err[512] = "";
		json_t *s = agsbx_subject_from_repo(o->subject_repo, err, sizeof err);
		if (!s)
			return agsbx_usage_error("collect", "--subject-repo %s: %s", o->subject_repo, err);
		json_object_set_new(bundle, "subject", s);
	}
	json_t *att = json_array();
	json_object_set_new(bundle, "attachments", att);
	for (int i = 0; i < o->nattach; i++) {
		char err[512] = "";
		if (!o->quiet)
			agsbx_note("running attached command: %s", o->attach[i]);
		json_t *a = agsbx_attachment_run(o->attach[i], 30 * 60 * 1000, 8192, err, sizeof err);
		if (!a)
			return agsbx_usage_error("collect", "--attach-command '%s': %s", o->attach[i], err);
		json_array_append_new(att, a);
	}
	return 0;
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

/* What every worker needs to run its provider's matrix. */
struct run_shared {
	const struct agsbx_harness *hs;
	const struct collect_opts *o;
	const struct agsbx_provider_ops **sel;
	const json_t *configs;
	const char *work_dir;
	const char *canary_name, *canary_value;
	int check_jobs;
};

static void report_progress(void *ud, const char *provider, const json_t *check)
{
	(void)provider;
	agsbx_collect_report_check(*(const int *)ud, check);
}

/* In provider i's worker process. */
static json_t *run_one(size_t i, int report_fd, int cancel_fd, void *ud, char *err, size_t err_size)
{
	const struct run_shared *sh = ud;
	struct agsbx_ctx ctx = sh->hs->ctx;
	ctx.simulate = simulation_for(sh->o, sh->sel[i]);
	ctx.config = json_object_get(sh->configs, sh->sel[i]->id);
	_cleanup_free_ char *canary = NULL;
	if (asprintf(&canary, "%s=%s", sh->canary_name, sh->canary_value) >= 0)
		ctx.env_canary = canary;
	/* Its own directory in the run's: providers run at once, and one's
	 * files must not look like another's residue. */
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof dir, "%s/%s", sh->work_dir, sh->sel[i]->id) >= (int)sizeof dir ||
	    mkdir(dir, 0755) < 0 || chmod(dir, 0755) < 0) {
		snprintf(err, err_size, "cannot create %s: %s", dir, strerror(errno));
		return NULL;
	}
	struct agsbx_conformance_opts mo = {
		.ctx = &ctx, .work_dir = dir, .env_canary_name = sh->canary_name,
		.env_canary_value = sh->canary_value, .max_output_bytes = (size_t)sh->o->max_output,
		.timeout_ms = sh->o->timeout_ms, .jobs = sh->check_jobs, .cancel_fd = cancel_fd,
		.progress = report_progress, .progress_ud = &report_fd,
	};
	json_t *pj = agsbx_conformance_run(sh->sel[i], &mo, err, err_size);
	rmdir(dir); /* the areas inside are removed by the matrix */
	if (pj && ctx.config)
		json_object_set(pj, "config", (json_t *)ctx.config);
	return pj;
}

/* How many providers run at once: --jobs bounds it; by default all of
 * them (a provider spends most of its time waiting on its mechanism, and
 * the lifecycle checks' timeouts are sleeps). */
static int provider_jobs(const struct collect_opts *o, int n)
{
	int j = o->jobs > 0 ? (int)o->jobs : n;
	return j < 1 ? 1 : j > n ? n : j;
}

/* Concurrent checks within a provider: --jobs, or the online cores. */
static int check_jobs(const struct collect_opts *o)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return o->jobs > 0 ? (int)o->jobs : (int)(cores > 0 ? cores : 2);
}

/* The run's timings: when each provider's worker ran, relative to the
 * start of the pool, and how concurrent the run was. */
static json_t *run_timings(const struct agsbx_collect_pool *pool, int check_jobs)
{
	json_t *per = json_array();
	for (size_t i = 0; i < pool->n; i++) {
		const struct agsbx_collect_worker *w = &pool->w[i];
		json_array_append_new(per, json_pack("{s:s, s:I, s:I}", "id", w->ops->id, "start_us",
						     (json_int_t)(w->start_us - pool->start_us), "end_us",
						     (json_int_t)(w->end_us - pool->start_us)));
	}
	return json_pack("{s:s, s:I, s:{s:i, s:i, s:s}, s:o}", "method",
			 "CLOCK_MONOTONIC, integer microseconds; providers[].start_us/end_us are offsets from the "
			 "start of the provider runs (fork to reaping of each provider's worker process)",
			 "providers_us", (json_int_t)(agsbx_now_us() - pool->start_us), "concurrency", "providers",
			 pool->max_live, "checks_per_provider", check_jobs, "isolation",
			 "one worker process per provider, each its own child subreaper", "providers", per);
}

static int run_providers(struct agsbx_harness *hs, const struct collect_opts *o, const struct agsbx_provider_ops **sel,
			 int n, const json_t *configs, const char *work_dir, json_t *bundle)
{
	char name[64], value[65];
	char hex[17];
	agsbx_random_hex(hex, 8);
	snprintf(name, sizeof name, "AGSBX_CANARY_%s", hex);
	agsbx_random_hex(value, 32);
	/* In our own environment, before any worker: a provider that passes
	 * the host environment through shows it to the payload. */
	setenv(name, value, 1);
	struct progress pr = { .quiet = o->quiet, .color = agsbx_use_color(STDERR_FILENO),
			       .tty = agsbx_term_capable(STDERR_FILENO) };
	struct run_shared sh = { .hs = hs, .o = o, .sel = sel, .configs = configs, .work_dir = work_dir,
				 .canary_name = name, .canary_value = value, .check_jobs = check_jobs(o) };
	struct agsbx_collect_pool pool = { .w = calloc((size_t)n, sizeof *pool.w), .n = (size_t)n,
					   .max_live = provider_jobs(o, n), .run = run_one, .on_check = on_check,
					   .run_ud = &sh, .ud = &pr };
	if (!pool.w)
		return AGSBX_EXIT_INTERNAL;
	for (int i = 0; i < n; i++)
		pool.w[i].ops = sel[i];
	int rc = 0;
	int r = agsbx_collect_pool_run(&pool);
	end_progress(&pr);
	if (agsbx_interrupt_signal()) {
		/* the workers cancelled and cleaned up; the caller exits 128+sig */
		unsetenv(name);
		agsbx_collect_pool_clear(&pool);
		return 0;
	}
	unsetenv(name);
	json_t *providers = json_array();
	json_object_set_new(bundle, "providers", providers);
	for (int i = 0; i < n && r == 0; i++) {
		if (!pool.w[i].result) {
			agsbx_error("%s: %s", sel[i]->id, pool.w[i].error);
			rc = AGSBX_EXIT_INTERNAL;
			break;
		}
		json_array_append(providers, pool.w[i].result);
	}
	if (r < 0) {
		agsbx_error_errno(r, "cannot start the provider runs");
		rc = AGSBX_EXIT_INTERNAL;
	}
	if (rc == 0)
		json_object_set_new(bundle, "timings", run_timings(&pool, sh.check_jobs));
	agsbx_collect_pool_clear(&pool);
	return rc;
}

/* Leftovers of collects that were killed (SIGKILL cannot be caught):
 * removed before this run adds its own; a live run's are never touched. */
static void sweep_dead_runs(const struct collect_opts *o, const struct agsbx_harness *hs)
{
	_cleanup_json_ json_t *found = json_array();
	int failed = agsbx_cleanup_dead_runs(o->work_dir, &hs->ctx, false, found);
	if (json_array_size(found) && !o->quiet)
		agsbx_note("removed %zu leftover(s) of killed runs%s (see 'agsbx-evidence cleanup')",
			   json_array_size(found) - (size_t)failed, failed ? "; some could not be removed" : "");
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

/* Interrupts are handled from here on (before anything is created that
 * must not outlive the run); then the harness, then the leftovers of
 * killed runs go. */
static int start_harness(const struct collect_opts *o, struct agsbx_harness *hs)
{
	if (agsbx_interrupt_install() < 0)
		agsbx_warn("cannot install the interrupt handlers; an interrupted run may leave processes behind");
	int rc = agsbx_harness_init(hs, "collect", o->run_as, false);
	if (rc) {
		agsbx_interrupt_restore();
		return rc;
	}
	sweep_dead_runs(o, hs);
	return 0;
}

/* The exit status for an interrupted run: 128 + the signal, as a shell
 * reports a process killed by it (130 SIGINT, 143 SIGTERM, 129 SIGHUP). */
static int interrupted(const struct collect_opts *o)
{
	int sig = agsbx_interrupt_signal();
	if (!o->quiet)
		agsbx_note("interrupted by SIG%s: every execution cancelled and cleaned up; no bundle written",
			   sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	return 128 + sig;
}

/* A key that cannot sign is bad input found before the matrix runs, not
 * after it (the run would be lost). */
static int check_sign_key(const char *key)
{
	char err[512] = "";
	if (agsbx_bundle_sign_check(key, err, sizeof err) == 0)
		return 0;
	agsbx_error("--sign-key: %s", err);
	return AGSBX_EXIT_USAGE;
}

/* The bundle is complete once its providers ran: summary, signature,
 * the file, then what the user sees. Returns the exit status. */
static int finish_and_write(const struct collect_opts *o, const char *output, json_t *bundle, bool *written)
{
	if (agsbx_interrupt_signal())
		return interrupted(o);
	int status = agsbx_bundle_finish(bundle);
	if (o->sign_key) {
		char err[512] = "";
		if (agsbx_bundle_sign(bundle, o->sign_key, err, sizeof err) < 0) {
			agsbx_error("signing failed: %s", err);
			return AGSBX_EXIT_USAGE;
		}
	}
	if (agsbx_interrupt_signal())
		return interrupted(o);
	int w = agsbx_cli_write_json(output, bundle);
	if (w < 0) {
		agsbx_error_errno(w, "cannot write %s", output);
		return AGSBX_EXIT_INTERNAL;
	}
	*written = true;
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
	return status;
}

/* The document: top level, attachments, host and context, the
 * providers' records, then finish and write. Returns the exit status. */
static int collect_bundle(struct agsbx_harness *hs, const struct collect_opts *o, const struct agsbx_provider_ops **sel,
			  int n, const json_t *configs, const char *work, const char *output, bool *written)
{
	_cleanup_json_ json_t *bundle = agsbx_bundle_new();
	if (!bundle)
		return AGSBX_EXIT_INTERNAL;
	int rc = add_context_members(bundle, o);
	if (rc)
		return rc;
	hs->host = agsbx_probe_host(NULL);
	hs->ctx.host = hs->host;
	json_object_set(bundle, "host", hs->host);
	json_object_set_new(bundle, "context", context_json(hs, o, hs->host, sel, n));
	if ((rc = run_providers(hs, o, sel, n, configs, work, bundle)))
		return rc;
	return finish_and_write(o, output, bundle, written);
}

int agsbx_cmd_collect(int argc, char **argv)
{
	struct collect_opts o = { 0 };
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	const struct agsbx_provider_ops *sel[MAX_LIST + 16 + AGSBX_EXTERNAL_MAX];
	int n = 0;
	if ((rc = declare_providers(&o)) || (rc = select_providers(&o, sel, &n)))
		return rc;
	check_simulation_scope(&o, sel, n);
	_cleanup_json_ json_t *configs = parse_configs(&o, sel, n, &rc);
	if (!configs)
		return rc;
	_cleanup_free_ char *output = o.output ? strdup(o.output) : default_output();
	if (!output)
		return AGSBX_EXIT_INTERNAL;
	if (!agsbx_is_stdout(output) && (rc = check_output_path(output)))
		return rc;
	if (o.sign_key && (rc = agsbx_check_regular(o.sign_key)) < 0)
		return agsbx_usage_error("collect", "--sign-key %s: %s", o.sign_key, agsbx_file_strerror(rc));
	if (o.sign_key && (rc = check_sign_key(o.sign_key)))
		return rc;
	struct agsbx_harness hs;
	if ((rc = start_harness(&o, &hs)))
		return rc;
	if (geteuid() == 0 && !o.run_as && !o.quiet)
		agsbx_warn("running as root: results are not representative of a normal user");
	_cleanup_free_ char *work = NULL;
	if ((rc = make_work_dir(o.work_dir, o.run_as != NULL, &work))) {
		agsbx_harness_clear(&hs);
		agsbx_interrupt_restore();
		return rc;
	}
	bool bundle_written = false;
	rc = collect_bundle(&hs, &o, sel, n, configs, work, output, &bundle_written);
	agsbx_rundir_set_primary(NULL);
	if (work)
		agsbx_rm_tree(work); /* areas are removed per provider; the rest and the dir last */
	agsbx_harness_clear(&hs);
	/* Interrupted before the bundle was complete (an early return above
	 * never reached the write): the signal decides the status. */
	if (agsbx_interrupt_signal() && !bundle_written && rc != 128 + agsbx_interrupt_signal())
		rc = interrupted(&o);
	/* A written bundle is the outcome, whatever signal comes before the exit. */
	if (bundle_written)
		agsbx_interrupt_hold();
	else
		agsbx_interrupt_restore();
	return rc;
}
