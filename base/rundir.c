#include "base/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fsat.h"
#include "base/util.h"

/* Field 22 of /proc/PID/stat; 0 when the process does not exist. The
 * command name (field 2) may contain spaces and ')', hence the last ')'. */
static unsigned long long start_time(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	if (agsbx_read_file(path, 4096, &buf, &len) < 0)
		return 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	unsigned long long start = 0;
	/* after ')': state(3) ... starttime(22) = the 20th field from here */
	char *save = NULL, *f = strtok_r(p + 1, " ", &save);
	/* A zombie (SIGKILLed, not yet reaped by whoever inherited it) owns
	 * nothing any more: it is gone for the sweep. */
	if (f && (*f == 'Z' || *f == 'X'))
		return 0;
	for (int i = 3; f && i < 22; i++)
		f = strtok_r(NULL, " ", &save);
	if (f)
		start = strtoull(f, NULL, 10);
	return start;
}

/* The pid namespace a pid is meaningful in: a token written in another
 * one (a container sharing /tmp) cannot be judged from here. */
static unsigned long long pidns_ino(void)
{
	struct stat st;
	return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

int agsbx_owner_token(char *buf, size_t size)
{
	pid_t self = getpid();
	unsigned long long st = start_time(self);
	if (!st)
		return -ESRCH;
	int n = snprintf(buf, size, "%d %llu %llu", (int)self, st, pidns_ino());
	return n > 0 && (size_t)n < size ? 0 : -ENOSPC;
}

bool agsbx_owner_token_alive(const char *token)
{
	int pid = 0;
	unsigned long long st = 0, ns = 0;
	char tail;
	if (!token || sscanf(token, "%d %llu %llu%c", &pid, &st, &ns, &tail) != 3 || pid <= 0 || st == 0)
		return true;
	if (ns != pidns_ino())
		return true;
	return start_time((pid_t)pid) == st;
}

/* The claim is staged under a fixed name and renamed into place: a run
 * SIGKILLed between the two leaves a complete staged record, which the
 * sweep reads as the owner. No fsync: the record only has to outlive
 * processes, not the machine, and a slower claim is a wider window. */
int agsbx_rundir_claim(const char *dir)
{
	char rec[256];
	int r = agsbx_owner_token(rec, 64);
	if (r < 0)
		return r;
	size_t n = strlen(rec);
	rec[n++] = '\n';
	r = agsbx_rundir_record_tail(rec + n, sizeof rec - n);
	if (r < 0)
		return r;
	_cleanup_free_ char *path = agsbx_path_join(dir, AGSBX_RUNDIR_OWNER_FILE);
	_cleanup_free_ char *staged = agsbx_path_join(dir, AGSBX_RUNDIR_OWNER_STAGED);
	if (!path || !staged)
		return -ENOMEM;
	int fd = open(staged, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* 0644 whatever the umask: readable by every sweeper, as root sweeps a
	 * --run-as user's dirs and that user sweeps its own; never writable by
	 * another, or the sweep would not trust it */
	return agsbx_publish_file(fd, staged, path, rec, strlen(rec), 0644, false);
}

/* A directory no claim ever reached (its creator died between mkdtemp and
 * the claim's write): empty, or holding only an empty staged claim, and
 * older than any live claim can be, since a claim takes microseconds. */
static bool never_claimed(const char *dir)
{
	struct stat st;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || time(NULL) - st.st_mtime < AGSBX_RUNDIR_CLAIM_GRACE_S)
		return false;
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat fst;
		if (strcmp(e->d_name, AGSBX_RUNDIR_OWNER_STAGED) != 0 ||
		    fstatat(dirfd(d), e->d_name, &fst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(fst.st_mode) ||
		    fst.st_size != 0)
			return false;
	}
	return d != NULL;
}

int agsbx_rundir_owner_alive(const char *dir)
{
	struct agsbx_owner_record rec;
	int r = agsbx_rundir_read_record(dir, &rec);
	if (r == 0) {
		bool alive = agsbx_owner_token_alive(rec.token);
		agsbx_owner_record_clear(&rec);
		return alive ? 1 : 0;
	}
	if (r == -EPERM)
		return r;
	return never_claimed(dir) ? 0 : -ENOENT;
}

int agsbx_rm_tree(const char *dir)
{
	/* The owner record goes last: a run killed while removing its own
	 * directory then leaves the record with it, which `cleanup` judges at
	 * once, instead of an empty directory it must leave alone for
	 * AGSBX_RUNDIR_CLAIM_GRACE_S. */
	return agsbx_remove_tree(dir, AGSBX_RUNDIR_OWNER_FILE);
}
