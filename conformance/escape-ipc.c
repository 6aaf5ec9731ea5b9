/* Catalogue v3: what a sandbox shares with the
 * host besides files — daemon sockets, descriptors and directories that
 * came from outside, and the kernel keyrings. Each attack changes nothing
 * on the host (connect but never send; read a canary; read a key the
 * harness placed and removes) and is paired with a control run outside as
 * the same user; a control that fails makes the check a `skip`. */
#include "conformance/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <linux/keyctl.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/util.h"

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const json_t *sub(const json_t *res, const char *k)
{
	return json_object_get(res, k);
}

static uid_t run_uid(const struct check_env *env)
{
	return env->ctx->run_as ? env->ctx->run_uid : getuid();
}

/* An attack whose run printed no payload result saw nothing: skipped
 * with how the run ended and its stderr tail (cf_no_observation), never
 * read as denied. */
static void no_observation(struct check_out *out, const char *attack, int sr)
{
	if (sr < 0)
		cf_reason(out, "provider refused to execute");
	else
		cf_no_observation(out, attack);
}

/* ---- ipc.host_daemons_denied ------------------------------------------ */

#define DAEMONS_MAX 32

struct daemon_sock {
	char addr[108];          /* a pathname, or "@name" for an abstract socket */
	const char *name;
	char found_by[48];
	dev_t dev;
	ino_t ino;
	const json_t *ctl, *in;  /* borrowed from the payload results */
};

struct daemon_set {
	struct daemon_sock s[DAEMONS_MAX];
	size_t n;
	char *abstract_listening; /* /proc/net/unix's listening abstract names, '\n'-separated */
};

/* Listening abstract sockets of the harness's network namespace, from
 * /proc/net/unix ("Num RefCount Protocol Flags Type St Inode Path";
 * __SO_ACCEPTCON, 0x10000, in Flags marks a listener). */
static char *abstract_listeners(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/net/unix", "re");
	char *list = NULL, line[512];
	size_t len = 0;
	FILE *w = f ? open_memstream(&list, &len) : NULL;
	while (w && fgets(line, sizeof line, f)) {
		unsigned long flags = 0;
		char path[256] = "";
		if (sscanf(line, "%*s %*s %*s %lx %*s %*s %*s %255s", &flags, path) == 2 && path[0] == '@' &&
		    (flags & 0x10000))
			fprintf(w, "%s\n", path);
	}
	if (w)
		fclose(w);   /* list is complete only now */
	return list;
}

static bool listed(const char *list, const char *name)
{
	size_t nl = strlen(name);
	for (const char *p = list; p && *p; p = strchr(p, '\n') + 1)
		if (strncmp(p, name, nl) == 0 && p[nl] == '\n')
			return true;
	return false;
}

/* Adds ADDR when it is a socket on this host (an abstract one: listening
 * in our network namespace), once (pathnames by inode: /var/run is /run). */
static void daemon_add(struct daemon_set *ds, const char *name, const char *found_by, const char *addr)
{
	struct stat st = { 0 };
	if (!addr || !addr[0] || strlen(addr) >= sizeof ds->s[0].addr || ds->n >= DAEMONS_MAX)
		return;
	if (addr[0] == '@' ? !listed(ds->abstract_listening, addr) : stat(addr, &st) < 0 || !S_ISSOCK(st.st_mode))
		return;
	for (size_t i = 0; i < ds->n; i++)
		if (addr[0] == '@' ? strcmp(ds->s[i].addr, addr) == 0
				   : ds->s[i].addr[0] != '@' && ds->s[i].dev == st.st_dev && ds->s[i].ino == st.st_ino)
			return;
	struct daemon_sock *s = &ds->s[ds->n++];
	snprintf(s->addr, sizeof s->addr, "%s", addr);
	snprintf(s->found_by, sizeof s->found_by, "%s", found_by);
	s->name = name;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
}

static void daemon_add_in(struct daemon_set *ds, const char *name, const char *found_by, const char *dir,
			  const char *rel)
{
	_cleanup_free_ char *p = dir && dir[0] == '/' ? agsbx_path_join(dir, rel) : NULL;
	daemon_add(ds, name, found_by, p);
}

/* The per-user daemons under a runtime directory (XDG_RUNTIME_DIR). */
static void daemons_in_runtime_dir(struct daemon_set *ds, const char *dir, const char *how)
{
	const char *wl = getenv("WAYLAND_DISPLAY");
	daemon_add_in(ds, "podman-rootless", how, dir, "podman/podman.sock");
	daemon_add_in(ds, "docker-rootless", how, dir, "docker.sock");
	daemon_add_in(ds, "dbus-session", how, dir, "bus");
	daemon_add_in(ds, "systemd-user-private", how, dir, "systemd/private");
	daemon_add_in(ds, "gpg-agent", how, dir, "gnupg/S.gpg-agent");
	daemon_add_in(ds, "wayland", how, dir, wl && wl[0] && wl[0] != '/' ? wl : "wayland-0");
}

/* "%xx" escapes of a D-Bus address value, decoded in place. */
static void dbus_unescape(char *v)
{
	char *w = v;
	for (char *r = v; *r; r++) {
		unsigned x;
		if (r[0] == '%' && sscanf(r + 1, "%2x", &x) == 1 && r[1] && r[2]) {
			*w++ = (char)x;
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* DBUS_SESSION_BUS_ADDRESS: "unix:path=P,guid=..;unix:abstract=N". */
static void daemons_from_dbus_env(struct daemon_set *ds, const char *value)
{
	_cleanup_free_ char *copy = value ? strdup(value) : NULL;
	for (char *s1 = NULL, *a = copy ? strtok_r(copy, ";", &s1) : NULL; a; a = strtok_r(NULL, ";", &s1)) {
		if (strncmp(a, "unix:", 5) != 0)
			continue;
		for (char *s2 = NULL, *kv = strtok_r(a + 5, ",", &s2); kv; kv = strtok_r(NULL, ",", &s2)) {
			char addr[110];
			bool abs = strncmp(kv, "abstract=", 9) == 0;
			if (!abs && strncmp(kv, "path=", 5) != 0)
				continue;
			dbus_unescape(kv);
			snprintf(addr, sizeof addr, "%s%s", abs ? "@" : "", kv + (abs ? 9 : 5));
			daemon_add(ds, "dbus-session", "$DBUS_SESSION_BUS_ADDRESS", addr);
		}
	}
}

static void daemons_x11(struct daemon_set *ds)
{
	glob_t g = { 0 };
	if (glob("/tmp/.X11-unix/X*", 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++) {
			char abs[128];
			daemon_add(ds, "x11", "conventional path", g.gl_pathv[i]);
			snprintf(abs, sizeof abs, "@%s", g.gl_pathv[i]);
			daemon_add(ds, "x11-abstract", "conventional path", abs);
		}
	globfree(&g);
	/* Abstract X11 sockets exist without the directory (a container's
	 * /tmp may not show it). */
	for (const char *p = ds->abstract_listening; p && *p; p = strchr(p, '\n') + 1) {
		char name[110];
		size_t l = strcspn(p, "\n");
		if (strncmp(p, "@/tmp/.X11-unix/X", 17) == 0 && l < sizeof name) {
			memcpy(name, p, l);
			name[l] = '\0';
			daemon_add(ds, "x11-abstract", "/proc/net/unix", name);
		}
	}
	const char *d = getenv("DISPLAY");
	if (d && d[0] == ':') {
		char p[64];
		snprintf(p, sizeof p, "/tmp/.X11-unix/X%.*s", (int)strspn(d + 1, "0123456789"), d + 1);
		daemon_add(ds, "x11", "$DISPLAY", p);
		snprintf(p, sizeof p, "@/tmp/.X11-unix/X%.*s", (int)strspn(d + 1, "0123456789"), d + 1);
		daemon_add(ds, "x11-abstract", "$DISPLAY", p);
	}
}

/* Every well-known daemon socket present on this host: the conventional
 * system paths, the sandbox user's runtime directory and home, and what
 * the harness's own environment names. */
static void daemons_find(const struct check_env *env, struct daemon_set *ds)
{
	static const struct { const char *name, *path; } sys[] = {
		{ "containerd", "/run/containerd/containerd.sock" }, { "cri-o", "/var/run/crio/crio.sock" },
		{ "podman", "/run/podman/podman.sock" },              { "docker", "/var/run/docker.sock" },
		{ "dbus-system", "/run/dbus/system_bus_socket" },     { "systemd-private", "/run/systemd/private" },
	};
	ds->abstract_listening = abstract_listeners();
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(sys); i++)
		daemon_add(ds, sys[i].name, "conventional path", sys[i].path);
	const char *dh = getenv("DOCKER_HOST");
	if (dh && strncmp(dh, "unix://", 7) == 0)
		daemon_add(ds, "docker", "$DOCKER_HOST", dh + 7);
	daemons_from_dbus_env(ds, getenv("DBUS_SESSION_BUS_ADDRESS"));
	daemon_add(ds, "ssh-agent", "$SSH_AUTH_SOCK", getenv("SSH_AUTH_SOCK"));
	daemons_in_runtime_dir(ds, getenv("XDG_RUNTIME_DIR"), "$XDG_RUNTIME_DIR");
	char rt[64];
	snprintf(rt, sizeof rt, "/run/user/%u", (unsigned)run_uid(env));
	daemons_in_runtime_dir(ds, rt, "conventional path");
	const char *wl = getenv("WAYLAND_DISPLAY");
	if (wl && wl[0] == '/')
		daemon_add(ds, "wayland", "$WAYLAND_DISPLAY", wl);
	struct passwd *pw = getpwuid(run_uid(env));
	if (pw && pw->pw_dir)
		daemon_add_in(ds, "gpg-agent", "conventional path", pw->pw_dir, ".gnupg/S.gpg-agent");
	daemons_x11(ds);
}

/* The payload's per-socket results, matched by address. */
static void daemons_match(struct daemon_set *ds, const json_t *res, bool inside)
{
	size_t i;
	const json_t *v;
	json_array_foreach(sub(res, "sockets"), i, v) {
		const char *p = json_string_value(sub(v, "path"));
		for (size_t j = 0; p && j < ds->n; j++)
			if (strcmp(ds->s[j].addr, p) == 0)
				*(inside ? &ds->s[j].in : &ds->s[j].ctl) = v;
	}
}

/* addresses of the sockets (of ONLY_REACHED: those the control reached). */
static const char **daemon_args(const struct daemon_set *ds, bool only_reached, size_t *n)
{
	const char **a = calloc(ds->n + 2, sizeof *a);
	*n = 0;
	if (!a)
		return NULL;
	a[(*n)++] = "unix-connects";
	for (size_t i = 0; i < ds->n; i++)
		if (!only_reached || cf_result_ok(ds->s[i].ctl))
			a[(*n)++] = ds->s[i].addr;
	return a;
}

static bool shares_net(const struct check_env *env)
{
	const char *n = env->probe->caps.network;
	return !n || strcmp(n, AGSBX_NET_INHERITED) == 0;
}

/* Records every socket; returns how many the control reached and counts
 * (in *bad) the judged ones reached inside. */
static size_t daemons_record(const struct check_env *env, struct check_out *out, const struct daemon_set *ds,
			     size_t *bad, char *detail, size_t cap)
{
	json_t *list = json_array();
	size_t reached = 0;
	*bad = 0;
	for (size_t i = 0; i < ds->n; i++) {
		const struct daemon_sock *s = &ds->s[i];
		bool ctl = cf_result_ok(s->ctl), in = cf_result_ok(s->in);
		/* Abstract sockets belong to the network namespace: a provider
		 * that says it shares the host's (network `inherited`) reaches
		 * them as it reaches loopback, and says so (as in
		 * ipc.host_sockets_denied): recorded, not judged. */
		bool judged = ctl && (s->addr[0] != '@' || !shares_net(env));
		reached += ctl;
		*bad += judged && in;
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s?, s:b}", "daemon", s->name, "address", s->addr,
						      "found_by", s->found_by, "control", ctl ? "connected" : cf_result_errno(s->ctl),
						      "inside", !ctl ? NULL : s->in ? (in ? "CONNECTED" : cf_result_errno(s->in)) : "no result",
						      "judged", judged));
		size_t l = strlen(detail);
		if (ctl && l < cap)
			snprintf(detail + l, cap - l, "%s%s %s: %s%s", l ? "; " : "", s->name, s->addr,
				 s->in ? (in ? "REACHED" : cf_result_errno(s->in)) : "no result",
				 judged ? "" : " (not judged: the host network is shared)");
	}
	json_object_set_new(out->facts, "sockets", list);
	return reached;
}

void check_ipc_host_daemons_denied(const struct check_env *env, struct check_out *out)
{
	struct daemon_set ds = { .n = 0 };
	daemons_find(env, &ds);
	free(ds.abstract_listening);
	if (ds.n == 0) {
		json_object_set_new(out->facts, "sockets", json_array());
		cf_skip(out, "no well-known daemon socket on this host (conventional paths and the harness's environment)");
		return;
	}
	size_t n;
	_cleanup_free_ const char **all = daemon_args(&ds, false, &n);
	json_t *ctl = NULL, *res = NULL;
	if (!all || cf_control_op(env, out, all, &ctl) < 0 || !ctl) {
		cf_skip(out, "control failed: the payload gave no result outside");
		return;
	}
	daemons_match(&ds, ctl, false);
	_cleanup_free_ const char **tried = daemon_args(&ds, true, &n);
	struct agsbx_exec_result xr = { 0 };
	int sr = n > 1 && tried ? cf_sandbox_op(env, out, env->h, NULL, tried, &res, &xr) : 0;
	if (res)
		daemons_match(&ds, res, true);
	size_t bad = 0;
	char detail[400] = "";
	size_t reached = daemons_record(env, out, &ds, &bad, detail, sizeof detail);
	if (reached == 0) {
		agsbx_exec_result_clear(&xr);
		cf_skip(out, "control failed: none of the %zu daemon sockets found is reachable outside as the sandbox user", ds.n);
		return;
	}
	if (!res) {
		no_observation(out, "connect to the daemon sockets", sr);
		agsbx_exec_result_clear(&xr);
		return;
	}
	agsbx_exec_result_clear(&xr);
	out->observed_pass = bad == 0;
	cf_reason(out, "%zu of %zu daemon sockets reachable outside (connect only): %s", reached, ds.n, detail);
}

/* ---- fs.inherited_fds_contained ----------------------------------------- */

/* A read of the canary through a base: "READ" when the secret came back. */
static const char *through(const json_t *entry, const char *secret, bool *read)
{
	const json_t *r = sub(entry, "canary_read");
	const char *c = json_string_value(sub(r, "content"));
	bool got = cf_result_ok(r) && c && strcmp(c, secret) == 0;
	*read |= got;
	return !r ? "not a directory" : got ? "READ" : cf_result_ok(r) ? "another file" : cf_result_errno(r);
}

/* "fd 7 dir /x (O_PATH): READ; cwd /out: ENOENT; ..." into detail;
 * true when any base read the secret. */
static bool fds_summary(const json_t *res, const char *secret, char *detail, size_t cap)
{
	bool read = false;
	size_t i;
	const json_t *v;
	json_array_foreach(sub(res, "descriptors"), i, v) {
		size_t l = strlen(detail);
		const char *how = through(v, secret, &read);
		snprintf(detail + l, cap - l, "%sfd %lld %s %s%s: %s", l ? "; " : "", (long long)json_integer_value(sub(v, "fd")),
			 json_string_value(sub(v, "type")) ?: "?", json_string_value(sub(v, "target")) ?: "(no target)",
			 json_is_true(sub(v, "o_path")) ? " (O_PATH)" : "", how);
	}
	json_array_foreach(sub(res, "bases"), i, v) {
		size_t l = strlen(detail);
		const char *how = through(v, secret, &read);
		snprintf(detail + l, cap - l, "%s%s %s: %s", l ? "; " : "", json_string_value(sub(v, "base")) ?: "?",
			 json_string_value(sub(v, "target")) ?: "(no target)", how);
	}
	return read;
}

void check_fs_inherited_fds_contained(const struct check_env *env, struct check_out *out)
{
	struct agsbx_exec_result xr = { 0 };
	json_t *res = NULL, *ctl = NULL;
	int sr = cf_sandbox_op(env, out, env->h, NULL, ARGS("fds", env->canary_file), &res, &xr);
	bool leaked = sr == 0 && cf_run_output_contains(&xr.run, env->canary_secret);
	cf_control_op(env, out, ARGS("fds", env->canary_file), &ctl);
	char in_detail[300] = "", ctl_detail[300] = "";
	bool read_in = fds_summary(res, env->canary_secret, in_detail, sizeof in_detail);
	bool read_ctl = fds_summary(ctl, env->canary_secret, ctl_detail, sizeof ctl_detail);
	json_object_set_new(out->facts, "canary", json_string(env->canary_file));
	json_object_set_new(out->facts, "descriptors_inside", json_deep_copy(sub(res, "descriptors")) ?: json_null());
	json_object_set_new(out->facts, "bases_inside", json_deep_copy(sub(res, "bases")) ?: json_null());
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	json_object_set_new(out->facts, "control_read", json_boolean(read_ctl));
	if (!res && !leaked) {
		no_observation(out, "list descriptors and read the canary through them", sr);
		agsbx_exec_result_clear(&xr);
		return;
	}
	agsbx_exec_result_clear(&xr);
	if (!read_ctl && !leaked && !read_in) {
		cf_skip(out, "control failed: the canary is not readable outside through cwd or root either [%s]", ctl_detail);
		return;
	}
	out->observed_pass = !read_in && !leaked;
	cf_reason(out, "inside, %lld descriptor(s) beyond 0-2; canary %s through: %s; control read it outside",
		  (long long)json_integer_value(sub(res, "count")), read_in || leaked ? "READ" : "not read", in_detail);
}

/* ---- secrets.keyring_denied ---------------------------------------------- */

/* Permissions (keyutils' names; linux/keyctl.h has none): the default of a
 * user key (possessor everything, owner view) plus owner setattr, so the
 * owner can revoke it without possessing it. */
#define KC_POS_ALL 0x3f000000u
#define KC_USR_VIEW 0x00010000u
#define KC_USR_SETATTR 0x00200000u

/* The keys in a fixed slot (no allocation), so a signal handler can remove
 * them: one in the user keyring, one in the session keyring the sandbox
 * user's processes inherit. */
static struct {
	long serial[2];
	int ring[2];
	long ring_id[2];
	int err[2];
	bool drop;               /* placed and removed as the sandbox user (a root harness with --run-as) */
	uid_t uid;
	gid_t gid;
	volatile sig_atomic_t armed;
} kc;
static pthread_mutex_t kc_lock = PTHREAD_MUTEX_INITIALIZER;

static long kctl(long op, long a, long b)
{
	return syscall(SYS_keyctl, op, a, b, 0L, 0L);
}

/* Raw system calls only: runs in a forked child or a signal handler. */
static bool kc_drop(void)
{
	return syscall(SYS_setgroups, 0, NULL) == 0 && syscall(SYS_setresgid, kc.gid, kc.gid, kc.gid) == 0 &&
	       syscall(SYS_setresuid, kc.uid, kc.uid, kc.uid) == 0;
}

static void kc_place(const char *desc, const char *secret, long ttl_s)
{
	long ses = kctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
	long uses = kctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_SESSION_KEYRING, 0);
	/* Without a session keyring of its own a process falls back to the
	 * user-session keyring; adding to "the session keyring" would create
	 * a new one for this process alone. */
	kc.ring[0] = KEY_SPEC_USER_KEYRING;
	kc.ring[1] = ses >= 0 && ses != uses ? KEY_SPEC_SESSION_KEYRING : KEY_SPEC_USER_SESSION_KEYRING;
	for (int i = 0; i < 2; i++) {
		kc.ring_id[i] = kctl(KEYCTL_GET_KEYRING_ID, kc.ring[i], 0);
		kc.serial[i] = syscall(SYS_add_key, "user", desc, secret, strlen(secret), kc.ring[i]);
		kc.err[i] = kc.serial[i] < 0 ? errno : 0;
		if (kc.serial[i] < 0)
			continue;
		kctl(KEYCTL_SETPERM, kc.serial[i], (long)(KC_POS_ALL | KC_USR_VIEW | KC_USR_SETATTR));
		/* Gone by itself even if the harness is SIGKILLed. */
		kctl(KEYCTL_SET_TIMEOUT, kc.serial[i], ttl_s);
	}
}

static void kc_unplace(void)
{
	for (int i = 0; i < 2; i++)
		if (kc.serial[i] > 0) {
			kctl(KEYCTL_REVOKE, kc.serial[i], 0);
			kctl(KEYCTL_UNLINK, kc.serial[i], kc.ring[i]);
		}
}

/* Async-signal-safe: the CLI's signal handlers call it too. */
void agsbx_conformance_remove_keyring_canary(void)
{
	if (!kc.armed)
		return;
	kc.armed = 0;
	if (!kc.drop) {
		kc_unplace();
		return;
	}
	/* A raw clone: no atfork handlers in a signal handler. */
	long pid = syscall(SYS_clone, SIGCHLD, 0L, 0L, 0L, 0L);
	if (pid == 0) {
		if (kc_drop())
			kc_unplace();
		syscall(SYS_exit_group, 0);
	}
	while (pid > 0 && waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* Places the keys as the sandbox user: in a child that drops to it when
 * the harness is another user (root with --run-as), else here. */
static int kc_place_as_user(const char *desc, const char *secret, long ttl_s)
{
	if (!kc.drop) {
		kc_place(desc, secret, ttl_s);
		return 0;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = agsbx_runner_fork_registered();
	if (pid == 0) {
		close(p[0]);
		if (kc_drop())
			kc_place(desc, secret, ttl_s);
		else
			kc.err[0] = kc.err[1] = errno;
		(void)!write(p[1], &kc, sizeof kc);
		_exit(0);
	}
	int e = errno;
	close(p[1]);
	ssize_t r = -1;
	if (pid > 0)
		while ((r = read(p[0], &kc, sizeof kc)) < 0 && errno == EINTR)
			;
	close(p[0]);
	if (pid > 0) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		agsbx_runner_unregister_child(pid);
	}
	return pid < 0 ? -e : r == (ssize_t)sizeof kc ? 0 : -EIO;
}

static json_t *kc_facts(void)
{
	json_t *a = json_array();
	for (int i = 0; i < 2; i++)
		json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:s?}", "keyring",
						   kc.ring[i] == KEY_SPEC_USER_KEYRING ? "user"
						   : kc.ring[i] == KEY_SPEC_SESSION_KEYRING ? "session" : "user_session",
						   "keyring_id", (json_int_t)kc.ring_id[i], "serial", (json_int_t)kc.serial[i],
						   "error", kc.err[i] ? strerror(kc.err[i]) : NULL));
	return a;
}

/* Where the secret came back in a keyring result: "user ENOKEY, session
 * READ, ..." into detail; true when any read returned it. */
static bool kc_summary(const json_t *res, const char *secret, char *detail, size_t cap)
{
	bool got = false;
	size_t i;
	const json_t *v;
	json_array_foreach(sub(res, "searches"), i, v) {
		const char *c = json_string_value(sub(v, "content"));
		bool r = cf_result_ok(v) && c && strcmp(c, secret) == 0;
		got |= r;
		size_t l = strlen(detail);
		snprintf(detail + l, cap - l, "%s%s keyring %s", l ? ", " : "", json_string_value(sub(v, "keyring")) ?: "?",
			 r ? "READ" : cf_result_errno(v));
	}
	const json_t *b = sub(res, "by_serial");
	const char *c = json_string_value(sub(b, "content"));
	bool r = cf_result_ok(b) && c && strcmp(c, secret) == 0;
	size_t l = strlen(detail);
	snprintf(detail + l, cap - l, "%sby serial %s", l ? ", " : "", r ? "READ" : cf_result_errno(b));
	return got || r;
}

void check_secrets_keyring_denied(const struct check_env *env, struct check_out *out)
{
	char n[33], desc[64], serial[24];
	agsbx_random_hex(n, 16);
	_cleanup_free_ char *secret = malloc(33);
	if (!secret)
		return;
	agsbx_random_hex(secret, 16);
	snprintf(desc, sizeof desc, "agsbx-canary-%.16s", n);
	long ttl = 60 + 3 * (env->o->timeout_ms > 0 ? env->o->timeout_ms / 1000 : 20);
	pthread_mutex_lock(&kc_lock);
	memset(&kc, 0, sizeof kc);
	kc.drop = env->ctx->run_as && env->ctx->run_uid != geteuid();
	kc.uid = run_uid(env);
	kc.gid = env->ctx->run_as ? env->ctx->run_gid : getgid();
	int pr = kc_place_as_user(desc, secret, ttl);
	kc.armed = 1;
	snprintf(serial, sizeof serial, "%ld", kc.serial[0] > 0 ? kc.serial[0] : kc.serial[1] > 0 ? kc.serial[1] : 0);
	json_t *res = NULL, *ctl = NULL;
	struct agsbx_exec_result xr = { 0 };
	int sr = pr == 0 && (kc.serial[0] > 0 || kc.serial[1] > 0)
		 ? cf_sandbox_op(env, out, env->h, NULL, ARGS("keyring", desc, serial), &res, &xr) : 0;
	if (sr == 0 && (kc.serial[0] > 0 || kc.serial[1] > 0))
		cf_control_op(env, out, ARGS("keyring", desc, serial), &ctl);
	json_object_set_new(out->facts, "keys", kc_facts());
	agsbx_conformance_remove_keyring_canary();
	pthread_mutex_unlock(&kc_lock);
	json_object_set_new(out->facts, "description", json_string(desc));
	json_object_set_new(out->facts, "placed_as_uid", json_integer(kc.uid));
	bool leaked = sr == 0 && cf_run_output_contains(&xr.run, secret);
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	if (pr < 0 || (kc.serial[0] <= 0 && kc.serial[1] <= 0)) {
		agsbx_exec_result_clear(&xr);
		cf_skip(out, "cannot place a key in the sandbox user's keyrings: %s",
			strerror(pr < 0 ? -pr : kc.err[0] ? kc.err[0] : EIO));
		return;
	}
	if (!res && !leaked) {
		no_observation(out, "search and read the key", sr);
		agsbx_exec_result_clear(&xr);
		return;
	}
	agsbx_exec_result_clear(&xr);
	char in[200] = "", outside[200] = "";
	bool got_in = kc_summary(res, secret, in, sizeof in) || leaked;
	if (!kc_summary(ctl, secret, outside, sizeof outside) && !got_in) {
		cf_skip(out, "control failed: the key is not readable outside as the same user either (%s)", outside);
		return;
	}
	out->observed_pass = !got_in;
	cf_reason(out, "a user key in the sandbox user's user and %s keyrings: inside %s; control read it outside",
		  kc.ring[1] == KEY_SPEC_SESSION_KEYRING ? "session" : "user-session", in);
}
