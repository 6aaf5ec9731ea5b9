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

#endif
