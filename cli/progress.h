/* What collect shows on the terminal: a line per finished check (one
 * live line on a TTY, raw ANSI), then the summary, the next steps, the
 * GitHub step summary and the --json summary. Every string from a
 * provider, an adapter or a sandbox is escaped before it is printed. */
#ifndef AGSBX_CLI_PROGRESS_H
#define AGSBX_CLI_PROGRESS_H

#include <stdbool.h>
#include <jansson.h>

#include "cli/collect.h"

struct agsbx_collect_worker;

struct agsbx_progress {
	bool quiet, color, tty;
};

/* Colour and live line as stderr allows; quiet: nothing at all. */
void agsbx_progress_init(struct agsbx_progress *p, bool quiet);
/* The pool's on_check (cli/collect-workers.h); ud is the progress. */
void agsbx_progress_on_check(void *ud, const struct agsbx_collect_worker *w, const json_t *check);
/* Clears the live line. */
void agsbx_progress_end(const struct agsbx_progress *p);

/* After the bundle was written to output: the step summary, then unless
 * quiet the summary table, where it went and the next steps, and the
 * --json summary on stdout. */
void agsbx_progress_written(const struct collect_opts *o, const json_t *bundle, const char *output);

#endif
