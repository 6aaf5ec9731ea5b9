/* An error record for code that goes on after the first failure (probes
 * that fill every fact, providers whose cleanup fails too): the first
 * error is the cause, and wins; later ones are consequences. */
#ifndef AGSBX_BASE_ERROR_H
#define AGSBX_BASE_ERROR_H

#include <stdarg.h>
#include <stdbool.h>

struct agsbx_error {
	const char *reason;           /* static string; NULL while no error */
	char message[512];            /* one line, may be empty */
	char hint[512];               /* remedy, may be empty */
};

/* Records reason and the formatted message unless e already holds an
 * error (or e is NULL). fmt NULL: no message. */
void agsbx_error_set(struct agsbx_error *e, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void agsbx_error_vset(struct agsbx_error *e, const char *reason, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static inline bool agsbx_error_is_set(const struct agsbx_error *e)
{
	return e && e->reason;
}

#endif
