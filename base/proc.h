/* Reading and signalling other processes through /proc and pidfds: the
 * one /proc walker, stat parser, status-field reader and checked kill
 * (Linux; elsewhere the /proc calls fail with -ENOENT, as there is no
 * /proc, and pidfds with ENOSYS). */
#ifndef AGSBX_BASE_PROC_H
#define AGSBX_BASE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One process as /proc/PID/stat shows it; (pid, start) is its identity,
 * start being the boot-relative start time in clock ticks. */
struct agsbx_proc {
	pid_t pid, ppid, sid;
	char state;
	unsigned flags;               /* the kernel's PF_* flags (field 9) */
	unsigned long long start;
	char kind;                    /* the caller's mark (the runner's walk verdict); 0 when read */
};

/* PF_EXITING: do_exit() has begun; the task never returns to user space
 * (it may still spend milliseconds tearing down its namespaces). */
#define AGSBX_PF_EXITING 0x00000004u

/* /proc/PID/stat into *p: 0, -errno (-ESRCH gone, -EIO unparsable). */
int agsbx_proc_stat(pid_t pid, struct agsbx_proc *p);

/* Calls fn(pid, ud) for every process /proc lists, in its order (our own
 * pid included); a negative return of fn stops the walk and is returned.
 * 0 at the end, -errno when /proc cannot be opened. */
int agsbx_proc_each(int (*fn)(pid_t pid, void *ud), void *ud);

/* /proc/PID/cmdline with the NULs between arguments turned into spaces,
 * so a needle spanning two arguments matches as on a shell line.
 * Malloc'd and NUL-terminated; NULL with errno set when the process is
 * gone or unreadable (a kernel thread has an empty cmdline: ""). */
char *agsbx_proc_cmdline(pid_t pid, size_t *len);

/* The value of the "key:" line of a /proc/PID/status text, blanks after
 * the colon skipped, up to the end of the line (malloc'd; "" for a key
 * with no value); NULL when no line has that key. */
char *agsbx_status_field(const char *status, const char *key);

/* /proc/PID/status whole (pid 0: /proc/self/status), malloc'd: 0 or
 * -errno. */
int agsbx_proc_status(pid_t pid, char **text);

/* A "Name: N kB" line of /proc/self/status (field "VmRSS", "VmHWM", ...)
 * in KiB; -1 when it cannot be read. */
long agsbx_proc_self_status_kib(const char *field);

/* pidfd_open(pid) moved above fds 0-2, close-on-exec; -1 with errno
 * (ENOSYS once the kernel or a seccomp filter refused it: not retried). */
int agsbx_pidfd_open(pid_t pid);

/* Sends sig to p->pid only while it is still the process p names (same
 * start time), not a zombie, and still(pid, ud) holds when still is
 * given. Through a pidfd opened before the checks, the checks and the
 * signal cannot race with pid reuse; without one (old kernel, no fds
 * left) a window of microseconds remains. true when delivered; false
 * with errno from the delivery, or when the process is gone or other. */
bool agsbx_proc_signal(const struct agsbx_proc *p, int sig, bool (*still)(pid_t pid, void *ud), void *ud);

#endif
