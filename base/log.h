/* Diagnostics go to stderr, prefixed "agsbx-evidence:", lowercase, no
 * trailing period; remedies go on "hint:" lines. stdout is reserved for a
 * command's result. Library code logs sparingly and returns -errno. */
#ifndef AGSBX_BASE_LOG_H
#define AGSBX_BASE_LOG_H

#include <errno.h>
#include <stdbool.h>

void agsbx_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void agsbx_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void agsbx_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void agsbx_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Logs "agsbx-evidence: <msg>: <strerror(-err)>" and returns err (negative)
 * so callers can `return agsbx_error_errno(r, "...")`. */
int agsbx_error_errno(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A terminal that takes cursor movement: a TTY whose TERM is set and not
 * "dumb" (Emacs shells, CI log viewers). */
bool agsbx_term_capable(int fd);
/* Colour only on a capable terminal and never with NO_COLOR set. */
bool agsbx_use_color(int fd);

#endif
