#include "cli/commands.h"

#include <errno.h>
#include <obstack.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/util.h"
#include "evidence/evidence.h"

#define NEEDS_RUNNER AGSBX_CMD_NEEDS_RUNNER

static const struct agsbx_command commands[] = {
	{ "probe", agsbx_cmd_probe, NEEDS_RUNNER, "probe [--json]                      read-only host facts",
	  agsbx_help_probe },
#ifndef AGSBX_PORTABLE /* needs the conformance core */
	{ "providers", agsbx_cmd_providers, NEEDS_RUNNER,
	  "providers [--json]                  providers, availability, reasons, claims", agsbx_help_providers },
	{ "collect", agsbx_cmd_collect, NEEDS_RUNNER,
	  "collect [options]                   run the acceptance matrix, write a bundle", agsbx_help_collect },
	{ "checks", agsbx_cmd_checks, 0, "checks [--json]                     the check catalogue: axes, attacks, controls",
	  agsbx_help_checks },
#endif
	{ "verify", agsbx_cmd_verify, 0,
	  "verify FILE [--key PUB|--allowed-signers F|--keys-url URL]  check a bundle", agsbx_help_verify },
	{ "report", agsbx_cmd_report, 0, "report FILE [--format text|markdown|junit|tap]", agsbx_help_report },
	{ "diff", agsbx_cmd_diff, 0, "diff OLD NEW [--format text|markdown|json]", agsbx_help_diff },
	{ "matrix", agsbx_cmd_matrix, 0, "matrix FILE... [--format markdown|json|badge]", agsbx_help_matrix },
	{ "attest", agsbx_cmd_attest, 0, "attest FILE [-o OUT]                 in-toto test-result statement for a bundle",
	  agsbx_help_attest },
	{ "keygen", agsbx_cmd_keygen, 0, "keygen -f FILE                      an Ed25519 key pair (OpenSSH format)",
	  agsbx_help_keygen },
#ifndef AGSBX_PORTABLE /* needs the conformance core */
	{ "bench", agsbx_cmd_bench, NEEDS_RUNNER,
	  "bench [--provider ID]               spawn latency per provider vs fork+exec", agsbx_help_bench },
#endif
#ifndef AGSBX_PORTABLE /* needs the providers' clean-up and the Linux runner */
	{ "cleanup", agsbx_cmd_cleanup, NEEDS_RUNNER,
	  "cleanup [--dry-run]                 remove what runs killed with SIGKILL left", agsbx_help_cleanup },
#endif
	{ "schema", agsbx_cmd_schema, 0, "schema NAME                         print a shipped JSON Schema",
	  agsbx_help_schema },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: agsbx-evidence [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %s\n", commands[i].synopsis);
	fprintf(f, "\nexit status: 0 no defect, 1 defect (verify: not valid/trusted), 2 bad usage or input,\n"
		   "3 internal or I/O error. 'agsbx-evidence help COMMAND' (or COMMAND --help) for a\n"
		   "command's options. Where a command writes a file, '-' means stdout.\n"
		   "\n"
		   "example: agsbx-evidence collect --sign-key ~/.ssh/id_ed25519 -o evidence.json\n");
}

int agsbx_usage_error(const char *cmd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	agsbx_error("%s", buf);
	if (cmd)
		agsbx_hint("see 'agsbx-evidence %s --help'", cmd);
	else
		usage(stderr);
	return AGSBX_EXIT_USAGE;
}

static const struct agsbx_command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* "--help" or "-h" before any "--": the command's help, whatever else
 * the line says. */
static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	}
	return false;
}

/* git's run_builtin: the set-up a command's flags ask for, done here once. */
static int run_command(const struct agsbx_command *c, int argc, char **argv)
{
	if (wants_help(argc, argv)) {
		fputs(c->help, stdout);
		return AGSBX_EXIT_OK;
	}
	/* Subreaper before any thread or child exists, so every detached
	 * descendant of every run comes back to us. */
	if ((c->flags & AGSBX_CMD_NEEDS_RUNNER) && agsbx_runner_init() < 0)
		agsbx_warn("cannot become a child subreaper; detached processes may escape cleanup");
	return c->run(argc, argv);
}

static int load_reported(int r, const char *err)
{
	if (r < 0) {
		agsbx_error("%s", err);
		return AGSBX_EXIT_USAGE;
	}
	return 0;
}

int agsbx_cli_load_bundle(const char *file, json_t **bundle)
{
	struct agsbx_error e = { 0 };
	return load_reported(agsbx_bundle_load(file, bundle, &e), e.message);
}

/* jansson's values from glibc's obstack, never given back: a command that
 * reads one bundle and exits frees it all at once, and a bundle is tens
 * of thousands of small allocations (malloc and free were ~16% of verify's
 * time). Bounded by the bundle (load.c caps its size). Only before any
 * jansson value exists: one malloc'd earlier would be leaked, never
 * handed to free() from here. */
/* Not under ASan: it would see one arena chunk, not each value. */
#ifndef __SANITIZE_ADDRESS__
static void *chunk_alloc(size_t n)
{
	void *p = malloc(n);
	if (p)
		agsbx_prefault(p, n);
	return p;
}
#define obstack_chunk_alloc chunk_alloc
#define obstack_chunk_free free
static struct obstack json_arena;

static void arena_exhausted(void)
{
	agsbx_error("out of memory");
	exit(AGSBX_EXIT_INTERNAL);
}

static void *arena_alloc(size_t n) { return obstack_alloc(&json_arena, n); }

static void arena_free(void *p) { (void)p; }

bool agsbx_cli_json_arena(void)
{
	obstack_alloc_failed_handler = arena_exhausted;
	obstack_init(&json_arena);
	/* Not 4 KiB chunks: a 1 MiB bundle would take a thousand of them. */
	obstack_chunk_size(&json_arena) = 256 << 10;
	json_set_alloc_funcs(arena_alloc, arena_free);
	return true;
}
#else
bool agsbx_cli_json_arena(void) { return false; }
#endif

int agsbx_cli_load_bundle_digest(const char *file, json_t **bundle, uint8_t sha512[64], bool *sha512_ok)
{
	struct agsbx_error e = { 0 };
	return load_reported(agsbx_bundle_load_digest(file, bundle, sha512, sha512_ok, &e), e.message);
}

bool agsbx_is_stdout(const char *path)
{
	return path && strcmp(path, "-") == 0;
}

int agsbx_cli_write_json(const char *path, const json_t *j)
{
	if (!agsbx_is_stdout(path))
		return agsbx_bundle_write(path, j);
	size_t len;
	_cleanup_free_ char *canon = agsbx_json_canonical(j, NULL, &len);
	if (!canon)
		return -errno;
	int r = agsbx_cli_print_json(j, JSON_SORT_KEYS);
	return r < 0 ? r : agsbx_flush_errno(stdout);
}

/* fflush's failure with the errno of the write that failed (ENOSPC on a
 * full disk or /dev/full), EIO only when the stream kept none. */
int agsbx_flush_errno(FILE *f)
{
	errno = 0;
	if (fflush(f) == EOF)
		return errno ? -errno : -EIO;
	return ferror(f) ? -EIO : 0;
}

/* JSON for a terminal or a pipe: non-ASCII as \u escapes, so a C1 or bidi
 * control from a sandbox is inert text wherever the output is shown; any
 * JSON reader decodes the same value. */
int agsbx_cli_print_json(const json_t *j, size_t flags)
{
	errno = 0;
	if (json_dumpf(j, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII | flags) < 0 || fputc('\n', stdout) == EOF)
		return errno ? -errno : -EIO;
	return 0;
}

int agsbx_output_open(struct agsbx_output *o, const char *path)
{
	memset(o, 0, sizeof *o);
	if (!path || agsbx_is_stdout(path)) {
		o->f = stdout;
		return 0;
	}
	/* The rename below would replace a device node (--output /dev/null as
	 * root) or a FIFO with a regular file. */
	int t = agsbx_check_output_target(path);
	if (t < 0) {
		agsbx_error("cannot write %s: %s", path, agsbx_file_strerror(t));
		return t;
	}
	if (asprintf(&o->tmp, "%s.tmp-XXXXXX", path) < 0 || !(o->path = strdup(path)))
		return -ENOMEM;
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;
		agsbx_error_errno(r, "cannot write %s", path);
		free(o->tmp);
		o->tmp = NULL;
		/* callers that fail here never commit or close (matrix leaked it) */
		free(o->path);
		o->path = NULL;
		return r;
	}
	fchmod(fd, 0644);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		return -errno;
	}
	return 0;
}

int agsbx_output_commit(struct agsbx_output *o)
{
	if (o->f == stdout)
		return agsbx_flush_errno(stdout);
	int r = agsbx_flush_errno(o->f);
	errno = 0;
	if (fclose(o->f) == EOF && r == 0)
		r = errno ? -errno : -EIO;
	o->f = NULL;
	if (r == 0 && rename(o->tmp, o->path) < 0)
		r = -errno;
	if (r == 0) {
		free(o->tmp);
		o->tmp = NULL;
	}
	return r;
}

void agsbx_output_closep(struct agsbx_output *o)
{
	if (!o)
		return;
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof *o);
}

/* The usage error for a command name nobody knows, with the one command
 * a typo most likely meant ("colect": collect). */
static int unknown_command(const char *what, const char *typed)
{
	const char *names[sizeof commands / sizeof commands[0] + 1];
	size_t n = 0;
	for (; n < sizeof commands / sizeof commands[0]; n++)
		names[n] = commands[n].name;
	names[n++] = "help";
	const char *best = agsbx_closest(typed, names, n);
	if (best)
		return agsbx_usage_error(NULL, "%s '%s' (did you mean '%s'?)", what, typed, best);
	return agsbx_usage_error(NULL, "%s '%s'", what, typed);
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2)
		return agsbx_usage_error(NULL, "no command given");
	const char *cmd = argv[1];
	const struct agsbx_command *c;
	/* help --help, help -h and help help are help itself: the usage */
	if (strcmp(cmd, "help") == 0 && argc > 2 && strcmp(argv[2], "--help") != 0 && strcmp(argv[2], "-h") != 0
	    && strcmp(argv[2], "help") != 0) {
		if (!(c = find_command(argv[2])))
			return unknown_command("help: unknown command", argv[2]);
		fputs(c->help, stdout);
		return AGSBX_EXIT_OK;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return AGSBX_EXIT_OK;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("agsbx-evidence %s (%s)\n", agsbx_version(), agsbx_git_commit());
		return AGSBX_EXIT_OK;
	}
	if (!(c = find_command(cmd)))
		return unknown_command("unknown command", cmd);
	return run_command(c, argc - 1, argv + 1);
}

static const char *invoked_as = "agsbx-evidence";

/* argv[0] as typed when it has a directory (./build/agsbx-evidence), else
 * the name PATH found; single-quoted when the shell would split it. */
const char *agsbx_cli_argv0(void)
{
	return invoked_as;
}

static void set_invoked_as(const char *argv0)
{
	static char quoted[512];
	if (!argv0 || !strchr(argv0, '/'))
		return;
	if (argv0[strspn(argv0, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-~")] == '\0') {
		invoked_as = argv0;
		return;
	}
	if (strchr(argv0, '\'') || strlen(argv0) + 3 > sizeof quoted)
		return; /* keep the plain name rather than print a broken quote */
	snprintf(quoted, sizeof quoted, "'%s'", argv0);
	invoked_as = quoted;
}

/* A command's result is on stdout: if it could not be written in full
 * (disk full, closed descriptor) the command failed, whatever it found. */
int agsbx_cli_main(int argc, char **argv)
{
	set_invoked_as(argc > 0 ? argv[0] : NULL);
	int rc = dispatch(argc, argv);
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		int e = errno ? errno : EIO;
		if (rc != AGSBX_EXIT_INTERNAL) /* else the command said so already */
			agsbx_error("cannot write to stdout: %s", strerror(e));
		return AGSBX_EXIT_INTERNAL;
	}
	return rc;
}
