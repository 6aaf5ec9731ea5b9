/* agsbx-simulate: a labelled simulation of a more restrictive host, made
 * of a real kernel refusal instead of a mock, with host settings untouched
 * (docs/design.md, "Simulating a host that blocks user namespaces").
 *
 *   agsbx-simulate --blocked-userns|--no-landlock [--errno=EPERM|ENOSPC|EINVAL]
 *                  -- PROGRAM [ARG...]
 *
 * It sets no_new_privs, installs a seccomp-bpf filter and execvp()s
 * PROGRAM. The filter is inherited by the whole process tree and cannot be
 * removed from inside it.
 *  --blocked-userns: unshare(2) and clone(2) whose flags contain
 *      CLONE_NEWUSER fail with the errno (default EPERM, what a host that
 *      forbids unprivileged user namespaces returns); clone3(2) fails with
 *      ENOSYS so libc falls back to clone(2), whose flags a filter can see
 *      (clone3 passes them in memory).
 *  --no-landlock: landlock_create_ruleset/add_rule/restrict_self fail with
 *      ENOSYS, as on a kernel built without Landlock.
 * Architectures filtered: x86_64 (and its x32 and i386 ABIs), aarch64.
 * A system call of any other architecture kills the process (a filter
 * that let it through would silently simulate nothing), and on a machine
 * whose own architecture is not in the table the helper refuses to run.
 * AGSBX_SIMULATE_ARCH=0xNNNNNNNN (tests) names the native architecture
 * instead; it can only make the helper refuse, never filter less.
 * Own failures: "agsbx-simulate: <detail>" on stderr, exit 125. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define SIM_EXIT 125
#define X32_SYSCALL_BIT 0x40000000U

#ifndef AUDIT_ARCH_AARCH64
#define AUDIT_ARCH_AARCH64 (EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE)
#endif

struct arch_nrs {
	uint32_t arch;
	uint32_t unshare, clone, clone3;
	uint32_t ll_create, ll_add, ll_restrict;
};

/* Syscall numbers per ABI (from the kernel syscall tables). */
static const struct arch_nrs arches[] = {
	{ AUDIT_ARCH_X86_64, 272, 56, 435, 444, 445, 446 },  /* x32 masked to these */
	{ AUDIT_ARCH_I386, 310, 120, 435, 444, 445, 446 },
	{ AUDIT_ARCH_AARCH64, 97, 220, 435, 444, 445, 446 },
};

struct opts {
	bool blocked_userns;
	bool no_landlock;
	int userns_errno;
	char **argv;
};

#define MAX_INSNS 256

struct prog {
	struct sock_filter f[MAX_INSNS];
	unsigned n;
};

static void emit(struct prog *p, struct sock_filter ins)
{
	if (p->n < MAX_INSNS)
		p->f[p->n] = ins;
	p->n++;
}

#define STMT(code, k) ((struct sock_filter)BPF_STMT((code), (k)))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP((code), (k), (jt), (jf)))
#define RET_ERRNO(e) STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((uint32_t)(e) & SECCOMP_RET_DATA))
#define RET_ALLOW STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD_NR STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
/* Flags of unshare/clone are the first argument; CLONE_NEWUSER sits in the
 * low 32 bits, which come first on these little-endian ABIs. */
#define LOAD_ARG0_LO STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]))

/* "if nr == N: return errno E" */
static void deny_nr(struct prog *p, uint32_t nr, int e)
{
	emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
	emit(p, RET_ERRNO(e));
}

/* "if nr == N and (arg0 & CLONE_NEWUSER): return errno E", nr reloaded. */
static void deny_newuser(struct prog *p, uint32_t nr, int e)
{
	emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 4));
	emit(p, LOAD_ARG0_LO);
	emit(p, JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1));
	emit(p, RET_ERRNO(e));
	emit(p, RET_ALLOW); /* same syscall without CLONE_NEWUSER */
}

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define NATIVE_ARCH AUDIT_ARCH_I386
#else
#define NATIVE_ARCH 0u
#endif

/* The native architecture is in the table (and the test override, when
 * set, names exactly it). */
static bool native_arch_known(void)
{
	uint32_t native = NATIVE_ARCH;
	const char *o = getenv("AGSBX_SIMULATE_ARCH");
	if (o && *o) {
		char *end;
		unsigned long v = strtoul(o, &end, 0);
		if (*end || v != native)
			return false;
	}
	for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
		if (arches[i].arch == native)
			return true;
	return false;
}

/* One block per architecture: "arch != A: skip the block". */
static void emit_arch(struct prog *p, const struct arch_nrs *a, const struct opts *o)
{
	struct prog body = { .n = 0 };
	emit(&body, LOAD_NR);
	if (a->arch == AUDIT_ARCH_X86_64)
		emit(&body, STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT));
	if (o->no_landlock) {
		deny_nr(&body, a->ll_create, ENOSYS);
		deny_nr(&body, a->ll_add, ENOSYS);
		deny_nr(&body, a->ll_restrict, ENOSYS);
	}
	if (o->blocked_userns) {
		deny_nr(&body, a->clone3, ENOSYS);
		deny_newuser(&body, a->unshare, o->userns_errno);
		deny_newuser(&body, a->clone, o->userns_errno);
	}
	emit(&body, RET_ALLOW);
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
	emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, a->arch, 0, (uint8_t)body.n));
	for (unsigned i = 0; i < body.n; i++)
		emit(p, body.f[i]);
}

static int install(const struct opts *o)
{
	struct prog p = { .n = 0 };
	for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
		emit_arch(&p, &arches[i], o);
	/* An architecture without a block: never allow-all. */
	emit(&p, STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	if (p.n > MAX_INSNS)
		return -E2BIG;
	struct sock_fprog fp = { .len = (unsigned short)p.n, .filter = p.f };
	/* Needed to install a filter without CAP_SYS_ADMIN, and it keeps a
	 * setuid program from escaping the simulation. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0)
		return -errno;
	return 0;
}

static int parse_errno(const char *s, int *e)
{
	static const struct { const char *name; int value; } names[] = {
		{ "EPERM", EPERM }, { "ENOSPC", ENOSPC }, { "EINVAL", EINVAL }, { "EACCES", EACCES },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(s, names[i].name) == 0) {
			*e = names[i].value;
			return 0;
		}
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	o->userns_errno = EPERM;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--blocked-userns") == 0)
			o->blocked_userns = true;
		else if (strcmp(argv[i], "--no-landlock") == 0)
			o->no_landlock = true;
		else if (strncmp(argv[i], "--errno=", 8) == 0) {
			if (parse_errno(argv[i] + 8, &o->userns_errno) < 0) {
				fprintf(stderr, "agsbx-simulate: unknown errno %s (EPERM, ENOSPC, EINVAL, EACCES)\n",
					argv[i] + 8);
				return -EINVAL;
			}
		} else {
			fprintf(stderr, "agsbx-simulate: unknown option %s\n", argv[i]);
			return -EINVAL;
		}
	}
	if ((!o->blocked_userns && !o->no_landlock) || i + 1 >= argc) {
		fprintf(stderr, "usage: agsbx-simulate --blocked-userns|--no-landlock "
				"[--errno=EPERM|ENOSPC|EINVAL] -- PROGRAM [ARG...]\n");
		return -EINVAL;
	}
	o->argv = argv + i + 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	if (parse_args(argc, argv, &o) < 0)
		return SIM_EXIT;
	if (!native_arch_known()) {
		fprintf(stderr, "agsbx-simulate: unsupported architecture: refusing the simulation "
				"(its system call numbers are unknown)\n");
		return SIM_EXIT;
	}
	int r = install(&o);
	if (r < 0) {
		fprintf(stderr, "agsbx-simulate: installing the seccomp filter: %s\n", strerror(-r));
		return SIM_EXIT;
	}
	execvp(o.argv[0], o.argv);
	fprintf(stderr, "agsbx-simulate: %s: %s\n", o.argv[0], strerror(errno));
	return SIM_EXIT;
}
