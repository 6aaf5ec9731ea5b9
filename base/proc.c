#include "base/proc.h"
#include "base/cleanup.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Beyond the kernel's default argument space (ARG_MAX is 2 MiB with an
 * 8 MiB stack), so any real cmdline is read whole. */
#define CMDLINE_MAX (4u << 20)
#define STATUS_MAX (1u << 16)

/* ---- /proc/PID/stat ---- */

/* Fields 3 (state) to 22 (start time) of a stat line after the comm. */
static int parse_stat_fields(char *s, char *state, unsigned long long f[23])
{
	for (int field = 3; field <= 22; field++) {
		while (*s == ' ')
			s++;
		if (!*s)
			return -EIO;
		char *end;
		if (field == 3) {
			*state = *s;
			end = s + 1;
		} else {
			/* Some fields are signed (-1 tty): strtoll keeps them. */
			f[field] = (unsigned long long)strtoll(s, &end, 10);
			if (end == s)
				return -EIO;
		}
		s = end;
	}
	return 0;
}

int agsbx_proc_stat(pid_t pid, struct agsbx_proc *p)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	ssize_t n;
	do
		n = read(fd, buf, sizeof buf - 1);
	while (n < 0 && errno == EINTR);
	int e = errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? -e : -ESRCH;
	buf[n] = '\0';
	/* comm may contain spaces and parentheses: fields start after the
	 * last ')'. */
	char *s = strrchr(buf, ')');
	if (!s)
		return -EIO;
	unsigned long long f[23] = { 0 };
	char state = 0;
	if (parse_stat_fields(s + 1, &state, f) < 0)
		return -EIO;
	*p = (struct agsbx_proc){ .pid = pid, .state = state, .ppid = (pid_t)f[4], .sid = (pid_t)f[6],
				  .flags = (unsigned)f[9], .start = f[22] };
	return 0;
}

/* ---- the walker ---- */

int agsbx_proc_each(int (*fn)(pid_t pid, void *ud), void *ud)
{
	_cleanup_closedir_ DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		int r = fn((pid_t)pid, ud);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- cmdline and status ---- */

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

char *agsbx_status_field(const char *status, const char *key)
{
	size_t klen = strlen(key);
	for (const char *line = status; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == ':') {
			const char *v = line + klen + 1;
			while (v < line + len && (*v == ' ' || *v == '\t'))
				v++;
			return strndup(v, (size_t)(line + len - v));
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

int agsbx_proc_status(pid_t pid, char **text)
{
	char path[64];
	if (pid)
		snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof path, "/proc/self/status");
	return agsbx_read_file(path, STATUS_MAX, text, NULL);
}

long agsbx_proc_self_status_kib(const char *field)
{
	_cleanup_free_ char *status = NULL;
	if (agsbx_proc_status(0, &status) < 0)
		return -1;
	_cleanup_free_ char *v = agsbx_status_field(status, field);
	long kib;
	return v && sscanf(v, "%ld kB", &kib) == 1 ? kib : -1;
}
