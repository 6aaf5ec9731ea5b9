/* Escaping for the renderers: bundle strings come from sandboxes and may
 * hold anything valid UTF-8 can, including terminal escapes and markup. */
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/escape.h"
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* What no target shows raw: the terminal's unsafe set (C0, DEL, C1,
 * line separators, bidi controls), and TAB, which would break a table
 * cell or a TAP line. */
static bool is_control(uint32_t cp)
{
	return cp == '\t' || agsbx_term_unsafe(cp);
}

/* U+200B ZERO WIDTH SPACE: invisible, and it breaks the patterns GitHub
 * turns into mentions and links. */
#define ZWSP "\xE2\x80\x8B"

static bool ascii_ieq(const unsigned char *s, size_t left, const char *lower)
{
	size_t n = strlen(lower);
	if (left < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((s[i] | 0x20) != (unsigned char)lower[i] && s[i] != (unsigned char)lower[i])
			return false;
	return true;
}

/* Markdown for GitHub (PR comments, $GITHUB_STEP_SUMMARY) also turns
 * "@name" into a mention (a notification to that user) and bare URLs,
 * "www." and e-mail addresses into links: text from a sandbox must do
 * neither. A ZWSP after "@", inside "://" and after "www" prevents all
 * of them without changing what a reader sees. s points at the code point
 * cp; at is its offset in the string, left the bytes from it on. */
static bool md_neutralise(struct sbuf *b, const unsigned char *s, size_t at, size_t left, uint32_t cp)
{
	if (cp == '@') {
		sbuf_puts(b, "@" ZWSP);
		return true;
	}
	if (cp == ':' && left >= 3 && s[1] == '/' && s[2] == '/') {
		sbuf_puts(b, ":" ZWSP);
		return true;
	}
	if (cp == '.' && at >= 3 && ascii_ieq(s - 3, 3, "www")) {
		sbuf_puts(b, ZWSP ".");
		return true;
	}
	return false;
}

/* XML 1.0 Char production. */
static bool xml_ok(uint32_t cp)
{
	return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
	       (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
}

static void put_cp_esc(struct sbuf *b, uint32_t cp, enum esc_mode mode)
{
	if (mode == ESC_YAML) {
		if (cp <= 0xFF)
			sbuf_printf(b, "\\x%02x", (unsigned)cp);
		else if (cp <= 0xFFFF)
			sbuf_printf(b, "\\u%04x", (unsigned)cp);
		else
			sbuf_printf(b, "\\U%08x", (unsigned)cp);
		return;
	}
	if (cp == '\n' && mode != ESC_TEXT)
		sbuf_putc(b, ' ');
	else if (cp == '\n')
		sbuf_puts(b, "\\n");
	else if (cp <= 0xFF)
		sbuf_printf(b, "\\x%02x", (unsigned)cp);
	else
		sbuf_printf(b, "\\u%04x", (unsigned)cp);
}

/* One character per target: s[0..n) is its encoding, cp its code point. */

/* Every text field is one line: a raw newline could forge the lines after
 * it ("signature: good ..."). */
static void put_text(struct sbuf *b, const unsigned char *s, size_t n, uint32_t cp)
{
	if (!agsbx_term_unsafe(cp)) {
		sbuf_put(b, s, n);
		return;
	}
	char esc[8];
	sbuf_put(b, esc, agsbx_term_escape_cp(cp, esc));
}

static void put_md(struct sbuf *b, const unsigned char *s, size_t n, size_t at, size_t left, uint32_t cp)
{
	if (is_control(cp))
		put_cp_esc(b, cp, ESC_MD);
	else if (md_neutralise(b, s, at, left, cp))
		return;
	else if (cp == '<')
		sbuf_puts(b, "&lt;");
	else if (cp == '>')
		sbuf_puts(b, "&gt;");
	else if (cp == '&')
		sbuf_puts(b, "&amp;");
	else if (cp < 0x80 && strchr("|*_`[]\\#~", (int)cp)) {
		sbuf_putc(b, '\\');
		sbuf_putc(b, (char)cp);
	} else
		sbuf_put(b, s, n);
}

static void put_mdcode(struct sbuf *b, const unsigned char *s, size_t n, uint32_t cp)
{
	if (is_control(cp))
		put_cp_esc(b, cp, ESC_MDCODE);
	else if (cp == '`')
		sbuf_putc(b, '\'');
	else if (cp == '|')
		sbuf_puts(b, "\\|");
	else
		sbuf_put(b, s, n);
}

static void put_xml(struct sbuf *b, const unsigned char *s, size_t n, uint32_t cp)
{
	static const struct {
		uint32_t cp;
		const char *entity;
	} entities[] = { { '&', "&amp;" }, { '<', "&lt;" }, { '>', "&gt;" }, { '"', "&quot;" }, { '\'', "&apos;" } };
	if (cp == '\n' || cp == '\r' || cp == '\t') {
		sbuf_printf(b, "&#%u;", (unsigned)cp);
		return;
	}
	if (is_control(cp)) { /* a character reference would decode back to it */
		put_cp_esc(b, cp, ESC_TEXT);
		return;
	}
	if (!xml_ok(cp)) {
		sbuf_puts(b, "\xEF\xBF\xBD");
		return;
	}
	for (size_t i = 0; i < sizeof entities / sizeof entities[0]; i++)
		if (cp == entities[i].cp) {
			sbuf_puts(b, entities[i].entity);
			return;
		}
	sbuf_put(b, s, n);
}

static void put_tap(struct sbuf *b, const unsigned char *s, size_t n, uint32_t cp)
{
	if (is_control(cp))
		put_cp_esc(b, cp, ESC_TAP);
	else if (cp == '#' || cp == '\\') {
		sbuf_putc(b, '\\');
		sbuf_putc(b, (char)cp);
	} else
		sbuf_put(b, s, n);
}

static void put_yaml(struct sbuf *b, uint32_t cp)
{
	if (cp == '"' || cp == '\\') {
		sbuf_putc(b, '\\');
		sbuf_putc(b, (char)cp);
	} else if (cp >= 0x20 && cp < 0x7F)
		sbuf_putc(b, (char)cp);
	else if (cp == '\n')
		sbuf_puts(b, "\\n");
	else
		put_cp_esc(b, cp, ESC_YAML);
}

static void put_one(struct sbuf *b, const unsigned char *s, size_t n, size_t at, size_t left, uint32_t cp,
		    enum esc_mode mode)
{
	switch (mode) {
	case ESC_TEXT:
		put_text(b, s, n, cp);
		return;
	case ESC_MD:
		put_md(b, s, n, at, left, cp);
		return;
	case ESC_MDCODE:
		put_mdcode(b, s, n, cp);
		return;
	case ESC_XML:
		put_xml(b, s, n, cp);
		return;
	case ESC_TAP:
		put_tap(b, s, n, cp);
		return;
	case ESC_YAML:
		put_yaml(b, cp);
		return;
	}
}

void ev_put_code(struct sbuf *b, const char *s, size_t max_chars)
{
	sbuf_putc(b, '`');
	ev_put_esc(b, s, ESC_MDCODE, max_chars);
	sbuf_putc(b, '`');
}

void ev_put_esc(struct sbuf *b, const char *str, enum esc_mode mode, size_t max_chars)
{
	if (!str) {
		sbuf_putc(b, '?');
		return;
	}
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str), chars = 0;
	for (size_t i = 0; i < len;) {
		if (max_chars && chars == max_chars) {
			sbuf_puts(b, "...");
			return;
		}
		uint32_t cp;
		size_t n = agsbx_utf8_decode(s + i, len - i, &cp);
		if (n == 0) { /* never in a loaded bundle; be safe anyway */
			sbuf_puts(b, "\xEF\xBF\xBD");
			i++;
		} else {
			put_one(b, s + i, n, i, len - i, cp, mode);
			i += n;
		}
		chars++;
	}
}

void ev_putf(struct sbuf *b, enum esc_mode mode, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	for (const char *p = fmt; *p;) {
		size_t lit = strcspn(p, "%");
		sbuf_put(b, p, lit);
		p += lit;
		if (!*p)
			break;
		if (p[1] == '%') {
			sbuf_putc(b, '%');
			p += 2;
			continue;
		}
		/* "%s" or "%.Ns": the format attribute has checked that the
		 * argument is a string, and these are the only conversions. */
		char *end = (char *)p + 1;
		size_t cap = p[1] == '.' ? strtoul(p + 2, &end, 10) : 0;
		ev_put_esc(b, va_arg(ap, const char *), mode, cap);
		p = *end ? end + 1 : end;
	}
	va_end(ap);
}

/* An advisory list (probes' advisories family) in one line. */
char *agsbx_findings_text(const json_t *list)
{
	char *s = strdup("");
	size_t i;
	const json_t *f;
	json_array_foreach(list, i, f) {
		const char *st = json_string_value(json_object_get(f, "status"));
		const char *id = json_string_value(json_object_get(f, json_object_get(f, "id") ? "id" : "fact"));
		if (!s || !st || !id || (strcmp(st, "in_range") != 0 && strcmp(st, "exposed") != 0))
			continue;
		char *n = NULL;
		if (asprintf(&n, "%s%s%s %s", s, *s ? ", " : "", id, st) < 0)
			n = NULL;
		free(s);
		s = n;
	}
	if (s && !*s) {
		free(s);
		if (asprintf(&s, "none of %zu flagged", json_array_size(list)) < 0)
			s = NULL;
	}
	return s;
}

bool agsbx_is_findings(const json_t *v)
{
	return json_is_array(v) && json_array_size(v) && json_object_get(json_array_get(v, 0), "status");
}

char *agsbx_text_oneline(const char *s, size_t max_chars)
{
	return agsbx_term_escape(s, max_chars);
}

void ev_put_json_esc(struct sbuf *b, const json_t *v, enum esc_mode mode, size_t max_chars)
{
	if (!v) {
		sbuf_puts(b, "(absent)");
		return;
	}
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	ev_put_esc(b, s ? s : "?", mode, max_chars);
	free(s);
}

const char *ev_provider_icon(enum agsbx_provider_verdict v)
{
	switch (v) {
	case AGSBX_PROVIDER_CONFORMANT:
		return "\xE2\x9C\x85 ";
	case AGSBX_PROVIDER_DEFECTIVE:
		return "\xE2\x9D\x8C ";
	case AGSBX_PROVIDER_BLOCKED:
		return "\xE2\x9B\x94 ";
	default:
		return "\xE2\x9E\x96 ";
	}
}

const json_t *ev_host_value(const json_t *bundle, const char *family, const char *fact)
{
	const json_t *f = json_object_get(json_object_get(json_object_get(bundle, "host"), family), fact);
	return json_is_object(f) ? json_object_get(f, "value") : NULL;
}

static void put_fact(struct sbuf *b, const json_t *bundle, const char *family, const char *fact,
		     enum esc_mode mode)
{
	const json_t *v = ev_host_value(bundle, family, fact);
	if (json_is_string(v))
		ev_put_esc(b, json_string_value(v), mode, 120);
	else
		sbuf_putc(b, '?');
}

void ev_put_host_line(struct sbuf *b, const json_t *bundle, enum esc_mode mode)
{
	put_fact(b, bundle, "kernel", "sysname", mode);
	sbuf_putc(b, ' ');
	put_fact(b, bundle, "kernel", "release", mode);
	sbuf_putc(b, ' ');
	put_fact(b, bundle, "kernel", "machine", mode);
	sbuf_puts(b, ", ");
	put_fact(b, bundle, "os", "pretty_name", mode);
}

int ev_render_as(const json_t *doc, const char *format, const struct ev_format *formats, FILE *out)
{
	if (!json_is_object(doc) || !format)
		return -EINVAL;
	for (const struct ev_format *f = formats; f->name; f++) {
		if (strcmp(format, f->name) != 0)
			continue;
		struct sbuf b = { 0 };
		if (f->render)
			f->render(&b, doc);
		else if (sbuf_json(&b, doc) < 0)
			return -ENOMEM;
		return sbuf_flush(&b, 0, out);
	}
	return -EINVAL;
}

int sbuf_flush(struct sbuf *b, int r, FILE *out)
{
	if (r == 0 && b->oom)
		r = -ENOMEM;
	errno = 0; /* a failed write's own errno (ENOSPC), EIO when none */
	if (r == 0 && b->len > 0 && fwrite(b->p, 1, b->len, out) != b->len)
		r = errno ? -errno : -EIO;
	if (r == 0 && fflush(out) != 0)
		r = errno ? -errno : -EIO;
	sbuf_clear(b);
	return r;
}
