/* Payload ops of catalogue v3's kernel and resource checks: kernel write
 * interfaces opened for write (never
 * written), cgroup mounts in the sandbox's own mount namespace, the
 * kernel attack surface the common local privilege escalations need, and
 * bounded fork and memory balloons. Results stay under the protocol's
 * 1024-byte line: one short string per interface or surface. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "payload.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef MOUNT_MAX
#define MOUNT_MAX 16
#endif

static const char *ename(int err)
{
	static char buf[8][16];
	static int slot;
	slot = (slot + 1) % 8;
	return pl_errno_name(err, buf[slot], sizeof(buf[slot]));
}

/* ---------- kernel-ifaces ---------- */

/* Zero-byte open for write: no O_TRUNC, no O_CREAT, never write(2),
 * closed at once. "absent" when the path does not exist (not an
 * attempt), "opened" when the kernel granted write access. */
static const char *open_for_write(const char *path, bool *opened)
{
	struct stat st;
	*opened = false;
	if (lstat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? "absent" : ename(errno);
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return ename(errno);
	close(fd);
	*opened = true;
	return "opened";
}

/* The first regular entry of DIR (getdents64: no allocation), or "". */
static void first_entry(const char *dir, const char *want, char *out, size_t cap)
{
	static char buf[8192];
	out[0] = '\0';
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	long n;
	while (!out[0] && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n && !out[0];) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			const char *name = buf + off + 19;
			unsigned char type = (unsigned char)buf[off + 18];
			if (name[0] != '.' && (!want || type == DT_DIR))
				snprintf(out, cap, "%s/%s%s%s", dir, name, want ? "/" : "", want ? want : "");
			off += reclen;
		}
	close(fd);
}

/* Every /sys/fs/cgroup/<hierarchy>/release_agent (cgroup v1, the
 * CVE-2022-0492 path) and /sys/fs/cgroup/release_agent: how many exist,
 * how many opened, the first refusal. */
static int release_agents(int *found)
{
	static char buf[8192];
	char path[512];
	bool opened = false;
	int nopened = 0;
	const char *first = open_for_write("/sys/fs/cgroup/release_agent", &opened);
	*found = strcmp(first, "absent") != 0;
	nopened += opened;
	int fd = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;
	while (fd >= 0 && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			const char *name = buf + off + 19;
			off += reclen;
			if (name[0] == '.' || (unsigned char)buf[off - reclen + 18] != DT_DIR)
				continue;
			snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/release_agent", name);
			if (strcmp(open_for_write(path, &opened), "absent") != 0)
				(*found)++;
			nopened += opened;
		}
	/* Where the directory cannot be listed, the hierarchies' usual names:
	 * a path that is not listed may still open. */
	static const char *const usual[] = { "cpu", "cpuset", "cpuacct", "cpu,cpuacct", "memory", "pids", "devices",
					     "freezer", "blkio", "rdma", "net_cls", "net_cls,net_prio", "perf_event",
					     "hugetlb", "misc", "systemd" };
	for (size_t i = 0; fd < 0 && i < sizeof(usual) / sizeof(usual[0]); i++) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/release_agent", usual[i]);
		if (strcmp(open_for_write(path, &opened), "absent") != 0)
			(*found)++;
		nopened += opened;
	}
	if (fd >= 0)
		close(fd);
	return nopened;
}

/* A cgroup v1 (a controller's hierarchy, as CVE-2022-0492's exploits
 * mount one to reach its release_agent) and a cgroup2 mount on a fresh directory under PARENT, unmounted at
 * once. EBUSY from v1 comes after the kernel's CAP_SYS_ADMIN check (the
 * controller is bound to another hierarchy): the mount was permitted. */
static void emit_mount(const char *key, const char *parent, const char *type, const char *opts, int *permitted)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/agsbx-%s-%d", parent, type, (int)getpid());
	if (mkdir(dir, 0700) < 0) {
		char v[48];
		snprintf(v, sizeof(v), "no target: %s", ename(errno));
		f_str(key, v);
		return;
	}
	int err = mount("cgroup", dir, type, MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0 ? errno : 0;
	int uerr = err == 0 && umount2(dir, MNT_DETACH) < 0 ? errno : 0;
	rmdir(dir);
	*permitted += err == 0 || err == EBUSY;
	char v[64];
	snprintf(v, sizeof(v), "%s%s%s", err == 0 ? "mounted" : ename(err), uerr ? ", unmount " : "",
		 uerr ? ename(uerr) : "");
	f_str(key, v);
}

/* The first enabled controller of /proc/cgroups ("memory" when it cannot
 * be read): one the kernel knows, so the mount's options parse and the
 * outcome is the permission check's. */
static void first_controller(char *out, size_t cap)
{
	static char buf[2048];
	ssize_t n = read_path_plain("/proc/cgroups", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(out, cap, "memory");
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[32];
		int hier, num, enabled;
		if (line[0] != '#' && sscanf(line, "%31s %d %d %d", name, &hier, &num, &enabled) == 4 && enabled) {
			snprintf(out, cap, "%s", name);
			return;
		}
	}
}

/* Only in a mount namespace of the sandbox's own: the same mount in the
 * host's would change the host's mount table. */
static int mounts_attempt(const char *host_mntns, const char *parent)
{
	struct stat st;
	long long host;
	obj_open("mount");
	if (parse_ll(host_mntns, 0, INT64_MAX, &host) < 0 || stat("/proc/self/ns/mnt", &st) < 0 ||
	    (long long)st.st_ino == host) {
		f_bool("attempted", false);
		f_str("why", "not attempted: host mount namespace (or it cannot be told)");
		obj_close();
		return 0;
	}
	int permitted = 0;
	f_bool("attempted", true);
	char ctrl[32];
	first_controller(ctrl, sizeof(ctrl));
	f_str("cgroup1_controller", ctrl);
	emit_mount("cgroup1", parent, "cgroup", ctrl, &permitted);
	emit_mount("cgroup2", parent, "cgroup2", NULL, &permitted);
	obj_close();
	return permitted;
}

/* Recorded, never judged: what a kernel exploit would read. */
static void emit_reads(void)
{
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	f_str("kcore", fd >= 0 ? "readable" : ename(errno));
	if (fd >= 0)
		close(fd);
	static char ks[256];
	ssize_t n = read_path_plain("/proc/kallsyms", ks, sizeof(ks) - 1);
	ks[n > 0 ? n : 0] = '\0';
	/* "0000000000000000 T sym" when kptr_restrict hides addresses. */
	f_str("kallsyms", n < 0 ? ename((int)-n) : n == 0 ? "empty" : ks[strspn(ks, "0")] == ' ' ? "zeroed" : "real_addresses");
	fd = open("/sys/kernel/debug", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	f_str("debugfs", fd >= 0 ? "listable" : ename(errno));
	if (fd >= 0)
		close(fd);
}

/* kernel-ifaces HOST_MNTNS_INODE MOUNT_PARENT [EXTRA_PATH...] */
int op_kernel_ifaces(char **argv, int argc, const char *self)
{
	static const struct { const char *key, *path; } fixed[] = {
		{ "core_pattern", "/proc/sys/kernel/core_pattern" },
		{ "modprobe", "/proc/sys/kernel/modprobe" },
		{ "binfmt_register", "/proc/sys/fs/binfmt_misc/register" },
		{ "sysrq_trigger", "/proc/sysrq-trigger" },
		{ "uevent_helper", "/sys/kernel/uevent_helper" },
		/* Never ima/policy: closing it after a write-open replaces
		 * (or, without CONFIG_IMA_WRITE_POLICY, removes) the policy. */
		{ "securityfs", "/sys/kernel/security/lockdown" },
	};
	char efivar[512];
	bool opened;
	int nopened = 0, nra = 0;
	f_result(0);
	obj_open("w");
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		f_str(fixed[i].key, open_for_write(fixed[i].path, &opened));
		nopened += opened;
	}
	first_entry("/sys/firmware/efi/efivars", NULL, efivar, sizeof(efivar));
	f_str("efivar", efivar[0] ? open_for_write(efivar, &opened) : "absent");
	nopened += efivar[0] && opened;
	int ra = release_agents(&nra);
	f_str("release_agent", nra == 0 ? "absent" : ra ? "opened" : "denied");
	nopened += ra;
	for (int i = 2; i < argc && i < 6; i++) {
		char k[8];
		snprintf(k, sizeof(k), "x%d", i - 2);
		f_str(k, open_for_write(argv[i], &opened));
		nopened += opened;
	}
	obj_close();
	f_int("release_agents", nra);
	f_int("opened_for_write", nopened);
	f_int("mounts_permitted", mounts_attempt(argv[0], argv[1]));
	emit_reads();
	return 0;
}

/* ---------- kernel-surface ---------- */

/* One probe in a child: a namespace, a keyring or a socket it makes dies
 * with it; returns 0 or the errno the child reported. */
static int in_child(int (*probe)(const char *), const char *arg)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	pid_t pid = fork();
	if (pid == 0) {
		int e = probe(arg);
		(void)!write(p[1], &e, sizeof e);
		_exit(0);
	}
	close(p[1]);
	int e = pid < 0 ? errno : ECHILD;
	if (pid > 0 && read(p[0], &e, sizeof e) != (ssize_t)sizeof e)
		e = ECHILD;
	close(p[0]);
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return e;
}

static int p_userns(const char *a) { return unshare(CLONE_NEWUSER) < 0 ? errno : 0; }

static int p_socket(int family, int type)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int p_packet(const char *a) { return p_socket(AF_PACKET, SOCK_RAW); }

/* socket(AF_ALG) and bind to hash/sha256: both ran in the kernel's
 * crypto user API. Only called where every module involved is present. */
static int p_alg(const char *a)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	struct { unsigned short family; unsigned char type[14]; unsigned int feat, mask; unsigned char name[64]; } sa;
	memset(&sa, 0, sizeof(sa));
	sa.family = AF_ALG;
	memcpy(sa.type, "hash", 5);
	memcpy(sa.name, "sha256", 7);
	int e = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* The smallest socket filter: r0 = 0; exit. */
static int p_bpf(const char *a)
{
	struct bpf_insn insns[2];
	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
	insns[1].code = BPF_JMP | BPF_EXIT;
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insn_cnt = 2;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	long fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static int p_uffd(const char *a)
{
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* A key in the child's own process keyring, gone with the child. */
static int p_keyring(const char *a)
{
	long id = syscall(SYS_add_key, "user", "agsbx-probe", "x", 1, -2 /* KEY_SPEC_PROCESS_KEYRING */);
	if (id < 0)
		return errno;
	return syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -2, 0) < 0 ? errno : 0;
}

/* A software counter of the process itself, user space only. */
static int p_perf(const char *a)
{
	struct perf_event_attr pa;
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_SOFTWARE;
	pa.size = sizeof(pa);
	pa.config = PERF_COUNT_SW_TASK_CLOCK;
	pa.disabled = 1;
	pa.exclude_kernel = 1;
	pa.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* open_by_handle_at (shocker) with a handle of FILE from
 * name_to_handle_at: CAP_DAC_READ_SEARCH decides. */
static int handle_probe(const char *file, int *name_err)
{
	struct { unsigned int bytes; int type; unsigned char h[128]; } fh;
	int mnt_id;
	fh.bytes = sizeof(fh.h);
	*name_err = syscall(SYS_name_to_handle_at, AT_FDCWD, file, &fh, &mnt_id, 0) < 0 ? errno : 0;
	if (*name_err)
		return *name_err;
	int mfd = open(file, O_RDONLY | O_CLOEXEC);
	if (mfd < 0)
		return *name_err = errno;
	long fd = syscall(SYS_open_by_handle_at, mfd, &fh, O_RDONLY | O_CLOEXEC);
	int e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close((int)fd);
	close(mfd);
	return e;
}

/* finit_module on /dev/null: never a module. Past the CAP_SYS_MODULE
 * check the kernel refuses the empty or non-regular file (EINVAL,
 * ENOEXEC, EBADF, EFBIG): that counts as reached. */
static const char *finit_probe(char *buf, size_t cap)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(buf, cap, "not_probed: /dev/null %s", ename(errno));
		return buf;
	}
	int e = syscall(SYS_finit_module, fd, "", 0) < 0 ? errno : 0;
	close(fd);
	if (e == EPERM || e == EACCES || e == ENOSYS)
		return ename(e);
	snprintf(buf, cap, "reached (%s)", e ? ename(e) : "accepted");
	return buf;
}

static void surface(const char *k, int err)
{
	f_str(k, err == 0 ? "reached" : ename(err));
}

/* kernel-surface FILE_IN_GRANT packet=0|1 alg=0|1: the harness decides
 * on the host whether AF_PACKET and AF_ALG are served without loading a
 * module (no probe may load one). Values: "reached" (the call succeeded:
 * the kernel code behind it ran), an errno (denied), or "not_probed: ...". */
int op_kernel_surface(char **argv, int argc, const char *self)
{
	char buf[64];
	int name_err = 0;
	f_result(0);
	obj_open("s");
	surface("userns", in_child(p_userns, NULL));
	if (strcmp(argv[1], "packet=1") == 0)
		surface("af_packet", in_child(p_packet, NULL));
	else
		f_str("af_packet", "not_probed: would load a module");
	if (strcmp(argv[2], "alg=1") == 0)
		surface("af_alg", in_child(p_alg, NULL));
	else
		f_str("af_alg", "not_probed: would load a module");
	surface("bpf", in_child(p_bpf, NULL));
	surface("userfaultfd", in_child(p_uffd, NULL));
	surface("keyring", in_child(p_keyring, NULL));
	surface("perf_event", in_child(p_perf, NULL));
	int he = handle_probe(argv[0], &name_err);
	if (name_err) {
		snprintf(buf, sizeof(buf), "not_probed: name_to_handle_at %s", ename(name_err));
		f_str("open_by_handle", buf);
	} else {
		surface("open_by_handle", he);
	}
	f_str("finit_module", finit_probe(buf, sizeof(buf)));
	obj_close();
	struct utsname u;
	f_str("release", uname(&u) == 0 ? u.release : NULL);
	return 0;
}

/* ---------- resources ---------- */

#define FORK_CAP_MAX 4096

/* "agsbx-progress N" on stderr: how far a balloon got, still there when
 * the sandbox ends the whole run instead of refusing a fork or a page. */
static void progress(long long n)
{
	char line[48];
	int len = snprintf(line, sizeof(line), "agsbx-progress %lld\n", n);
	(void)!write(STDERR_FILENO, line, (size_t)len);
}

/* fork-bound CAP: up to CAP sleeping children (never more), the first
 * refusal, then every child killed and reaped. */
int op_fork_bound(char **argv, int argc, const char *self)
{
	static pid_t kids[FORK_CAP_MAX];
	long long cap;
	if (parse_ll(argv[0], 1, FORK_CAP_MAX, &cap) < 0)
		return -EINVAL;
	pid_t parent = getpid();
	int n = 0, err = 0;
	progress(0); /* started: a run that ends before this line observed nothing */
	while (n < cap) {
		pid_t pid = fork();
		if (pid == 0) {
			/* Gone with the payload, whatever kills it. */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
				_exit(0);
			for (;;)
				pause();
		}
		if (pid < 0) {
			err = errno;
			break;
		}
		kids[n++] = pid;
		if (n % 16 == 0)
			progress(n);
	}
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
			;
	f_result(err);
	f_int("cap", cap);
	f_int("forked", n);
	f_str("stopped", err ? ename(err) : "cap");
	f_bool("bounded", n < cap);
	return 0;
}

#define BALLOON_CHUNK_MIB 16

/* The balloon itself, in a child: chunks of anonymous memory, every page
 * written; after each chunk the total so far goes up the pipe, so an
 * out-of-memory kill still leaves the count behind. */
static void balloon_child(int fd, long long cap_mib)
{
	const size_t chunk = (size_t)BALLOON_CHUNK_MIB << 20;
	long page = sysconf(_SC_PAGESIZE);
	int msg[2] = { 0, 0 };
	progress(0); /* started: a run that ends before this line observed nothing */
	for (long long mib = 0; mib < cap_mib; mib += BALLOON_CHUNK_MIB) {
		char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			msg[1] = errno;
			(void)!write(fd, msg, sizeof msg);
			_exit(1);
		}
		/* Huge pages where the kernel offers them: the same memory,
		 * charged the same, in a fraction of the faults. */
		(void)madvise(p, chunk, MADV_HUGEPAGE);
		for (size_t off = 0; off < chunk; off += (size_t)page)
			p[off] = 1;
		msg[0] = (int)(mib + BALLOON_CHUNK_MIB);
		(void)!write(fd, msg, sizeof msg);
		progress(msg[0]);
	}
	_exit(0);
}

/* balloon CAP_MIB: touches up to CAP_MIB MiB (never more) in a child;
 * "reached_mib" is how far it got, "stopped" what ended it (cap, an
 * mmap errno, or the signal that killed it). */
int op_balloon(char **argv, int argc, const char *self)
{
	long long cap;
	if (parse_ll(argv[0], BALLOON_CHUNK_MIB, 4096, &cap) < 0)
		return -EINVAL;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		f_result(errno);
		return 0;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		balloon_child(p[1], cap);
	}
	close(p[1]);
	int msg[2], reached = 0, merr = 0, st = 0;
	while (pid > 0 && read(p[0], msg, sizeof msg) == (ssize_t)sizeof msg) {
		if (msg[1])
			merr = msg[1];
		else
			reached = msg[0];
	}
	close(p[0]);
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	char why[48];
	if (merr)
		snprintf(why, sizeof(why), "mmap %s", ename(merr));
	else if (WIFSIGNALED(st))
		snprintf(why, sizeof(why), "killed by signal %d", WTERMSIG(st));
	else if (reached >= cap)
		snprintf(why, sizeof(why), "cap");
	else
		snprintf(why, sizeof(why), "exit %d", WEXITSTATUS(st));
	f_result(pid < 0 ? errno : 0);
	f_int("cap_mib", cap);
	f_int("reached_mib", reached);
	f_str("stopped", why);
	f_bool("bounded", pid > 0 && reached < cap);
	return 0;
}

/* One limit as a number, null when unlimited or unknown. */
static void emit_limit(const char *k, unsigned long long v, bool known)
{
	if (!known || v >= (1ULL << 53))
		f_null(k);
	else
		f_int(k, (long long)v);
}

/* The limit file of the hierarchy a /proc/self/cgroup line names:
 * cgroup v2 ("0::/path", at /sys/fs/cgroup or its "unified" mount) or the
 * v1 controller's own. */
static bool cgroup_dir_for(const char *line, const char *ctrl, char *base, size_t cap, const char **rel)
{
	const char *c = strchr(line, ':');
	const char *p = c ? strchr(c + 1, ':') : NULL;
	if (!p)
		return false;
	*rel = p + 1;
	if (p == c + 1) {
		bool unified = access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0;
		snprintf(base, cap, "%s", unified ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup");
		return true;
	}
	size_t n = strlen(ctrl);
	for (const char *q = c + 1; q < p; q += strcspn(q, ",:") + 1)
		if (strncmp(q, ctrl, n) == 0 && (q[n] == ',' || q[n] == ':')) {
			snprintf(base, cap, "/sys/fs/cgroup/%s", ctrl);
			return true;
		}
	return false;
}

/* The smallest limit (FILE2 in v2, FILE1 in v1; "max" = none) from the
 * process's cgroup up to the hierarchy's root. */
static void cgroup_min(const char *ctrl, const char *file2, const char *file1, unsigned long long *v, bool *known)
{
	static char cg[2048], val[64];
	char path[1024], base[64], rel[512];
	ssize_t n = read_path_plain("/proc/self/cgroup", cg, sizeof(cg) - 1);
	cg[n > 0 ? n : 0] = '\0';
	*known = false;
	for (char *save = NULL, *line = strtok_r(cg, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *r;
		if (!cgroup_dir_for(line, ctrl, base, sizeof(base), &r))
			continue;
		bool v2 = strstr(line, "::") != NULL;
		snprintf(rel, sizeof(rel), "%s", r);
		for (;;) {
			snprintf(path, sizeof(path), "%s%s/%s", base, strcmp(rel, "/") ? rel : "", v2 ? file2 : file1);
			ssize_t k = read_path_plain(path, val, sizeof(val) - 1);
			val[k > 0 ? k : 0] = '\0';
			unsigned long long x;
			if (k > 0 && sscanf(val, "%llu", &x) == 1 && (!*known || x < *v)) {
				*v = x;
				*known = true;
			}
			char *slash = strrchr(rel, '/');
			if (!slash || slash == rel)
				break;
			*slash = '\0';
		}
	}
}

/* limits: the bounds that already apply to this process (outside the
 * sandbox: the paired control of the resource checks, read instead of
 * exhausting the host). */
int op_limits(char **argv, int argc, const char *self)
{
	struct rlimit rl;
	unsigned long long v = 0;
	bool known;
	f_result(0);
	getrlimit(RLIMIT_NPROC, &rl);
	emit_limit("rlimit_nproc", rl.rlim_cur, rl.rlim_cur != RLIM_INFINITY);
	getrlimit(RLIMIT_AS, &rl);
	emit_limit("rlimit_as", rl.rlim_cur, rl.rlim_cur != RLIM_INFINITY);
	getrlimit(RLIMIT_DATA, &rl);
	emit_limit("rlimit_data", rl.rlim_cur, rl.rlim_cur != RLIM_INFINITY);
	cgroup_min("pids", "pids.max", "pids.max", &v, &known);
	emit_limit("cgroup_pids_max", v, known);
	cgroup_min("memory", "memory.max", "memory.limit_in_bytes", &v, &known);
	emit_limit("cgroup_memory_max", v, known);
	static char mi[4096];
	ssize_t n = read_path_plain("/proc/meminfo", mi, sizeof(mi) - 1);
	mi[n > 0 ? n : 0] = '\0';
	const char *a = strstr(mi, "MemAvailable:");
	emit_limit("mem_available_kib", a ? strtoull(a + 13, NULL, 10) : 0, a != NULL);
	f_bool("root", geteuid() == 0);
	return 0;
}
