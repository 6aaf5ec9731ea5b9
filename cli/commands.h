/* One cmd-<verb>.c per subcommand; dispatched from the table in cli.c.
 * Each returns the process exit status (AGSBX_EXIT_*). Only cli/ exits. */
#ifndef AGSBX_CLI_COMMANDS_H
#define AGSBX_CLI_COMMANDS_H

#include <stdbool.h>
#include <jansson.h>

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
int agsbx_cmd_attest(int argc, char **argv);

/* Prints "agsbx-evidence: error: <msg>" and the command's usage hint to
 * stderr; returns AGSBX_EXIT_USAGE. */
int agsbx_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when argv[i] is --help/-h; prints the command's help on stdout. */
bool agsbx_wants_help(int argc, char **argv, const char *help);

/* Writes a JSON document (indented, sorted keys, canonical-safe) to path
 * atomically, or to stdout when path is "-". 0 or -errno. */
int agsbx_cli_write_json(const char *path, const json_t *j);
/* "--opt VALUE" or "--opt=VALUE" at argv[*i] (advances *i): the value, or
 * NULL when argv[*i] is not opt (*missing: it is, without a value). */
const char *agsbx_opt_value(int argc, char **argv, int *i, const char *opt, bool *missing);
/* Consumes a trust-anchor option (--key, --allowed-signers, --identity,
 * --keys-url, --allow-insecure-keys-url) into o; false when argv[*i] is
 * none of them (or lacks its value: *missing). */
struct agsbx_verify_opts;
bool agsbx_trust_option(int argc, char **argv, int *i, struct agsbx_verify_opts *o, bool *missing);
/* A rendered output (report, diff, matrix): stdout for "-", else a temp
 * file beside path renamed over it at commit, so a failure leaves no
 * partial file. open prints its one-line error. */
struct agsbx_output {
	FILE *f;
	char *path;
	char *tmp;
};
int agsbx_output_open(struct agsbx_output *o, const char *path);
int agsbx_output_commit(struct agsbx_output *o);
void agsbx_output_closep(struct agsbx_output *o);
/* True when path names stdout ("-"). */
bool agsbx_is_stdout(const char *path);

int agsbx_cli_main(int argc, char **argv);

#endif
