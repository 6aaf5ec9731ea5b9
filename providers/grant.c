/* The grant: a per-run execution area with four roots, and the immutable
 * bundle materialised into `source` with its sha256 re-checked right before
 * every execution (the TOCTOU guard). */
#include "providers/provider.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fsat.h"
#include "base/util.h"

static const char *const role_names[AGSBX_ROOT_COUNT] = { "source", "build", "output", "logs" };

const char *agsbx_root_role_name(enum agsbx_root_role r)
{
	return r < AGSBX_ROOT_COUNT ? role_names[r] : "unknown";
}

int agsbx_path_check_no_symlink(const char *path)
{
	if (!path || path[0] != '/')
		return -EINVAL;
	if (path[1] == '\0')
		return 0; /* "/" itself is no symlink */
	_cleanup_free_ char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	/* lstat every prefix: a symlink anywhere could redirect a bind or a
	 * Landlock rule outside what the grant names. */
	for (char *s = p + 1;; s++) {
		char c = *s;
		if (c == '/' || c == '\0') {
			*s = '\0';
			struct stat st;
			if (lstat(p, &st) < 0)
				return -errno;
			if (S_ISLNK(st.st_mode))
				return -ELOOP;
			*s = c;
			if (c == '\0')
				break;
		}
	}
	return 0;
}

int agsbx_grant_create(const char *parent, const char *prefix, uid_t owner_uid, gid_t owner_gid,
		       struct agsbx_grant **out)
{
	int r = agsbx_path_check_no_symlink(parent);
	if (r < 0)
		return r;
	struct agsbx_grant *g = calloc(1, sizeof *g);
	if (!g)
		return -ENOMEM;
	char hex[25];
	agsbx_random_hex(hex, 12);
	snprintf(g->id, sizeof g->id, "grant-%s", hex);
	if (asprintf(&g->area, "%s/%s-%s", parent, prefix, hex) < 0) {
		g->area = NULL;
		free(g);
		return -ENOMEM;
	}
	if (mkdir(g->area, 0755) < 0) {
		r = -errno;
		free(g->area);
		free(g);
		return r;
	}
	for (int i = 0; i < AGSBX_ROOT_COUNT; i++) {
		g->roots[i].path = agsbx_path_join(g->area, role_names[i]);
		g->roots[i].writable = i != AGSBX_ROOT_SOURCE;
		if (!g->roots[i].path || mkdir(g->roots[i].path, 0755) < 0) {
			r = g->roots[i].path ? -errno : -ENOMEM;
			agsbx_grant_destroy(g);
			return r;
		}
		if (owner_uid != (uid_t)-1 &&
		    chown(g->roots[i].path, owner_uid, owner_gid) < 0) {
			r = -errno;
			agsbx_grant_destroy(g);
			return r;
		}
	}
	*out = g;
	return 0;
}

static int copy_fd(int in, int out)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			off += w;
		}
	}
}

static int64_t ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static void fingerprint(const struct stat *st, struct agsbx_bundle_file *f)
{
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->mtime_ns = ns(&st->st_mtim);
	f->ctime_ns = ns(&st->st_ctim);
}

static bool same_fingerprint(const struct stat *st, const struct agsbx_bundle_file *f)
{
	return st->st_dev == f->dev && st->st_ino == f->ino && (uint64_t)st->st_size == f->bytes &&
	       ns(&st->st_mtim) == f->mtime_ns && ns(&st->st_ctim) == f->ctime_ns;
}

/* Copies src into the new file dst (created exclusively, never through a
 * pre-placed entry) and seals its mode; returns the open fd of dst. On
 * failure the partial copy is removed: a truncated file must not sit in the
 * source root unrecorded. */
static int materialise(const char *src, const char *dst, bool executable)
{
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	/* read too: the digest is taken from this fd, never from the path again */
	_cleanup_close_ int out = open(dst, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	int r = copy_fd(in, out);
	if (r == 0 && fchmod(out, executable ? 0555 : 0444) < 0)
		r = -errno;
	if (r < 0) {
		unlink(dst);
		return r;
	}
	return TAKE_FD(out);
}

int agsbx_grant_add_file(struct agsbx_grant *g, const char *name, const char *src, bool executable)
{
	if (g->sealed)
		return -EPERM;
	if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	_cleanup_free_ char *dst = agsbx_path_join(g->roots[AGSBX_ROOT_SOURCE].path, name);
	if (!dst)
		return -ENOMEM;
	_cleanup_close_ int out = materialise(src, dst, executable);
	if (out < 0)
		return out;
	struct agsbx_bundle_file *nf = realloc(g->files, (g->nfiles + 1) * sizeof *nf);
	if (!nf)
		return -ENOMEM;
	g->files = nf;
	struct agsbx_bundle_file *f = &g->files[g->nfiles];
	memset(f, 0, sizeof *f);
	struct stat st;
	if (fstat(out, &st) < 0)
		return -errno;
	int r = lseek(out, 0, SEEK_SET) < 0 ? -errno : agsbx_sha256_fd(out, f->sha256);
	if (r < 0)
		return r;
	f->name = strdup(name);
	f->path = TAKE_PTR(dst);
	fingerprint(&st, f);
	f->bytes = (uint64_t)st.st_size;
	f->executable = executable;
	if (!f->name) {
		free(f->path);
		return -ENOMEM;
	}
	g->nfiles++;
	return 0;
}

int agsbx_grant_seal(struct agsbx_grant *g)
{
	/* No more files. The source root stays writable by its owner on
	 * purpose: then only the sandbox's read-only grant stands between the
	 * program and the bundle, so fs.readonly_grant_denied observes the
	 * mechanism rather than file modes; the sha256 guard catches tampering. */
	g->sealed = true;
	return 0;
}

/* One file: opened without following a link and judged by that fd (the
 * source root is the sandbox user's, who may swap the entry any time). */
static int verify_file(const struct agsbx_bundle_file *f, struct agsbx_error *fail)
{
	struct stat st;
	_cleanup_close_ int fd = open(f->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno != ELOOP && errno != ENXIO) {
		int e = errno;
		agsbx_error_set(fail, "bundle_changed", "%s: %s", f->name, strerror(e));
		return -e;
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		agsbx_error_set(fail, "bundle_changed", "%s is no longer a regular file", f->name);
		return -ELOOP;
	}
	if (same_fingerprint(&st, f))
		return 0;
	char hex[65];
	int r = agsbx_sha256_fd(fd, hex);
	if (r < 0) {
		agsbx_error_set(fail, "bundle_changed", "%s: %s", f->name, strerror(-r));
		return r;
	}
	if (strcmp(hex, f->sha256) != 0) {
		agsbx_error_set(fail, "bundle_changed", "digest of %s changed before execution (sha256 %s, recorded %s)",
				f->name, hex, f->sha256);
		return -EBADMSG;
	}
	return 0;
}

int agsbx_grant_verify(const struct agsbx_grant *g, struct agsbx_error *fail)
{
	for (size_t i = 0; i < g->nfiles; i++) {
		int r = verify_file(&g->files[i], fail);
		if (r < 0)
			return r;
	}
	return 0;
}

void agsbx_grant_destroy(struct agsbx_grant *g)
{
	if (!g)
		return;
	/* The roots belong to the sandbox user, who may still be swapping
	 * directories for links: an fd walk that never follows one. */
	if (g->area)
		agsbx_remove_tree(g->area, NULL);
	for (int i = 0; i < AGSBX_ROOT_COUNT; i++)
		free(g->roots[i].path);
	for (size_t i = 0; i < g->nfiles; i++) {
		free(g->files[i].name);
		free(g->files[i].path);
	}
	free(g->files);
	free(g->area);
	free(g);
}
