/* collect's options and the checks of its output and work dir: bad input
 * is found here, before anything runs (exit 2, nothing written). */
#include "cli/collect.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/defaults.h"
#include "base/fsat.h"
#include "base/log.h"
#include "base/rundir.h"
#include "base/runner.h"
#include "base/util.h"
#include "cli/commands.h"
#include "conformance/conformance.h"
#include "probes/probes.h"

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
	"  --timeout-ms N         per-execution timeout (default " AGSBX_DEFAULT_STR(AGSBX_EXEC_TIMEOUT_MS) ")\n"
	"  --max-output-bytes N   per-stream capture limit (default " AGSBX_DEFAULT_STR(AGSBX_RUN_DEFAULT_MAX_OUTPUT) ")\n"
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

int agsbx_collect_parse_args(int argc, char **argv, struct collect_opts *o)
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
	o->timeout_ms = AGSBX_EXEC_TIMEOUT_MS;
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

char *agsbx_collect_default_output(void)
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

int agsbx_collect_check_output(const char *path)
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

int agsbx_collect_make_work_dir(const char *parent, bool run_as, char **out)
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
