#include "base/escape.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_bidi_control(uint32_t cp)
{
	return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

bool agsbx_term_unsafe(uint32_t cp)
{
	return (cp < 0x20 && cp != '\t') || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 ||
	       cp == 0x2029 || is_bidi_control(cp);
}

size_t agsbx_term_escape_cp(uint32_t cp, char out[8])
{
	int n;
	if (cp == '\n')
		n = snprintf(out, 8, "\\n");
	else if (cp <= 0xFF)
		n = snprintf(out, 8, "\\x%02x", (unsigned)cp);
	else
		n = snprintf(out, 8, "\\u%04x", (unsigned)(cp & 0xFFFF));
	return n > 0 ? (size_t)n : 0;
}

/* Writes the escaped form of str through put(ud, bytes, n); put returns
 * false to stop (no room). */
static void escape(const char *str, size_t max_chars, bool (*put)(void *ud, const char *p, size_t n), void *ud)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str), chars = 0;
	for (size_t i = 0; i < len; chars++) {
		if (max_chars && chars == max_chars) {
			put(ud, "...", 3);
			return;
		}
		char esc[8];
		uint32_t cp;
		size_t n = agsbx_utf8_decode(s + i, len - i, &cp);
		bool ok;
		if (n == 0) {
			ok = put(ud, esc, agsbx_term_escape_cp(s[i], esc));
			n = 1;
		} else if (agsbx_term_unsafe(cp)) {
			ok = put(ud, esc, agsbx_term_escape_cp(cp, esc));
		} else {
			ok = put(ud, (const char *)s + i, n);
		}
		if (!ok)
			return;
		i += n;
	}
}

struct grow {
	char *p;
	size_t len, cap;
	bool oom;
};

static bool grow_put(void *ud, const char *p, size_t n)
{
	struct grow *g = ud;
	if (agsbx_buf_append(&g->p, &g->len, &g->cap, p, n) < 0) {
		g->oom = true;
		return false;
	}
	return true;
}

char *agsbx_term_escape(const char *s, size_t max_chars)
{
	struct grow g = { 0 };
	if (!grow_put(&g, "", 0))
		return NULL;
	escape(s ? s : "?", max_chars, grow_put, &g);
	if (g.oom) {
		free(g.p);
		return NULL;
	}
	return g.p;
}

struct fixed {
	char *p;
	size_t len, size;
};

static bool fixed_put(void *ud, const char *p, size_t n)
{
	struct fixed *f = ud;
	if (f->len + n + 1 > f->size)
		return false; /* whole characters only */
	memcpy(f->p + f->len, p, n);
	f->len += n;
	f->p[f->len] = '\0';
	return true;
}

void agsbx_term_escape_buf(const char *s, char *out, size_t out_size)
{
	if (out_size == 0)
		return;
	out[0] = '\0';
	struct fixed f = { out, 0, out_size };
	escape(s ? s : "?", 0, fixed_put, &f);
}
