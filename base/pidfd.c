/* pidfds: the checked kill every caller that signals a process it found
 * in /proc goes through (the runner's tree walks, leftover cleanup, the
 * gVisor provider's runtime reap). */
#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/syscall.h>
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

static _Atomic bool no_pidfd;

int agsbx_pidfd_open(pid_t pid)
{
	if (atomic_load(&no_pidfd)) {
		errno = ENOSYS;
		return -1;
	}
	/* pidfds are always close-on-exec. */
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		atomic_store(&no_pidfd, true);   /* old kernel or seccomp'd away */
	if (fd >= 0 && fd <= 2) {
		int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		close(fd);
		fd = nfd;
	}
	return fd;
}

static int pidfd_signal(int fd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}
#else
int agsbx_pidfd_open(pid_t pid)
{
	(void)pid;
	errno = ENOSYS;
	return -1;
}

static int pidfd_signal(int fd, int sig)
{
	(void)fd;
	(void)sig;
	errno = ENOSYS;
	return -1;
}
#endif

bool agsbx_proc_signal(const struct agsbx_proc *p, int sig, bool (*still)(pid_t pid, void *ud), void *ud)
{
	struct agsbx_proc now;
	int fd = agsbx_pidfd_open(p->pid);
	if (fd < 0 && errno == ESRCH)
		return false;   /* gone */
	bool ok = false;
	if (agsbx_proc_stat(p->pid, &now) == 0 && now.start == p->start && now.state != 'Z' &&
	    (!still || still(p->pid, ud)))
		ok = fd >= 0 ? pidfd_signal(fd, sig) == 0 : kill(p->pid, sig) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}
