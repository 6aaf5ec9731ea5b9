/* The portability floor (docs/portability.md): jansson 2.13 and libcurl
 * 7.81, Ubuntu 22.04's versions. Each newer call the code wants has a
 * version-guarded wrapper here; the fallbacks are always compiled, so the
 * tests exercise them on any host (tests/test-compat.c), and
 * tests/portability/floor.h poisons the newer API so the whole tree is
 * compiled as if against the floor (tests/cli/portability.sh). */
#ifndef AGSBX_BASE_COMPAT_H
#define AGSBX_BASE_COMPAT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

/* jansson >= 2.14 has key-length object calls; 2.13 keys are C strings, so
 * a key with a NUL cannot exist there: lookups miss and inserts fail with
 * EILSEQ (the canonical form refuses such keys on every version anyway). */
#define AGSBX_JANSSON_HAS_KEYLEN (JANSSON_VERSION_HEX >= 0x020e00)

static inline json_t *agsbx_json_getn_fallback(const json_t *obj, const char *key, size_t len)
{
	if (memchr(key, '\0', len))
		return NULL;
	char *k = strndup(key, len);
	if (!k)
		return NULL;
	json_t *v = json_object_get(obj, k);
	free(k);
	return v;
}

static inline int agsbx_json_setn_new_nocheck_fallback(json_t *obj, const char *key, size_t len, json_t *v)
{
	if (memchr(key, '\0', len)) {
		json_decref(v);
		errno = EILSEQ;
		return -1;
	}
	char *k = strndup(key, len);
	if (!k) {
		json_decref(v);
		errno = ENOMEM;
		return -1;
	}
	int r = json_object_set_new_nocheck(obj, k, v);
	free(k);
	return r;
}

static inline size_t agsbx_json_iter_key_len_fallback(void *iter)
{
	return strlen(json_object_iter_key(iter));
}

static inline json_t *agsbx_json_getn(const json_t *obj, const char *key, size_t len)
{
#if AGSBX_JANSSON_HAS_KEYLEN
	return json_object_getn(obj, key, len);
#else
	return agsbx_json_getn_fallback(obj, key, len);
#endif
}

static inline int agsbx_json_setn_new_nocheck(json_t *obj, const char *key, size_t len, json_t *v)
{
#if AGSBX_JANSSON_HAS_KEYLEN
	return json_object_setn_new_nocheck(obj, key, len, v);
#else
	return agsbx_json_setn_new_nocheck_fallback(obj, key, len, v);
#endif
}

static inline size_t agsbx_json_iter_key_len(void *iter)
{
#if AGSBX_JANSSON_HAS_KEYLEN
	return json_object_iter_key_len(iter);
#else
	return agsbx_json_iter_key_len_fallback(iter);
#endif
}

/* The symbolic name of an errno value ("EPERM"): glibc's strerrorname_np
 * (2.32+), a table of the common ones elsewhere (macOS); NULL if unknown. */
static inline const char *agsbx_errname_fallback(int e)
{
#define AGSBX_E(n) case n: return #n;
	switch (e) {
	AGSBX_E(EPERM) AGSBX_E(ENOENT) AGSBX_E(ESRCH) AGSBX_E(EINTR) AGSBX_E(EIO) AGSBX_E(ENXIO)
	AGSBX_E(E2BIG) AGSBX_E(ENOEXEC) AGSBX_E(EBADF) AGSBX_E(ECHILD) AGSBX_E(EAGAIN) AGSBX_E(ENOMEM)
	AGSBX_E(EACCES) AGSBX_E(EFAULT) AGSBX_E(EBUSY) AGSBX_E(EEXIST) AGSBX_E(EXDEV) AGSBX_E(ENODEV)
	AGSBX_E(ENOTDIR) AGSBX_E(EISDIR) AGSBX_E(EINVAL) AGSBX_E(ENFILE) AGSBX_E(EMFILE) AGSBX_E(ENOTTY)
	AGSBX_E(ETXTBSY) AGSBX_E(EFBIG) AGSBX_E(ENOSPC) AGSBX_E(ESPIPE) AGSBX_E(EROFS) AGSBX_E(EMLINK)
	AGSBX_E(EPIPE) AGSBX_E(EDOM) AGSBX_E(ERANGE) AGSBX_E(ENAMETOOLONG) AGSBX_E(ENOSYS)
	AGSBX_E(ENOTEMPTY) AGSBX_E(ELOOP) AGSBX_E(EILSEQ) AGSBX_E(EPROTO) AGSBX_E(ENOTSUP)
	AGSBX_E(EADDRINUSE) AGSBX_E(EADDRNOTAVAIL) AGSBX_E(ENETUNREACH) AGSBX_E(ECONNRESET)
	AGSBX_E(ENOTCONN) AGSBX_E(ETIMEDOUT) AGSBX_E(ECONNREFUSED) AGSBX_E(EHOSTUNREACH)
	AGSBX_E(EALREADY) AGSBX_E(EINPROGRESS)
	default: return NULL;
	}
#undef AGSBX_E
}

static inline const char *agsbx_errname(int e)
{
#if defined(__linux__) && defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	return strerrorname_np(e);
#else
	return agsbx_errname_fallback(e);
#endif
}

#endif
