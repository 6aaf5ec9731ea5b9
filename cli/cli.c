#include "cli/commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/runner.h"
#include "base/util.h"

static const struct agsbx_command commands[] = {
	{ "probe", "probe [--json]                      read-only host facts", agsbx_cmd_probe },
	{ "providers", "providers [--json]                  providers, availability, reasons, claims", agsbx_cmd_providers },
	{ "collect", "collect [options]                   run the acceptance matrix, write a bundle", agsbx_cmd_collect },
	{ "verify", "verify FILE [--key PUB|--allowed-signers F|--keys-url URL]  check a bundle", agsbx_cmd_verify },
	{ "report", "report FILE [--format text|markdown|junit|tap]", agsbx_cmd_report },
	{ "diff", "diff OLD NEW [--format text|markdown|json]", agsbx_cmd_diff },
	{ "matrix", "matrix FILE... [--format markdown|json]", agsbx_cmd_matrix },
	{ "keygen", "keygen -f FILE                      an Ed25519 key pair (OpenSSH format)", agsbx_cmd_keygen },
	{ "bench", "bench [--provider ID]               spawn latency per provider vs fork+exec", agsbx_cmd_bench },
	{ "cleanup", "cleanup [--dry-run]                 remove what runs killed with SIGKILL left", agsbx_cmd_cleanup },
	{ "schema", "schema NAME                         print a shipped JSON Schema", agsbx_cmd_schema },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: agsbx-evidence [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %s\n", commands[i].synopsis);
	fprintf(f, "\nexit status: 0 no defect, 1 defect (verify: not valid/trusted), 2 bad usage or input,\n"
		   "3 internal or I/O error. 'agsbx-evidence COMMAND --help' for a command's options.\n");
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

bool agsbx_wants_help(int argc, char **argv, const char *help)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(help, stdout);
			return true;
		}
	}
	return false;
}

int agsbx_cli_main(int argc, char **argv)
{
	if (argc < 2)
		return agsbx_usage_error(NULL, "no command given");
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return AGSBX_EXIT_OK;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("agsbx-evidence %s (%s)\n", agsbx_version(), agsbx_git_commit());
		return AGSBX_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(commands[i].name, cmd) == 0) {
			/* Subreaper before any thread or child exists, so every
			 * detached descendant of every run comes back to us. */
			if (agsbx_runner_init() < 0)
				agsbx_warn("cannot become a child subreaper; detached processes may escape cleanup");
			return commands[i].run(argc - 1, argv + 1);
		}
	}
	return agsbx_usage_error(NULL, "unknown command '%s'", cmd);
}
