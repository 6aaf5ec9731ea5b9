/* The strict JSON reader's lexer (parse.c), shared by the tree reader and
 * the streaming canonicaliser (canon-stream.c): both read tokens with the
 * same code, so they accept the same strings, numbers and nesting. Private
 * to evidence/. */
#ifndef AGSBX_EVIDENCE_JPARSE_H
#define AGSBX_EVIDENCE_JPARSE_H

#include "evidence/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nesting as jq 1.6 allows it: its parser stack holds every open array,
 * every open object and that object's current key, and it refuses to open
 * an array or object on a stack this deep ("Exceeds depth limit for
 * parsing"). A bundle jq cannot read has no stock-tool canonical form, so
 * we refuse it too. */
#define JQ_MAX_DEPTH 256

struct parser {
	const char *start, *p, *end;
	int depth;
	char *err;
	size_t err_size;
	bool failed;
	struct ev_canon_out *canon; /* NULL: none wanted (or abandoned) */
	int mute;                   /* > 0: inside the member canon->skip_key */
};

static inline void ev_jp_skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
		ps->p++;
}

/* The first failure's one-line message, with line and column of at. */
void ev_jp_fail(struct parser *ps, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The string whose opening quote is at ps->p, decoded: *s (in the input,
 * or in *owned, which the caller frees, when it had escapes) and *n. 0, or
 * -EINVAL (reported) / -ENOMEM (not reported). */
int ev_jp_string(struct parser *ps, const char **s, size_t *n, char **owned);
/* The integer at ps->p (bundle rules: no fraction, exponent, leading zero
 * or -0, |n| <= 2^53): true and ps->p past it, or false (reported). */
bool ev_jp_number(struct parser *ps, int64_t *v);
/* After a member or element: 1 on ',', 0 on close, -1 otherwise (reported). */
int ev_jp_separator(struct parser *ps, char close);
/* An empty object or array: its close right after the opening bracket. */
bool ev_jp_closes_at_once(struct parser *ps, char close);

#endif
