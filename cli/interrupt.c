/* An interrupted collect (SIGINT, SIGTERM, SIGHUP) ends every execution and
 * cleans up instead of dying with its sandboxes still running: the handler
 * only writes the signal number into a pipe, which the runner polls as its
 * process-wide abort fd (every run in progress, on any thread, is
 * cancelled and no new one starts); the command then releases every
 * provider, removes its work dir and exits 128+signal.
 *
 * The canary a check may have placed in the user's real $HOME goes at once,
 * in the handler (it must not outlive even a process that is then killed).
 * SIGQUIT, or a second signal while the clean-up runs, ends the process
 * at once the default way (a user who insists). */
#include "cli/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/runner.h"
#include "conformance/conformance.h"

static int pipe_fds[2] = { -1, -1 };
static volatile sig_atomic_t caught;
static const int signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static struct sigaction saved[4];

static void on_signal(int sig)
{
	int e = errno;
	agsbx_conformance_remove_canaries();
	agsbx_conformance_remove_keyring_canary();
	if (caught || sig == SIGQUIT) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	caught = sig;
	unsigned char b = (unsigned char)sig;
	if (write(pipe_fds[1], &b, 1) < 0) { /* full pipe: already readable */ }
	errno = e;
}

int agsbx_interrupt_install(void)
{
	if (pipe_fds[0] < 0 && pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	agsbx_runner_set_abort_fd(pipe_fds[0]);
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
		if (sigaction(signals[i], &sa, &saved[i]) < 0)
			return -errno;
	return 0;
}

int agsbx_interrupt_signal(void)
{
	return caught;
}

void agsbx_interrupt_restore(void)
{
	if (pipe_fds[0] < 0)
		return;
	for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
		sigaction(signals[i], &saved[i], NULL);
	agsbx_runner_set_abort_fd(-1);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	pipe_fds[0] = pipe_fds[1] = -1;
}

/* Blocked, not reset to the default: once the bundle is written the run's
 * outcome is fixed, and a signal in the last moments before the exit
 * (the sanitizer's leak check makes them long) would turn a complete run
 * into a death by signal. A pending blocked signal is discarded at the
 * exit. SIGQUIT stays deliverable: a user who insists. */
void agsbx_interrupt_hold(void)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
		if (signals[i] != SIGQUIT)
			sigaddset(&set, signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	agsbx_interrupt_restore();
}
