/* One cmd-<verb>.c per subcommand; dispatched from the table in cli.c.
 * Each returns the process exit status (AGSBX_EXIT_*). Only cli/ exits. */
#ifndef AGSBX_CLI_COMMANDS_H
#define AGSBX_CLI_COMMANDS_H

#include <stdbool.h>

enum {
	AGSBX_EXIT_OK = 0,        /* no defect found (blocked-by-host counts as no defect) */
	AGSBX_EXIT_DEFECT = 1,    /* a provider defect; for verify: invalid/untrusted/unsigned */
	AGSBX_EXIT_USAGE = 2,     /* bad usage or bad input */
	AGSBX_EXIT_INTERNAL = 3,  /* internal or I/O error */
};

struct agsbx_command {
	const char *name;
	const char *synopsis;     /* one line, shown in usage */
	int (*run)(int argc, char **argv);
};

int agsbx_cmd_probe(int argc, char **argv);
int agsbx_cmd_providers(int argc, char **argv);
int agsbx_cmd_collect(int argc, char **argv);
int agsbx_cmd_verify(int argc, char **argv);
int agsbx_cmd_report(int argc, char **argv);
int agsbx_cmd_diff(int argc, char **argv);
int agsbx_cmd_matrix(int argc, char **argv);
int agsbx_cmd_keygen(int argc, char **argv);
int agsbx_cmd_bench(int argc, char **argv);
int agsbx_cmd_schema(int argc, char **argv);
int agsbx_cmd_cleanup(int argc, char **argv);

/* Prints "agsbx-evidence: error: <msg>" and the command's usage hint to
 * stderr; returns AGSBX_EXIT_USAGE. */
int agsbx_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when argv[i] is --help/-h; prints the command's help on stdout. */
bool agsbx_wants_help(int argc, char **argv, const char *help);

int agsbx_cli_main(int argc, char **argv);

#endif
