/* The reference providers' seccomp filter: the kernel surfaces the common
 * local privilege escalations need (syscalls.kernel_surface_denied and
 * syscalls.io_uring_denied in docs/checks.md), denied; everything else
 * allowed. Built by hand as classic BPF from the table below rather than
 * with libseccomp: the program is a few dozen instructions, the Landlock
 * helper stays free of another library, and the bundle can say exactly
 * which instructions ran.
 *
 * Errno: EPERM, what Docker's default profile and bwrap return for a
 * syscall a policy refuses ("operation not permitted" is the truth, and
 * callers already handle it: the kernel returns it when a capability is
 * missing). ENOSYS only where a caller must fall back: clone3, whose flags
 * sit in memory a filter cannot read, so glibc retries with clone, whose
 * flags it can; and the x32 ABI, which would otherwise reach every denied
 * call under another number. */
#include "providers/seccomp-filter.h"

#include <errno.h>
#include <string.h>

#ifdef __linux__
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define ARCH_AUDIT AUDIT_ARCH_X86_64
#define ARCH_NAME "x86_64"
#define X32_BIT 0x40000000u
#elif defined(__aarch64__)
#define ARCH_AUDIT AUDIT_ARCH_AARCH64
#define ARCH_NAME "aarch64"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG0_LO offsetof(struct seccomp_data, args[0])
#else
#define ARG0_LO (offsetof(struct seccomp_data, args[0]) + 4)
#endif

enum match { ANY, ARG0_EQ, ARG0_HAS_BITS };

struct rule {
	const char *name;
	long nr;
	enum match match;
	uint32_t arg;          /* ARG0_EQ: the value; ARG0_HAS_BITS: the mask */
	const char *arg_name;  /* for the bundle */
	int err;
	const char *why;
};

#ifdef ARCH_AUDIT
static const struct rule rules[] = {
	{ "unshare", SYS_unshare, ARG0_HAS_BITS, CLONE_NEWUSER, "CLONE_NEWUSER", EPERM, "nested user namespaces" },
	{ "clone", SYS_clone, ARG0_HAS_BITS, CLONE_NEWUSER, "CLONE_NEWUSER", EPERM, "nested user namespaces" },
	{ "clone3", SYS_clone3, ANY, 0, NULL, ENOSYS, "flags unreadable by a filter: glibc falls back to clone" },
	{ "socket", SYS_socket, ARG0_EQ, AF_PACKET, "AF_PACKET", EPERM, "raw packet sockets (CVE-2017-7308)" },
	{ "socket", SYS_socket, ARG0_EQ, AF_ALG, "AF_ALG", EPERM, "kernel crypto user API (Copy Fail)" },
	{ "bpf", SYS_bpf, ANY, 0, NULL, EPERM, "eBPF programs and maps" },
	{ "userfaultfd", SYS_userfaultfd, ANY, 0, NULL, EPERM, "race widening for kernel exploits" },
	{ "add_key", SYS_add_key, ANY, 0, NULL, EPERM, "kernel keyrings, not namespaced" },
	{ "keyctl", SYS_keyctl, ANY, 0, NULL, EPERM, "kernel keyrings, not namespaced" },
	{ "request_key", SYS_request_key, ANY, 0, NULL, EPERM, "kernel keyrings, not namespaced" },
	{ "perf_event_open", SYS_perf_event_open, ANY, 0, NULL, EPERM, "perf events" },
	{ "open_by_handle_at", SYS_open_by_handle_at, ANY, 0, NULL, EPERM, "file handles past mounts (shocker)" },
	{ "init_module", SYS_init_module, ANY, 0, NULL, EPERM, "kernel modules" },
	{ "finit_module", SYS_finit_module, ANY, 0, NULL, EPERM, "kernel modules" },
	{ "io_uring_setup", SYS_io_uring_setup, ANY, 0, NULL, EPERM, "io_uring bypasses syscall filters" },
	{ "io_uring_enter", SYS_io_uring_enter, ANY, 0, NULL, EPERM, "io_uring bypasses syscall filters" },
	{ "io_uring_register", SYS_io_uring_register, ANY, 0, NULL, EPERM, "io_uring bypasses syscall filters" },
};
#define NRULES (sizeof rules / sizeof rules[0])
#endif

struct prog {
	struct sock_filter *v;
	size_t n, cap;
};

static void emit(struct prog *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	if (p->n < p->cap)
		p->v[p->n] = (struct sock_filter)BPF_JUMP(code, k, jt, jf);
	p->n++;
}

static uint32_t ret_errno(int e)
{
	return SECCOMP_RET_ERRNO | ((uint32_t)e & SECCOMP_RET_DATA);
}

#ifdef ARCH_AUDIT
/* One rule; A holds the syscall number before and after. */
static void emit_rule(struct prog *p, const struct rule *r)
{
	if (r->match == ANY) {
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, (uint32_t)r->nr);
		emit(p, BPF_RET | BPF_K, 0, 0, ret_errno(r->err));
		return;
	}
	/* Not this call: skip the four that follow (A still holds nr). */
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 4, (uint32_t)r->nr);
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG0_LO);
	emit(p, BPF_JMP | (r->match == ARG0_EQ ? BPF_JEQ : BPF_JSET) | BPF_K, 0, 1, r->arg);
	emit(p, BPF_RET | BPF_K, 0, 0, ret_errno(r->err));
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, nr));
}
#endif

int agsbx_seccomp_build(struct sock_filter *buf, size_t cap)
{
#ifndef ARCH_AUDIT
	(void)buf;
	(void)cap;
	return -ENOTSUP;
#else
	struct prog p = { .v = buf, .cap = cap };
	/* Another architecture's numbers mean other calls: never let a
	 * process switch ABI to walk around the table. */
	emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, arch));
	emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, ARCH_AUDIT);
	emit(&p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_KILL_PROCESS);
	emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, nr));
#ifdef X32_BIT
	emit(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, X32_BIT);
	emit(&p, BPF_RET | BPF_K, 0, 0, ret_errno(ENOSYS));
#endif
	for (size_t i = 0; i < NRULES; i++)
		emit_rule(&p, &rules[i]);
	emit(&p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW);
	return p.n > cap ? -ENOSPC : (int)p.n;
#endif
}

int agsbx_seccomp_install(void)
{
	struct sock_filter insns[AGSBX_SECCOMP_MAX_INSNS];
	int n = agsbx_seccomp_build(insns, AGSBX_SECCOMP_MAX_INSNS);
	if (n < 0)
		return n;
	struct sock_fprog prog = { .len = (unsigned short)n, .filter = insns };
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0 ? -errno : 0;
}

int agsbx_seccomp_memfd(void)
{
	struct sock_filter insns[AGSBX_SECCOMP_MAX_INSNS];
	int n = agsbx_seccomp_build(insns, AGSBX_SECCOMP_MAX_INSNS);
	if (n < 0)
		return n;
	int fd = memfd_create("agsbx-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	size_t len = (size_t)n * sizeof insns[0];
	/* Sealed: whoever holds the fd (bwrap) reads exactly this program. */
	if (write(fd, insns, len) != (ssize_t)len ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
	    lseek(fd, 0, SEEK_SET) < 0) {
		int e = errno ? errno : EIO;
		close(fd);
		return -e;
	}
	return fd;
}

static const char *errno_label(int e)
{
	return e == EPERM ? "EPERM" : e == ENOSYS ? "ENOSYS" : "other";
}

json_t *agsbx_seccomp_describe(void)
{
	struct sock_filter insns[AGSBX_SECCOMP_MAX_INSNS];
	int n = agsbx_seccomp_build(insns, AGSBX_SECCOMP_MAX_INSNS);
	json_t *denied = json_array();
#ifdef ARCH_AUDIT
	for (size_t i = 0; i < NRULES; i++) {
		const struct rule *r = &rules[i];
		json_t *d = json_pack("{s:s, s:I, s:s, s:s}", "syscall", r->name, "nr", (json_int_t)r->nr, "errno",
				      errno_label(r->err), "why", r->why);
		if (r->match != ANY)
			json_object_set_new(d, "when", json_pack("{s:s, s:s}", "arg0",
								 r->match == ARG0_EQ ? "equals" : "has_bits",
								 "value", r->arg_name));
		json_array_append_new(denied, d);
	}
#endif
	json_t *j = json_pack("{s:s, s:s, s:o, s:s}", "built_by", "classic BPF from the table in providers/seccomp-filter.c",
			      "default", "allow", "denied", denied, "other_architectures", "kill_process");
#ifdef ARCH_AUDIT
	json_object_set_new(j, "architecture", json_string(ARCH_NAME));
#endif
#ifdef X32_BIT
	json_object_set_new(j, "x32_abi", json_string("ENOSYS"));
#endif
	json_object_set_new(j, "instructions", n >= 0 ? json_integer(n) : json_null());
	if (n < 0)
		json_object_set_new(j, "error", json_string(strerror(-n)));
	return j;
}

#else /* !__linux__ */

int agsbx_seccomp_build(struct sock_filter *buf, size_t cap)
{
	(void)buf;
	(void)cap;
	return -ENOTSUP;
}

int agsbx_seccomp_install(void)
{
	return -ENOTSUP;
}

int agsbx_seccomp_memfd(void)
{
	return -ENOTSUP;
}

json_t *agsbx_seccomp_describe(void)
{
	return json_pack("{s:s, s:n, s:s}", "built_by", "none", "instructions", "error", strerror(ENOTSUP));
}

#endif
