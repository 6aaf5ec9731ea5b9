/* The allocation injector of the out-of-memory sweeps: malloc, calloc and
 * realloc fail with ENOMEM at the nth call after agsbx_oom_arm(nth), in the
 * process that armed it (a forked child). Linked only into the tests that
 * sweep (tests/CMakeLists.txt). Not under AddressSanitizer, whose
 * allocator is its own (memory from glibc's would be freed into it):
 * OOM_UNDER_ASAN is then defined and the interposers are left out. */
#ifndef AGSBX_TESTS_OOM_INJECT_H
#define AGSBX_TESTS_OOM_INJECT_H

#include <stdbool.h>

#if defined(__SANITIZE_ADDRESS__)
#define OOM_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOM_UNDER_ASAN 1
#endif
#endif

/* Counts allocations from 0 again and fails the nth (0: off). */
void agsbx_oom_arm(long nth);
void agsbx_oom_disarm(void);
/* Whether an allocation was failed since the process started. */
bool agsbx_oom_injected(void);
/* Why the injector cannot work in this process (another allocator replaced
 * ours: AddressSanitizer's, or valgrind's through LD_PRELOAD), or NULL. */
const char *agsbx_oom_unavailable(void);

#endif
