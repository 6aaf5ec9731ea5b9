/* File operations in directories another user can write. A root harness
 * running a sandbox as USER (collect --run-as) works inside roots USER owns:
 * USER can swap any entry there for a symlink, a hard link or something
 * else between two of the harness's calls. These work from a directory fd
 * and never follow a link in the last component; whatever they open is
 * checked by fstat (type, link count, owner) before anything is done to it. */
#ifndef AGSBX_BASE_FSAT_H
#define AGSBX_BASE_FSAT_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Any owner (for agsbx_open_file_at's owner). */
#define AGSBX_ANY_OWNER ((uid_t)-1)

/* An O_DIRECTORY|O_NOFOLLOW fd on path (or on name in dfd): the path's
 * parents must be out of the other user's reach; the last component is
 * never a link. fd or -errno (-ELOOP/-ENOTDIR for a link). */
int agsbx_dir_open(const char *path);
int agsbx_dir_open_at(int dfd, const char *name);

/* Opens name in dfd with flags (O_RDONLY, O_WRONLY|O_APPEND, ...; never
 * O_CREAT or O_TRUNC) plus O_NOFOLLOW and O_NONBLOCK (a FIFO put in its
 * place must not block), and keeps it only when it is a regular file with
 * exactly one link (a hard link could alias any file of the same
 * filesystem) owned by owner (unless AGSBX_ANY_OWNER). fd or -errno:
 * -ELOOP a symlink, -EISDIR, -EINVAL not a regular file, -EMLINK more than
 * one link, -EPERM another owner. st (may be NULL) gets its fstat. */
int agsbx_open_file_at(int dfd, const char *name, int flags, uid_t owner, struct stat *st);

/* The first line (newline stripped, NUL-terminated, malloc'd) of name in
 * dfd, opened as agsbx_open_file_at does; -EFBIG above max bytes. */
int agsbx_read_line_at(int dfd, const char *name, uid_t owner, size_t max, char **line);

/* Creates name in dfd exclusively (O_EXCL|O_NOFOLLOW: never through an
 * entry placed there before), writes data, sets mode and, unless uid is
 * (uid_t)-1, hands it to uid:gid, all through the fd. On failure the new
 * entry is removed. 0 or -errno (-EEXIST when name exists). */
int agsbx_create_file_at(int dfd, const char *name, const void *data, size_t len, unsigned mode, uid_t uid,
			 gid_t gid);

/* Removes dir and everything below it, walking with openat/unlinkat and
 * O_NOFOLLOW: never follows a symlink, nor a directory swapped for one
 * mid-walk (it is then unlinked as the link it is or left, never entered).
 * Unreadable and read-only directories the walk owns are opened up on the
 * way down. last (may be NULL) names an entry of dir removed after all the
 * others. dir itself being a symlink or a file: that entry is unlinked.
 * Any depth, with a bounded number of open directories (deeper subtrees are
 * moved up to dir, fd to fd, and walked from there). 0 or the first -errno. */
int agsbx_remove_tree(const char *dir, const char *last);

/* 0 when no user but root and the caller can rename or replace anything
 * on the way to the directory path (absolute, no symlinks: a realpath):
 * every component owned by root or the caller, and writable by group or
 * others only with the sticky bit (as /tmp). -EPERM otherwise, the first
 * such component in bad; -errno when one cannot be examined. */
int agsbx_path_check_private(const char *path, char *bad, size_t bad_size);

#endif
