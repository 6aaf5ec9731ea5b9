/* agsbx-payload: the observer that runs inside every sandbox.
 *
 * One op per invocation, one JSON object on stdout (protocol:
 * docs/payload.md). Statically linked against libc only, so the binary alone
 * is a sufficient root filesystem (gVisor scratch image). It never allocates:
 * output goes through a static buffer, everything else lives on the stack.
 *
 * Exit status: 0 when the observation was made (permitted or denied), 2 on a
 * usage error (a JSON object with "error" is still printed). Library-style
 * "return -errno" is kept for helpers; only main() decides the status.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "payload.h"

#define EXIT_USAGE 2
#define READ_MAX 4096
#define CONTENT_MAX 256
#define FLOOD_CHUNK (64 * 1024)

extern char **environ;

static int stat_inode(const char *path, unsigned long long *ino)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	*ino = (unsigned long long)st.st_ino;
	return 0;
}

static void f_inode_or_null(const char *k, const char *path)
{
	unsigned long long ino = 0;
	if (stat_inode(path, &ino) == 0)
		f_uint(k, ino);
	else
		f_null(k);
}

/* The read result shared by read and symlink-read. */
static void emit_read(const char *path)
{
	static char buf[READ_MAX];
	const char *stage;
	ssize_t n = read_path(path, buf, sizeof(buf), &stage);
	if (n < 0) {
		f_result((int)-n);
		f_str("stage", stage);
		f_null("bytes");
		f_null("content");
		return;
	}
	f_result(0);
	f_int("bytes", n);
	f_strn("content", buf, (size_t)n < CONTENT_MAX ? (size_t)n : CONTENT_MAX);
}


/* ---------- ops ---------- */

/* A numeric argument's bounds: args[index] must parse in [min, max]. */
struct num_arg {
	int index;
	long long min, max;
};
#define NUM(i, lo, hi) (&(const struct num_arg){ (i), (lo), (hi) })
/* No check beyond the argument count. */
#define ANY_ARGS NULL, NULL

/* One row per op: its name, argument count and usage, and its argument
 * check (a numeric bound, a validator, both or neither), looked up by
 * name before it runs. */
struct op {
	const char *name;
	int min_args, max_args;
	const char *usage;
	int (*run)(char **argv, int argc, const char *self);
	const struct num_arg *num;
	bool (*valid)(char **args, int nargs);
};

static int op_true(char **argv, int argc, const char *self)
{
	f_result(0);
	return 0;
}

static int op_read(char **argv, int argc, const char *self)
{
	f_str("path", argv[0]);
	emit_read(argv[0]);
	return 0;
}

static int op_write(char **argv, int argc, const char *self)
{
	const char *text = argv[1];
	size_t len = strlen(text), done = 0;
	f_str("path", argv[0]);
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0) {
		f_result(errno);
		f_str("stage", "open");
		f_int("bytes", 0);
		return 0;
	}
	int err = 0;
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			err = errno;
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) < 0 && err == 0 && errno != EINTR)
		err = errno; /* e.g. EDQUOT/EIO surfaced on close by NFS-like filesystems */
	f_result(err);
	if (err)
		f_str("stage", "write");
	f_int("bytes", (long long)done);
	return 0;
}

static int op_symlink_read(char **argv, int argc, const char *self)
{
	int serr = symlink(argv[1], argv[0]) < 0 ? errno : 0;
	f_str("link", argv[0]);
	f_str("target", argv[1]);
	f_step("symlink_ok", "symlink_errno", serr);
	/* Read even when symlink() failed: a link left by an earlier run still
	 * tells whether following it escapes. */
	emit_read(argv[0]);
	return 0;
}

static int op_remount(char **argv, int argc, const char *self)
{
	const char *path = argv[0];
	/* No MS_RDONLY: this asks to drop read-only on an existing bind. */
	int rerr = mount(NULL, path, NULL, MS_REMOUNT | MS_BIND, NULL) < 0 ? errno : 0;
	int terr = mount("tmpfs", path, "tmpfs", 0, NULL) < 0 ? errno : 0;
	int uerr = 0;
	if (terr == 0 && umount2(path, MNT_DETACH) < 0)
		uerr = errno;
	f_str("path", path);
	f_result(rerr == 0 || terr == 0 ? 0 : rerr);
	obj_open("remount");
	f_result(rerr);
	obj_close();
	obj_open("tmpfs");
	f_result(terr);
	if (terr == 0) {
		f_bool("unmounted", uerr == 0);
		f_errno_pair("umount_errno", NULL, uerr);
	}
	obj_close();
	return 0;
}

static const char *const ns_names[] = { "net", "pid", "mnt", "user", "uts", "ipc", "cgroup" };

/* The inode of a /proc/self/ns link: stat() follows it, and where that
 * is refused (a ptrace sandbox such as proot answers stat of the link
 * itself) the link's text "net:[INODE]" says the same. */
static int ns_inode(const char *path, unsigned long long *ino)
{
	int err = -stat_inode(path, ino);
	if (err == 0)
		return 0;
	char buf[64];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return err;
	buf[n] = '\0';
	const char *b = strchr(buf, '[');
	char *end = NULL;
	errno = 0;
	unsigned long long v = b ? strtoull(b + 1, &end, 10) : 0;
	if (!b || errno || end == b + 1 || *end != ']')
		return err;
	*ino = v;
	return 0;
}

static int op_ns(char **argv, int argc, const char *self)
{
	enum { N = sizeof(ns_names) / sizeof(ns_names[0]) };
	unsigned long long ino[N] = { 0 };
	int errs[N];
	int first_err = 0;
	bool any = false;
	for (size_t i = 0; i < N; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_names[i]);
		errs[i] = ns_inode(path, &ino[i]);
		if (errs[i] == 0)
			any = true;
		else if (first_err == 0)
			first_err = errs[i];
	}
	/* ok: at least one namespace was observable (no /proc → all null). */
	f_result(any ? 0 : first_err);
	obj_open("ns");
	for (size_t i = 0; i < N; i++) {
		if (errs[i] == 0)
			f_uint(ns_names[i], ino[i]);
		else
			f_null(ns_names[i]);
	}
	obj_close();
	/* why a namespace is null */
	obj_open("ns_errno");
	for (size_t i = 0; i < N; i++)
		f_errno_pair(ns_names[i], NULL, errs[i]);
	obj_close();
	return 0;
}

/* Value of "Name:\t..." in a /proc status-style buffer (NUL-terminated),
 * copied up to the end of line. */
static bool status_field(const char *buf, const char *name, char *val, size_t cap)
{
	size_t nl = strlen(name);
	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, name, nl) != 0 || p[nl] != ':')
			continue;
		p += nl + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t n = strcspn(p, "\n");
		if (n >= cap)
			n = cap - 1;
		memcpy(val, p, n);
		val[n] = '\0';
		return true;
	}
	return false;
}

static bool hex_all_zero(const char *s)
{
	for (; *s; s++)
		if (*s != '0')
			return false;
	return true;
}

/* Effective capabilities through capget(2) when /proc is not mounted. */
static int capeff_capget(char *val, size_t cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	unsigned long long eff = ((unsigned long long)data[1].effective << 32) | data[0].effective;
	snprintf(val, cap, "%016llx", eff);
	return 0;
}

/* /proc/self/status as text, "" when unreadable (no /proc); static, so
 * valid until the next call. */
static const char *self_status(void)
{
	static char st[16384];
	const char *stage;
	ssize_t n = read_path("/proc/self/status", st, sizeof(st) - 1, &stage);
	st[n > 0 ? n : 0] = '\0';
	return st;
}

static void f_no_new_privs(void)
{
	int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (nnp < 0)
		f_null("no_new_privs");
	else
		f_int("no_new_privs", nnp);
}

/* The four other capability sets as /proc shows them (hex strings, null
 * when /proc is not mounted): what a process could still gain or keep. */
static void emit_capsets(const char *st)
{
	static const struct { const char *field, *key; } sets[] = {
		{ "CapInh", "cap_inh" }, { "CapPrm", "cap_prm" }, { "CapBnd", "cap_bnd" }, { "CapAmb", "cap_amb" },
	};
	char val[64];
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		if (status_field(st, sets[i].field, val, sizeof(val)))
			f_str(sets[i].key, val);
		else
			f_null(sets[i].key);
	}
}

static void emit_label(void)
{
	static const char *const paths[] = { "/proc/self/attr/apparmor/current",
					     "/proc/self/attr/current" };
	char buf[512];
	const char *stage;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		ssize_t n = read_path(paths[i], buf, sizeof(buf), &stage);
		if (n <= 0)
			continue;
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
			n--;
		f_strn("apparmor_label", buf, (size_t)n);
		return;
	}
	f_null("apparmor_label");
}

static int op_status(char **argv, int argc, const char *self)
{
	const char *st = self_status();

	f_result(0);
	f_int("uid", getuid());
	f_int("euid", geteuid());
	f_int("gid", getgid());
	f_int("pid", getpid());
	f_int("ppid", getppid());
	f_no_new_privs();

	char val[64];
	long long seccomp = -1;
	if (status_field(st, "Seccomp", val, sizeof(val)) && parse_ll(val, 0, 16, &seccomp) < 0)
		seccomp = -1;
	f_int("seccomp", seccomp);

	const char *source = "proc";
	if (!status_field(st, "CapEff", val, sizeof(val))) {
		source = capeff_capget(val, sizeof(val)) == 0 ? "capget" : NULL;
	}
	if (source) {
		f_str("cap_eff", val);
		f_bool("cap_eff_zero", hex_all_zero(val));
	} else {
		f_null("cap_eff");
		f_null("cap_eff_zero");
	}
	f_str("cap_eff_source", source);
	emit_capsets(st);

	struct utsname u;
	f_str("kernel_release", uname(&u) == 0 ? u.release : NULL);
	emit_label();
	return 0;
}

/* Counts numeric entries of /proc with getdents64 (no opendir: no malloc). */
static long long count_proc_pids(void)
{
	int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	static char buf[16384];
	long long count = 0;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				count = -1;
			break;
		}
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: ino(8) off(8) reclen(2) type(1) name */
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			const char *name = buf + off + 19;
			if (name[0] >= '1' && name[0] <= '9' && name[strspn(name, "0123456789")] == '\0')
				count++;
			off += reclen;
		}
	}
	close(fd);
	return count;
}

static int op_pid_visible(char **argv, int argc, const char *self)
{
	long long pid;
	if (parse_ll(argv[0], 1, INT_MAX, &pid) < 0)
		return -EINVAL; /* args_valid() already refused it */
	char path[32];
	snprintf(path, sizeof(path), "/proc/%lld", pid);
	int kerr = kill((pid_t)pid, 0) < 0 ? errno : 0;
	struct stat sb;
	int perr = stat(path, &sb) < 0 ? errno : 0;
	/* EPERM from kill() still proves the pid exists in our pid namespace. */
	bool visible = kerr == 0 || kerr == EPERM || perr == 0;
	f_int("pid", pid);
	f_result(visible ? 0 : kerr); /* not visible: kerr is not 0 */
	f_step("kill_ok", "kill_errno", kerr);
	f_bool("proc_exists", perr == 0);
	long long count = count_proc_pids();
	if (count < 0)
		f_null("visible_pids");
	else
		f_int("visible_pids", count);
	f_inode_or_null("pid_ns", "/proc/self/ns/pid");
	return 0;
}

static int op_env(char **argv, int argc, const char *self)
{
	const char *v = getenv(argv[0]);
	long long count = 0;
	for (char **e = environ; e && *e; e++)
		count++;
	f_result(0);
	f_str("name", argv[0]);
	f_bool("present", v != NULL);
	f_str("value", v);
	f_int("count", count);
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Non-blocking connect bounded by timeout_ms; returns 0 or an errno value
 * and names the failing stage. */
static int tcp_connect(const struct sockaddr_in *sa, long long timeout_ms, const char **stage)
{
	*stage = "socket";
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	*stage = "connect";
	int err = 0;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
		err = errno;
	if (err == EINPROGRESS || err == EINTR) {
		long long deadline = now_ms() + timeout_ms;
		*stage = "poll";
		for (;;) {
			long long left = deadline - now_ms();
			if (left <= 0) {
				err = ETIMEDOUT;
				break;
			}
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			int r = poll(&p, 1, (int)left);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				err = errno;
				break;
			}
			if (r == 0)
				continue; /* re-check the deadline */
			socklen_t len = sizeof(err);
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
				err = errno;
			*stage = "connect";
			break;
		}
	}
	close(fd);
	return err;
}

static int op_connect(char **argv, int argc, const char *self)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long long port, timeout_ms = 2000;
	if (inet_pton(AF_INET, argv[0], &sa.sin_addr) != 1 ||
	    parse_ll(argv[1], 1, 65535, &port) < 0 ||
	    (argc > 2 && parse_ll(argv[2], 1, 600000, &timeout_ms) < 0))
		return -EINVAL;
	sa.sin_port = htons((uint16_t)port);
	const char *stage;
	int err = tcp_connect(&sa, timeout_ms, &stage);
	f_result(err);
	if (err)
		f_str("stage", stage);
	f_str("host", argv[0]);
	f_int("port", port);
	f_int("timeout_ms", timeout_ms);
	return 0;
}

static void ignore_signals(bool all)
{
	signal(SIGTERM, SIG_IGN);
	if (all) {
		signal(SIGHUP, SIG_IGN);
		signal(SIGINT, SIG_IGN);
	}
}

static void hang_forever(void)
{
	for (;;)
		pause();
}

/* Publishes "<pid>\n" atomically (temp name + rename) so a reader never sees
 * a half-written file. */
static int write_readyfile(const char *path)
{
	char tmp[PATH_MAX], line[24];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0)
		return -errno;
	write_all(fd, line, (size_t)n);
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		int err = errno;
		unlink(tmp);
		return -err;
	}
	return 0;
}

static int op_linger(char **argv, int argc, const char *self)
{
	ignore_signals(true);
	if (argc > 1) {
		int r = write_readyfile(argv[1]);
		if (r < 0)
			fprintf(stderr, "agsbx-payload: linger: cannot write %s: %s\n", argv[1],
				strerror(-r));
	}
	hang_forever();
	return 0;
}

/* Messages on the status pipe from the intermediate child and grandchild;
 * 8 bytes < PIPE_BUF, so each write is atomic. */
enum { MSG_PID = 1, MSG_FORK_ERR, MSG_EXEC_ERR };
struct msg {
	int kind, val;
};

static void send_msg(int fd, int kind, int val)
{
	struct msg m = { kind, val };
	write_all(fd, (const char *)&m, sizeof(m));
}

/* The grandchild: new session, deaf to TERM/HUP/INT (SIG_IGN survives
 * exec), then becomes "agsbx-payload linger MARKER READYFILE". */
static void grandchild(int fd, const char *self, const char *marker, const char *readyfile)
{
	/* Cannot fail: a fresh fork child is never a process group leader. */
	(void)setsid();
	ignore_signals(true);
	char *args[] = { (char *)self, (char *)"linger", (char *)marker, (char *)readyfile, NULL };
	/* /proc/self/exe is missing in sandboxes without /proc, so argv[0]
	 * comes first; a bare name is looked up in PATH. */
	if (strchr(self, '/'))
		execv(self, args);
	else
		execvp(self, args);
	int err = errno;
	execv("/proc/self/exe", args);
	if (errno != ENOENT)
		err = errno;
	send_msg(fd, MSG_EXEC_ERR, err);
	_exit(127);
}

/* The intermediate child: forks the grandchild, reports its pid and
 * exits so the grandchild is orphaned. */
static _Noreturn void spawn_intermediate(int wfd, char **argv, const char *self)
{
	pid_t g = fork();
	if (g < 0) {
		send_msg(wfd, MSG_FORK_ERR, errno);
		_exit(1);
	}
	if (g == 0)
		grandchild(wfd, self, argv[0], argv[1]);
	send_msg(wfd, MSG_PID, (int)g);
	_exit(0);
}

/* Reads the intermediate's messages until EOF, which arrives when it has
 * exited and the grandchild's exec closed its CLOEXEC copy of the write
 * end. Returns the first error (0 if none) and its stage. */
static int spawn_collect(int rfd, int *gpid, const char **stage)
{
	int err = 0;
	struct msg m;
	for (;;) {
		ssize_t r = read(rfd, &m, sizeof(m));
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof(m))
			break;
		if (m.kind == MSG_PID) {
			*gpid = m.val;
		} else if (err == 0) {
			err = m.val;
			*stage = m.kind == MSG_FORK_ERR ? "fork" : "exec";
		}
	}
	if (err == 0 && *gpid == 0) {
		err = ECHILD; /* the intermediate child died before reporting */
		*stage = "fork";
	}
	return err;
}

static int op_spawn_detached(char **argv, int argc, const char *self)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		f_result(errno);
		f_str("stage", "pipe");
		return 0;
	}
	fflush(NULL);
	pid_t mid = fork();
	if (mid < 0) {
		int err = errno;
		close(p[0]);
		close(p[1]);
		f_result(err);
		f_str("stage", "fork");
		return 0;
	}
	if (mid == 0) {
		close(p[0]);
		spawn_intermediate(p[1], argv, self);
	}
	close(p[1]);
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	int gpid = 0;
	const char *stage = NULL;
	int err = spawn_collect(p[0], &gpid, &stage);
	close(p[0]);
	f_result(err);
	if (stage)
		f_str("stage", stage);
	if (gpid > 0)
		f_int("grandchild_pid", gpid);
	else
		f_null("grandchild_pid");
	f_str("marker", argv[0]);
	if (err != 0)
		return 0; /* nothing is running: report and exit */
	out_str("}\n");
	out_flush();
	ignore_signals(false);
	hang_forever();
	return 0;
}

/* Writes N bytes of P's chunk pattern to FD; returns 0 or an errno value. */
static int write_chunk(int fd, const char *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(fd, p + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		done += (size_t)w;
	}
	return 0;
}

static int op_flood(char **argv, int argc, const char *self)
{
	static char xs[FLOOD_CHUNK], ys[FLOOD_CHUNK];
	long long total;
	if (parse_ll(argv[0], 0, LLONG_MAX, &total) < 0)
		return -EINVAL;
	/* The object's opening ('{"op":"flood"') is still buffered: set it
	 * aside so the JSON follows the flood instead of preceding it. */
	char head[64];
	size_t head_len = out_take(head, sizeof(head));

	memset(xs, 'x', sizeof(xs));
	memset(ys, 'y', sizeof(ys));
	int err_out = 0, err_err = 0;
	long long sent = 0;
	for (long long left = total; left > 0;) {
		size_t n = left < FLOOD_CHUNK ? (size_t)left : FLOOD_CHUNK;
		/* Plain blocking writes, alternating, so a harness that drains
		 * only one of the pipes stalls us instead of being spared. */
		if (err_out == 0 && (err_out = write_chunk(STDOUT_FILENO, xs, n)) == 0)
			sent += (long long)n;
		if (err_err == 0)
			err_err = write_chunk(STDERR_FILENO, ys, n);
		left -= (long long)n;
	}
	/* The JSON line goes on its own line after the flood. */
	if (total > 0)
		out_raw("\n", 1);
	out_raw(head, head_len);
	f_result(err_out ? err_out : err_err);
	f_int("bytes", total);
	if (err_out || err_err) {
		f_int("stdout_bytes", sent);
		f_errno_pair("stderr_errno", NULL, err_err);
	}
	return 0;
}

static int op_uname(char **argv, int argc, const char *self)
{
	struct utsname u;
	if (uname(&u) < 0) {
		f_result(errno);
		return 0;
	}
	f_result(0);
	f_str("sysname", u.sysname);
	f_str("release", u.release);
	f_str("version", u.version);
	f_str("machine", u.machine);
	return 0;
}

/* The gVisor probe's four observations from one process (one container
 * instead of four): each op's own fields in an object named after it. */
static int op_observe(char **argv, int argc, const char *self)
{
	static const struct {
		const char *name;
		int (*run)(char **, int, const char *);
		int nargs;
	} parts[] = { { "uname", op_uname, 0 }, { "status", op_status, 0 }, { "ns", op_ns, 0 }, { "read", op_read, 1 } };
	f_result(0);
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		obj_open(parts[i].name);
		f_str("op", parts[i].name);
		parts[i].run(argv, parts[i].nargs, self);
		obj_close();
	}
	return 0;
}

/* ---------- catalogue v2 ops ---------- */

/* "Name:" of /proc/PID/status, or "" when unreadable. */
static void proc_status_of(pid_t pid, char *buf, size_t cap)
{
	char path[48];
	const char *stage;
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	ssize_t n = read_path(path, buf, cap - 1, &stage);
	buf[n > 0 ? n : 0] = '\0';
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Starts PATH ("PATH root -c true") with stdin a pipe whose write end
 * stays with us (*in_w), so su waits there for a password. *exec_err is
 * the exec's errno, 0 once the exec went through. */
static pid_t spawn_setuid(const char *path, int *in_w, int *exec_err)
{
	int in[2], ep[2];
	*exec_err = 0;
	if (pipe2(in, O_CLOEXEC) < 0) {
		*exec_err = errno;
		return -1;
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		*exec_err = errno;
		close(in[0]);
		close(in[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		dup2(in[0], 0);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		char *args[] = { (char *)path, (char *)"root", (char *)"-c", (char *)"true", NULL };
		execv(path, args);
		int e = errno;
		write_all(ep[1], (const char *)&e, sizeof e);
		_exit(127);
	}
	close(in[0]);
	close(ep[1]);
	if (pid < 0)
		*exec_err = errno;
	else if (read(ep[0], exec_err, sizeof *exec_err) != (ssize_t)sizeof *exec_err)
		*exec_err = 0; /* EOF: the exec succeeded (CLOEXEC closed the pipe) */
	close(ep[0]);
	*in_w = in[1];
	return pid;
}

/* The effective uid of our child PID once it runs PATH, or -1 if unseen. */
static long long child_euid(pid_t pid, const char *path, const char **method)
{
	static char st[4096];
	*method = "proc";
	for (int i = 0; i < 2000; i++) {
		proc_status_of(pid, st, sizeof(st));
		if (!st[0]) {
			/* /proc/PID hidden (a Landlock domain grants /proc/self
			 * only): the exec is done (the pipe closed), so ask the
			 * kernel's own access check instead. process_vm_readv
			 * on our child passes it (EFAULT at address 1) only
			 * while the child's credentials still equal ours. */
			usleep(50 * 1000);
			char b;
			struct iovec l = { &b, 1 }, r = { (void *)1, 1 };
			int e = process_vm_readv(pid, &l, 1, &r, 1, 0) < 0 ? errno : 0;
			*method = "process_vm_readv";
			/* EPERM: credentials changed, taken as a gain. */
			return e == EFAULT ? (long long)geteuid() : e == EPERM ? 0 : -1;
		}
		char name[64], uids[128];
		long long euid = -1;
		if (status_field(st, "Name", name, sizeof(name)) && strncmp(name, base_name(path), 15) == 0 &&
		    status_field(st, "Uid", uids, sizeof(uids))) {
			char *sp = strpbrk(uids, " \t");
			if (sp && parse_ll(strtok(sp + strspn(sp, " \t"), " \t"), 0, INT_MAX, &euid) == 0)
				return euid;
		}
		usleep(1000);
	}
	return -1;
}

/* Execs a setuid-root program, reads its effective uid while it waits on
 * stdin, then kills it. */
static void emit_setuid(const char *path)
{
	obj_open("setuid");
	f_str("path", path);
	int in_w = -1, exec_err = 0;
	pid_t pid = spawn_setuid(path, &in_w, &exec_err);
	const char *method = "proc";
	long long euid = pid > 0 && exec_err == 0 ? child_euid(pid, path, &method) : -1;
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (in_w >= 0)
		close(in_w);
	f_result(exec_err);
	if (euid >= 0)
		f_int("euid", euid);
	else
		f_null("euid");
	f_bool("observed", euid >= 0);
	f_str("method", method);
	obj_close();
}

static int op_caps(char **argv, int argc, const char *self)
{
	const char *st = self_status();
	f_result(0);
	f_int("uid", getuid());
	f_int("euid", geteuid());
	f_no_new_privs();
	char val[64];
	if (status_field(st, "CapEff", val, sizeof(val)) || capeff_capget(val, sizeof(val)) == 0)
		f_str("cap_eff", val);
	else
		f_null("cap_eff");
	emit_capsets(st);
	if (argc > 0)
		emit_setuid(argv[0]);
	return 0;
}

/* ptrace-attach, process_vm_readv, /proc/PID/mem and /proc/PID/environ of
 * a process outside. process_vm_readv at address 1 answers EFAULT once
 * the permission check passed: that counts as permitted. */
static int op_ptrace(char **argv, int argc, const char *self)
{
	long long pid;
	if (parse_ll(argv[0], 1, INT_MAX, &pid) < 0)
		return -EINVAL;
	f_int("pid", pid);
	int aerr = ptrace(PTRACE_SEIZE, (pid_t)pid, NULL, NULL) < 0 ? errno : 0;
	if (aerr == 0)
		ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL);
	char b;
	struct iovec l = { &b, 1 }, r = { (void *)1, 1 };
	int verr = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0) < 0 ? errno : 0;
	bool vok = verr == 0 || verr == EFAULT;
	char path[48];
	snprintf(path, sizeof(path), "/proc/%lld/mem", pid);
	int mfd = open(path, O_RDONLY | O_CLOEXEC);
	int merr = mfd < 0 ? errno : 0;
	if (mfd >= 0)
		close(mfd);
	snprintf(path, sizeof(path), "/proc/%lld/environ", pid);
	static char env[READ_MAX];
	const char *stage;
	ssize_t en = read_path(path, env, sizeof(env), &stage);
	int eerr = en < 0 ? (int)-en : 0;
	bool any = aerr == 0 || vok || merr == 0 || eerr == 0;
	f_result(any ? 0 : aerr); /* none: aerr is not 0 */
	obj_open("attach");
	f_result(aerr);
	obj_close();
	obj_open("vm_readv");
	f_bool("ok", vok);
	f_errno_pair("errno", NULL, verr);
	obj_close();
	obj_open("mem");
	f_result(merr);
	obj_close();
	obj_open("environ");
	f_result(eerr);
	/* NUL separates the entries; newlines keep the JSON free of \u0000. */
	for (ssize_t i = 0; i < en; i++)
		if (env[i] == '\0')
			env[i] = '\n';
	if (en >= 0)
		f_strn("content", env, (size_t)en < CONTENT_MAX ? (size_t)en : CONTENT_MAX);
	obj_close();
	return 0;
}

static int parse_sockaddr(const char *host, long long port, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a6);
		return 0;
	}
	return -EINVAL;
}

struct net_req {
	struct sockaddr_storage ss;
	socklen_t len;
	int type;                 /* SOCK_STREAM or SOCK_DGRAM */
	const char *text;         /* datagram payload */
	long long timeout_ms;
};

/* One TCP connect or UDP send; 0 or an errno value. */
static int net_attempt(const struct net_req *q, const char **stage)
{
	*stage = "socket";
	int fd = socket(q->ss.ss_family, q->type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int err = 0;
	if (q->type == SOCK_DGRAM) {
		*stage = "sendto";
		if (sendto(fd, q->text, strlen(q->text), 0, (const struct sockaddr *)&q->ss, q->len) < 0)
			err = errno;
		close(fd);
		return err;
	}
	*stage = "connect";
	if (connect(fd, (const struct sockaddr *)&q->ss, q->len) < 0)
		err = errno;
	if (err == EINPROGRESS) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int r = poll(&p, 1, (int)q->timeout_ms);
		socklen_t l = sizeof(err);
		if (r == 0)
			err = ETIMEDOUT;
		else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
			err = errno;
	}
	close(fd);
	return err;
}

/* The same attempt from a detached grandchild (new session, parent gone):
 * a restriction must hold for descendants that escaped the process tree.
 * The result comes back over a pipe. */
static int net_attempt_detached(const struct net_req *q, const char **stage)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	pid_t mid = fork();
	if (mid == 0) {
		close(p[0]);
		if (fork() == 0) {
			(void)setsid();
			const char *st;
			int e = net_attempt(q, &st);
			write_all(p[1], (const char *)&e, sizeof e);
			_exit(0);
		}
		_exit(0);
	}
	close(p[1]);
	if (mid > 0)
		while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
			;
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	int err = ECHILD;
	*stage = "detached";
	if (mid > 0 && poll(&pf, 1, (int)q->timeout_ms + 3000) > 0 && read(p[0], &err, sizeof err) != (ssize_t)sizeof err)
		err = ECHILD;
	close(p[0]);
	return err;
}

/* net HOST PORT tcp|udp TEXT TIMEOUT_MS [detached] */
static int op_net(char **argv, int argc, const char *self)
{
	struct net_req q = { .text = argv[3] };
	long long port;
	if (parse_ll(argv[1], 1, 65535, &port) < 0 || parse_sockaddr(argv[0], port, &q.ss, &q.len) < 0 ||
	    parse_ll(argv[4], 1, 600000, &q.timeout_ms) < 0)
		return -EINVAL;
	q.type = strcmp(argv[2], "udp") == 0 ? SOCK_DGRAM : SOCK_STREAM;
	bool detached = argc > 5 && strcmp(argv[5], "detached") == 0;
	const char *stage = NULL;
	int err = detached ? net_attempt_detached(&q, &stage) : net_attempt(&q, &stage);
	f_result(err);
	if (err)
		f_str("stage", stage);
	f_str("host", argv[0]);
	f_int("port", port);
	f_str("proto", argv[2]);
	f_bool("detached", detached);
	return 0;
}

/* unix-connect PATH: a pathname socket, or "@NAME" for an abstract one. */
static int op_unix_connect(char **argv, int argc, const char *self)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *p = argv[0];
	size_t n = strlen(p);
	if (n >= sizeof(a.sun_path))
		return -EINVAL;
	memcpy(a.sun_path, p, n);
	if (p[0] == '@')
		a.sun_path[0] = '\0';
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (p[0] == '@' ? 0 : 1));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err = fd < 0 ? errno : connect(fd, (struct sockaddr *)&a, len) < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	f_result(err);
	f_str("path", p);
	f_bool("abstract", p[0] == '@');
	return 0;
}

/* link-read OLD NEW: a hard link to OLD, then a read through it. */
static int op_link_read(char **argv, int argc, const char *self)
{
	int lerr = link(argv[0], argv[1]) < 0 ? errno : 0;
	f_str("target", argv[0]);
	f_str("link", argv[1]);
	f_step("link_ok", "link_errno", lerr);
	f_inode_or_null("link_inode", argv[1]);
	emit_read(argv[1]);
	return 0;
}

static int op_exit(char **argv, int argc, const char *self)
{
	long long code;
	if (parse_ll(argv[0], 0, 255, &code) < 0)
		return -EINVAL;
	f_result(0);
	f_int("code", code);
	out_str("}\n");
	out_flush();
	_exit((int)code);
}

static int op_kill_self(char **argv, int argc, const char *self)
{
	long long sig;
	if (parse_ll(argv[0], 1, 64, &sig) < 0)
		return -EINVAL;
	f_result(0);
	f_int("signal", sig);
	out_str("}\n");
	out_flush();
	signal((int)sig, SIG_DFL);
	raise((int)sig);
	for (;;)
		pause(); /* a blocked signal still arrives once unblocked; never exit 0 */
}

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif

/* ---------- read-alt: the read without open(2) ---------- */

/* Reads FD to the end (at most CAP bytes); the count or -errno. */
static ssize_t read_fd(int fd, char *buf, size_t cap)
{
	size_t got = 0;
	while (got < cap) {
		ssize_t r = read(fd, buf + got, cap - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* One ring of one entry, mapped by hand (no liburing in a static
 * payload). */
struct uring {
	int fd;
	struct io_uring_params p;
	char *sq, *cq;
	size_t sq_size, cq_size, sqes_size;
	struct io_uring_sqe *sqes;
};

static int uring_open(struct uring *u)
{
	memset(u, 0, sizeof(*u));
	u->fd = (int)syscall(__NR_io_uring_setup, 1, &u->p);
	if (u->fd < 0)
		return errno;
	u->sq_size = u->p.sq_off.array + u->p.sq_entries * sizeof(unsigned);
	u->cq_size = u->p.cq_off.cqes + u->p.cq_entries * sizeof(struct io_uring_cqe);
	u->sqes_size = u->p.sq_entries * sizeof(struct io_uring_sqe);
	u->sq = mmap(NULL, u->sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQ_RING);
	u->cq = mmap(NULL, u->cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_CQ_RING);
	u->sqes = mmap(NULL, u->sqes_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
	if (u->sq == MAP_FAILED || u->cq == MAP_FAILED || u->sqes == MAP_FAILED)
		return errno ? errno : ENOMEM;
	return 0;
}

static void uring_close(struct uring *u)
{
	if (u->sq && u->sq != MAP_FAILED)
		munmap(u->sq, u->sq_size);
	if (u->cq && u->cq != MAP_FAILED)
		munmap(u->cq, u->cq_size);
	if (u->sqes && u->sqes != MAP_FAILED)
		munmap(u->sqes, u->sqes_size);
	if (u->fd >= 0)
		close(u->fd);
}

/* Submits SQE and waits for its completion: the cqe's res (a value or
 * -errno), or -errno of io_uring_enter itself in *enter_err. */
static int uring_run(struct uring *u, const struct io_uring_sqe *sqe, int *enter_err)
{
	unsigned *tail = (unsigned *)(u->sq + u->p.sq_off.tail);
	unsigned mask = *(unsigned *)(u->sq + u->p.sq_off.ring_mask);
	unsigned *array = (unsigned *)(u->sq + u->p.sq_off.array);
	unsigned t = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
	u->sqes[t & mask] = *sqe;
	array[t & mask] = t & mask;
	__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
	*enter_err = 0;
	if (syscall(__NR_io_uring_enter, u->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		*enter_err = errno;
		return -errno;
	}
	unsigned *head = (unsigned *)(u->cq + u->p.cq_off.head);
	unsigned *ctail = (unsigned *)(u->cq + u->p.cq_off.tail);
	unsigned cmask = *(unsigned *)(u->cq + u->p.cq_off.ring_mask);
	unsigned h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
	if (h == __atomic_load_n(ctail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	struct io_uring_cqe *cqes = (struct io_uring_cqe *)(u->cq + u->p.cq_off.cqes);
	int res = cqes[h & cmask].res;
	__atomic_store_n(head, h + 1, __ATOMIC_RELEASE);
	return res;
}

/* IORING_OP_OPENAT then IORING_OP_READ of PATH: the count or -errno,
 * *stage the step that failed. */
static ssize_t uring_read(const char *path, char *buf, size_t cap, const char **stage)
{
	struct uring u;
	*stage = "setup";
	int err = uring_open(&u);
	ssize_t ret = -err;
	int enter_err = 0;
	if (err == 0) {
		*stage = "openat";
		struct io_uring_sqe o = { .opcode = IORING_OP_OPENAT, .fd = AT_FDCWD,
					  .addr = (unsigned long long)(uintptr_t)path, .open_flags = O_RDONLY | O_CLOEXEC };
		int fd = uring_run(&u, &o, &enter_err);
		ret = fd;
		if (fd >= 0) {
			*stage = "read";
			struct io_uring_sqe r = { .opcode = IORING_OP_READ, .fd = fd,
						  .addr = (unsigned long long)(uintptr_t)buf, .len = (unsigned)cap };
			ret = uring_run(&u, &r, &enter_err);
			close(fd);
		}
		if (enter_err)
			*stage = "enter";
	}
	uring_close(&u);
	return ret;
}

static ssize_t openat2_read(const char *path, char *buf, size_t cap, const char **stage)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC };
	*stage = "openat2";
	int fd = (int)syscall(__NR_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	*stage = "read";
	ssize_t n = read_fd(fd, buf, cap);
	close(fd);
	return n;
}

static void emit_alt(const char *k, ssize_t n, const char *buf, const char *stage)
{
	obj_open(k);
	f_result(n < 0 ? (int)-n : 0);
	f_str("stage", n < 0 ? stage : "done");
	if (n < 0) {
		f_null("bytes");
		f_null("content");
	} else {
		f_int("bytes", n);
		/* half: two of them share one result line */
		f_strn("content", buf, (size_t)n < CONTENT_MAX / 2 ? (size_t)n : CONTENT_MAX / 2);
	}
	obj_close();
}

/* read-alt PATH: the read through openat2(2) and through io_uring
 * (IORING_OP_OPENAT + IORING_OP_READ), which a sandbox that mediates
 * open(2) alone (a ptrace path translator) does not see. ok: either read
 * worked. */
static int op_read_alt(char **argv, int argc, const char *self)
{
	static char b1[READ_MAX], b2[READ_MAX];
	const char *s1, *s2;
	ssize_t n1 = openat2_read(argv[0], b1, sizeof(b1), &s1);
	ssize_t n2 = uring_read(argv[0], b2, sizeof(b2), &s2);
	f_str("path", argv[0]);
	f_result(n1 >= 0 || n2 >= 0 ? 0 : (int)-n2);
	emit_alt("openat2", n1, b1, s1);
	emit_alt("io_uring", n2, b2, s2);
	return 0;
}

static int op_io_uring(char **argv, int argc, const char *self)
{
	char params[120]; /* struct io_uring_params; the kernel only needs zeros */
	memset(params, 0, sizeof(params));
	long fd = syscall(__NR_io_uring_setup, 1, params);
	int err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close((int)fd);
	f_result(err);
	return 0;
}

/* mounts PREFIX...: the mount points (mountinfo field 5) at or under any
 * PREFIX, newline-separated: where a sandbox has mount points in /tmp or
 * $HOME, a host entry of the same name may be a mount-point stub. */
static int op_mounts(char **argv, int argc, const char *self)
{
	static char mi[65536], hits[4096];
	const char *stage;
	ssize_t n = read_path("/proc/self/mountinfo", mi, sizeof(mi) - 1, &stage);
	if (n < 0) {
		f_result((int)-n);
		return 0;
	}
	mi[n] = '\0';
	size_t used = 0;
	for (char *save = NULL, *line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f = line;
		for (int i = 0; i < 4 && f; i++) /* id parent major:minor root */
			f = strchr(f, ' ') ? strchr(f, ' ') + 1 : NULL;
		if (!f)
			continue;
		size_t len = strcspn(f, " ");
		for (int a = 0; a < argc; a++) {
			size_t pl = strlen(argv[a]);
			if (len >= pl && strncmp(f, argv[a], pl) == 0 && (len == pl || f[pl] == '/') && used + len + 1 < sizeof(hits)) {
				memcpy(hits + used, f, len);
				used += len;
				hits[used++] = '\n';
				break;
			}
		}
	}
	f_result(0);
	f_strn("mount_points", hits, used);
	f_inode_or_null("mnt_ns", "/proc/self/ns/mnt");
	return 0;
}

/* ---------- argument checks: a bad PID or number is a usage error
 * (exit 2) rather than an observation ---------- */

static bool valid_net(char **args, int nargs)
{
	long long v;
	struct sockaddr_storage ss;
	socklen_t len;
	return parse_ll(args[1], 1, 65535, &v) == 0 && parse_sockaddr(args[0], v, &ss, &len) == 0 &&
	       (strcmp(args[2], "tcp") == 0 || strcmp(args[2], "udp") == 0) && parse_ll(args[4], 1, 600000, &v) == 0 &&
	       (nargs < 6 || strcmp(args[5], "detached") == 0);
}

static bool valid_unix_path(char **args, int nargs)
{
	return strlen(args[0]) < sizeof(((struct sockaddr_un *)0)->sun_path);
}

static bool valid_abs_path(char **args, int nargs)
{
	return args[0][0] == '/';
}

static bool valid_kernel_surface(char **args, int nargs)
{
	return (!strcmp(args[1], "packet=0") || !strcmp(args[1], "packet=1")) &&
	       (!strcmp(args[2], "alg=0") || !strcmp(args[2], "alg=1"));
}

static bool valid_connect(char **args, int nargs)
{
	long long v;
	struct in_addr a;
	return inet_pton(AF_INET, args[0], &a) == 1 && parse_ll(args[1], 1, 65535, &v) == 0 &&
	       (nargs < 3 || parse_ll(args[2], 1, 600000, &v) == 0);
}

static const struct op ops[] = {
	{ "balloon", 1, 1, "balloon CAP_MIB", op_balloon, .num = NUM(0, 16, 4096) },
	{ "caps", 0, 1, "caps [SETUID_PROGRAM]", op_caps, ANY_ARGS },
	{ "connect", 2, 3, "connect HOST PORT [TIMEOUT_MS]", op_connect, .valid = valid_connect },
	{ "env", 1, 1, "env NAME", op_env, ANY_ARGS },
	{ "exit", 1, 1, "exit CODE", op_exit, .num = NUM(0, 0, 255) },
	{ "fds", 1, 1, "fds CANARY_PATH", op_fds, .valid = valid_abs_path },
	{ "flood", 1, 1, "flood BYTES", op_flood, .num = NUM(0, 0, LLONG_MAX) },
	{ "fork-bound", 1, 1, "fork-bound CAP", op_fork_bound, .num = NUM(0, 1, 4096) },
	{ "io-uring", 0, 0, "io-uring", op_io_uring, ANY_ARGS },
	{ "kernel-ifaces", 2, 6, "kernel-ifaces HOST_MNTNS_INODE MOUNT_PARENT [PATH...]", op_kernel_ifaces, .num = NUM(0, 0, LLONG_MAX) },
	{ "kernel-surface", 3, 3, "kernel-surface FILE packet=0|1 alg=0|1", op_kernel_surface, .valid = valid_kernel_surface },
	{ "keyring", 2, 2, "keyring DESCRIPTION SERIAL", op_keyring, .num = NUM(1, 0, INT_MAX) },
	{ "kill-self", 1, 1, "kill-self SIGNAL", op_kill_self, .num = NUM(0, 1, 64) },
	{ "limits", 0, 0, "limits", op_limits, ANY_ARGS },
	{ "linger", 1, 2, "linger MARKER [READYFILE]", op_linger, ANY_ARGS },
	{ "link-read", 2, 2, "link-read TARGET LINK", op_link_read, ANY_ARGS },
	{ "mounts", 1, 4, "mounts PREFIX...", op_mounts, ANY_ARGS },
	{ "net", 5, 6, "net HOST PORT tcp|udp TEXT TIMEOUT_MS [detached]", op_net, .valid = valid_net },
	{ "ns", 0, 0, "ns", op_ns, ANY_ARGS },
	{ "observe", 1, 1, "observe PATH", op_observe, ANY_ARGS },
	{ "pid-visible", 1, 1, "pid-visible PID", op_pid_visible, .num = NUM(0, 1, INT_MAX) },
	{ "ptrace", 1, 1, "ptrace PID", op_ptrace, .num = NUM(0, 1, INT_MAX) },
	{ "read", 1, 1, "read PATH", op_read, ANY_ARGS },
	{ "read-alt", 1, 1, "read-alt PATH", op_read_alt, ANY_ARGS },
	{ "remount", 1, 1, "remount PATH", op_remount, ANY_ARGS },
	{ "spawn-detached", 2, 2, "spawn-detached MARKER READYFILE", op_spawn_detached, ANY_ARGS },
	{ "status", 0, 0, "status", op_status, ANY_ARGS },
	{ "symlink-read", 2, 2, "symlink-read LINK TARGET", op_symlink_read, ANY_ARGS },
	{ "true", 0, 0, "true", op_true, ANY_ARGS },
	{ "uname", 0, 0, "uname", op_uname, ANY_ARGS },
	{ "unix-connect", 1, 1, "unix-connect PATH|@ABSTRACT", op_unix_connect, .valid = valid_unix_path },
	{ "unix-connects", 1, UNIX_CONNECTS_MAX, "unix-connects PATH|@ABSTRACT...", op_unix_connects, .valid = unix_connects_valid },
	{ "write", 2, 2, "write PATH TEXT", op_write, ANY_ARGS },
};

static int usage_error(const char *msg, const char *detail)
{
	char text[256];
	if (detail)
		snprintf(text, sizeof(text), "%s: %s", msg, detail);
	else
		snprintf(text, sizeof(text), "%s", msg);
	f_str("error", text);
	out_str("}\n");
	out_flush();
	fprintf(stderr, "agsbx-payload: %s\n", text);
	return EXIT_USAGE;
}

/* The row's argument check, before the op runs. */
static bool args_valid(const struct op *o, char **args, int nargs)
{
	long long v;
	if (o->num && parse_ll(args[o->num->index], o->num->min, o->num->max, &v) < 0)
		return false;
	return !o->valid || o->valid(args, nargs);
}

int main(int argc, char **argv)
{
	const char *self = argc > 0 && argv[0] ? argv[0] : "/proc/self/exe";
	/* Not an op: a server of many runs, speaking its own framing. */
	if (argc == 2 && strcmp(argv[1], "serve") == 0)
		return serve_main();
	obj_open(NULL);
	if (argc < 2) {
		f_null("op");
		return usage_error("usage: agsbx-payload OP [ARG...]", NULL);
	}
	const char *name = argv[1];
	f_str("op", name);
	const struct op *o = NULL;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(ops[i].name, name) == 0)
			o = &ops[i];
	if (!o)
		return usage_error("unknown op", NULL);
	int nargs = argc - 2;
	if (nargs < o->min_args || nargs > o->max_args || !args_valid(o, argv + 2, nargs))
		return usage_error("usage", o->usage);

	o->run(argv + 2, nargs, self);
	out_str("}\n");
	out_flush();
	return 0;
}
