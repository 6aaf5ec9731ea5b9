/* agsbx-landlock-exec: applies a Landlock ruleset and the shared seccomp
 * filter (providers/seccomp-filter.c) to itself, then exec()s the program. The provider launches it through the bounded runner, so the
 * parent never runs code between fork and exec (Agently's helper design;
 * docs/design.md, "The Landlock helper").
 *
 *   agsbx-landlock-exec --manifest PATH [--manifest-sha256 HEX]
 *                       [--report PATH | --report-fd N] [--probe] [--tag HEX]
 *                       -- PROGRAM [ARG...]
 *
 * Manifest: {"version":1, "target_abi":N, "rules":[{"path","access"}...],
 *            "restrict_tcp":bool, "scope":bool}
 * Paths are absolute and canonical; "/proc/self" is the one virtual path
 * accepted (read only): it resolves to this process's /proc entry, which
 * stays ours across execve (same pid), and never covers a child.
 *
 * Best effort like samples/landlock/sandboxer.c: effective ABI =
 * min(system, target); rights of newer ABIs are dropped by a fall-through
 * switch. Failure: "agsbx-landlock-exec: <reason>: <detail>" on stderr and
 * exit 120; nothing is exec'd unrestricted. Reasons: usage,
 * manifest_invalid, report_failed, kernel_does_not_support_landlock
 * (ENOSYS), landlock_disabled (EOPNOTSUPP), landlock_enforcement_failed,
 * exec_failed (the ruleset was applied; PROGRAM could not be started). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <jansson.h>

#include "base/landlock.h"
#include "providers/seccomp-filter.h"

#define HELPER_EXIT 120
#define MAX_MANIFEST_BYTES (1 << 20)
#define MAX_RULES 128
#define PROC_SELF "/proc/self"

#define FS_READ_DIR_MASK (AGSBX_LL_FS_EXECUTE | AGSBX_LL_FS_READ_FILE | AGSBX_LL_FS_READ_DIR)
#define FS_READ_FILE_MASK (AGSBX_LL_FS_EXECUTE | AGSBX_LL_FS_READ_FILE)
#define FS_WRITE_FILE_MASK \
	(AGSBX_LL_FS_EXECUTE | AGSBX_LL_FS_READ_FILE | AGSBX_LL_FS_WRITE_FILE | AGSBX_LL_FS_TRUNCATE)
/* Everything up to ABI 5 (bits 0-15). */
#define FS_ALL_KNOWN ((AGSBX_LL_FS_RESOLVE_UNIX << 1) - 1)
/* Never allowed anywhere, even on a writable root: a sandbox running as
 * root (CAP_MKNOD) could otherwise create a block device node inside a
 * grant root and open the raw disk through it. */
#define FS_NEVER_ALLOWED (AGSBX_LL_FS_MAKE_CHAR | AGSBX_LL_FS_MAKE_BLOCK)

struct failure {
	const char *reason;
	char detail[768];
};

static int fail(struct failure *f, int err, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct failure *f, int err, const char *reason, const char *fmt, ...)
{
	if (!f->reason) {
		f->reason = reason;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(f->detail, sizeof f->detail, fmt, ap);
		va_end(ap);
	}
	return err > 0 ? -err : err;
}

struct rule {
	const char *path;      /* as in the manifest (borrowed from the JSON) */
	char resolved[PATH_MAX];
	bool write;
	bool dir;
	int fd;
	uint64_t allowed;
};

struct plan {
	json_t *manifest;
	int target_abi;
	int system_abi;
	int effective_abi;
	int errata;            /* -1: not reported by the kernel */
	bool restrict_tcp;
	bool scope;
	struct agsbx_ll_ruleset_attr attr;
	struct rule rules[MAX_RULES];
	size_t nrules;
};

/* ---- sha256 (FIPS 180-4), so the manifest can be pinned from argv ---- */

struct sha256 {
	uint32_t h[8];
	uint8_t buf[64];
	size_t used;
	uint64_t bits;
};

static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_block(struct sha256 *s, const uint8_t *p)
{
	uint32_t w[64];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
		       p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
	uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	s->h[0] += a;
	s->h[1] += b;
	s->h[2] += c;
	s->h[3] += d;
	s->h[4] += e;
	s->h[5] += f;
	s->h[6] += g;
	s->h[7] += h;
}

static void sha256_hex(const void *data, size_t len, char hex[65])
{
	struct sha256 s = { .h = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
				   0x1f83d9ab, 0x5be0cd19 } };
	const uint8_t *p = data;
	s.bits = (uint64_t)len * 8;
	for (; len >= 64; p += 64, len -= 64)
		sha256_block(&s, p);
	memcpy(s.buf, p, len);
	s.used = len;
	s.buf[s.used++] = 0x80;
	if (s.used > 56) {
		memset(s.buf + s.used, 0, 64 - s.used);
		sha256_block(&s, s.buf);
		s.used = 0;
	}
	memset(s.buf + s.used, 0, 56 - s.used);
	for (int i = 0; i < 8; i++)
		s.buf[56 + i] = (uint8_t)(s.bits >> (56 - 8 * i));
	sha256_block(&s, s.buf);
	for (int i = 0; i < 8; i++)
		snprintf(hex + 8 * i, 9, "%08x", s.h[i]);
}

/* ---- manifest ---------------------------------------------------------- */

static int read_manifest(const char *path, char **data, size_t *len, struct failure *f)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(f, errno, "manifest_invalid", "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_MANIFEST_BYTES) {
		close(fd);
		return fail(f, EINVAL, "manifest_invalid", "%s: not a regular file of at most %d bytes", path,
			    MAX_MANIFEST_BYTES);
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf || got != (size_t)st.st_size) {
		free(buf);
		return fail(f, EIO, "manifest_invalid", "%s: short read", path);
	}
	buf[got] = '\0';
	*data = buf;
	*len = got;
	return 0;
}

static int json_bool_field(json_t *m, const char *key, bool dflt, bool *out, struct failure *f)
{
	json_t *v = json_object_get(m, key);
	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!json_is_boolean(v))
		return fail(f, EINVAL, "manifest_invalid", "\"%s\" must be a boolean", key);
	*out = json_is_true(v);
	return 0;
}

static int check_rule_path(const char *path, bool write, struct rule *r, struct failure *f)
{
	if (strcmp(path, PROC_SELF) == 0) {
		if (write)
			return fail(f, EINVAL, "manifest_invalid", "%s may only be read", PROC_SELF);
		snprintf(r->resolved, sizeof r->resolved, "/proc/%ld", (long)getpid());
		return 0;
	}
	if (path[0] != '/')
		return fail(f, EINVAL, "manifest_invalid", "rule path %s is not absolute", path);
	if (strncmp(path, "/proc/", 6) == 0 || strcmp(path, "/proc") == 0)
		return fail(f, EINVAL, "manifest_invalid", "rule path %s: only %s is accepted under /proc", path,
			    PROC_SELF);
	if (!realpath(path, r->resolved))
		return fail(f, errno, "manifest_invalid", "rule path %s: %s", path, strerror(errno));
	if (strcmp(path, r->resolved) != 0)
		return fail(f, EINVAL, "manifest_invalid", "rule path %s is not canonical (resolves to %s)", path,
			    r->resolved);
	return 0;
}

static int parse_rules(struct plan *p, json_t *rules, struct failure *f)
{
	if (!json_is_array(rules) || json_array_size(rules) == 0)
		return fail(f, EINVAL, "manifest_invalid", "\"rules\" must be a non-empty array");
	if (json_array_size(rules) > MAX_RULES)
		return fail(f, E2BIG, "manifest_invalid", "more than %d rules", MAX_RULES);
	size_t i;
	json_t *e;
	json_array_foreach(rules, i, e) {
		const char *path = NULL, *access = NULL;
		json_error_t jerr;
		if (json_unpack_ex(e, &jerr, JSON_STRICT, "{s:s, s:s}", "path", &path, "access", &access) < 0)
			return fail(f, EINVAL, "manifest_invalid", "rule %zu: %s", i, jerr.text);
		struct rule *r = &p->rules[i];
		r->fd = -1;
		r->path = path;
		if (strcmp(access, "read") != 0 && strcmp(access, "write") != 0)
			return fail(f, EINVAL, "manifest_invalid", "rule %zu: access must be read or write", i);
		r->write = strcmp(access, "write") == 0;
		int rc = check_rule_path(path, r->write, r, f);
		if (rc < 0)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->rules[j].path, path) == 0)
				return fail(f, EINVAL, "manifest_invalid", "duplicate rule path %s", path);
		p->nrules = i + 1;
	}
	return 0;
}

static int parse_manifest(struct plan *p, const char *data, size_t len, struct failure *f)
{
	json_error_t jerr;
	p->manifest = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!p->manifest)
		return fail(f, EINVAL, "manifest_invalid", "line %d: %s", jerr.line, jerr.text);
	json_t *m = p->manifest;
	if (!json_is_object(m))
		return fail(f, EINVAL, "manifest_invalid", "not a JSON object");
	const char *key;
	json_t *v;
	json_object_foreach(m, key, v) {
		static const char *const known[] = { "version", "target_abi", "rules", "restrict_tcp", "scope" };
		bool ok = false;
		for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
			ok |= strcmp(known[k], key) == 0;
		if (!ok)
			return fail(f, EINVAL, "manifest_invalid", "unknown key \"%s\"", key);
	}
	if (json_integer_value(json_object_get(m, "version")) != 1 || !json_is_integer(json_object_get(m, "version")))
		return fail(f, EINVAL, "manifest_invalid", "\"version\" must be 1");
	json_t *t = json_object_get(m, "target_abi");
	if (!json_is_integer(t) || json_integer_value(t) < 1 || json_integer_value(t) > AGSBX_LL_ABI_KNOWN)
		return fail(f, EINVAL, "manifest_invalid", "\"target_abi\" must be an integer in 1..%d",
			    AGSBX_LL_ABI_KNOWN);
	p->target_abi = (int)json_integer_value(t);
	int rc = json_bool_field(m, "restrict_tcp", true, &p->restrict_tcp, f);
	if (rc == 0)
		rc = json_bool_field(m, "scope", true, &p->scope, f);
	if (rc == 0)
		rc = parse_rules(p, json_object_get(m, "rules"), f);
	return rc;
}

/* ---- ruleset ----------------------------------------------------------- */

static int query_abi(struct plan *p, struct failure *f)
{
	int abi = agsbx_ll_abi();
	if (abi == -ENOSYS)
		return fail(f, ENOSYS, "kernel_does_not_support_landlock",
			    "landlock_create_ruleset: %s (kernel built without CONFIG_SECURITY_LANDLOCK, or the "
			    "syscall is filtered)", strerror(ENOSYS));
	if (abi == -EOPNOTSUPP)
		return fail(f, EOPNOTSUPP, "landlock_disabled",
			    "landlock_create_ruleset: %s (Landlock is built in but not enabled at boot: add "
			    "landlock to the lsm= kernel parameter)", strerror(EOPNOTSUPP));
	if (abi < 0)
		return fail(f, -abi, "landlock_enforcement_failed", "ABI query: %s", strerror(-abi));
	p->system_abi = abi;
	int errata = agsbx_ll_errata();
	p->errata = errata < 0 ? -1 : errata;
	p->effective_abi = abi < p->target_abi ? abi : p->target_abi;
	return 0;
}

/* Best effort (sandboxer.c): start from everything this code knows and
 * drop, version by version, what the effective ABI does not handle. */
static void downgrade(struct plan *p)
{
	uint64_t fs = FS_ALL_KNOWN;
	uint64_t net = p->restrict_tcp ? AGSBX_LL_NET_BIND_TCP | AGSBX_LL_NET_CONNECT_TCP : 0;
	uint64_t scoped = p->scope ? AGSBX_LL_SCOPE_ABSTRACT_UNIX_SOCKET | AGSBX_LL_SCOPE_SIGNAL : 0;
	switch (p->effective_abi) {
	case 1:
		fs &= ~AGSBX_LL_FS_REFER;
		/* fall through */
	case 2:
		fs &= ~AGSBX_LL_FS_TRUNCATE;
		/* fall through */
	case 3:
		net = 0;
		/* fall through */
	case 4:
		fs &= ~AGSBX_LL_FS_IOCTL_DEV;
		/* fall through */
	case 5:
		scoped = 0;
		/* fall through */
	case 6:
		/* ABI 7 only adds audit-logging flags; none are used. */
		/* fall through */
	case 7:
		/* ABI 8 only adds the TSYNC flag; the helper is single-threaded. */
		/* fall through */
	case 8:
		fs &= ~AGSBX_LL_FS_RESOLVE_UNIX;
		/* fall through */
	default:
		break;
	}
	p->attr.handled_access_fs = fs;
	p->attr.handled_access_net = net;
	p->attr.scoped = scoped;
}

/* Inode-compatible masks: directory-only rights never on a non-directory
 * (the kernel rejects them with EINVAL). */
static uint64_t rule_mask(const struct plan *p, const struct rule *r)
{
	uint64_t m;
	if (r->dir)
		m = r->write ? FS_ALL_KNOWN & ~FS_NEVER_ALLOWED : FS_READ_DIR_MASK;
	else
		m = r->write ? FS_WRITE_FILE_MASK : FS_READ_FILE_MASK;
	return m & p->attr.handled_access_fs;
}

static int open_rules(struct plan *p, struct failure *f)
{
	for (size_t i = 0; i < p->nrules; i++) {
		struct rule *r = &p->rules[i];
		/* O_NOFOLLOW on the canonical path: a symlink swapped in after the
		 * check is opened as the link itself and refused below. */
		bool proc = strcmp(r->path, PROC_SELF) == 0;
		r->fd = open(proc ? r->resolved : r->path, O_PATH | O_CLOEXEC | (proc ? 0 : O_NOFOLLOW));
		if (r->fd < 0)
			return fail(f, errno, "manifest_invalid", "open %s: %s", r->path, strerror(errno));
		struct stat st;
		if (fstat(r->fd, &st) < 0)
			return fail(f, errno, "manifest_invalid", "stat %s: %s", r->path, strerror(errno));
		if (S_ISLNK(st.st_mode))
			return fail(f, ELOOP, "manifest_invalid", "%s became a symlink", r->path);
		r->dir = S_ISDIR(st.st_mode);
		r->allowed = rule_mask(p, r);
	}
	return 0;
}

static int enforce(struct plan *p, struct failure *f)
{
	int rs = (int)agsbx_ll_create_ruleset(&p->attr, agsbx_ll_attr_size(p->effective_abi), 0);
	if (rs < 0) {
		int e = errno;
		if (e == ENOSYS)
			return fail(f, e, "kernel_does_not_support_landlock", "landlock_create_ruleset: %s",
				    strerror(e));
		if (e == EOPNOTSUPP)
			return fail(f, e, "landlock_disabled", "landlock_create_ruleset: %s", strerror(e));
		return fail(f, e, "landlock_enforcement_failed", "landlock_create_ruleset: %s", strerror(e));
	}
	for (size_t i = 0; i < p->nrules; i++) {
		struct rule *r = &p->rules[i];
		if (!r->allowed)
			continue;
		struct agsbx_ll_path_beneath_attr pb = { .allowed_access = r->allowed, .parent_fd = r->fd };
		if (agsbx_ll_add_rule(rs, AGSBX_LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
			int e = errno;
			close(rs);
			return fail(f, e, "landlock_enforcement_failed", "landlock_add_rule %s (0x%llx): %s", r->path,
				    (unsigned long long)r->allowed, strerror(e));
		}
	}
	/* No port rules: with TCP handled, every bind and connect is denied. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		int e = errno;
		close(rs);
		return fail(f, e, "landlock_enforcement_failed", "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(e));
	}
	if (agsbx_ll_restrict_self(rs, 0) < 0) {
		int e = errno;
		close(rs);
		return fail(f, e, "landlock_enforcement_failed", "landlock_restrict_self: %s", strerror(e));
	}
	close(rs);
	for (size_t i = 0; i < p->nrules; i++)
		close(p->rules[i].fd);
	/* After no_new_privs (which lets an unprivileged process load it)
	 * and after the Landlock calls: the kernel surfaces the common LPEs
	 * need, and io_uring, are denied to the program and its children. */
	int e = agsbx_seccomp_install();
	if (e < 0)
		return fail(f, -e, "landlock_enforcement_failed", "seccomp filter: %s", strerror(-e));
	return 0;
}

/* ---- probe self-test: setup worked AND something is really denied ----- */

static const char *errno_name(int e)
{
	switch (e) {
	case 0: return NULL;
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ENOENT: return "ENOENT";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENETUNREACH: return "ENETUNREACH";
	default: return "other";
	}
}

static bool has_root_rule(const struct plan *p)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (strcmp(p->rules[i].resolved, "/") == 0)
			return true;
	return false;
}

/* One self-test probe's outcome, e its errno (0: it was allowed): only
 * EACCES is Landlock's refusal; anything else fails the helper. */
static void self_test_record(json_t *t, struct failure *f, const char *denied_key, const char *errno_key, int e,
			     const char *what, const char *allowed)
{
	json_object_set_new(t, denied_key, json_boolean(e == EACCES));
	json_object_set_new(t, errno_key, e ? json_string(errno_name(e)) : json_null());
	if (e != EACCES)
		fail(f, EPERM, "landlock_enforcement_failed", "self-test: %s was not denied (%s)", what,
		     e ? strerror(e) : allowed);
}

static json_t *self_test(const struct plan *p, struct failure *f)
{
	json_t *t = json_object();
	if (!has_root_rule(p)) {
		/* "/" itself is beneath no rule: opening it must be refused. */
		int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int e = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		self_test_record(t, f, "fs_denied", "fs_errno", e, "reading /", "allowed");
	}
	if (p->attr.handled_access_net & AGSBX_LL_NET_CONNECT_TCP) {
		/* Landlock refuses in the connect hook, before any packet; the
		 * address is loopback anyway. */
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		int e = s < 0 ? errno : 0;
		if (s >= 0) {
			struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(9) };
			sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			e = connect(s, (struct sockaddr *)&sa, sizeof sa) < 0 ? errno : 0;
			close(s);
		}
		self_test_record(t, f, "tcp_connect_denied", "tcp_errno", e, "TCP connect", "connected");
	}
	/* The filter answers before the kernel looks at the arguments:
	 * unfiltered, these bad ones would give EBADF. */
	long fd = syscall(SYS_open_by_handle_at, -1, NULL, 0);
	int se = fd < 0 ? errno : 0;
	json_object_set_new(t, "seccomp_denied", json_boolean(se == EPERM));
	if (se != EPERM)
		fail(f, EPERM, "landlock_enforcement_failed", "self-test: open_by_handle_at was not denied by the "
			       "seccomp filter (%s)", se ? strerror(se) : "allowed");
	return t;
}

/* ---- report ------------------------------------------------------------ */

static json_t *report_json(const struct plan *p, bool probe, json_t *selftest)
{
	json_t *rules = json_array();
	for (size_t i = 0; i < p->nrules; i++) {
		const struct rule *r = &p->rules[i];
		json_array_append_new(rules, json_pack("{s:s, s:s, s:s, s:s, s:I}", "path", r->path, "resolved",
						       r->resolved, "access", r->write ? "write" : "read", "inode",
						       r->dir ? "directory" : "file", "allowed_access",
						       (json_int_t)r->allowed));
	}
	json_t *j = json_pack("{s:i, s:i, s:i, s:i, s:b, s:I, s:I, s:I, s:b, s:b, s:o, s:i}", "version", 1,
			      "system_abi", p->system_abi, "target_abi", p->target_abi, "effective_abi",
			      p->effective_abi, "newer_than_known", p->system_abi > AGSBX_LL_ABI_KNOWN,
			      "handled_access_fs", (json_int_t)p->attr.handled_access_fs, "handled_access_net",
			      (json_int_t)p->attr.handled_access_net, "scoped", (json_int_t)p->attr.scoped,
			      "no_new_privs", 1, "probe", probe, "rules", rules, "rules_applied", (int)p->nrules);
	json_object_set_new(j, "errata", p->errata >= 0 ? json_integer(p->errata) : json_null());
	json_object_set_new(j, "restrict_status",
			    json_string(p->system_abi >= p->target_abi ? "fully_enforced" : "partially_enforced"));
	json_object_set_new(j, "seccomp_filter", agsbx_seccomp_describe());
	if (selftest)
		json_object_set_new(j, "self_test", selftest);
	return j;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static int write_report(int fd, json_t *report, struct failure *f)
{
	char *s = json_dumps(report, JSON_COMPACT | JSON_SORT_KEYS);
	int r = s ? write_all(fd, s, strlen(s)) : -ENOMEM;
	if (r == 0)
		r = write_all(fd, "\n", 1);
	free(s);
	if (r < 0)
		return fail(f, -r, "report_failed", "writing the report: %s", strerror(-r));
	return 0;
}

/* ---- main -------------------------------------------------------------- */

struct args {
	const char *manifest;
	const char *manifest_sha256;
	const char *report;
	int report_fd;
	bool probe;
	const char *tag;   /* per-execution nonce in our error prefix */
	char **argv;
};

static int parse_args(int argc, char **argv, struct args *a, struct failure *f)
{
	a->report_fd = -1;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *o = argv[i];
		bool has_val = i + 1 < argc;
		if (strcmp(o, "--probe") == 0)
			a->probe = true;
		else if (strcmp(o, "--manifest") == 0 && has_val)
			a->manifest = argv[++i];
		else if (strcmp(o, "--manifest-sha256") == 0 && has_val)
			a->manifest_sha256 = argv[++i];
		else if (strcmp(o, "--report") == 0 && has_val)
			a->report = argv[++i];
		else if (strcmp(o, "--tag") == 0 && has_val)
			a->tag = argv[++i];
		else if (strcmp(o, "--report-fd") == 0 && has_val) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 0 || v > INT_MAX)
				return fail(f, EINVAL, "usage", "bad --report-fd");
			a->report_fd = (int)v;
		} else
			return fail(f, EINVAL, "usage", "unknown or incomplete option %s", o);
	}
	if (!a->manifest || i + 1 >= argc || (a->report && a->report_fd >= 0))
		return fail(f, EINVAL, "usage",
			    "agsbx-landlock-exec --manifest PATH [--manifest-sha256 HEX] [--report PATH | "
			    "--report-fd N] [--probe] -- PROGRAM [ARG...]");
	a->argv = argv + i + 1;
	return 0;
}

static int load_plan(const struct args *a, struct plan *p, struct failure *f)
{
	char *data = NULL;
	size_t len = 0;
	int r = read_manifest(a->manifest, &data, &len, f);
	if (r < 0)
		return r;
	if (a->manifest_sha256) {
		/* The manifest sits in a directory the sandbox may write to; the
		 * digest on our argv (set by the provider) pins its content. */
		char hex[65];
		sha256_hex(data, len, hex);
		if (strcmp(hex, a->manifest_sha256) != 0) {
			free(data);
			return fail(f, EBADMSG, "manifest_invalid", "sha256 %s does not match the expected %s", hex,
				    a->manifest_sha256);
		}
	}
	r = parse_manifest(p, data, len, f);
	free(data);
	return r;
}

static int run(const struct args *a, struct plan *p, struct failure *f)
{
	int report_fd = a->report_fd;
	if (a->report) {
		/* Created before restricting (the ruleset may not cover it);
		 * exclusive and not following: nothing pre-placed is reused. */
		report_fd = open(a->report, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (report_fd < 0)
			return fail(f, errno, "report_failed", "%s: %s", a->report, strerror(errno));
	}
	int r = load_plan(a, p, f);
	if (r == 0)
		r = query_abi(p, f);
	if (r == 0) {
		downgrade(p);
		r = open_rules(p, f);
	}
	if (r == 0)
		r = enforce(p, f);
	json_t *st = NULL;
	if (r == 0 && a->probe) {
		st = self_test(p, f);
		r = f->reason ? -EPERM : 0;
	}
	if (r == 0 && report_fd >= 0) {
		json_t *rep = report_json(p, a->probe, st);
		st = NULL;
		r = write_report(report_fd, rep, f);
		json_decref(rep);
	}
	json_decref(st);
	if (a->report && report_fd >= 0)
		close(report_fd);
	return r;
}

int main(int argc, char **argv)
{
	struct failure f = { 0 };
	struct args a = { 0 };
	static struct plan p;
	int r = parse_args(argc, argv, &a, &f);
	if (r == 0)
		r = run(&a, &p, &f);
	if (r == 0) {
		execvp(a.argv[0], a.argv);
		fail(&f, errno, "exec_failed", "%s: %s", a.argv[0], strerror(errno));
	}
	/* With --tag, the provider's nonce marks the refusal as ours: the
	 * program we exec cannot know it (argv is gone after execve), so it
	 * cannot fake a refusal by printing our message and exiting 120. */
	fprintf(stderr, "agsbx-landlock-exec%s%s%s: %s: %s\n", a.tag ? "[" : "", a.tag ? a.tag : "", a.tag ? "]" : "",
		f.reason ? f.reason : "landlock_enforcement_failed", f.detail);
	json_decref(p.manifest);
	return HELPER_EXIT;
}
