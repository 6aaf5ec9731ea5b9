/* collect's provider workers: each selected provider's matrix runs in its
 * own forked process, at most max_live at once.
 *
 * Why processes, not threads: the lifecycle checks start a detached tree
 * that is re-parented to the nearest child subreaper, and a run's clean-up
 * sweeps the orphans re-parented to its process. A worker is its own
 * subreaper, so one provider's orphans only ever reach that provider's
 * worker and its own clean-up must prove itself; providers need not wait
 * for each other.
 *
 * Everything live is reachable from the pool: on an interrupt (the
 * runner's abort fd) the pool asks every running worker to stop; a worker turns
 * SIGTERM/SIGINT/SIGHUP into a write to the cancel fd its run was given, so
 * every running execution is cancelled and the provider's handle released
 * before the worker reports and exits. */
#ifndef AGSBX_CLI_COLLECT_WORKERS_H
#define AGSBX_CLI_COLLECT_WORKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "providers/provider.h"

struct agsbx_error;

struct agsbx_collect_worker {
	const struct agsbx_provider_ops *ops;
	pid_t pid;                    /* > 0 while running; 0 before start and after reaping */
	int fd;                       /* read end of the report pipe, -1 when closed */
	char *buf;                    /* a partial report line */
	size_t len, cap;
	json_t *result;               /* the provider object, once reported (owned) */
	char error[512];              /* why there is no result */
	size_t done;                  /* checks reported so far */
	uint64_t start_us, end_us;    /* monotonic, from fork to reaping */
};

struct agsbx_collect_pool {
	struct agsbx_collect_worker *w;
	size_t n;
	int max_live;                 /* >= 1 */
	/* Runs in the worker process: provider i's matrix. Progress is
	 * reported with agsbx_collect_report_check(report_fd, ...); the run
	 * must treat cancel_fd becoming readable as "cancel everything".
	 * Returns the provider object, or NULL with err set. */
	json_t *(*run)(size_t i, int report_fd, int cancel_fd, void *ud, struct agsbx_error *err);
	/* In the parent, one at a time: worker w reported a finished check. */
	void (*on_check)(void *ud, const struct agsbx_collect_worker *w, const json_t *check);
	void *run_ud, *ud;            /* for run and on_check */
	uint64_t start_us;            /* set by run */
};

/* Starts the workers (bounded by max_live) and waits for all of them;
 * fills each worker's result or error. -errno only when no worker could be
 * started at all (pipe/fork); a failed worker is reported in its error. */
int agsbx_collect_pool_run(struct agsbx_collect_pool *p);
/* Frees the workers' buffers and results and the worker array; p itself
 * is the caller's. NULL and a cleared pool are fine. */
void agsbx_collect_pool_clear(struct agsbx_collect_pool *p);

/* After agsbx_collect_pool_run returned r: every provider's record and
 * the run's timings into the bundle (evidence/'s setters), in selection
 * order. 0, or an exit status with the error printed: r < 0, a worker
 * without a result (its error), out of memory. */
int agsbx_collect_pool_results(const struct agsbx_collect_pool *p, int r, int check_jobs, json_t *bundle);

/* In a worker: one finished check, sent to the parent (only the fields
 * progress lines need). Safe to call from several threads. */
void agsbx_collect_report_check(int report_fd, const json_t *check);

#endif
