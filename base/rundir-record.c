/* The owner record beyond its token (base/rundir.h): the run nonce and
 * run-as uid a claim records, the home canaries a run notes before it
 * creates them, reading a record only where its owner is unambiguous, and
 * removing a dead run's canary without following anything its owner could
 * have planted. */
#include "base/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/util.h"

/* Large enough for a canary line per provider, small enough to read whole. */
#define RECORD_MAX (64u << 10)
#define CANARY_PREFIX ".agsbx-canary-"

static pthread_once_t nonce_once = PTHREAD_ONCE_INIT;
static char run_nonce[33];
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static bool has_run_uid;         /* rec_lock */
static uid_t run_uid;            /* rec_lock */
static char *primary;            /* rec_lock: the record canaries go to */

static void make_nonce(void)
{
	agsbx_random_hex(run_nonce, 16);
}

const char *agsbx_run_nonce(void)
{
	pthread_once(&nonce_once, make_nonce);
	return run_nonce;
}

void agsbx_rundir_set_run_uid(uid_t uid)
{
	pthread_mutex_lock(&rec_lock);
	has_run_uid = true;
	run_uid = uid;
	pthread_mutex_unlock(&rec_lock);
}

/* The lines a claim writes after its token. */
int agsbx_rundir_record_tail(char *buf, size_t size)
{
	pthread_mutex_lock(&rec_lock);
	int n = has_run_uid ? snprintf(buf, size, "nonce %s\nrun_uid %u\n", agsbx_run_nonce(), (unsigned)run_uid)
			    : snprintf(buf, size, "nonce %s\n", agsbx_run_nonce());
	pthread_mutex_unlock(&rec_lock);
	return n > 0 && (size_t)n < size ? 0 : -ENOSPC;
}

void agsbx_rundir_set_primary(const char *dir)
{
	char *p = dir ? agsbx_path_join(dir, AGSBX_RUNDIR_OWNER_FILE) : NULL;
	pthread_mutex_lock(&rec_lock);
	free(primary);
	primary = p;
	pthread_mutex_unlock(&rec_lock);
}

/* One write with O_APPEND: lines from concurrent workers never interleave. */
int agsbx_rundir_note_canary(const char *path)
{
	if (!path || path[0] != '/' || strchr(path, '\n'))
		return -EINVAL;
	_cleanup_free_ char *line = NULL;
	if (asprintf(&line, "canary %s\n", path) < 0)
		return -ENOMEM;
	pthread_mutex_lock(&rec_lock);
	int fd = primary ? open(primary, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY) : -2;
	int r = fd == -2 ? 0 : fd < 0 ? -errno : agsbx_write_all(fd, line, strlen(line));
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&rec_lock);
	return r;
}

/* ---- reading ------------------------------------------------------------ */

static bool token_ok(const char *tok, unsigned long long *start)
{
	int pid = 0;
	unsigned long long ns = 0;
	char tail;
	return sscanf(tok, "%d %llu %llu%c", &pid, start, &ns, &tail) == 3;
}

static bool hex32(const char *s)
{
	return strlen(s) == 32 && s[strspn(s, "0123456789abcdef")] == '\0';
}

/* One "key value" line; false for anything else (an unknown key too: a
 * record we cannot fully read is not one to act on). */
static bool parse_field(char *line, struct agsbx_owner_record *rec)
{
	char *v = strchr(line, ' ');
	if (!v)
		return false;
	*v++ = '\0';
	char *end;
	if (strcmp(line, "nonce") == 0 && hex32(v) && !rec->nonce[0]) {
		memcpy(rec->nonce, v, 33);
		return true;
	}
	if (strcmp(line, "run_uid") == 0 && !rec->has_run_uid && *v >= '0' && *v <= '9') {
		unsigned long u = strtoul(v, &end, 10);
		rec->has_run_uid = true;
		rec->run_uid = (uid_t)u;
		return *end == '\0' && u == (unsigned long)rec->run_uid;
	}
	if (strcmp(line, "canary") == 0 && v[0] == '/' && rec->ncanaries < AGSBX_RUNDIR_MAX_CANARIES)
		return (rec->canaries[rec->ncanaries++] = strdup(v)) != NULL;
	return false;
}

static int parse_record(char *text, struct agsbx_owner_record *rec)
{
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	if (!line || strlen(line) >= sizeof rec->token || !token_ok(line, &rec->start))
		return -ENOENT;
	strcpy(rec->token, line);
	while ((line = strtok_r(NULL, "\n", &save)))
		if (!parse_field(line, rec))
			return -ENOENT;
	return 0;
}

/* A record file in dfd owned by uid, not writable by anyone else; no
 * symlink followed, nothing but a small regular file read, and a FIFO
 * cannot block the sweep. */
static int load(int dfd, const char *name, uid_t uid, struct agsbx_owner_record *rec)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return -ENOENT;
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > RECORD_MAX)
		return -ENOENT;
	if (st.st_uid != uid || (st.st_mode & 022))
		return -EPERM;
	_cleanup_free_ char *buf = malloc((size_t)st.st_size + 1);
	ssize_t n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
	if (n <= 0)
		return -ENOENT;
	buf[n] = '\0';
	if (strlen(buf) != (size_t)n)
		return -ENOENT;   /* a NUL inside: not a record */
	agsbx_owner_record_clear(rec);
	rec->uid = uid;
	return parse_record(buf, rec);
}

int agsbx_rundir_read_record(const char *dir, struct agsbx_owner_record *rec)
{
	memset(rec, 0, sizeof *rec);
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (dfd < 0 || fstat(dfd, &st) < 0)
		return -ENOENT;
	/* Another user able to write here could have put the record there. */
	if (st.st_mode & 022)
		return -EPERM;
	int r = load(dfd, AGSBX_RUNDIR_OWNER_FILE, st.st_uid, rec);
	if (r == -ENOENT)
		r = load(dfd, AGSBX_RUNDIR_OWNER_STAGED, st.st_uid, rec);
	if (r < 0)
		agsbx_owner_record_clear(rec);
	return r;
}

void agsbx_owner_record_clear(struct agsbx_owner_record *rec)
{
	for (size_t i = 0; i < rec->ncanaries; i++)
		free(rec->canaries[i]);
	memset(rec, 0, sizeof *rec);
}

bool agsbx_owner_record_allows(const struct agsbx_owner_record *rec, uid_t uid)
{
	return uid == rec->uid || (rec->uid == 0 && rec->has_run_uid && uid == rec->run_uid);
}

/* ---- a dead run's canary ------------------------------------------------ */

static bool canary_name(const char *name)
{
	size_t n = strlen(CANARY_PREFIX);
	const char *h = name + n;
	return strncmp(name, CANARY_PREFIX, n) == 0 && strlen(h) == 16 && h[strspn(h, "0123456789abcdef")] == '\0';
}

/* Every entry of the canary directory (the key, a staged copy of it) goes,
 * none of them a directory and each owned by an allowed uid. */
static int empty_canary(int cfd, const struct agsbx_owner_record *rec)
{
	int dup_fd = fcntl(cfd, F_DUPFD_CLOEXEC, 3);
	_cleanup_closedir_ DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -errno;
	}
	struct dirent *e;
	int r = 0;
	while ((e = readdir(d)) && r == 0) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(cfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = errno == ENOENT ? 0 : -errno;
		else if (S_ISDIR(st.st_mode) || !agsbx_owner_record_allows(rec, st.st_uid))
			r = -EPERM;
		else if (unlinkat(cfd, e->d_name, 0) < 0 && errno != ENOENT)
			r = -errno;
	}
	return r;
}

int agsbx_rundir_remove_canary(const char *path, const struct agsbx_owner_record *rec, bool dry_run)
{
	const char *base = strrchr(path, '/');
	if (path[0] != '/' || !base || !canary_name(base + 1))
		return -EINVAL;
	_cleanup_free_ char *parent = base == path ? strdup("/") : strndup(path, (size_t)(base - path));
	_cleanup_close_ int pfd = parent ? open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (pfd < 0)
		return errno == ENOENT ? 0 : -errno;
	_cleanup_close_ int cfd = openat(pfd, base + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (cfd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(cfd, &st) < 0)
		return -errno;
	if (!agsbx_owner_record_allows(rec, st.st_uid))
		return -EPERM;
	if (dry_run)
		return 1;
	int r = empty_canary(cfd, rec);
	if (r == 0 && unlinkat(pfd, base + 1, AT_REMOVEDIR) < 0)
		r = -errno;
	return r < 0 ? r : 1;
}
