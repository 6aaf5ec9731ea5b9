#include "base/log.h"
#include "base/escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Messages carry strings from sandboxes, adapters, host facts and file
 * names: each line is escaped for the terminal as a whole (one line, no
 * control or bidi character), whatever the caller formatted into it. */
static void put_line(const char *prefix, const char *msg)
{
	/* One fprintf per line keeps lines whole when checks log concurrently. */
	char esc[4096];
	agsbx_term_escape_buf(msg, esc, sizeof esc);
	fprintf(stderr, "%s%s\n", prefix, esc);
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048];
	vsnprintf(buf, sizeof buf, fmt, ap);
	put_line(prefix, buf);
}

/* Quiet modes (collect -q) are the commands' own: they decide what to
 * say, so every message said is printed. */
#define DEFINE_LOG(name, prefix)              \
	void name(const char *fmt, ...)       \
	{                                     \
		va_list ap;                   \
		va_start(ap, fmt);            \
		vlog(prefix, fmt, ap);        \
		va_end(ap);                   \
	}

DEFINE_LOG(agsbx_error, "agsbx-evidence: error: ")
DEFINE_LOG(agsbx_warn, "agsbx-evidence: warning: ")
DEFINE_LOG(agsbx_note, "agsbx-evidence: ")
DEFINE_LOG(agsbx_hint, "hint: ")

int agsbx_error_errno(int err, const char *fmt, ...)
{
	char buf[1536], line[1800];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	snprintf(line, sizeof line, "%s: %s", buf, strerror(err < 0 ? -err : err));
	put_line("agsbx-evidence: error: ", line);
	return err < 0 ? err : -err;
}

bool agsbx_term_capable(int fd)
{
	const char *term = getenv("TERM");
	if (!term || !*term || strcmp(term, "dumb") == 0)
		return false;
	return isatty(fd) == 1;
}

bool agsbx_use_color(int fd)
{
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		return false;
	return agsbx_term_capable(fd);
}
