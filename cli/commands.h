/* One cmd-<verb>.c per subcommand; dispatched from the table in cli.c.
 * Each returns the process exit status (AGSBX_EXIT_*). Only cli/ exits. */
#ifndef AGSBX_CLI_COMMANDS_H
#define AGSBX_CLI_COMMANDS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

enum {
	AGSBX_EXIT_OK = 0,        /* no defect found (blocked-by-host counts as no defect) */
	AGSBX_EXIT_DEFECT = 1,    /* a provider defect; for verify: invalid/untrusted/unsigned */
	AGSBX_EXIT_USAGE = 2,     /* bad usage or bad input */
	AGSBX_EXIT_INTERNAL = 3,  /* internal or I/O error */
};

/* What the dispatcher sets up once, before a command runs (git's
 * run_builtin), so no command repeats it. */
enum agsbx_command_flags {
	/* Spawns sandboxes or helpers: the process becomes a child subreaper
	 * before any thread or child exists, so every detached descendant of
	 * every run comes back to it (the runner would do it lazily, maybe
	 * after a thread has started). */
	AGSBX_CMD_NEEDS_RUNNER = 1 << 0,
};

/* One row per command in cli.c. "--help"/"-h" anywhere before "--", and
 * "help NAME", print help and exit 0 before run is called. */
struct agsbx_command {
	const char *name;
	int (*run)(int argc, char **argv);
	unsigned flags;           /* enum agsbx_command_flags */
	const char *synopsis;     /* one line, shown in the top-level usage */
	const char *help;         /* the full --help text */
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
int agsbx_cmd_checks(int argc, char **argv);

extern const char agsbx_help_probe[], agsbx_help_providers[], agsbx_help_collect[], agsbx_help_verify[],
	agsbx_help_report[], agsbx_help_diff[], agsbx_help_matrix[], agsbx_help_keygen[], agsbx_help_bench[],
	agsbx_help_schema[], agsbx_help_cleanup[], agsbx_help_attest[], agsbx_help_checks[];

/* Prints "agsbx-evidence: error: <msg>" and the command's usage hint to
 * stderr (no hint when cmd is NULL); returns AGSBX_EXIT_USAGE. (common.c,
 * with the other helpers the commands share) */
int agsbx_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same from a va_list (cli.c adds the top-level usage after it). */
int agsbx_usage_errorv(const char *cmd, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* ---- options (options.c): every command parses through this ----------- */

struct option;
/* Option keys shared by several commands; a command's own keys start at
 * AGSBX_OPT_LOCAL. Short options are their letter. */
enum {
	AGSBX_OPT_FORMAT = 256,
	AGSBX_OPT_JSON,
	AGSBX_OPT_RUN_AS,
	AGSBX_OPT_KEY,
	AGSBX_OPT_ALLOWED_SIGNERS,
	AGSBX_OPT_IDENTITY,
	AGSBX_OPT_KEYS_URL,
	AGSBX_OPT_INSECURE_URL,
	AGSBX_OPT_LOCAL = 300,
};
#define AGSBX_OPTION_OUTPUT { "output", required_argument, NULL, 'o' }
#define AGSBX_OPTION_FORMAT { "format", required_argument, NULL, AGSBX_OPT_FORMAT }
#define AGSBX_OPTION_JSON { "json", no_argument, NULL, AGSBX_OPT_JSON }
#define AGSBX_OPTION_RUN_AS { "run-as", required_argument, NULL, AGSBX_OPT_RUN_AS }
/* The trust anchors of verify, diff and matrix. */
#define AGSBX_OPTIONS_TRUST                                                             \
	{ "key", required_argument, NULL, AGSBX_OPT_KEY },                              \
	{ "allowed-signers", required_argument, NULL, AGSBX_OPT_ALLOWED_SIGNERS },      \
	{ "identity", required_argument, NULL, AGSBX_OPT_IDENTITY },                    \
	{ "keys-url", required_argument, NULL, AGSBX_OPT_KEYS_URL },                    \
	{ "allow-insecure-keys-url", no_argument, NULL, AGSBX_OPT_INSECURE_URL }

/* One scan of a command's argv (argv[0] is the command). */
struct agsbx_args {
	const char *cmd;          /* for the messages */
	const char *short_only;   /* getopt letters of options without a long name */
	int argc;
	char **argv;
	const char *value;        /* the current option's value */
	char **operands;          /* after the scan: the operands, in order */
	int noperands;
	bool started;
};
/* The next option's key (its value in a->value); 0 when the options are
 * done (operands in a->operands); -1 after printing the one usage error
 * line for an unknown option, a missing value or a value given to a flag:
 * the command returns AGSBX_EXIT_USAGE. lo ends with a zero row. */
int agsbx_args_next(struct agsbx_args *a, const struct option *lo);
/* 0 when there are min..max operands; else a usage error: too_few, or
 * too_many (NULL: "unexpected argument 'X'" naming the first extra one). */
int agsbx_args_operands(const struct agsbx_args *a, int min, int max, const char *too_few, const char *too_many);
/* An integer option's value in [min, max] into *out: 0, or a usage error
 * naming flag. */
int agsbx_parse_count(const char *cmd, const char *flag, const char *s, long long min, long long max, long long *out);
/* 0 when format is one of known (NULL-terminated); else a usage error
 * listing them. */
int agsbx_check_format(const char *cmd, const char *format, const char *const *known);

/* Writes a JSON document (indented, sorted keys, canonical-safe) to path
 * atomically, or to stdout when path is "-". 0 or -errno. */
int agsbx_cli_write_json(const char *path, const json_t *j);
/* j indented, with jansson's flags (JSON_SORT_KEYS), and a newline on
 * stdout; 0 or -EIO (agsbx_cli_main reports an unwritable stdout). */
int agsbx_cli_print_json(const json_t *j, size_t flags);
/* The binary as the user invoked it, for commands printed to paste. */
const char *agsbx_cli_argv0(void);
/* Sets what agsbx_cli_argv0 returns from main's argv[0] (cli.c). */
void agsbx_cli_set_argv0(const char *argv0);
/* "Did you mean": the edit distance of two names, and the one name of
 * names[] within 2 edits of typed (NULL when none or a tie). */
int agsbx_edit_distance(const char *a, const char *b);
const char *agsbx_closest(const char *typed, const char *const *names, size_t count);
/* fflush(f), failing with the errno of the write that failed. */
int agsbx_flush_errno(FILE *f);
/* Stores a trust-anchor option (AGSBX_OPTIONS_TRUST) into o; false when
 * key is none of them. */
struct agsbx_verify_opts;
bool agsbx_trust_option(int key, const char *value, struct agsbx_verify_opts *o);
/* Loads a bundle for a command: 0, or the one error line and
 * AGSBX_EXIT_USAGE (unreadable or not a bundle). The _digest form also
 * hashes its canonical form while reading (agsbx_bundle_load_digest), for
 * verify. */
int agsbx_cli_load_bundle(const char *file, json_t **bundle);
/* For a command that reads one bundle and exits: jansson allocates from
 * an arena that is never freed (see common.c). Call before any JSON exists.
 * Whether the arena is in use (not under ASan). */
bool agsbx_cli_json_arena(void);
int agsbx_cli_load_bundle_digest(const char *file, json_t **bundle, uint8_t sha512[64], bool *sha512_ok);
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
