/* Small helpers for evidence/: byte buffers, SSH wire format, base64,
 * OpenSSH pattern lists. */
#include "evidence/internal.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void sbuf_flush_sink(struct sbuf *b)
{
	if (b->sink && b->len) {
		b->sink(b->sink_ud, b->p, b->len);
		b->len = 0;
	}
}

static bool sbuf_grow(struct sbuf *b, size_t n)
{
	if (b->oom)
		return false;
	if (b->sink && b->len + n + 1 > SBUF_CHUNK)
		sbuf_flush_sink(b);
	if (b->len + n + 1 <= b->cap)
		return true;
	if (agsbx_buf_reserve(&b->p, &b->cap, b->len + n + 1, 256, SIZE_MAX) < 0) {
		b->oom = true;
		return false;
	}
	return true;
}

void sbuf_put(struct sbuf *b, const void *data, size_t n)
{
	if (b->sink && n >= SBUF_CHUNK && !b->oom) { /* big runs go straight through */
		sbuf_flush_sink(b);
		b->sink(b->sink_ud, data, n);
		return;
	}
	if (!sbuf_grow(b, n))
		return;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void sbuf_puts(struct sbuf *b, const char *s) { sbuf_put(b, s, strlen(s)); }

void sbuf_putc(struct sbuf *b, char c)
{
	if (!sbuf_grow(b, 1))
		return;
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char small[256];
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof small) {
		sbuf_put(b, small, (size_t)n);
		return;
	}
	if (!sbuf_grow(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void sbuf_u32(struct sbuf *b, uint32_t v)
{
	uint8_t w[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	sbuf_put(b, w, 4);
}

void sbuf_sshstr(struct sbuf *b, const void *data, size_t n)
{
	sbuf_u32(b, (uint32_t)n);
	sbuf_put(b, data, n);
}

char *sbuf_take(struct sbuf *b, size_t *len)
{
	if (b->oom) {
		sbuf_clear(b);
		return NULL;
	}
	if (!b->p && !sbuf_grow(b, 0))
		return NULL;
	char *p = b->p;
	if (len)
		*len = b->len;
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

int sbuf_json(struct sbuf *b, const json_t *j)
{
	/* ASCII-only: a view may be printed on a terminal or a PR page, where a
	 * raw C1 or bidi control from a sandbox would act; readers decode the
	 * \u escapes to the same value. */
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	if (!s)
		return -ENOMEM;
	sbuf_puts(b, s);
	sbuf_putc(b, '\n');
	free(s);
	return 0;
}

void sbuf_clear(struct sbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

int sshrd_u32(struct sshrd *r, uint32_t *v)
{
	if (r->left < 4)
		return -EINVAL;
	*v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	r->left -= 4;
	return 0;
}

int sshrd_str(struct sshrd *r, const uint8_t **data, size_t *n)
{
	uint32_t len;
	if (sshrd_u32(r, &len) < 0 || len > r->left)
		return -EINVAL;
	*data = r->p;
	*n = len;
	r->p += len;
	r->left -= len;
	return 0;
}

int sshrd_expect(struct sshrd *r, const char *want)
{
	const uint8_t *d;
	size_t n;
	if (sshrd_str(r, &d, &n) < 0)
		return -EINVAL;
	if (n != strlen(want) || memcmp(d, want, n) != 0)
		return -EINVAL;
	return 0;
}

char *ev_b64_encode(const void *data, size_t n)
{
	size_t size = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
	char *out = malloc(size);
	if (!out)
		return NULL;
	sodium_bin2base64(out, size, data, n, sodium_base64_VARIANT_ORIGINAL);
	return out;
}

uint8_t *ev_b64_decode(const char *s, size_t slen, const char *ignore, size_t *n)
{
	size_t cap = slen / 4 * 3 + 3;
	uint8_t *out = malloc(cap + 1);
	if (!out)
		return NULL; /* errno ENOMEM: callers tell it from bad input */
	const char *end = NULL;
	if (sodium_base642bin(out, cap, s, slen, ignore, n, &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    end != s + slen) {
		free(out);
		errno = EINVAL;
		return NULL;
	}
	return out;
}

void ev_b64_wrapped(struct sbuf *b, const void *data, size_t n, size_t width)
{
	char *s = ev_b64_encode(data, n);
	if (!s) {
		b->oom = true;
		return;
	}
	size_t len = strlen(s);
	for (size_t i = 0; i < len; i += width) {
		sbuf_put(b, s + i, len - i < width ? len - i : width);
		sbuf_putc(b, '\n');
	}
	free(s);
}

char *ev_armor(const char *begin, const struct sbuf *body, const char *end, bool oom)
{
	if (oom || body->oom)
		return NULL;
	struct sbuf out = { 0 };
	sbuf_puts(&out, begin);
	ev_b64_wrapped(&out, body->p, body->len, 70);
	sbuf_puts(&out, end);
	return sbuf_take(&out, NULL);
}

void ev_set_err(char *err, size_t size, const char *fmt, ...)
{
	if (!err || size == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

const char *ev_jstr(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* Glob with '*' and '?', as OpenSSH's match.c:match_pattern(). */
bool ev_match_pattern(const char *s, const char *p)
{
	for (;;) {
		if (!*p)
			return !*s;
		if (*p == '*') {
			while (*p == '*')
				p++;
			if (!*p)
				return true;
			for (; *s; s++)
				if (ev_match_pattern(s, p))
					return true;
			return false;
		}
		if (!*s)
			return false;
		if (*p != '?' && *p != *s)
			return false;
		s++;
		p++;
	}
}

/* match.c:match_pattern_list(), its limits kept: a subpattern is copied
 * into 1024 bytes, and one that fills them makes the whole list fail to
 * match, whatever matched before it; a negated match returns at once. */
int ev_match_pattern_list(const char *s, const char *list)
{
	char sub[1024];
	int got = 0;
	size_t len = strlen(list);
	for (size_t i = 0; i < len;) {
		bool neg = list[i] == '!';
		if (neg)
			i++;
		size_t subi = 0;
		for (; i < len && subi < sizeof sub - 1 && list[i] != ','; subi++, i++)
			sub[subi] = list[i];
		if (subi >= sizeof sub - 1)
			return 0;
		if (i < len && list[i] == ',')
			i++;
		sub[subi] = '\0';
		if (ev_match_pattern(s, sub)) {
			if (neg)
				return -1;
			got = 1;
		}
	}
	return got;
}
