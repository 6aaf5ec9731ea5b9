#include "base/proc.h"
#include "base/cleanup.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Beyond the kernel's default argument space (ARG_MAX is 2 MiB with an
 * 8 MiB stack), so any real cmdline is read whole. */
#define CMDLINE_MAX (4u << 20)

char *agsbx_proc_cmdline(pid_t pid, size_t *len)
{
	char path[64], *buf = NULL;
	size_t n = 0;
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	int r = agsbx_read_file(path, CMDLINE_MAX, &buf, &n);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	if (len)
		*len = n;
	return buf;
}

long agsbx_proc_self_status_kib(const char *field)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	size_t n = strlen(field);
	while (f && fgets(line, sizeof line, f)) {
		long v;
		if (strncmp(line, field, n) == 0 && line[n] == ':' && sscanf(line + n + 1, "%ld kB", &v) == 1)
			return v;
	}
	return -1;
}
