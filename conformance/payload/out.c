/* agsbx-payload's output and the helpers its ops share (payload.h): the
 * streaming JSON emitter over one static buffer, errno names, number
 * parsing, file reads. A leaf: it calls no op, so payload.c (the op table
 * and main) and ops-*.c depend on it one way. Nothing here allocates. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "payload.h"

/* ---------- output: a tiny streaming JSON emitter ---------- */

static struct {
	char buf[4096];
	size_t len;
	int depth;
	bool need_comma[8];
} out;

void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* nobody is listening; nothing sensible left to do */
		p += w;
		n -= (size_t)w;
	}
}

void out_flush(void)
{
	write_all(STDOUT_FILENO, out.buf, out.len);
	out.len = 0;
}

void out_raw(const char *s, size_t n)
{
	while (n > 0) {
		size_t room = sizeof(out.buf) - out.len;
		size_t k = n < room ? n : room;
		memcpy(out.buf + out.len, s, k);
		out.len += k;
		s += k;
		n -= k;
		if (out.len == sizeof(out.buf))
			out_flush();
	}
}

void out_str(const char *s) { out_raw(s, strlen(s)); }

size_t out_take(char *dst, size_t cap)
{
	size_t n = out.len < cap ? out.len : cap;
	memcpy(dst, out.buf, n);
	out.len = 0;
	return n;
}

/* Quotes and escapes N bytes. Control characters, DEL and every byte >= 0x80
 * become \u00XX, so the result is ASCII JSON whatever the input was. */
static void out_quoted(const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	out_raw("\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			out_raw(e, 2);
		} else if (c < 0x20 || c >= 0x7f) {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			out_raw(e, 6);
		} else {
			out_raw((const char *)&c, 1);
		}
	}
	out_raw("\"", 1);
}

static void out_ll(long long v)
{
	char tmp[24];
	size_t i = sizeof(tmp);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		tmp[--i] = '-';
	out_raw(tmp + i, sizeof(tmp) - i);
}

static void out_ull(unsigned long long u)
{
	char tmp[24];
	size_t i = sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	out_raw(tmp + i, sizeof(tmp) - i);
}

void key(const char *k)
{
	if (out.need_comma[out.depth])
		out_raw(",", 1);
	out.need_comma[out.depth] = true;
	out_quoted(k, strlen(k));
	out_raw(":", 1);
}

void obj_open(const char *k)
{
	if (k)
		key(k);
	out_raw("{", 1);
	out.depth++;
	out.need_comma[out.depth] = false;
}

void obj_close(void)
{
	out.depth--;
	out_raw("}", 1);
}

/* Arrays of objects (payload.h): arr_open, then arr_item per element. */
void arr_open(const char *k)
{
	key(k);
	out_raw("[", 1);
	out.depth++;
	out.need_comma[out.depth] = false;
}

void arr_item(void)
{
	if (out.need_comma[out.depth])
		out_raw(",", 1);
	out.need_comma[out.depth] = true;
	out_raw("{", 1);
	out.depth++;
	out.need_comma[out.depth] = false;
}

void arr_close(void)
{
	out.depth--;
	out_raw("]", 1);
}

void f_null(const char *k)
{
	key(k);
	out_str("null");
}

void f_bool(const char *k, bool v)
{
	key(k);
	out_str(v ? "true" : "false");
}

void f_int(const char *k, long long v)
{
	key(k);
	out_ll(v);
}

void f_uint(const char *k, unsigned long long v)
{
	key(k);
	out_ull(v);
}

void f_strn(const char *k, const char *v, size_t n)
{
	key(k);
	out_quoted(v, n);
}

void f_str(const char *k, const char *v)
{
	if (!v) {
		f_null(k);
		return;
	}
	f_strn(k, v, strlen(v));
}

/* ---------- errno names ---------- */

/* Linux aliases (EWOULDBLOCK, ENOTSUP, EDEADLOCK) share values with the
 * first spelling here, which wins: a table, not a switch, for that reason. */
#define E(x) { x, #x }
static const struct {
	int num;
	const char *name;
} errno_names[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
	E(ENOEXEC), E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES),
	E(EFAULT), E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
	E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
	E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK),
	E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK),
	E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG), E(EIDRM), E(ENOSTR),
	E(ENODATA), E(ETIME), E(ENOSR), E(ENOLINK), E(EPROTO), E(EBADMSG),
	E(EOVERFLOW), E(EILSEQ), E(EUSERS), E(ENOTSOCK), E(EDESTADDRREQ),
	E(EMSGSIZE), E(EPROTOTYPE), E(ENOPROTOOPT), E(EPROTONOSUPPORT),
	E(ESOCKTNOSUPPORT), E(EOPNOTSUPP), E(EPFNOSUPPORT), E(EAFNOSUPPORT),
	E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH),
	E(ENETRESET), E(ECONNABORTED), E(ECONNRESET), E(ENOBUFS), E(EISCONN),
	E(ENOTCONN), E(ESHUTDOWN), E(ETIMEDOUT), E(ECONNREFUSED), E(EHOSTDOWN),
	E(EHOSTUNREACH), E(EALREADY), E(EINPROGRESS), E(ESTALE), E(EDQUOT),
	E(ECANCELED), E(ENOKEY), E(EKEYEXPIRED), E(EKEYREVOKED),
	E(EKEYREJECTED), E(EOWNERDEAD), E(ENOTRECOVERABLE), E(ERFKILL),
	E(EHWPOISON), E(ENOMEDIUM), E(EMEDIUMTYPE),
};
#undef E

/* "errno" as a symbolic name (E<number> when unknown) plus "errno_num";
 * both null when err is 0. */
void f_errno_pair(const char *k, const char *knum, int err)
{
	if (err == 0) {
		f_null(k);
		if (knum)
			f_null(knum);
		return;
	}
	const char *name = NULL;
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++) {
		if (errno_names[i].num == err) {
			name = errno_names[i].name;
			break;
		}
	}
	key(k);
	if (name) {
		out_quoted(name, strlen(name));
	} else {
		out_raw("\"E", 2);
		out_ll(err);
		out_raw("\"", 1);
	}
	if (knum)
		f_int(knum, err);
}

/* The common "ok", "errno", "errno_num" triple. */
void f_result(int err)
{
	f_bool("ok", err == 0);
	f_errno_pair("errno", "errno_num", err);
}

/* One step of an op besides its result: "<step>_ok" and "<step>_errno"
 * (the name only). */
void f_step(const char *ok_key, const char *errno_key, int err)
{
	f_bool(ok_key, err == 0);
	f_errno_pair(errno_key, NULL, err);
}

/* ---------- helpers for ops in files of their own (payload.h) ---------- */

const char *pl_errno_name(int err, char *buf, size_t cap)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].num == err)
			return errno_names[i].name;
	snprintf(buf, cap, "E%d", err);
	return buf;
}

/* ---------- small helpers ---------- */

int parse_ll(const char *s, long long min, long long max, long long *ret)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Reads up to CAP bytes of PATH into BUF; returns the count or -errno. */
ssize_t read_path(const char *path, char *buf, size_t cap, const char **stage)
{
	*stage = "open";
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	*stage = "read";
	size_t got = 0;
	while (got < cap) {
		ssize_t r = read(fd, buf + got, cap - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;
			close(fd);
			return -err;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	return (ssize_t)got;
}

ssize_t read_path_plain(const char *path, char *buf, size_t cap)
{
	const char *stage;
	return read_path(path, buf, cap, &stage);
}
