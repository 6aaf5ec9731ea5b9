/* Small shared helpers: files, hashes, randomness, strings, JSON. */
#ifndef AGSBX_BASE_UTIL_H
#define AGSBX_BASE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define AGSBX_TOOL_NAME "agsbx-evidence"

const char *agsbx_version(void);
const char *agsbx_git_commit(void);

/* Writes all n bytes (retrying short writes and EINTR): 0 or -errno
 * (-EIO for a write that wrote nothing). */
int agsbx_write_all(int fd, const void *p, size_t n);
/* Reads at most max bytes of the regular file path. -EFBIG when it is
 * larger (refused before reading), -EISDIR for a directory, -EINVAL at once
 * for a FIFO, socket or device (opened non-blocking, never read).
 * *data is NUL-terminated and malloc'd. */
int agsbx_read_file(const char *path, size_t max, char **data, size_t *len);
struct stat;
/* The same for an open fd whose fstat is st (agsbx_fstat_regular). */
int agsbx_read_fd(int fd, const struct stat *st, size_t max, char **data, size_t *len);
/* fstat(fd) into st: 0 for a regular file, -EISDIR, -EINVAL (FIFO, socket,
 * device) or -errno. */
int agsbx_fstat_regular(int fd, struct stat *st);
/* Maps the pages of a fresh n-byte buffer in one call (Linux's
 * MADV_POPULATE_WRITE) instead of one page fault per 4 KiB as it is first
 * written; a no-op where that is unsupported or n is small. */
void agsbx_prefault(void *p, size_t n);
/* 0 when path is a regular file (opened non-blocking, fstat), else as
 * agsbx_read_file: -EISDIR, -EINVAL (FIFO, socket, device), -errno. */
int agsbx_check_regular(const char *path);
/* strerror for agsbx_read_file's errors: -EINVAL reads "not a regular
 * file (...)". */
const char *agsbx_file_strerror(int err);
/* First line of a small file, trailing newline stripped; NULL on error
 * (errno set). */
char *agsbx_read_line(const char *path);
/* 0 when path may be replaced by a new file: it does not exist or is a
 * regular file (symlinks followed); -EISDIR, -EINVAL (FIFO, socket,
 * device: a rename would replace the node itself, e.g. /dev/null as
 * root), -errno. */
int agsbx_check_output_target(const char *path);
/* Writes data to path atomically: a temporary name in the same directory,
 * fsync, then rename. mode applies to the new file. No partial file is
 * ever left at path or at the temporary name. An existing path that is
 * not a regular file is refused (agsbx_check_output_target). */
int agsbx_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode);
/* The second half of such a write: fd, open on the new file tmp, gets all
 * of data and mode (whatever the umask), an fsync when durable, is closed,
 * and tmp is renamed to path; tmp is removed on any failure. 0 or -errno. */
int agsbx_publish_file(int fd, const char *tmp, const char *path, const void *data, size_t len, unsigned mode,
		       bool durable);

/* Grows *buf (malloc'd, *cap bytes; NULL and 0 to start) to hold need
 * bytes, doubling *cap (first when 0) but never past max: afterwards
 * *cap >= need, or == max when need is more. -ENOMEM leaves both as they
 * were. */
int agsbx_buf_reserve(char **buf, size_t *cap, size_t need, size_t first, size_t max);

/* Appends n bytes to the growing, always NUL-terminated buffer *buf
 * (*len used, *cap allocated; all zero to start). -ENOMEM leaves it as
 * it was. */
int agsbx_buf_append(char **buf, size_t *len, size_t *cap, const void *p, size_t n);

/* sha256 as 64 lowercase hex chars + NUL (hex must hold 65 bytes). */
void agsbx_sha256_hex(const void *data, size_t len, char hex[65]);
/* Regular files only (never follows a final symlink): -EISDIR for a
 * directory, -EINVAL for anything else (FIFO, device). */
int agsbx_sha256_file(const char *path, char hex[65]);
/* sha256 (64 lowercase hex + NUL) of what fd reads from its current
 * offset to the end: the very file checked by fstat, not a path again. */
int agsbx_sha256_fd(int fd, char hex[65]);

/* n random bytes as 2n hex chars (buf must hold 2n+1). */
void agsbx_random_hex(char *buf, size_t nbytes);

/* Directory holding the running executable (helpers live beside it). */
int agsbx_self_dir(char **dir);
/* "dir/name", malloc'd. */
char *agsbx_path_join(const char *dir, const char *name);

/* Monotonic microseconds. */
uint64_t agsbx_now_us(void);
/* UTC "YYYY-MM-DDTHH:MM:SSZ" (buf >= 21 bytes). */
void agsbx_utc_now(char *buf, size_t size);

/* Length (1-4) of the valid UTF-8 sequence at s, or 0 if it is invalid,
 * overlong, a surrogate, beyond U+10FFFF, truncated, or a NUL byte; its
 * code point in *cp (set only when valid). The one UTF-8 decoder. */
size_t agsbx_utf8_decode(const unsigned char *s, size_t left, uint32_t *cp);
/* The same without the code point. */
size_t agsbx_utf8_seq_len(const unsigned char *s, size_t left);

/* Any bytes -> a valid UTF-8 JSON string value (new reference). Invalid
 * sequences become U+FFFD; NUL becomes U+FFFD too, so captured sandbox
 * output can never break the bundle. */
json_t *agsbx_json_string_sanitized(const char *data, size_t len);

/* The bundle's integers: within +-2^53 (evidence/canonical.c writes
 * nothing else, as jq prints them). */
#define AGSBX_BUNDLE_INT_MAX (1LL << 53)
/* Why j is no value a bundle can hold, or NULL: a real, an integer beyond
 * +-2^53, arrays and objects nested deeper than max_depth (j itself at
 * depth). For JSON from outside (an adapter, a helper's report) before it
 * goes into evidence: one such value would make the bundle unwritable. */
const char *agsbx_json_unbundlable(const json_t *j, int depth, int max_depth);

/* Splits s into words the way a POSIX shell splits a simple command:
 * blanks separate, single quotes are literal, double quotes honour \\,
 * \", \$, \` and \<newline>, a backslash outside quotes escapes the next
 * character; no expansion of any kind. Returns the word count (>= 0) and a
 * NULL-terminated malloc'd vector, or -EINVAL for an unterminated quote or
 * a trailing backslash. */
int agsbx_split_words(const char *s, char ***out);

#endif
