/* Reading other processes through /proc (Linux; elsewhere every call
 * fails with -ENOENT, as there is no /proc). */
#ifndef AGSBX_BASE_PROC_H
#define AGSBX_BASE_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* /proc/PID/cmdline with the NULs between arguments turned into spaces,
 * so a needle spanning two arguments matches as on a shell line.
 * Malloc'd and NUL-terminated; NULL with errno set when the process is
 * gone or unreadable (a kernel thread has an empty cmdline: ""). */
char *agsbx_proc_cmdline(pid_t pid, size_t *len);

/* A "Name: N kB" line of /proc/self/status (field "VmRSS", "VmHWM", ...)
 * in KiB; -1 when it cannot be read. */
long agsbx_proc_self_status_kib(const char *field);

#endif
