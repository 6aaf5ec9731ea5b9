/* Landlock UAPI constants and syscall wrappers. Debian 12's
 * <linux/landlock.h> stops at ABI 2, so ABI 3-7 are defined here
 * (#ifndef-guarded, values from the kernel UAPI), and ABI 8-9 (values from
 * include/uapi/linux/landlock.h of Linux 7.0/7.1). The attr struct is our
 * own; its size passed to the kernel must match the ABI in use:
 * 8 bytes for ABI < 4, 16 for ABI 4-5, 24 for ABI >= 6. */
#ifndef AGSBX_BASE_LANDLOCK_H
#define AGSBX_BASE_LANDLOCK_H

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_CREATE_RULESET_ERRATA
#define LANDLOCK_CREATE_RULESET_ERRATA (1U << 1)
#endif

#define AGSBX_LL_RULE_PATH_BENEATH 1
#define AGSBX_LL_RULE_NET_PORT 2

/* filesystem rights */
#define AGSBX_LL_FS_EXECUTE (1ULL << 0)
#define AGSBX_LL_FS_WRITE_FILE (1ULL << 1)
#define AGSBX_LL_FS_READ_FILE (1ULL << 2)
#define AGSBX_LL_FS_READ_DIR (1ULL << 3)
#define AGSBX_LL_FS_REMOVE_DIR (1ULL << 4)
#define AGSBX_LL_FS_REMOVE_FILE (1ULL << 5)
#define AGSBX_LL_FS_MAKE_CHAR (1ULL << 6)
#define AGSBX_LL_FS_MAKE_DIR (1ULL << 7)
#define AGSBX_LL_FS_MAKE_REG (1ULL << 8)
#define AGSBX_LL_FS_MAKE_SOCK (1ULL << 9)
#define AGSBX_LL_FS_MAKE_FIFO (1ULL << 10)
#define AGSBX_LL_FS_MAKE_BLOCK (1ULL << 11)
#define AGSBX_LL_FS_MAKE_SYM (1ULL << 12)
#define AGSBX_LL_FS_REFER (1ULL << 13)       /* ABI 2 */
#define AGSBX_LL_FS_TRUNCATE (1ULL << 14)    /* ABI 3 */
#define AGSBX_LL_FS_IOCTL_DEV (1ULL << 15)   /* ABI 5 */
/* connect()/sendmsg() to a pathname unix socket (ABI 9, Linux 7.1): denied
 * unless a rule covers the socket or it was created inside the domain. */
#define AGSBX_LL_FS_RESOLVE_UNIX (1ULL << 16)

/* network rights (ABI 4) */
#define AGSBX_LL_NET_BIND_TCP (1ULL << 0)
#define AGSBX_LL_NET_CONNECT_TCP (1ULL << 1)

/* scopes (ABI 6) */
#define AGSBX_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define AGSBX_LL_SCOPE_SIGNAL (1ULL << 1)

/* landlock_restrict_self flags (ABI 7) */
#define AGSBX_LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#define AGSBX_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#define AGSBX_LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
/* landlock_restrict_self flag (ABI 8, Linux 7.0): every thread of the
 * process at once. Not needed here: the helper is single-threaded when it
 * restricts itself. */
#define AGSBX_LL_RESTRICT_SELF_TSYNC (1U << 3)

/* The newest ABI this code knows; a kernel reporting more is recorded as
 * "newer than known" (a finding, not an error). */
#define AGSBX_LL_ABI_KNOWN 9

struct agsbx_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;   /* ABI >= 4 */
	uint64_t scoped;               /* ABI >= 6 */
};

struct agsbx_ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct agsbx_ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

static inline size_t agsbx_ll_attr_size(int abi)
{
	return abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
}

static inline long agsbx_ll_create_ruleset(const struct agsbx_ll_ruleset_attr *attr, size_t size, uint32_t flags)
{
	return syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline long agsbx_ll_add_rule(int ruleset_fd, int type, const void *attr, uint32_t flags)
{
	return syscall(__NR_landlock_add_rule, ruleset_fd, type, attr, flags);
}

static inline long agsbx_ll_restrict_self(int ruleset_fd, uint32_t flags)
{
	return syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}

/* System ABI via the syscall (never via /sys): > 0, or -errno
 * (-ENOSYS: not built in; -EOPNOTSUPP: disabled at boot). */
static inline int agsbx_ll_abi(void)
{
	long r = agsbx_ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return r < 0 ? -errno : (int)r;
}

/* Errata bitmask (ABI >= 7 kernels), or -errno. */
static inline int agsbx_ll_errata(void)
{
	long r = agsbx_ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_ERRATA);
	return r < 0 ? -errno : (int)r;
}

#endif
