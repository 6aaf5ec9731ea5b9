/* The parts of the runner contract (runner.h) that are the same for the
 * Linux runner (runner.c) and the POSIX one (runner-posix.c). */
#include "base/runner.h"
#include "base/runner-internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>

#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>

/* ---- process-wide abort ---- */

static _Atomic int abort_fd = -1;

void agsbx_runner_set_abort_fd(int fd)
{
	atomic_store(&abort_fd, fd);
}

int agsbx_runner_abort_fd(void)
{
	return atomic_load(&abort_fd);
}

bool agsbx_runner_aborted(void)
{
	int fd = atomic_load(&abort_fd);
	if (fd < 0)
		return false;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
}

int agsbx_runner_run_begin(const struct agsbx_run_opts *opts, struct agsbx_run_result *res)
{
	if (!res)
		return -EINVAL;
	memset(res, 0, sizeof *res);
	if (!opts || !opts->argv || !opts->argv[0])
		return -EINVAL;
	return agsbx_runner_aborted() ? -ECANCELED : 0;
}

void agsbx_runner_fill_status(struct agsbx_run_result *res, int st, enum run_end end)
{
	if (WIFEXITED(st)) {
		res->exited = true;
		res->exit_code = WEXITSTATUS(st);
		res->status = res->exit_code;
	} else if (WIFSIGNALED(st)) {
		res->term_signal = WTERMSIG(st);
		res->status = 128 + res->term_signal;
	}
	if (end == END_TIMEOUT) {
		res->timed_out = true;
		res->status = AGSBX_RUN_STATUS_TIMEOUT;
	} else if (end == END_CANCEL) {
		res->cancelled = true;
		res->status = AGSBX_RUN_STATUS_CANCELLED;
	}
}

void agsbx_run_result_clear(struct agsbx_run_result *res)
{
	if (!res)
		return;
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}

/* ---- back-off ---- */

void agsbx_runner_nap(long *us, long max_us)
{
	struct timespec ts = { *us / 1000000, (*us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	if (*us < max_us)
		*us *= 2;
}
