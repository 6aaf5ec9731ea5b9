#include "base/util.h"
#include "base/cleanup.h"
#include "base/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <sodium.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#include <stdlib.h>
#endif

#ifndef AGSBX_VERSION
#define AGSBX_VERSION "0.0.0"
#endif
const char *agsbx_version(void) { return AGSBX_VERSION; }
/* agsbx_git_commit() is generated at build time (cmake/git-commit.cmake). */

/* An fd on path when it is a regular file, else -errno: -EISDIR for a
 * directory, -EINVAL for a FIFO, socket or device. O_NONBLOCK: opening a
 * FIFO without a writer (or a device) must not hang; such a file is
 * refused right after fstat. */
int agsbx_fstat_regular(int fd, struct stat *st)
{
	if (fstat(fd, st) < 0)
		return -errno;
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	return 0;
}

static int open_regular(const char *path, struct stat *st)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENXIO ? -EINVAL : -errno; /* a UNIX socket */
	int r = agsbx_fstat_regular(fd, st);
	return r < 0 ? r : TAKE_FD(fd);
}

/* read(2), retried when a signal interrupts it. */
static ssize_t read_retry(int fd, void *buf, size_t n)
{
	ssize_t r;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

int agsbx_buf_reserve(char **buf, size_t *cap, size_t need, size_t first, size_t max)
{
	if (need > max)
		need = max;
	if (*cap >= need)
		return 0;
	size_t ncap = *cap ? *cap : first;
	while (ncap < need)
		ncap = ncap > max / 2 ? max : ncap * 2;
	if (ncap > max)
		ncap = max;
	char *nb = realloc(*buf, ncap);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

int agsbx_buf_append(char **buf, size_t *len, size_t *cap, const void *p, size_t n)
{
	if (agsbx_buf_reserve(buf, cap, *len + n + 1, 256, SIZE_MAX) < 0)
		return -ENOMEM;
	if (n)
		memcpy(*buf + *len, p, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

int agsbx_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

void agsbx_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	if (n < (64u << 10))
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
	if (e > a)
		madvise((void *)a, e - a, MADV_POPULATE_WRITE); /* EINVAL before Linux 5.14: faults as usual */
#else
	(void)p;
	(void)n;
#endif
}

int agsbx_read_fd(int fd, const struct stat *st, size_t max, char **data, size_t *len)
{
	/* Refuse a big regular file before reading a byte; size the buffer
	 * from it so a normal file is read in one go. */
	if ((uint64_t)st->st_size > max)
		return -EFBIG;
	size_t cap = st->st_size > 0 ? (size_t)st->st_size + 1 : 4096, n = 0;
	_cleanup_free_ char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	agsbx_prefault(buf, cap + 1); /* a 1 MiB bundle: 256 faults in read() otherwise */
	for (;;) {
		if (n == cap) {
			if (cap > max)
				return -EFBIG;
			cap *= 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb)
				return -ENOMEM;
			buf = nb;
		}
		ssize_t r = read_retry(fd, buf + n, cap - n);
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max)
			return -EFBIG; /* grew since fstat */
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	*data = TAKE_PTR(buf);
	return 0;
}

int agsbx_read_file(const char *path, size_t max, char **data, size_t *len)
{
	struct stat st;
	_cleanup_close_ int fd = open_regular(path, &st);
	if (fd < 0)
		return fd;
	return agsbx_read_fd(fd, &st, max, data, len);
}

const char *agsbx_file_strerror(int err)
{
	if (err == -EINVAL || err == EINVAL)
		return "not a regular file (a FIFO, socket or device)";
	return strerror(err < 0 ? -err : err);
}

int agsbx_check_regular(const char *path)
{
	struct stat st;
	_cleanup_close_ int fd = open_regular(path, &st);
	return fd < 0 ? fd : 0;
}

char *agsbx_read_line(const char *path)
{
	char *data = NULL;
	size_t len = 0;
	int r = agsbx_read_file(path, 1 << 16, &data, &len);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	data[strcspn(data, "\n")] = '\0';
	return data;
}

int agsbx_check_output_target(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	return S_ISREG(st.st_mode) ? 0 : -EINVAL;
}

int agsbx_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode)
{
	int t = agsbx_check_output_target(path);
	if (t < 0)
		return t;
	_cleanup_free_ char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	char suffix[17];
	agsbx_random_hex(suffix, 8);
	_cleanup_free_ char *tmp = NULL;
	if (asprintf(&tmp, "%s/.%s.tmp-%s", dirname(copy), strrchr(path, '/') ? strrchr(path, '/') + 1 : path, suffix) < 0)
		return -ENOMEM;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	return agsbx_publish_file(fd, tmp, path, data, len, mode, true);
}

int agsbx_publish_file(int fd, const char *tmp, const char *path, const void *data, size_t len, unsigned mode,
		       bool durable)
{
	const char *p = data;
	size_t left = len;
	int r = 0;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		p += w;
		left -= (size_t)w;
	}
	if (r == 0 && fchmod(fd, mode) < 0)
		r = -errno;
	if (r == 0 && durable && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

static void to_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

void agsbx_sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, data, len);
	to_hex(h, sizeof h, hex);
}

int agsbx_sha256_file(const char *path, char hex[65])
{
	/* O_NONBLOCK: a FIFO put in a regular file's place must not block the
	 * open until some writer appears; only regular files are hashed. */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return S_ISDIR(sb.st_mode) ? -EISDIR : -EINVAL;
	return agsbx_sha256_fd(fd, hex);
}

int agsbx_sha256_fd(int fd, char hex[65])
{
	crypto_hash_sha256_state st;
	crypto_hash_sha256_init(&st);
	unsigned char buf[65536];
	for (;;) {
		ssize_t r = read_retry(fd, buf, sizeof buf);
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		crypto_hash_sha256_update(&st, buf, (size_t)r);
	}
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_final(&st, h);
	to_hex(h, sizeof h, hex);
	return 0;
}

void agsbx_random_hex(char *buf, size_t nbytes)
{
	unsigned char tmp[256];
	if (nbytes > sizeof tmp)
		nbytes = sizeof tmp;
	/* sodium_init is idempotent and thread-safe; randombytes falls back to
	 * getrandom(2). */
	if (sodium_init() < 0)
		abort();
	randombytes_buf(tmp, nbytes);
	to_hex(tmp, nbytes, buf);
}

int agsbx_self_dir(char **dir)
{
	char buf[PATH_MAX];
#if defined(__linux__)
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
#elif defined(__APPLE__)
	uint32_t size = sizeof buf;
	char raw[PATH_MAX];
	if (_NSGetExecutablePath(raw, &size) != 0 || !realpath(raw, buf))
		return -ENAMETOOLONG;
#else
	return -ENOSYS; /* no portable way to find one's own executable */
#endif
	char *d = strdup(dirname(buf));
	if (!d)
		return -ENOMEM;
	*dir = d;
	return 0;
}

char *agsbx_path_join(const char *dir, const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

uint64_t agsbx_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void agsbx_utc_now(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

size_t agsbx_utf8_decode(const unsigned char *s, size_t left, uint32_t *cp)
{
	unsigned c = s[0];
	size_t n;
	uint32_t min;
	if (c < 0x80) {
		*cp = c;
		return c == 0 ? 0 : 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
		min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		n = 3;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	uint32_t v = c & (0x7Fu >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

size_t agsbx_utf8_seq_len(const unsigned char *s, size_t left)
{
	uint32_t cp;
	return agsbx_utf8_decode(s, left, &cp);
}

json_t *agsbx_json_string_sanitized(const char *data, size_t len)
{
	const unsigned char *s = (const unsigned char *)data;
	/* Worst case: every byte becomes the 3-byte U+FFFD. */
	_cleanup_free_ char *out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = agsbx_utf8_seq_len(s + i, len - i);
		if (n == 0) {
			memcpy(out + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	return json_stringn(out, o);
}

/* ---- words ---- */


/* One quoted or unquoted stretch of a word; advances *sp. -EINVAL on an
 * unterminated quote or a trailing backslash. */
static int words_piece(const char **sp, char *buf, size_t *len)
{
	const char *s = *sp;
	if (*s == '\'') {
		const char *e = strchr(s + 1, '\'');
		if (!e)
			return -EINVAL;
		memcpy(buf + *len, s + 1, (size_t)(e - s - 1));
		*len += (size_t)(e - s - 1);
		*sp = e + 1;
		return 0;
	}
	if (*s == '"') {
		for (s++; *s != '"'; s++) {
			if (!*s)
				return -EINVAL;
			/* Inside double quotes a backslash escapes only these. */
			if (*s == '\\' && s[1] && strchr("\\\"$`\n", s[1]))
				s++;
			buf[(*len)++] = *s;
		}
		*sp = s + 1;
		return 0;
	}
	if (*s == '\\') {
		if (!s[1])
			return -EINVAL;
		if (s[1] != '\n')
			buf[(*len)++] = s[1];
		*sp = s + 2;
		return 0;
	}
	buf[(*len)++] = *s;
	*sp = s + 1;
	return 0;
}

int agsbx_split_words(const char *s, char ***out)
{
	*out = NULL;
	size_t n = 0;
	char **v = calloc(1, sizeof *v);
	char *buf = malloc(strlen(s) + 1);
	int r = v && buf ? 0 : -ENOMEM;
	while (r == 0) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		size_t len = 0;
		while (r == 0 && *s && *s != ' ' && *s != '\t' && *s != '\n')
			r = words_piece(&s, buf, &len);
		if (r == 0)
			r = agsbx_strv_push(&v, &n, strndup(buf, len));
	}
	free(buf);
	if (r < 0) {
		agsbx_strv_free(v);
		return r;
	}
	*out = v;
	return (int)n;
}

const char *agsbx_json_unbundlable(const json_t *j, int depth, int max_depth)
{
	const char *key, *bad = NULL;
	json_t *v;
	size_t i;
	switch (json_typeof(j)) {
	case JSON_REAL:
		return "a number that is not an integer (the bundle holds integers only)";
	case JSON_INTEGER:
		if (json_integer_value(j) > AGSBX_BUNDLE_INT_MAX || json_integer_value(j) < -AGSBX_BUNDLE_INT_MAX)
			return "an integer beyond +-2^53 (the bundle's integer range)";
		return NULL;
	case JSON_OBJECT:
	case JSON_ARRAY:
		if (depth > max_depth)
			return "nested too deep for the bundle";
		if (json_is_object(j)) {
			json_object_foreach((json_t *)j, key, v)
				if ((bad = agsbx_json_unbundlable(v, depth + 1, max_depth)))
					return bad;
		} else {
			json_array_foreach(j, i, v)
				if ((bad = agsbx_json_unbundlable(v, depth + 1, max_depth)))
					return bad;
		}
		return NULL;
	default:
		return NULL;
	}
}
