/* The one seccomp filter the reference providers install: bubblewrap
 * hands it to bwrap (--seccomp FD), the Landlock helper loads it itself
 * after no_new_privs. One table (seccomp-filter.c) decides what both deny,
 * so their syscalls_restricted claims mean the same thing.
 *
 * Self-contained (libc, kernel headers, jansson): the Landlock helper is
 * built from its own file and this one, without the provider library. */
#ifndef AGSBX_PROVIDERS_SECCOMP_FILTER_H
#define AGSBX_PROVIDERS_SECCOMP_FILTER_H

#include <stddef.h>
#include <jansson.h>

/* Off Linux (the portable subset) every function says -ENOTSUP and the
 * description records the error. */
struct sock_filter;

/* Upper bound of the program's length (the table is small and fixed). */
#define AGSBX_SECCOMP_MAX_INSNS 128

/* The classic BPF program into buf: the number of instructions, or
 * -ENOTSUP on an architecture the table has no audit arch for, -ENOSPC
 * when cap is too small. */
int agsbx_seccomp_build(struct sock_filter *buf, size_t cap);

/* Loads the program into the calling thread (no_new_privs must already be
 * set): 0 or -errno. */
int agsbx_seccomp_install(void);

/* A sealed memfd holding the program as bwrap's --seccomp reads it (raw
 * struct sock_filter array): the fd (O_CLOEXEC) or -errno. */
int agsbx_seccomp_memfd(void);

/* What the filter denies and how it was built, for the bundle (new ref). */
json_t *agsbx_seccomp_describe(void);

#endif
