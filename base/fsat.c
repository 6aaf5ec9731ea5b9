#include "base/fsat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/util.h"

/* Levels walked at once (one open directory each); deeper subtrees are
 * moved up and walked in a later pass, at most RM_MAX_PASSES of them. */
#define RM_MAX_DEPTH 64
#define RM_MAX_PASSES 4096

int agsbx_dir_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int agsbx_dir_open_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int agsbx_open_file_at(int dfd, const char *name, int flags, uid_t owner, struct stat *st)
{
	if (flags & (O_CREAT | O_TRUNC))
		return -EINVAL;
	struct stat sb;
	st = st ? st : &sb;
	_cleanup_close_ int fd = openat(dfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENXIO ? -EINVAL : -errno; /* ENXIO: a FIFO without reader, a socket */
	int r = agsbx_fstat_regular(fd, st);
	if (r < 0)
		return r;
	if (st->st_nlink != 1)
		return -EMLINK;
	if (owner != AGSBX_ANY_OWNER && st->st_uid != owner)
		return -EPERM;
	return TAKE_FD(fd);
}

int agsbx_read_line_at(int dfd, const char *name, uid_t owner, size_t max, char **line)
{
	struct stat st;
	_cleanup_close_ int fd = agsbx_open_file_at(dfd, name, O_RDONLY, owner, &st);
	if (fd < 0)
		return fd;
	_cleanup_free_ char *buf = NULL;
	int r = agsbx_read_fd(fd, &st, max, &buf, NULL);
	if (r < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	*line = TAKE_PTR(buf);
	return 0;
}

int agsbx_create_file_at(int dfd, const char *name, const void *data, size_t len, unsigned mode, uid_t uid,
			 gid_t gid)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = agsbx_write_all(fd, data, len);
	/* Owner and mode through the fd: the entry may already be another
	 * file by now (the directory is not ours alone). */
	if (r == 0 && uid != (uid_t)-1 && fchown(fd, uid, gid) < 0)
		r = -errno;
	if (r == 0 && fchmod(fd, mode) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0)
		unlinkat(dfd, name, 0); /* unlink never follows: at worst it removes what replaced ours */
	return r;
}

/* A subdirectory of dfd opened for removal: opened up first when its mode
 * shuts its owner out (fchmodat with AT_SYMLINK_NOFOLLOW leaves a link alone). */
static int open_subdir(int dfd, const char *name)
{
	int sub = agsbx_dir_open_at(dfd, name);
	if (sub == -EACCES && fchmodat(dfd, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
		sub = agsbx_dir_open_at(dfd, name);
	if (sub >= 0)
		fchmod(sub, 0700); /* a read-only directory a sandbox left behind is still ours */
	return sub;
}

/* One removal: the tree's top, where subtrees deeper than RM_MAX_DEPTH are
 * moved (renameat, fd to fd) to be walked from there in the next pass, so
 * any depth is removed with a bounded number of open directories. */
struct walk {
	int top;
	const char *keep;  /* an entry of the top left for last */
	unsigned moved;    /* subtrees moved up in this pass */
};

static int rm_at(struct walk *w, int dfd, int depth);

static int move_up(struct walk *w, int dfd, const char *name)
{
	char to[64] = ".agsbx-deep-";
	agsbx_random_hex(to + strlen(to), 12);
	if (renameat(dfd, name, w->top, to) < 0)
		return -errno;
	w->moved++;
	return 0;
}

/* Removes the entry name of dfd, at depth below the top. */
static int rm_entry(struct walk *w, int dfd, const char *name, int depth)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth >= RM_MAX_DEPTH)
		return move_up(w, dfd, name);
	/* A directory when unlink refused it; a link by now is not entered. */
	int sub = open_subdir(dfd, name);
	if (sub < 0)
		return sub;
	int r = rm_at(w, sub, depth + 1);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && !r)
		r = -errno;
	return r;
}

/* Empties the directory dfd (consumed), skipping keep at the top. */
static int rm_at(struct walk *w, int dfd, int depth)
{
	_cleanup_closedir_ DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	int first = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    (depth == 0 && w->keep && strcmp(e->d_name, w->keep) == 0))
			continue;
		int r = rm_entry(w, dirfd(d), e->d_name, depth);
		first = first ? first : r;
	}
	return first;
}

/* Passes over the top until one moved nothing up; -ELOOP past the bound. */
static int rm_passes(struct walk *w)
{
	for (int pass = 0; pass < RM_MAX_PASSES; pass++) {
		w->moved = 0;
		/* a fresh open file description: a dup would share the offset */
		int dfd = openat(w->top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int r = dfd < 0 ? -errno : rm_at(w, dfd, 0);
		if (!w->moved)
			return r;
	}
	return -ELOOP;
}

int agsbx_remove_tree(const char *dir, const char *last)
{
	int fd = agsbx_dir_open(dir);
	if (fd == -EACCES && fchmodat(AT_FDCWD, dir, 0700, AT_SYMLINK_NOFOLLOW) == 0)
		fd = agsbx_dir_open(dir);
	if (fd == -ENOTDIR || fd == -ELOOP)
		return unlink(dir) < 0 ? -errno : 0;
	if (fd < 0)
		return fd;
	_cleanup_close_ int top = fd;
	fchmod(top, 0700);
	struct walk w = { .top = top, .keep = last };
	int r = rm_passes(&w);
	if (last && unlinkat(top, last, 0) < 0 && errno != ENOENT && !r)
		r = -errno;
	if (rmdir(dir) < 0 && !r)
		r = -errno;
	return r;
}

/* 0 when prefix is a directory only root or this user can change. */
static int check_component(const char *prefix, char *bad, size_t bad_size)
{
	struct stat st;
	if (lstat(prefix, &st) < 0)
		return -errno;
	bool owner_ok = st.st_uid == 0 || st.st_uid == geteuid();
	bool shared = (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX);
	if (S_ISDIR(st.st_mode) && owner_ok && !shared)
		return 0;
	snprintf(bad, bad_size, "%s", prefix);
	return -EPERM;
}

int agsbx_path_check_private(const char *path, char *bad, size_t bad_size)
{
	if (!path || path[0] != '/')
		return -EINVAL;
	_cleanup_free_ char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	int r = check_component("/", bad, bad_size);
	for (char *s = p + 1; r == 0 && *(s - 1); s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		r = check_component(p, bad, bad_size);
		*s = c;
	}
	return r;
}
