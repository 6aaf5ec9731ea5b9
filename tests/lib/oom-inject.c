#include "oom-inject.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static long fail_at; /* 0: off */
static long alloc_count;
static bool injected;

void agsbx_oom_arm(long nth)
{
	__atomic_store_n(&alloc_count, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fail_at, nth, __ATOMIC_RELAXED);
}

void agsbx_oom_disarm(void)
{
	__atomic_store_n(&fail_at, 0, __ATOMIC_RELAXED);
}

bool agsbx_oom_injected(void)
{
	return injected;
}

const char *agsbx_oom_unavailable(void)
{
#ifdef OOM_UNDER_ASAN
	return "AddressSanitizer replaces the allocator (and aborts where malloc would return NULL)";
#else
	const char *pre = getenv("LD_PRELOAD");
	return pre && strstr(pre, "vgpreload") ? "valgrind replaces the allocator" : NULL;
#endif
}

#ifndef OOM_UNDER_ASAN
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static bool inject(void)
{
	if (!__atomic_load_n(&fail_at, __ATOMIC_RELAXED))
		return false;
	if (__atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED) != fail_at)
		return false;
	injected = true;
	errno = ENOMEM;
	return true;
}

void *malloc(size_t n)
{
	return inject() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return inject() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return inject() ? NULL : __libc_realloc(p, n);
}
#endif
