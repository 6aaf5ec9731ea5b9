/* base/util.c: file digests and reads on what a path may turn out to be
 * (a FIFO swapped in for a granted file must not hang the harness). */
#include "base/cleanup.h"
#include "base/dockerhost.h"
#include "base/error.h"
#include "base/log.h"
#include "base/proc.h"
#include "base/strv.h"
#include "base/util.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static char *tmp_path(const char *dir, const char *name)
{
	char *p = agsbx_path_join(dir, name);
	ck_assert_ptr_nonnull(p);
	return p;
}

START_TEST(test_sha256_file_regular)
{
	char *dir = agsbx_test_tmpdir("util");
	char *f = tmp_path(dir, "abc");
	int fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "abc", 3), 3);
	close(fd);
	char hex[65];
	ck_assert_int_eq(agsbx_sha256_file(f, hex), 0);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	free(f);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

/* Without a writer, open(2) of a FIFO blocks forever: the digest of
 * anything but a regular file is refused without waiting. */
START_TEST(test_sha256_file_refuses_fifo_and_dir)
{
	char *dir = agsbx_test_tmpdir("util");
	char *fifo = tmp_path(dir, "fifo");
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	char hex[65] = "";
	int r = agsbx_sha256_file(fifo, hex);
	ck_assert_int_lt(r, 0);
	ck_assert_int_eq(agsbx_sha256_file(dir, hex), -EISDIR);
	ck_assert_int_eq(agsbx_sha256_file("/dev/null", hex) < 0, 1);
	free(fifo);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

/* --adapter/--wrap commands: shell-like splitting, never a shell. */
static void expect_words(const char *in, const char *const *want)
{
	char **v = NULL;
	int n = agsbx_split_words(in, &v);
	int k = 0;
	while (want[k])
		k++;
	ck_assert_int_eq(n, k);
	for (int i = 0; i < k; i++)
		ck_assert_str_eq(v[i], want[i]);
	ck_assert_ptr_null(v[k]);
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* What a bundle can hold: integers within +-2^53, no reals, bounded depth. */
START_TEST(test_json_unbundlable)
{
	static const struct {
		const char *json;
		bool ok;
	} cases[] = {
		{ "{\"a\": [1, \"x\", true, null, {\"b\": -9007199254740992}]}", true },
		{ "{\"a\": 1.5}", false },
		{ "[9007199254740993]", false },
		{ "[-9007199254740993]", false },
		{ "[[[[1]]]]", true },   /* depth 4 at max 4 */
		{ "[[[[[1]]]]]", false }, /* depth 5 */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *j = json_loads(cases[i].json, 0, NULL);
		ck_assert_ptr_nonnull(j);
		const char *bad = agsbx_json_unbundlable(j, 1, 4);
		ck_assert_msg((bad == NULL) == cases[i].ok, "%s: %s", cases[i].json, bad ? bad : "ok");
		json_decref(j);
	}
}
END_TEST

START_TEST(test_split_words)
{
	expect_words("python3  a.py --x=1", (const char *const[]){ "python3", "a.py", "--x=1", NULL });
	expect_words("sh -c 'a | b $HOME' \"x\\\"y\" z\\ w", (const char *const[]){ "sh", "-c", "a | b $HOME", "x\"y", "z w", NULL });
	expect_words("'' \"\" a''b", (const char *const[]){ "", "", "ab", NULL });
	expect_words("\"\\$\\a\"", (const char *const[]){ "$\\a", NULL });
	expect_words("a\n\tb", (const char *const[]){ "a", "b", NULL });
	expect_words("   ", (const char *const[]){ NULL });
	char **v = NULL;
	ck_assert_int_eq(agsbx_split_words("sh -c 'oops", &v), -EINVAL);
	ck_assert_int_eq(agsbx_split_words("a \"b", &v), -EINVAL);
	ck_assert_int_eq(agsbx_split_words("a\\", &v), -EINVAL);
	ck_assert_ptr_null(v);
}
END_TEST

/* ------------------------------------------------------------------- log */

/* Runs fn with stderr sent to a fresh file and returns what it wrote
 * (malloc'd). Check forks per test, so fd 2 is ours to redirect. */
static char *stderr_of(void (*fn)(void))
{
	char path[] = "/tmp/agsbx-t-log-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	fflush(stderr);
	int saved = dup(2);
	ck_assert_int_eq(dup2(fd, 2), 2);
	fn();
	fflush(stderr);
	ck_assert_int_eq(dup2(saved, 2), 2);
	close(saved);
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)n + 1);
	ck_assert_int_eq(pread(fd, buf, (size_t)n, 0), n);
	close(fd);
	return buf;
}

static void log_all(void)
{
	agsbx_error("e %d", 1);
	agsbx_warn("w %s", "x");
	agsbx_note("n");
	agsbx_hint("h");
}

/* Each kind of message with its prefix, one whole line each. */
START_TEST(test_log_prefixes)
{
	char *out = stderr_of(log_all);
	ck_assert_str_eq(out, "agsbx-evidence: error: e 1\nagsbx-evidence: warning: w x\nagsbx-evidence: n\nhint: h\n");
	free(out);
}
END_TEST

static int errno_ret[2];

static void log_errno(void)
{
	errno_ret[0] = agsbx_error_errno(-ENOENT, "open %s", "/x");
	errno_ret[1] = agsbx_error_errno(EACCES, "write");
}

/* -errno in, the same -errno out (a positive errno comes back negative),
 * strerror appended. */
START_TEST(test_log_error_errno)
{
	char *out = stderr_of(log_errno);
	ck_assert_int_eq(errno_ret[0], -ENOENT);
	ck_assert_int_eq(errno_ret[1], -EACCES);
	char want[512];
	snprintf(want, sizeof want, "agsbx-evidence: error: open /x: %s\nagsbx-evidence: error: write: %s\n",
		 strerror(ENOENT), strerror(EACCES));
	ck_assert_str_eq(out, want);
	free(out);
}
END_TEST

static char long_msg[5000];

static void log_long(void)
{
	agsbx_warn("%s", long_msg);
}

/* An over-long message is cut, not split over lines or overflowing. */
START_TEST(test_log_long_line_cut)
{
	memset(long_msg, 'a', sizeof long_msg - 1);
	char *out = stderr_of(log_long);
	ck_assert_ptr_eq(strchr(out, '\n'), out + strlen(out) - 1);
	ck_assert_uint_lt(strlen(out), 2100);
	ck_assert_uint_gt(strlen(out), 2000);
	free(out);
}
END_TEST

/* Colour only on a terminal, never with NO_COLOR set (and non-empty). */
START_TEST(test_use_color)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	ck_assert_int_ge(m, 0);
	fcntl(m, F_SETFD, FD_CLOEXEC);
	ck_assert_int_eq(grantpt(m), 0);
	ck_assert_int_eq(unlockpt(m), 0);
	int tty = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	ck_assert_int_ge(tty, 0);
	int file = open("/dev/null", O_WRONLY | O_CLOEXEC);
	unsetenv("NO_COLOR");
	ck_assert(agsbx_use_color(tty));
	ck_assert(!agsbx_use_color(file));
	ck_assert(!agsbx_use_color(-1));
	setenv("NO_COLOR", "", 1); /* empty: not set, per no-color.org */
	ck_assert(agsbx_use_color(tty));
	setenv("NO_COLOR", "1", 1);
	ck_assert(!agsbx_use_color(tty));
	close(file);
	close(tty);
	close(m);
}
END_TEST

/* ---------------------------------------------------------- file helpers */

static bool dir_empty(const char *path)
{
	char *cmd = NULL;
	ck_assert_int_ge(asprintf(&cmd, "test -z \"$(ls -A '%s')\"", path), 0);
	int rc = system(cmd);
	free(cmd);
	return rc == 0;
}

/* Atomic writes: all or nothing, never a temporary file left behind — on a
 * full filesystem (a small tmpfs in the test's own namespaces) and when
 * the target is a directory. */
START_TEST(test_write_atomic_failures)
{
	char *dir = agsbx_test_tmpdir("agsbx-t-atomic");
	char *target = NULL;
	ck_assert_int_ge(asprintf(&target, "%s/sub", dir), 0);
	ck_assert_int_eq(mkdir(target, 0755), 0);
	ck_assert_int_eq(agsbx_write_file_atomic(target, "x", 1, 0644), -EISDIR);
	ck_assert_int_eq(rmdir(target), 0);
	ck_assert(dir_empty(dir));
	if (agsbx_test_own_namespaces()) {
		char *mp = agsbx_test_tmpfs(dir, "small", "size=64k,mode=0755");
		ck_assert_ptr_nonnull(mp);
		char *big = calloc(1, 256 * 1024);
		char *f = NULL;
		ck_assert_int_ge(asprintf(&f, "%s/f", mp), 0);
		ck_assert_int_eq(agsbx_write_file_atomic(f, big, 256 * 1024, 0644), -ENOSPC);
		ck_assert(dir_empty(mp));
		ck_assert_int_eq(agsbx_write_file_atomic(f, "ok", 2, 0644), 0);
		free(f);
		free(big);
		free(mp);
	}
	free(target);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

/* Only regular files are read: a device (one that never ends, one that is
 * always empty) and a directory are refused at once; a regular file past
 * the limit too, before a byte is read. */
START_TEST(test_read_file_limits)
{
	char *data = NULL;
	ck_assert_int_eq(agsbx_read_file("/dev/zero", 10000, &data, NULL), -EINVAL);
	ck_assert_int_eq(agsbx_read_file("/dev/null", 10, &data, NULL), -EINVAL);
	ck_assert_ptr_null(data);
	ck_assert_int_eq(agsbx_read_file("/", 10000, &data, NULL), -EISDIR);
	char *dir = agsbx_test_tmpdir("agsbx-t-read");
	char *f = NULL;
	ck_assert_int_ge(asprintf(&f, "%s/f", dir), 0);
	ck_assert_int_eq(agsbx_write_file_atomic(f, "0123456789", 10, 0644), 0);
	ck_assert_int_eq(agsbx_read_file(f, 9, &data, NULL), -EFBIG);
	size_t len = 0;
	ck_assert_int_eq(agsbx_read_file(f, 10, &data, &len), 0);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(data, "0123456789");
	free(data);
	free(f);
	agsbx_test_rmtree(dir);
	free(dir);
	errno = 0;
	ck_assert_ptr_null(agsbx_read_line("/nonexistent/agsbx"));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* ---- DOCKER_HOST ---- */

/* "unix://" + an absolute path of exactly len bytes below dir. */
static char *host_of_len(const char *dir, size_t len)
{
	size_t dlen = strlen(dir);
	ck_assert_uint_gt(len, dlen + 2);
	char *h = malloc(7 + len + 1);
	ck_assert_ptr_nonnull(h);
	memcpy(h, "unix://", 7);
	memcpy(h + 7, dir, dlen);
	h[7 + dlen] = '/';
	memset(h + 7 + dlen + 1, 's', len - dlen - 1);
	h[7 + len] = '\0';
	return h;
}

START_TEST(test_dockerhost_sun_path_boundary)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const size_t usable = sizeof sun.sun_path - 1;   /* the last byte is the NUL */
	char dir[] = "/tmp/agsbx-dh-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct agsbx_error err = { 0 };
	char *path = NULL;

	/* The longest path that fits is accepted, and really is a socket
	 * address: bind() takes it. */
	char *host = host_of_len(dir, usable);
	ck_assert_int_eq(agsbx_dockerhost_socket(host, &path, &err), 0);
	ck_assert(!agsbx_error_is_set(&err));
	ck_assert_uint_eq(strlen(path), usable);
	memcpy(sun.sun_path, path, usable + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	close(fd);
	unlink(path);
	free(path);
	free(host);

	/* One byte more cannot hold its NUL: refused, with the numbers. */
	host = host_of_len(dir, usable + 1);
	path = (char *)1;
	ck_assert_int_eq(agsbx_dockerhost_socket(host, &path, &err), -EINVAL);
	ck_assert_ptr_null(path);
	char want[64];
	snprintf(want, sizeof want, "at most %zu", usable);
	ck_assert_msg(strstr(err.message, want), "%s", err.message);
	ck_assert_str_eq(err.reason, "invalid_docker_host");
	free(host);
	rmdir(dir);
}
END_TEST

START_TEST(test_dockerhost_schemes)
{
	char *path = NULL;
	ck_assert_int_eq(agsbx_dockerhost_socket(NULL, &path, NULL), 0);
	ck_assert_str_eq(path, AGSBX_DOCKER_DEFAULT_SOCKET);
	free(path);
	ck_assert_int_eq(agsbx_dockerhost_socket("", &path, NULL), 0);
	ck_assert_str_eq(path, AGSBX_DOCKER_DEFAULT_SOCKET);
	free(path);
	static const char *const bad[] = { "tcp://127.0.0.1:2375", "ssh://me@host", "unix://relative.sock",
					   "unix://", "/var/run/docker.sock" };
	/* Another URL scheme is "unsupported_scheme"; the rest are invalid. */
	static const char *const reason[] = { "unsupported_scheme", "unsupported_scheme", "invalid_docker_host",
					      "invalid_docker_host", "invalid_docker_host" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct agsbx_error err = { 0 };
		ck_assert_int_eq(agsbx_dockerhost_socket(bad[i], &path, &err), -EINVAL);
		ck_assert_ptr_null(path);
		ck_assert_msg(strstr(err.message, "unsupported DOCKER_HOST scheme"), "%s: %s", bad[i], err.message);
		ck_assert_ptr_null(strchr(err.message, '\n'));
		ck_assert_str_eq(err.reason, reason[i]);
	}
	/* No error record: still refused. */
	ck_assert_int_eq(agsbx_dockerhost_socket("tcp://x:1", &path, NULL), -EINVAL);
}
END_TEST

/* ---- string vectors ---- */

/* A whole field name only: "Vm" is no field, VmHWM is never below VmRSS. */
START_TEST(test_proc_self_status_kib)
{
	long rss = agsbx_proc_self_status_kib("VmRSS"), hwm = agsbx_proc_self_status_kib("VmHWM");
	ck_assert_int_gt(rss, 0);
	ck_assert_int_ge(hwm, rss);
	ck_assert_int_eq(agsbx_proc_self_status_kib("Vm"), -1);
	ck_assert_int_eq(agsbx_proc_self_status_kib("NoSuchField"), -1);
}
END_TEST

START_TEST(test_strv)
{
	_cleanup_strv_ char **v = NULL;
	size_t n = 0;
	ck_assert_int_eq(agsbx_strv_push(&v, &n, strdup("a")), 0);
	ck_assert_int_eq(agsbx_strv_push(&v, &n, strdup("b")), 0);
	ck_assert_int_eq(agsbx_strv_push(&v, &n, NULL), -ENOMEM);   /* a failed strdup */
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0], "a");
	ck_assert_str_eq(v[1], "b");
	ck_assert_ptr_null(v[2]);
	_cleanup_strv_ char **c = agsbx_strv_dup((const char *const *)v);
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_ne(c[0], v[0]);
	ck_assert_str_eq(c[1], "b");
	ck_assert_ptr_null(c[2]);
	ck_assert_ptr_null(agsbx_strv_dup(NULL));
	agsbx_strv_free(NULL);
	/* concat borrows: the same pointers, head first, one NULL at the end */
	const char *const tail[] = { "x", NULL }, *const none[] = { NULL };
	_cleanup_free_ const char **j = agsbx_strv_concat((const char *const *)v, tail);
	ck_assert_ptr_nonnull(j);
	ck_assert_ptr_eq(j[0], v[0]);
	ck_assert_ptr_eq(j[1], v[1]);
	ck_assert_ptr_eq(j[2], tail[0]);
	ck_assert_ptr_null(j[3]);
	_cleanup_free_ const char **e = agsbx_strv_concat(none, none);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_null(e[0]);
}
END_TEST

/* Doubling from first, clamped at max; nothing to do when it fits. */
START_TEST(test_buf_reserve)
{
	_cleanup_free_ char *b = NULL;
	size_t cap = 0;
	ck_assert_int_eq(agsbx_buf_reserve(&b, &cap, 1, 16, 100), 0);
	ck_assert_uint_eq(cap, 16);
	ck_assert_int_eq(agsbx_buf_reserve(&b, &cap, 40, 16, 100), 0);
	ck_assert_uint_eq(cap, 64);
	char *same = b;
	ck_assert_int_eq(agsbx_buf_reserve(&b, &cap, 64, 16, 100), 0);
	ck_assert_ptr_eq(b, same);
	ck_assert_int_eq(agsbx_buf_reserve(&b, &cap, 1000, 16, 100), 0);
	ck_assert_uint_eq(cap, 100);
}
END_TEST

START_TEST(test_error_first_wins)
{
	struct agsbx_error e = { 0 };
	ck_assert(!agsbx_error_is_set(&e));
	agsbx_error_set(&e, "first", "cause %d", 1);
	agsbx_error_set(&e, "second", "consequence");
	ck_assert(agsbx_error_is_set(&e));
	ck_assert_str_eq(e.reason, "first");
	ck_assert_str_eq(e.message, "cause 1");
	agsbx_error_set(NULL, "x", "no record: ignored");
	struct agsbx_error bare = { 0 };
	agsbx_error_set(&bare, "reason_only", NULL);
	ck_assert_str_eq(bare.reason, "reason_only");
	ck_assert_str_eq(bare.message, "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("base-util");
	TCase *tc = tcase_create("digest");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_sha256_file_regular);
	tcase_add_test(tc, test_sha256_file_refuses_fifo_and_dir);
	tcase_add_test(tc, test_split_words);
	tcase_add_test(tc, test_json_unbundlable);
	tcase_add_test(tc, test_write_atomic_failures);
	tcase_add_test(tc, test_read_file_limits);
	tcase_add_test(tc, test_dockerhost_sun_path_boundary);
	tcase_add_test(tc, test_dockerhost_schemes);
	tcase_add_test(tc, test_strv);
	tcase_add_test(tc, test_buf_reserve);
	tcase_add_test(tc, test_proc_self_status_kib);
	tcase_add_test(tc, test_error_first_wins);
	suite_add_tcase(s, tc);
	TCase *lg = tcase_create("log");
	tcase_set_timeout(lg, 10);
	tcase_add_test(lg, test_log_prefixes);
	tcase_add_test(lg, test_log_error_errno);
	tcase_add_test(lg, test_log_long_line_cut);
	tcase_add_test(lg, test_use_color);
	suite_add_tcase(s, lg);
	return agsbx_test_run_suite(s);
}
