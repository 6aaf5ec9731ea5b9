/* Payload ops for the kernel objects a sandbox may share with the host
 * besides files: daemon sockets (connect only, never a byte), descriptors
 * and directories inherited from outside (cwd, root), and the kernel
 * keyrings. Each prints what it saw; the harness judges. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/keyctl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "payload.h"

#define CONTENT_MAX 256
#define FDS_MAX 64

/* ---------- unix-connects ---------- */

bool unix_connects_valid(char **args, int nargs)
{
	for (int i = 0; i < nargs; i++)
		if (!args[i][0] || strlen(args[i]) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return false;
	return true;
}

/* connect(2) only: the socket is closed without a byte written, so a
 * daemon sees a connection open and close, never a request. Non-blocking:
 * a daemon with a full backlog answers EAGAIN instead of holding us. */
static int unix_connect_only(const char *p)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(p);
	memcpy(a.sun_path, p, n);
	if (p[0] == '@')
		a.sun_path[0] = '\0';
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (p[0] == '@' ? 0 : 1));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return errno;
	int err = connect(fd, (struct sockaddr *)&a, len) < 0 ? errno : 0;
	close(fd);
	return err;
}

/* unix-connects ADDR...: one connect per pathname or "@abstract" socket. */
int op_unix_connects(char **argv, int argc, const char *self)
{
	(void)self;
	f_result(0);
	arr_open("sockets");
	for (int i = 0; i < argc; i++) {
		int err = unix_connect_only(argv[i]);
		arr_item();
		f_str("path", argv[i]);
		f_bool("abstract", argv[i][0] == '@');
		f_result(err);
		obj_close();
	}
	arr_close();
	return 0;
}

/* ---------- fds ---------- */

static const char *mode_type(mode_t m)
{
	return S_ISDIR(m) ? "dir" : S_ISREG(m) ? "file" : S_ISSOCK(m) ? "socket" : S_ISFIFO(m) ? "pipe"
	       : S_ISCHR(m) ? "char" : S_ISBLK(m) ? "block" : S_ISLNK(m) ? "symlink" : "other";
}

/* The descriptors above 2, from /proc/self/fd (its own listing fd left
 * out) or, without /proc, by asking fcntl about 3..1023. */
static int list_fds(int *fds, int cap, const char **how)
{
	static char buf[8192];
	int n = 0, dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*how = dfd >= 0 ? "/proc/self/fd" : "fcntl 3..1023";
	if (dfd < 0) {
		for (int fd = 3; fd < 1024 && n < cap; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				fds[n++] = fd;
		return n;
	}
	long got;
	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0 || (got < 0 && errno == EINTR)) {
		for (long off = 0; off < got;) {
			unsigned short reclen; /* struct linux_dirent64: ino(8) off(8) reclen(2) type(1) name */
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			long long v;
			if (parse_ll(buf + off + 19, 3, INT_MAX, &v) == 0 && v != dfd && n < cap)
				fds[n++] = (int)v;
			off += reclen;
		}
	}
	close(dfd);
	return n;
}

static void f_link(const char *k, const char *path)
{
	char t[PATH_MAX];
	ssize_t n = readlink(path, t, sizeof(t));
	if (n < 0)
		f_null(k);
	else
		f_strn(k, t, (size_t)n);
}

/* openat(BASE, "../" x as many as fit in PATH_MAX, then CANARY): from a
 * directory anywhere, that many ".." reach the top of its mount tree — the
 * host's "/" for a descriptor that came from outside. */
static void read_through(int base, const char *canary)
{
	static char path[PATH_MAX], buf[CONTENT_MAX];
	const char *rel = canary + strspn(canary, "/");
	size_t rl = strlen(rel);
	if (rl + 1 >= sizeof(path)) {
		f_result(ENAMETOOLONG);
		return;
	}
	size_t ups = (sizeof(path) - 1 - rl) / 3;
	for (size_t i = 0; i < ups; i++)
		memcpy(path + 3 * i, "../", 3);
	memcpy(path + 3 * ups, rel, rl + 1);
	f_int("dotdots", (long long)ups);
	int fd = openat(base, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		f_result(errno);
		return;
	}
	ssize_t n = read(fd, buf, sizeof(buf));
	int err = n < 0 ? errno : 0;
	close(fd);
	f_result(err);
	if (n >= 0)
		f_strn("content", buf, (size_t)n);
}

static void emit_fd(int fd, const char *canary)
{
	char link[40];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	struct stat st;
	int serr = fstat(fd, &st) < 0 ? errno : 0;
	int fl = fcntl(fd, F_GETFL);
	arr_item();
	f_int("fd", fd);
	f_str("type", serr ? NULL : mode_type(st.st_mode));
	f_bool("o_path", fl >= 0 && (fl & O_PATH));
	f_link("target", link);
	if (!serr && S_ISDIR(st.st_mode)) {
		obj_open("canary_read");
		read_through(fd, canary);
		obj_close();
	}
	obj_close();
}

/* A base the process has without any inherited descriptor: its cwd, and
 * /proc/self/cwd and /proc/self/root (the magic links a runc-style leak
 * goes through). */
static void emit_base(const char *name, const char *path, const char *canary)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	arr_item();
	f_str("base", name);
	f_link("target", strcmp(name, "cwd") == 0 ? "/proc/self/cwd" : path);
	obj_open("canary_read");
	if (fd < 0) {
		f_result(errno);
		f_str("stage", "open base");
	} else {
		read_through(fd, canary);
		close(fd);
	}
	obj_close();
	obj_close();
}

/* fds CANARY_PATH: every descriptor above 2 (type, target, O_PATH) and,
 * through each directory one, cwd, /proc/self/cwd and /proc/self/root,
 * a read of CANARY_PATH climbing with "..". Each read says whether it
 * was permitted. */
int op_fds(char **argv, int argc, const char *self)
{
	(void)argc, (void)self;
	static int fds[FDS_MAX];
	const char *how;
	int n = list_fds(fds, FDS_MAX, &how);
	f_result(0);
	f_str("listed_by", how);
	f_int("count", n);
	arr_open("descriptors");
	for (int i = 0; i < n; i++)
		emit_fd(fds[i], argv[0]);
	arr_close();
	arr_open("bases");
	emit_base("cwd", ".", argv[0]);
	emit_base("/proc/self/cwd", "/proc/self/cwd", argv[0]);
	emit_base("/proc/self/root", "/proc/self/root", argv[0]);
	arr_close();
	return 0;
}

/* ---------- keyring ---------- */

/* Searches RING for the "user" key DESC and reads it; a search that
 * finds it makes the key possessed, so the read is what any process of
 * the keyring's reach could do. */
static void keyring_try(const char *name, int ring, const char *desc)
{
	static char buf[CONTENT_MAX];
	arr_item();
	f_str("keyring", name);
	long id = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, ring, 0);
	if (id < 0)
		f_null("id");
	else
		f_int("id", id);
	long k = syscall(SYS_keyctl, KEYCTL_SEARCH, ring, "user", desc, 0);
	f_step("search_ok", "search_errno", k < 0 ? errno : 0);
	long n = k < 0 ? -1 : syscall(SYS_keyctl, KEYCTL_READ, k, buf, sizeof(buf));
	int err = k < 0 ? ENOKEY : n < 0 ? errno : 0;
	f_result(err);
	if (n >= 0)
		f_strn("content", buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf));
	obj_close();
}

/* keyring DESCRIPTION SERIAL: the key searched for in the user, session
 * and user-session keyrings, and read by its serial number directly (a
 * same-uid process sees serials in /proc/keys). */
int op_keyring(char **argv, int argc, const char *self)
{
	(void)argc, (void)self;
	static char buf[CONTENT_MAX];
	long long serial = 0;
	parse_ll(argv[1], 0, INT_MAX, &serial);
	long n = serial > 0 ? syscall(SYS_keyctl, KEYCTL_READ, (long)serial, buf, sizeof(buf)) : -1;
	int err = serial <= 0 ? EINVAL : n < 0 ? errno : 0;
	f_result(0);   /* observed; each read says whether it was permitted */
	f_str("description", argv[0]);
	arr_open("searches");
	keyring_try("user", KEY_SPEC_USER_KEYRING, argv[0]);
	keyring_try("session", KEY_SPEC_SESSION_KEYRING, argv[0]);
	keyring_try("user_session", KEY_SPEC_USER_SESSION_KEYRING, argv[0]);
	arr_close();
	obj_open("by_serial");
	f_int("serial", serial);
	f_result(err);
	if (n >= 0)
		f_strn("content", buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf));
	obj_close();
	return 0;
}
