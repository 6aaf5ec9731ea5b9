#include "base/error.h"

#include <stdio.h>

void agsbx_error_vset(struct agsbx_error *e, const char *reason, const char *fmt, va_list ap)
{
	if (!e || e->reason)
		return;   /* first error wins */
	e->reason = reason;
	e->message[0] = '\0';
	if (fmt)
		vsnprintf(e->message, sizeof e->message, fmt, ap);
}

void agsbx_error_set(struct agsbx_error *e, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	agsbx_error_vset(e, reason, fmt, ap);
	va_end(ap);
}
