/* Defaults more than one folder relies on, named once: the code that
 * applies them and the help text that states them (through
 * AGSBX_DEFAULT_STR) cannot disagree. Plain integer literals, so they
 * can be spelled into a string at compile time. */
#ifndef AGSBX_BASE_DEFAULTS_H
#define AGSBX_BASE_DEFAULTS_H

/* A mechanism probe or a host tool's --version/--help run. */
#define AGSBX_PROBE_TIMEOUT_MS 5000
/* One execution inside a sandbox (collect --timeout-ms). */
#define AGSBX_EXEC_TIMEOUT_MS 20000

/* A default as a string literal: "(default " AGSBX_DEFAULT_STR(X) ")". */
#define AGSBX_DEFAULT_STR(x) AGSBX_DEFAULT_STR_(x)
#define AGSBX_DEFAULT_STR_(x) #x

#endif
