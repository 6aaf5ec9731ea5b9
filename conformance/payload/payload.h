/* The payload's emitter and helpers for ops kept in files of their own
 * (ops-*.c): payload.c owns the output buffer, these reach it. Every op
 * prints into the one result object main() opens and closes. */
#ifndef AGSBX_PAYLOAD_PAYLOAD_H
#define AGSBX_PAYLOAD_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

void pl_obj_open(const char *k);
void pl_obj_close(void);
void pl_null(const char *k);
void pl_bool(const char *k, bool v);
void pl_int(const char *k, long long v);
void pl_str(const char *k, const char *v);
/* "ok", "errno", "errno_num" for err (0: ok). */
void pl_result(int err);
/* The symbolic name of err ("EACCES"; "E<n>" when unknown). */
const char *pl_errno_name(int err, char *buf, size_t cap);
int pl_parse_ll(const char *s, long long min, long long max, long long *ret);
/* Up to cap bytes of path; the count or -errno. */
ssize_t pl_read_path(const char *path, char *buf, size_t cap);

/* ops-kernel.c */
int op_kernel_ifaces(char **argv, int argc, const char *self);
int op_kernel_surface(char **argv, int argc, const char *self);
int op_fork_bound(char **argv, int argc, const char *self);
int op_balloon(char **argv, int argc, const char *self);
int op_limits(char **argv, int argc, const char *self);

#endif
