/* Private to agsbx-payload: the JSON emitter and helpers of out.c that
 * payload.c and the ops in other files of the payload (ops-*.c) use, and
 * those ops. The payload stays static and libc-only; every op prints into
 * the one result object main() opens and closes; nothing here allocates. */
#ifndef AGSBX_PAYLOAD_H
#define AGSBX_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Emitter (out.c): one JSON object per run, streamed. */
/* Raw bytes to fd, retried on EINTR; gives up quietly when nobody reads. */
void write_all(int fd, const char *p, size_t n);
/* The buffer: raw bytes appended, flushed to stdout. */
void out_raw(const char *s, size_t n);
void out_str(const char *s);
void out_flush(void);
/* Moves up to cap buffered bytes into dst and empties the buffer; the count. */
size_t out_take(char *dst, size_t cap);
void key(const char *k);
void obj_open(const char *k);
void obj_close(void);
void arr_open(const char *k);
void arr_item(void);       /* opens the next object of the array; obj_close ends it */
void arr_close(void);
void f_null(const char *k);
void f_bool(const char *k, bool v);
void f_int(const char *k, long long v);
void f_uint(const char *k, unsigned long long v);
void f_strn(const char *k, const char *v, size_t n);
void f_str(const char *k, const char *v);
void f_errno_pair(const char *k, const char *knum, int err);
void f_result(int err);
void f_step(const char *ok_key, const char *errno_key, int err);
int parse_ll(const char *s, long long min, long long max, long long *ret);
ssize_t read_path(const char *path, char *buf, size_t cap, const char **stage);
/* read_path without the stage: up to cap bytes of path; the count or -errno. */
ssize_t read_path_plain(const char *path, char *buf, size_t cap);
/* The symbolic name of err ("EACCES"; "E<n>" when unknown). */
const char *pl_errno_name(int err, char *buf, size_t cap);

/* Ops of ops-ipc.c: host daemon sockets, inherited descriptors, keyrings. */
#define UNIX_CONNECTS_MAX 32
int op_unix_connects(char **argv, int argc, const char *self);
bool unix_connects_valid(char **args, int nargs);
int op_fds(char **argv, int argc, const char *self);
int op_keyring(char **argv, int argc, const char *self);

/* Ops of ops-kernel.c: kernel write interfaces, the kernel attack surface,
 * resource bounds. */
int op_kernel_ifaces(char **argv, int argc, const char *self);
int op_kernel_surface(char **argv, int argc, const char *self);
int op_fork_bound(char **argv, int argc, const char *self);
int op_balloon(char **argv, int argc, const char *self);
int op_limits(char **argv, int argc, const char *self);

/* serve.c: `agsbx-payload serve`, the execution server (framing there). */
int serve_main(void);

#endif
