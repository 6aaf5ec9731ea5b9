/* Terminal escaping: the one place that decides which characters of a
 * hostile string (from a sandbox, an adapter, a host fact, a file name)
 * may reach a terminal as they are. The markdown and XML/TAP targets live
 * in evidence/render.c and share agsbx_term_unsafe(). */
#ifndef AGSBX_BASE_ESCAPE_H
#define AGSBX_BASE_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True for what must never reach a terminal raw: C0 controls except TAB,
 * DEL, C1 controls, U+2028/U+2029 and the bidi controls (U+061C, U+200E,
 * U+200F, U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates:
 * they reorder what follows them on screen, "Trojan Source"). */
bool agsbx_term_unsafe(uint32_t cp);

/* The visible form of an unsafe code point: "\n", "\xNN" (<= 0xFF) or
 * "\uNNNN". out holds at least 8 bytes; returns the length written. */
size_t agsbx_term_escape_cp(uint32_t cp, char out[8]);

/* s made safe to print on a terminal as one line: unsafe characters in
 * their visible form, bytes of invalid UTF-8 as "\xNN", at most max_chars
 * characters (0: no limit) then "...". NULL s gives "?". malloc'd; NULL on
 * ENOMEM. */
char *agsbx_term_escape(const char *s, size_t max_chars);

/* The same into a fixed buffer (for log lines: no allocation), cut to fit
 * at a character boundary. */
void agsbx_term_escape_buf(const char *s, char *out, size_t out_size);

#endif
