/* Shared by collect, providers and bench: locating the helpers and building
 * the harness context. */
#ifndef AGSBX_CLI_HARNESS_H
#define AGSBX_CLI_HARNESS_H

#include <stdbool.h>
#include <sys/types.h>
#include <jansson.h>

#include "providers/provider.h"

struct agsbx_harness {
	struct agsbx_ctx ctx;
	char *tool_dir;
	char *payload_path;
	char *run_as_name;
	char *staged_dir;             /* helpers copied for the run-as user (removed at free) */
	json_t *host;                 /* host probe (owned) */
};

/* Resolves the tool dir and payload, and --run-as USER (root only). On
 * error prints a one-line message and returns the exit status to use (2 for
 * bad usage, 3 for a broken installation) with nothing left to free; 0 on
 * success. */
int agsbx_harness_init(struct agsbx_harness *hs, const char *cmd, const char *run_as, bool probe_host);
/* The directory of the helper programs: $AGSBX_LIBEXEC_DIR when set (like
 * git's exec path), else the binary's own directory when the payload is
 * there (the build tree), else libexec/agsbx-evidence relative to the
 * binary (an installation). malloc'd into *dir; -errno. */
int agsbx_helper_dir(char **dir);
/* Frees what hs holds (unstaging the helpers) and zeroes it; hs itself
 * is the caller's. NULL and a cleared harness are fine. */
void agsbx_harness_clear(struct agsbx_harness *hs);

/* Interrupt handling for long commands (interrupt.c): SIGINT, SIGTERM and
 * SIGHUP cancel every execution through the runner's abort fd instead of
 * killing the process. agsbx_interrupt_signal is the first signal caught
 * (0: none); restore puts the previous dispositions back; hold does too
 * but keeps SIGINT, SIGTERM and SIGHUP blocked until the process exits
 * (the command's outcome is settled). */
int agsbx_interrupt_install(void);
int agsbx_interrupt_signal(void);
void agsbx_interrupt_restore(void);
void agsbx_interrupt_hold(void);

/* Leftovers of harnesses that died (cmd-cleanup.c): in parent (NULL:
 * $TMPDIR or /tmp), agsbx-run-*, agsbx-tools-* and agsbx-landlock-* dirs whose owner
 * process is gone, and the processes still running from them; cgroup
 * leaves of dead runs; and what each provider's cleanup_dead finds. Never
 * a live run's. Removes them unless dry_run; appends one object per item
 * to found. Returns the count of items that could not be removed. */
int agsbx_cleanup_dead_runs(const char *parent, const struct agsbx_ctx *ctx, bool dry_run, json_t *found);

#endif
