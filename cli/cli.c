#include "cli/commands.h"

#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/runner.h"
#include "base/util.h"

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

/* A usage error of the command line itself (no command, an unknown
 * one): the error, then the top-level usage. */
static int top_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int top_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = agsbx_usage_errorv(NULL, fmt, ap);
	va_end(ap);
	usage(stderr);
	return rc;
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
		return top_usage_error("%s '%s' (did you mean '%s'?)", what, typed, best);
	return top_usage_error("%s '%s'", what, typed);
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2)
		return top_usage_error("no command given");
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


/* A command's result is on stdout: if it could not be written in full
 * (disk full, closed descriptor) the command failed, whatever it found. */
int agsbx_cli_main(int argc, char **argv)
{
	agsbx_cli_set_argv0(argc > 0 ? argv[0] : NULL);
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
