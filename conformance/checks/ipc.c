/* Host sockets: the harness's own unix listeners and the well-known daemon
 * sockets, connected to but never sent a byte. */
#include "conformance/checks/attack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glob.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/dockerhost.h"
#include "base/util.h"

/* ---- ipc.host_sockets_denied -------------------------------------------- */

static int unix_listener(const char *path, bool abstract)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(path);
	if (n >= sizeof a.sun_path) {
		close(fd);
		return -ENAMETOOLONG;
	}
	memcpy(a.sun_path, path, n);
	if (abstract)
		a.sun_path[0] = '\0';
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 0 : 1));
	if (bind(fd, (struct sockaddr *)&a, len) < 0 || listen(fd, 16) < 0 || (!abstract && chmod(path, 0777) < 0)) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

/* Connections the listener received (drained). */

struct ipc_target {
	const char *name, *addr;
	int lfd;                  /* -1: not ours (the Docker socket) */
	json_t *in, *ctl;
	int reached, ctl_reached;
	bool refused;             /* the provider refused the sandboxed connect */
};

/* A unix stream connect() is queued on the listener before it returns,
 * so what the sandbox reached is already there; the control's own
 * connection is then awaited on the listener (host-side receipt, not
 * only the payload's word). */

static void ipc_try(const struct check_env *env, struct check_out *out, struct ipc_target *t)
{
	t->refused = cf_sandbox_op(env, out, env->h, NULL, ARGS("unix-connect", t->addr), &t->in, NULL) < 0;
	t->reached = t->lfd >= 0 ? cf_accepted(t->lfd) : 0;
	cf_control_op(env, out, ARGS("unix-connect", t->addr), &t->ctl);
	if (t->lfd >= 0 && cf_result_ok(t->ctl) && cf_wait_readable(t->lfd, cf_control_deadline(env)))
		t->ctl_reached = cf_accepted(t->lfd);
}

/* The control counts when it connected and (for our listeners) the
 * listener received it. */
static bool ipc_control_ok(const struct ipc_target *t)
{
	return cf_result_ok(t->ctl) && (t->lfd < 0 || t->ctl_reached > 0);
}

static void ipc_record(struct check_out *out, const struct ipc_target *t, bool denied, bool no_res, bool ctl_ok,
		       bool judged, char *detail, size_t size)
{
	json_object_set_new(out->facts, t->name,
			    json_pack("{s:s, s:b, s:s, s:b, s:s, s:i, s:i, s:b}", "address", t->addr, "denied_inside", denied,
				      "errno_inside", cf_result_errno(t->in), "control_ok", ctl_ok, "errno_control",
				      cf_result_errno(t->ctl), "listener_accepted", t->reached, "control_accepted",
				      t->ctl_reached, "judged", judged));
	size_t l = strlen(detail);
	snprintf(detail + l, size - l, "%s%s %s (%s, control %s%s)", l ? "; " : "", t->name,
		 denied ? "denied" : no_res ? "no payload result" : "REACHED",
		 cf_result_ok(t->in) ? "connected" : cf_result_errno(t->in), ctl_ok ? "ok" : cf_result_errno(t->ctl),
		 judged ? "" : "; not judged: the host network is shared");
}

static void check_ipc_host_sockets_denied(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = cf_nonce(), *dir = NULL, *path = NULL, *abs = NULL;
	if (!n || asprintf(&dir, "%s/ipc-%.8s", env->o->work_dir, n) < 0 || asprintf(&path, "%s/s", dir) < 0 ||
	    asprintf(&abs, "@agsbx-%s", n) < 0 || mkdir(dir, 0755) < 0)
		return;
	_cleanup_close_ int pfd = unix_listener(path, false);
	_cleanup_close_ int afd = unix_listener(abs, true);
	struct stat st;
	bool docker = stat(AGSBX_DOCKER_DEFAULT_SOCKET, &st) == 0 && S_ISSOCK(st.st_mode);
	struct ipc_target t[3] = {
		{ .name = "pathname", .addr = path, .lfd = pfd },
		{ .name = "abstract", .addr = abs, .lfd = afd },
		{ .name = "docker", .addr = AGSBX_DOCKER_DEFAULT_SOCKET, .lfd = -1 },
	};
	size_t nt = docker ? 3 : 2;
	bool pass = pfd >= 0 && afd >= 0, any_ctl = false, unobserved = false, reached_any = false, refused = false;
	char detail[400] = "";
	for (size_t i = 0; i < nt && pfd >= 0 && afd >= 0; i++) {
		ipc_try(env, out, &t[i]);
		bool ctl_ok = ipc_control_ok(&t[i]);
		any_ctl |= ctl_ok;
		bool denied = t[i].in && !cf_result_ok(t[i].in) && t[i].reached == 0;
		/* The Docker socket counts only where the same user can reach it
		 * outside. Abstract sockets live in the network namespace: a
		 * provider that shares the host network (claim `inherited`)
		 * reaches them as it reaches loopback TCP, and says so; there
		 * the result is recorded, not judged. */
		bool judged = t[i].lfd >= 0 ? (strcmp(t[i].name, "abstract") != 0 || !cf_shares_net(env)) : ctl_ok;
		bool no_res = !t[i].in && t[i].reached == 0;
		if (judged) {
			pass &= denied;
			unobserved |= no_res;
			refused |= t[i].refused;
			reached_any |= !denied && !no_res;
		}
		ipc_record(out, &t[i], denied, no_res, ctl_ok, judged, detail, sizeof detail);
	}
	unlink(path);
	rmdir(dir);
	if (pfd < 0 || afd < 0) {
		cf_skip(out, "cannot open the harness listeners: %s", strerror(-(pfd < 0 ? pfd : afd)));
		return;
	}
	if (!ipc_control_ok(&t[0]) || !ipc_control_ok(&t[1])) {
		cf_control_skip(out, "the harness listeners are not reachable", !ipc_control_ok(&t[0]) ? t[0].ctl : t[1].ctl);
		return;
	}
	/* A refused connect is a failure like every refused execution, not
	 * a missing observation. */
	if (unobserved && !reached_any) {
		cf_refused_or_unobserved(out, "connect to host unix sockets", refused ? -EIO : 0);
		return;
	}
	out->observed_pass = pass && any_ctl;
	cf_reason(out, "%s", detail);
}

/* ---- ipc.host_daemons_denied -------------------------------------------- */

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
		{ "podman", "/run/podman/podman.sock" },              { "docker", AGSBX_DOCKER_DEFAULT_SOCKET },
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
	snprintf(rt, sizeof rt, "/run/user/%u", (unsigned)cf_run_uid(env));
	daemons_in_runtime_dir(ds, rt, "conventional path");
	const char *wl = getenv("WAYLAND_DISPLAY");
	if (wl && wl[0] == '/')
		daemon_add(ds, "wayland", "$WAYLAND_DISPLAY", wl);
	struct passwd *pw = getpwuid(cf_run_uid(env));
	if (pw && pw->pw_dir)
		daemon_add_in(ds, "gpg-agent", "conventional path", pw->pw_dir, ".gnupg/S.gpg-agent");
	daemons_x11(ds);
}

/* The payload's per-socket results, matched by address. */
static void daemons_match(struct daemon_set *ds, const json_t *res, bool inside)
{
	size_t i;
	const json_t *v;
	json_array_foreach(cf_sub(res, "sockets"), i, v) {
		const char *p = json_string_value(cf_sub(v, "path"));
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
		bool judged = ctl && (s->addr[0] != '@' || !cf_shares_net(env));
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

static void check_ipc_host_daemons_denied(const struct check_env *env, struct check_out *out)
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
		cf_refused_or_unobserved(out, "connect to the daemon sockets", sr);
		agsbx_exec_result_clear(&xr);
		return;
	}
	agsbx_exec_result_clear(&xr);
	out->observed_pass = bad == 0;
	cf_reason(out, "%zu of %zu daemon sockets reachable outside (connect only): %s", reached, ds.n, detail);
}

const struct check_def cf_checks_ipc[] = {
	{ .id = "ipc.host_daemons_denied", .axis = AGSBX_AXIS_PROCESS, .evidence = CHECK_REFUTES, .run = check_ipc_host_daemons_denied, .needs_handle = true,
	  .title = "well-known daemon sockets the sandbox user reaches outside are unreachable inside (connect only)",
	  .attacks = "connects (never sends) to the well-known daemon sockets: containerd, podman, Docker, D-Bus, systemd, ssh-agent, gpg-agent, X11, Wayland",
	  .why = "a daemon's socket runs code or writes files outside any filesystem sandbox",
	  .control = "each socket is reached outside as the sandbox user",
	  .negative = { { "tests/cli/escape-ipc.sh", "neg_overclaim" } } },
	{ .id = "ipc.host_sockets_denied", .axis = AGSBX_AXIS_PROCESS, .evidence = CHECK_REFUTES, .run = check_ipc_host_sockets_denied, .needs_handle = true,
	  .title = "host pathname and abstract unix sockets (and Docker's) are unreachable (control: reachable outside)",
	  .attacks = "connects to a harness pathname and abstract unix socket, and Docker's (never a request)",
	  .why = "a host daemon's socket is a way out of any filesystem sandbox",
	  .control = "the listeners receive the same connect outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_silent_refusal" } } },
};
const size_t cf_checks_ipc_count = AGSBX_ARRAY_SIZE(cf_checks_ipc);
