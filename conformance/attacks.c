/* Catalogue v2: the attacks peers run that the first catalogue did not
 * (credentials under $HOME, host sockets, ptrace, UDP and IPv6 egress,
 * hard-link aliases, residue, exit-status fidelity, the TOCTOU guard,
 * unknown config, io_uring). Each denial is paired with a control run
 * outside or a host-side postcondition; a control that fails makes the
 * check a `skip` with the reason, never a pass. */
#include "conformance/internal.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fsat.h"
#include "base/rundir.h"
#include "base/util.h"

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static char *nonce(void)
{
	char *n = malloc(33);
	if (n)
		agsbx_random_hex(n, 16);
	return n;
}

static uid_t run_uid(const struct check_env *env)
{
	return env->ctx->run_as ? env->ctx->run_uid : getuid();
}

static gid_t run_gid(const struct check_env *env)
{
	return env->ctx->run_as ? env->ctx->run_gid : getgid();
}

static void control_skip(struct check_out *out, const char *what, const json_t *ctl)
{
	cf_skip(out, "control failed: %s outside the sandbox too (%s); nothing to compare", what,
		   cf_result_errno(ctl));
}

static const json_t *sub(const json_t *res, const char *k)
{
	return json_object_get(res, k);
}

/* ---- interrupt-safe clean-up of the $HOME canary ----------------------- */

/* The canary sits in the user's real home: whatever happens it must go.
 * A fixed slot (no allocation) so a signal handler can remove it. The home
 * is the user's: its canary directory is handled through fds (home, dir)
 * only, so a directory swapped for a link never redirects root. */
static struct {
	char file[4096], dir[4096];
	int home_fd, dir_fd;
	volatile sig_atomic_t armed;
} home_canary = { .home_fd = -1, .dir_fd = -1 };

#define CANARY_KEY "id_key"

void agsbx_conformance_remove_canaries(void)
{
	if (!home_canary.armed)
		return;
	if (home_canary.dir_fd >= 0)
		unlinkat(home_canary.dir_fd, CANARY_KEY, 0);
	if (home_canary.home_fd >= 0)
		unlinkat(home_canary.home_fd, strrchr(home_canary.dir, '/') + 1, AT_REMOVEDIR);
	close(home_canary.dir_fd);
	close(home_canary.home_fd);
	home_canary.dir_fd = home_canary.home_fd = -1;
	home_canary.armed = 0;
}

/* The real home: the password database's, where ~/.ssh lives, even when
 * $HOME was pointed elsewhere (test harnesses often do). */
static const char *home_of(const struct check_env *env)
{
	struct passwd *pw = getpwuid(run_uid(env));
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/' && pw->pw_dir[1])
		return pw->pw_dir;
	const char *h = env->ctx->run_as ? NULL : getenv("HOME");
	return h && h[0] == '/' ? h : NULL;
}

/* The home canary is one at a time (it lives in a static slot). */
static pthread_mutex_t home_lock = PTHREAD_MUTEX_INITIALIZER;

/* mkdir as root in the user's home, then everything through fds: the
 * directory is checked to be one of ours (the user cannot make one) before the
 * key is created in it and both are handed to the user. */
static int home_canary_create(const struct check_env *env, const char *home, const char *secret)
{
	char n[17];
	agsbx_random_hex(n, 8);
	if (snprintf(home_canary.dir, sizeof home_canary.dir, "%s/.agsbx-canary-%s", home, n) >= (int)sizeof home_canary.dir ||
	    snprintf(home_canary.file, sizeof home_canary.file, "%s/" CANARY_KEY, home_canary.dir) >= (int)sizeof home_canary.file)
		return -ENAMETOOLONG;
	/* Listed before it exists: `cleanup` removes a killed run's. */
	int nr = agsbx_rundir_note_canary(home_canary.dir);
	if (nr < 0)
		return nr;
	const char *name = strrchr(home_canary.dir, '/') + 1;
	home_canary.home_fd = agsbx_dir_open(home);
	if (home_canary.home_fd < 0)
		return home_canary.home_fd;
	if (mkdirat(home_canary.home_fd, name, 0700) < 0) {
		int e = -errno;
		close(TAKE_FD(home_canary.home_fd));
		return e;
	}
	home_canary.armed = 1;
	home_canary.dir_fd = agsbx_dir_open_at(home_canary.home_fd, name);
	struct stat st;
	if (home_canary.dir_fd < 0 || fstat(home_canary.dir_fd, &st) < 0)
		return home_canary.dir_fd < 0 ? home_canary.dir_fd : -errno;
	if (st.st_uid != geteuid())
		return -EPERM; /* not the directory just made: the user swapped it */
	uid_t uid = env->ctx->run_as ? run_uid(env) : (uid_t)-1;
	int r = agsbx_create_file_at(home_canary.dir_fd, CANARY_KEY, secret, strlen(secret), 0600, uid, run_gid(env));
	if (r == 0 && env->ctx->run_as && fchown(home_canary.dir_fd, run_uid(env), run_gid(env)) < 0)
		r = -errno;
	return r;
}

/* Denied only when open(2), openat2 and io_uring were all refused. */
static void home_judge(struct check_out *out, const json_t *res, bool leaked, int alt_r, const char *alt)
{
	bool direct = res && !cf_result_ok(res) && !leaked;
	if (!res && !leaked && alt_r != 1) {
		cf_no_observation(out, "read of a 0600 key in a dot-directory of the real $HOME");
		return;
	}
	if (direct && alt_r < 0) {
		cf_no_observation(out, "read of a 0600 key in the real $HOME through openat2 and io_uring");
		return;
	}
	out->observed_pass = direct && alt_r == 0;
	cf_reason(out, "read of a 0600 key in a dot-directory of the real $HOME: %s inside (open %s) [%s]; control read ok",
		  out->observed_pass ? "denied" : "ALLOWED", direct ? cf_result_errno(res) : "ALLOWED", alt);
}

void check_secrets_home_denied(const struct check_env *env, struct check_out *out)
{
	const char *home = home_of(env);
	struct stat st;
	if (!home || stat(home, &st) < 0 || !S_ISDIR(st.st_mode)) {
		cf_skip(out, "the sandbox user has no home directory on this host (%s)", home ? home : "none");
		return;
	}
	_cleanup_free_ char *secret = nonce();
	if (!secret)
		return;
	pthread_mutex_lock(&home_lock);
	int r = home_canary_create(env, home, secret);
	if (r < 0) {
		agsbx_conformance_remove_canaries();
		pthread_mutex_unlock(&home_lock);
		cf_skip(out, "cannot place a canary in %s: %s", home, strerror(-r));
		return;
	}
	struct agsbx_exec_result xr = { 0 };
	json_t *res = NULL, *ctl = NULL;
	int sr = cf_sandbox_op(env, out, env->h, NULL, ARGS("read", home_canary.file), &res, &xr);
	bool leaked = sr == 0 && cf_run_output_contains(&xr.run, secret);
	agsbx_exec_result_clear(&xr);
	char alt[128] = "";
	int alt_r = sr == 0 ? cf_read_alternates(env, out, home_canary.file, secret, alt, sizeof alt) : -1;
	cf_control_op(env, out, ARGS("read", home_canary.file), &ctl);
	json_object_set_new(out->facts, "canary", json_string(home_canary.file));
	agsbx_conformance_remove_canaries();
	pthread_mutex_unlock(&home_lock);
	json_object_set_new(out->facts, "canary_removed", json_boolean(access(home_canary.file, F_OK) < 0));
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	if (sr < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (!cf_result_ok(ctl) || !json_is_string(sub(ctl, "content")) || strcmp(json_string_value(sub(ctl, "content")), secret) != 0) {
		control_skip(out, "the home canary is not readable", ctl);
		return;
	}
	home_judge(out, res, leaked, alt_r, alt);
}

/* ---- privilege ------------------------------------------------------------ */

static bool hex_zero(const json_t *v)
{
	const char *s = json_string_value(v);
	return s && s[strspn(s, "0")] == '\0';
}

/* A setuid-root program on the host that blocks on stdin (su waits for a
 * password), so its credentials can be read while it runs. */
static const char *setuid_program(void)
{
	static const char *const cands[] = { "/usr/bin/su", "/bin/su" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(cands); i++) {
		struct stat st;
		if (stat(cands[i], &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_ISUID) && st.st_uid == 0)
			return cands[i];
	}
	return NULL;
}

/* A gain is a change of credentials the exec caused: euid 0 after it
 * where the payload (its parent, the credentials before) was not euid 0,
 * both in the sandbox's user namespace. Root before the exec gains no
 * uid; what it holds is judged by the capability sets. Unobserved counts
 * as a gain from a non-root payload, unless NoNewPrivs is set: then the
 * kernel does not honour the setuid bit at all (prctl(2)). */
static bool setuid_gain(const json_t *caps, const json_t *setuid)
{
	const json_t *before = sub(caps, "euid"), *after = sub(setuid, "euid");
	if (json_is_integer(before) && json_integer_value(before) == 0)
		return false;
	if (json_is_integer(after))
		return json_integer_value(after) == 0;
	return json_integer_value(sub(caps, "no_new_privs")) != 1;
}

void check_priv_capabilities_dropped(const struct check_env *env, struct check_out *out)
{
	const char *su = setuid_program();
	json_t *res, *ctl = NULL;
	if (cf_sandbox_op(env, out, env->h, NULL, su ? ARGS("caps", su) : ARGS("caps"), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (su)
		cf_control_op(env, out, ARGS("caps", su), &ctl);
	/* Ambient is a subset of permitted (capabilities(7)): where /proc does
	 * not show CapAmb (gVisor), an empty CapPrm implies an empty CapAmb. */
	bool amb = hex_zero(sub(res, "cap_amb")) || (json_is_null(sub(res, "cap_amb")) && hex_zero(sub(res, "cap_prm")));
	bool sets = hex_zero(sub(res, "cap_eff")) && hex_zero(sub(res, "cap_prm")) && amb;
	bool nnp = json_integer_value(sub(res, "no_new_privs")) == 1;
	bool bnd = hex_zero(sub(res, "cap_bnd")) || nnp;
	const json_t *s_in = sub(res, "setuid"), *s_out = sub(ctl, "setuid");
	bool ctl_gains = setuid_gain(ctl, s_out);
	bool ran_inside = cf_result_ok(s_in);
	bool gained = ran_inside && setuid_gain(res, s_in);
	json_int_t before = json_is_integer(sub(res, "euid")) ? json_integer_value(sub(res, "euid")) : -1;
	json_object_set_new(out->facts, "setuid_program", su ? json_string(su) : json_null());
	json_object_set_new(out->facts, "setuid_gains_outside", json_boolean(ctl_gains));
	json_object_set_new(out->facts, "setuid_gains_inside", json_boolean(gained));
	json_object_set_new(out->facts, "euid_before_exec_inside", before >= 0 ? json_integer(before) : json_null());
	if (!res) {
		cf_no_observation(out, "capability sets and a setuid-root exec");
		return;
	}
	if (!json_is_string(sub(res, "cap_eff"))) {
		cf_reason(out, "the payload reported no capability sets");
		return;
	}
	out->observed_pass = sets && bnd && (!ctl_gains || !gained);
	char how[96];
	if (!su || !ran_inside)
		snprintf(how, sizeof how, "%s", !su ? "not tried" : "not executable inside");
	else if (gained)
		snprintf(how, sizeof how, "the exec RAISED euid %lld to 0 inside", (long long)before);
	else
		snprintf(how, sizeof how, "no credential change inside (euid %lld before the exec)", (long long)before);
	cf_reason(out, "inside CapEff %s CapPrm %s CapAmb %s CapBnd %s NoNewPrivs %d; setuid-root %s: %s%s",
		  json_string_value(sub(res, "cap_eff")), json_string_value(sub(res, "cap_prm")) ?: "?",
		  json_string_value(sub(res, "cap_amb")) ?: "(not shown; empty as CapPrm is)", json_string_value(sub(res, "cap_bnd")) ?: "?",
		  (int)json_integer_value(sub(res, "no_new_privs")), su ? su : "(none on host)", how,
		  su && !ctl_gains ? " (control: no gain outside either, so that part shows nothing)" : "");
}

/* ---- processes ------------------------------------------------------------- */

static void stop_target(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	agsbx_runner_unregister_child(pid);
}

/* A process outside any sandbox, of the sandbox's user, holding a secret in
 * its environment: the target of the ptrace attempts. Returns once the
 * target has exec'd (its environ is the payload's, not a copy of ours):
 * the close-on-exec end of a pipe reports that, however slow the machine
 * is — no polling with a time bound. */
static pid_t start_target(const struct check_env *env, const char *marker, const char *secret)
{
	_cleanup_free_ char *envvar = NULL;
	if (asprintf(&envvar, "AGSBX_PTRACE_CANARY=%s", secret) < 0)
		return -ENOMEM;
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	pid_t parent = getpid();
	/* Registered from the start: a concurrent run's sweep would otherwise
	 * take the new-session target for an orphan of its own and kill it. */
	pid_t pid = agsbx_runner_fork_registered();
	if (pid == 0) {
		close(ready[0]);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		(void)setsid();
		if (env->ctx->run_as && (setgroups(0, NULL) < 0 || setgid(env->ctx->run_gid) < 0 || setuid(env->ctx->run_uid) < 0))
			_exit(126);
		/* The target dies with the harness even when the harness is
		 * SIGKILLed (it is setsid'd, outside every sandbox's tree). Set
		 * after the credential change, which would clear it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(0);
		char *argv[] = { (char *)env->ctx->payload_path, (char *)"linger", (char *)marker, NULL };
		char *envp[] = { envvar, NULL };
		execve(env->ctx->payload_path, argv, envp);
		int e = errno;
		(void)!write(ready[1], &e, sizeof e);
		_exit(127);
	}
	int fe = errno;
	close(ready[1]);
	if (pid < 0) {
		close(ready[0]);
		return -fe;
	}
	int e = 0;
	ssize_t r;
	while ((r = read(ready[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (r != 0) { /* exec failed (or the child died before it) */
		stop_target(pid);
		return r == (ssize_t)sizeof e && e > 0 ? -e : -ECHILD;
	}
	return pid;
}

static const char *denial(const json_t *o)
{
	return cf_result_ok(o) ? "ALLOWED" : cf_result_errno(o);
}

void check_proc_ptrace_denied(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = nonce(), *secret = nonce(), *marker = NULL;
	if (!n || !secret || asprintf(&marker, "agsbx-ptrace-target-%s", n) < 0)
		return;
	pid_t pid = start_target(env, marker, secret);
	if (pid < 0) {
		cf_skip(out, "cannot start the target process: %s", strerror(-pid));
		return;
	}
	char ps[16];
	snprintf(ps, sizeof ps, "%d", (int)pid);
	struct agsbx_exec_result xr = { 0 };
	json_t *res, *ctl;
	int sr = cf_sandbox_op(env, out, env->h, NULL, ARGS("ptrace", ps), &res, &xr);
	bool leaked = sr == 0 && cf_run_output_contains(&xr.run, secret);
	agsbx_exec_result_clear(&xr);
	cf_control_op(env, out, ARGS("ptrace", ps), &ctl);
	stop_target(pid);
	json_object_set_new(out->facts, "target_pid", json_integer(pid));
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	if (sr < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	const json_t *ce = sub(ctl, "environ");
	if (!cf_result_ok(ce) || !strstr(json_string_value(sub(ce, "content")) ?: "", secret)) {
		control_skip(out, "/proc/PID/environ of the target is not readable", ce);
		return;
	}
	if (!res && !leaked) {
		cf_no_observation(out, "ptrace of a process outside");
		return;
	}
	out->observed_pass = res && !cf_result_ok(res) && !leaked;
	cf_reason(out, "against pid %d outside: ptrace %s, process_vm_readv %s, /proc/PID/mem %s, "
			  "/proc/PID/environ %s; control read its environ outside",
		     (int)pid, denial(sub(res, "attach")), denial(sub(res, "vm_readv")), denial(sub(res, "mem")),
		     denial(sub(res, "environ")));
}

/* ---- IPC -------------------------------------------------------------------- */

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
static int accepted(int lfd)
{
	int n = 0;
	for (int fd; (fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0; n++)
		close(fd);
	return n;
}

/* Waits until FD is readable (a queued connection or datagram), at most
 * until DEADLINE_US. Loopback delivery can lag the sender's return: the
 * final ACK of a TCP handshake and a UDP datagram are handed to the
 * receive path by softirq, which a loaded machine defers to ksoftirqd.
 * So a control's arrival is awaited, not assumed after a fixed pause;
 * the deadline (the per-execution timeout) only bounds a control that
 * never arrives. */
static bool wait_readable(int fd, uint64_t deadline_us)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	for (;;) {
		uint64_t now = agsbx_now_us();
		if (now >= deadline_us)
			return false;
		uint64_t ms = (deadline_us - now + 999) / 1000;
		int r = poll(&p, 1, ms > 60000 ? 60000 : (int)ms);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
	}
}

static uint64_t control_deadline(const struct check_env *env)
{
	int64_t ms = env->o->timeout_ms > 0 ? env->o->timeout_ms : 20000;
	return agsbx_now_us() + (uint64_t)ms * 1000u;
}

struct ipc_target {
	const char *name, *addr;
	int lfd;                  /* -1: not ours (the Docker socket) */
	json_t *in, *ctl;
	int reached, ctl_reached;
};

/* A unix stream connect() is queued on the listener before it returns,
 * so what the sandbox reached is already there; the control's own
 * connection is then awaited on the listener (host-side receipt, not
 * only the payload's word). */
static void ipc_try(const struct check_env *env, struct check_out *out, struct ipc_target *t)
{
	cf_sandbox_op(env, out, env->h, NULL, ARGS("unix-connect", t->addr), &t->in, NULL);
	t->reached = t->lfd >= 0 ? accepted(t->lfd) : 0;
	cf_control_op(env, out, ARGS("unix-connect", t->addr), &t->ctl);
	if (t->lfd >= 0 && cf_result_ok(t->ctl) && wait_readable(t->lfd, control_deadline(env)))
		t->ctl_reached = accepted(t->lfd);
}

/* The control counts when it connected and (for our listeners) the
 * listener received it. */
static bool ipc_control_ok(const struct ipc_target *t)
{
	return cf_result_ok(t->ctl) && (t->lfd < 0 || t->ctl_reached > 0);
}

static bool shares_net(const struct check_env *env)
{
	const char *n = env->probe->caps.network;
	return !n || strcmp(n, AGSBX_NET_INHERITED) == 0;
}

/* One target's facts and its part of the reason. */
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

void check_ipc_host_sockets_denied(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = nonce(), *dir = NULL, *path = NULL, *abs = NULL;
	if (!n || asprintf(&dir, "%s/ipc-%.8s", env->o->work_dir, n) < 0 || asprintf(&path, "%s/s", dir) < 0 ||
	    asprintf(&abs, "@agsbx-%s", n) < 0 || mkdir(dir, 0755) < 0)
		return;
	_cleanup_close_ int pfd = unix_listener(path, false);
	_cleanup_close_ int afd = unix_listener(abs, true);
	struct stat st;
	bool docker = stat("/var/run/docker.sock", &st) == 0 && S_ISSOCK(st.st_mode);
	struct ipc_target t[3] = {
		{ .name = "pathname", .addr = path, .lfd = pfd },
		{ .name = "abstract", .addr = abs, .lfd = afd },
		{ .name = "docker", .addr = "/var/run/docker.sock", .lfd = -1 },
	};
	size_t nt = docker ? 3 : 2;
	bool pass = pfd >= 0 && afd >= 0, any_ctl = false, unobserved = false, reached_any = false;
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
		bool judged = t[i].lfd >= 0 ? (strcmp(t[i].name, "abstract") != 0 || !shares_net(env)) : ctl_ok;
		bool no_res = !t[i].in && t[i].reached == 0;
		if (judged) {
			pass &= denied;
			unobserved |= no_res;
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
		control_skip(out, "the harness listeners are not reachable", !ipc_control_ok(&t[0]) ? t[0].ctl : t[1].ctl);
		return;
	}
	if (unobserved && !reached_any) {
		cf_no_observation(out, "connect to host unix sockets");
		return;
	}
	out->observed_pass = pass && any_ctl;
	cf_reason(out, "%s", detail);
}

/* ---- network ----------------------------------------------------------------- */

/* A non-blocking listener (TCP) or receiver (UDP) on a loopback address of
 * FAMILY; *port gets the port. */
static int loopback_socket(int family, int type, int *port)
{
	int fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof *a;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof *a;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(fd, 64) < 0) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	*port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/* Drains the receiver: *inside and *control count the datagrams that
 * carry each nonce (anything else is ignored). Never waits. */
static void datagrams_drain(int fd, const char *inside, const char *control, int *n_in, int *n_ctl)
{
	char buf[256];
	ssize_t r;
	while ((r = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT)) >= 0) {
		buf[r] = '\0';
		*n_in += strcmp(buf, inside) == 0;
		*n_ctl += strcmp(buf, control) == 0;
	}
}

struct net_try {
	const char *label, *host, *proto;
	int fd;
	bool detached;
};

struct net_tally {
	int got, ctl_got;   /* host-side receipts: from inside, from the control */
};

/* After the control reported success: waits for its receipt on the host
 * side (see wait_readable), tallying late datagrams from inside too, as
 * the inside and control texts differ. */
static void await_control(const struct check_env *env, const struct net_try *t, const char *n_in,
			  const char *n_ctl, struct net_tally *k)
{
	bool udp = strcmp(t->proto, "udp") == 0;
	uint64_t deadline = control_deadline(env);
	while (k->ctl_got == 0 && wait_readable(t->fd, deadline)) {
		if (udp)
			datagrams_drain(t->fd, n_in, n_ctl, &k->got, &k->ctl_got);
		else
			k->ctl_got += accepted(t->fd);
	}
}

/* One attempt inside and its control outside, each with its own text;
 * true when the sandbox was denied and the control got through
 * (host-side receipt on both). */
static bool net_pair(const struct check_env *env, struct check_out *out, const struct net_try *t, int port,
		     bool *ctl_ok, bool *unobserved, char *detail, size_t dsize)
{
	_cleanup_free_ char *n_in = nonce(), *n_ctl = nonce();
	if (!n_in || !n_ctl)
		return false;
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	const char *mode = t->detached ? "detached" : NULL;
	json_t *res = NULL, *ctl = NULL;
	bool udp = strcmp(t->proto, "udp") == 0;
	struct net_tally k = { 0 };
	/* Inside, 2 s bound a connect that a filter silently drops. The
	 * control is expected to get through: its bound is half the
	 * per-execution timeout (at least 2 s), so a loaded machine does not
	 * turn it into a skip, and it returns as soon as it connects. */
	char ctl_ms[24];
	snprintf(ctl_ms, sizeof ctl_ms, "%lld", (long long)(env->o->timeout_ms / 2 > 2000 ? env->o->timeout_ms / 2 : 2000));
	const char *const in_args[] = { "net", t->host, ps, t->proto, n_in, "2000", mode, NULL };
	const char *const ctl_args[] = { "net", t->host, ps, t->proto, n_ctl, ctl_ms, mode, NULL };
	if (cf_sandbox_op(env, out, env->h, NULL, in_args, &res, NULL) < 0)
		res = NULL;
	if (udp)
		datagrams_drain(t->fd, n_in, n_ctl, &k.got, &k.ctl_got);
	else
		k.got = accepted(t->fd);
	cf_control_op(env, out, ctl_args, &ctl);
	if (cf_result_ok(ctl))
		await_control(env, t, n_in, n_ctl, &k);
	*ctl_ok = k.ctl_got > 0;
	bool denied = res && k.got == 0 && (udp || !cf_result_ok(res));
	*unobserved = !res && k.got == 0;
	json_object_set_new(out->facts, t->label,
			    json_pack("{s:s, s:i, s:b, s:b, s:s, s:i, s:b, s:s}", "host", t->host, "port", port, "detached",
				      t->detached, "denied_inside", denied, "errno_inside", cf_result_errno(res),
				      "received_from_inside", k.got, "control_received", *ctl_ok, "errno_control",
				      cf_result_errno(ctl)));
	size_t l = strlen(detail);
	snprintf(detail + l, dsize - l, "%s%s %s (%s)", l ? "; " : "", t->label, denied ? "denied" : *unobserved ? "not observed" : "REACHED",
		 !res ? "no payload result" : cf_result_ok(res) ? (udp ? (k.got ? "datagram arrived" : "sent, nothing arrived") : "connected") : cf_result_errno(res));
	return denied;
}

static void run_net_tries(const struct check_env *env, struct check_out *out, const struct net_try *tries, size_t n,
			  const int *ports)
{
	char detail[480] = "";
	bool pass = true, ctl_all = true, unobserved_any = false, reached_any = false;
	for (size_t i = 0; i < n; i++) {
		bool ctl = false, unobserved = false;
		bool denied = net_pair(env, out, &tries[i], ports[i], &ctl, &unobserved, detail, sizeof detail);
		pass &= denied;
		ctl_all &= ctl;
		unobserved_any |= unobserved;
		reached_any |= !denied && !unobserved;
	}
	if (unobserved_any && !reached_any) {
		cf_no_observation(out, "loopback connects and datagrams");
		return;
	}
	if (!ctl_all) {
		cf_skip(out, "control failed: a loopback listener was not reached from outside either; %s", detail);
		return;
	}
	out->observed_pass = pass;
	cf_reason(out, "%s; every control reached its listener outside", detail);
}

void check_net_egress_udp_denied(const struct check_env *env, struct check_out *out)
{
	int port = 0;
	_cleanup_close_ int fd = loopback_socket(AF_INET, SOCK_DGRAM, &port);
	if (fd < 0) {
		cf_skip(out, "cannot open a UDP receiver on 127.0.0.1: %s", strerror(-fd));
		return;
	}
	const struct net_try tries[] = {
		{ "udp_127.0.0.1", "127.0.0.1", "udp", fd, false },
		{ "udp_127.0.0.1_detached", "127.0.0.1", "udp", fd, true },
	};
	const int ports[] = { port, port };
	run_net_tries(env, out, tries, AGSBX_ARRAY_SIZE(tries), ports);
}

void check_net_egress_ipv6_denied(const struct check_env *env, struct check_out *out)
{
	int p6 = 0, p4 = 0;
	_cleanup_close_ int fd6 = loopback_socket(AF_INET6, SOCK_STREAM, &p6);
	_cleanup_close_ int fd4 = loopback_socket(AF_INET, SOCK_STREAM, &p4);
	if (fd6 < 0 || fd4 < 0) {
		cf_skip(out, "cannot listen on %s: %s", fd6 < 0 ? "[::1]" : "127.0.0.1",
			   strerror(-(fd6 < 0 ? fd6 : fd4)));
		return;
	}
	/* ::ffff:127.0.0.1 from an AF_INET6 socket reaches the IPv4 listener:
	 * a filter that only looks at AF_INET misses it. */
	const struct net_try tries[] = {
		{ "tcp_[::1]", "::1", "tcp", fd6, false },
		{ "tcp_[::ffff:127.0.0.1]", "::ffff:127.0.0.1", "tcp", fd4, false },
		{ "tcp_[::1]_detached", "::1", "tcp", fd6, true },
	};
	const int ports[] = { p6, p4, p6 };
	run_net_tries(env, out, tries, AGSBX_ARRAY_SIZE(tries), ports);
}

/* ---- filesystem --------------------------------------------------------------- */

void check_fs_hardlink_alias_denied(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = nonce(), *name = NULL, *ctl_path = NULL;
	if (!n || asprintf(&name, "alias-%s", n) < 0 || asprintf(&ctl_path, "%s/alias-%s", env->canary_wdir, n) < 0)
		return;
	_cleanup_free_ char *inside = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, name);
	_cleanup_free_ char *host = agsbx_path_join(env->grant->roots[AGSBX_ROOT_OUTPUT].path, name);
	struct agsbx_exec_result xr = { 0 };
	json_t *res, *ctl;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("link-read", env->canary_file, inside), &res, &xr) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	bool leaked = cf_run_output_contains(&xr.run, env->canary_secret);
	agsbx_exec_result_clear(&xr);
	struct stat a, c;
	bool alias = host && lstat(host, &a) == 0 && stat(env->canary_file, &c) == 0 && a.st_ino == c.st_ino &&
		     a.st_dev == c.st_dev;
	cf_control_op(env, out, ARGS("link-read", env->canary_file, ctl_path), &ctl);
	bool control = json_is_true(sub(ctl, "link_ok"));
	unlink(ctl_path);
	json_object_set_new(out->facts, "alias_on_host", json_boolean(alias));
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	json_object_set_new(out->facts, "control_link_ok", json_boolean(control));
	if (!control) {
		cf_skip(out, "control failed: the canary cannot be hard-linked outside the sandbox either (%s)",
			   json_string_value(sub(ctl, "link_errno")) ?: "?");
		return;
	}
	if (!res && !alias && !leaked) {
		cf_no_observation(out, "hard link to the canary");
		return;
	}
	out->observed_pass = res && !json_is_true(sub(res, "link_ok")) && !alias && !leaked;
	bool made = json_is_true(sub(res, "link_ok"));
	cf_reason(out, "hard link to the canary inside the output root: %s%s%s; alias %s on the host; control link ok",
		  made ? "MADE" : res ? "denied (" : "no payload result", made || !res ? "" : json_string_value(sub(res, "link_errno")) ?: "?",
		  made || !res ? "" : ")", alias ? "PRESENT" : "absent");
}

/* ---- residue -------------------------------------------------------------------- */

/* Top-level names of DIR (sorted JSON array; empty when unreadable). */
static json_t *inventory(const char *dir)
{
	json_t *a = json_array();
	_cleanup_closedir_ DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			json_array_append_new(a, json_string(e->d_name));
	return a;
}

static bool in_array(const json_t *a, const char *s)
{
	for (size_t i = 0; i < json_array_size(a); i++)
		if (strcmp(json_string_value(json_array_get(a, i)), s) == 0)
			return true;
	return false;
}

struct place {
	const char *label;
	char *dir;
	bool shared;              /* other processes write here too (/tmp, $HOME) */
	json_t *before;
};

/* Is DIR/NAME, or something under it, a mount point inside the sandbox
 * (MOUNTS: newline-separated, from the payload's `mounts`)? */
static bool is_sandbox_mount(const char *mounts, const char *dir, const char *name)
{
	_cleanup_free_ char *p = agsbx_path_join(dir, name);
	size_t pl = p ? strlen(p) : 0;
	for (const char *m = mounts; p && m && *m; m = strchr(m, '\n') ? strchr(m, '\n') + 1 : NULL) {
		size_t len = strcspn(m, "\n");
		if (len >= pl && strncmp(m, p, pl) == 0 && (len == pl || m[pl] == '/'))
			return true;
	}
	return false;
}

/* New entries of P since its inventory. Nothing but the sandbox writes in
 * the work dir and the grant; /tmp and $HOME are shared with every other
 * process on the host, so there only an entry the sandbox has a mount
 * point on counts (a bwrap mount-point stub); the rest is recorded. */
static json_t *new_entries(const struct place *p, const char *mounts, json_t *ignored)
{
	json_t *now = inventory(p->dir), *added = json_array();
	for (size_t i = 0; i < json_array_size(now); i++) {
		const char *name = json_string_value(json_array_get(now, i));
		if (in_array(p->before, name))
			continue;
		if (p->shared && !is_sandbox_mount(mounts, p->dir, name))
			json_array_append_new(ignored, json_string(name));
		else
			json_array_append_new(added, json_string(name));
	}
	json_decref(now);
	return added;
}

/* One inventoried run; returns the number of new entries (recorded). */
static int residue_attempt(const struct check_env *env, struct check_out *out, struct place *pl, size_t np,
			   const char *skip_name, json_t *record)
{
	for (size_t i = 0; i < np; i++)
		pl[i].before = inventory(pl[i].dir);
	_cleanup_free_ char *inside = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, skip_name);
	const char *tmp = pl[np - 2].dir, *home = pl[np - 1].dir;
	json_t *m = NULL;
	int r1 = cf_sandbox_op(env, out, env->h, NULL, home ? ARGS("mounts", tmp, home) : ARGS("mounts", tmp), &m, NULL);
	int r2 = cf_sandbox_op(env, out, env->h, NULL, ARGS("write", inside, "x"), NULL, NULL);
	const char *mounts = json_string_value(sub(m, "mount_points"));
	/* In the host's own mount namespace (landlock, trusted_local) every
	 * mount point is the host's: the sandbox made none, so nothing new in
	 * a shared place is its stub (another process's dockerd may be
	 * mounting under /tmp right now). */
	struct stat hs;
	const json_t *mns = sub(m, "mnt_ns");
	bool own_ns = !(json_is_integer(mns) && stat("/proc/self/ns/mnt", &hs) == 0 &&
			(ino_t)json_integer_value(mns) == hs.st_ino);
	if (!own_ns)
		mounts = NULL;
	json_object_set_new(record, "sandbox_has_own_mount_namespace", json_boolean(own_ns));
	json_object_set_new(record, "sandbox_mount_points_in_tmp_or_home", mounts ? json_string(mounts) : json_null());
	int found = r1 < 0 || r2 < 0 ? -1 : 0;
	json_t *ignored = json_array();
	for (size_t i = 0; i < np; i++) {
		json_t *added = new_entries(&pl[i], mounts, ignored);
		size_t j;
		json_t *v;
		json_array_foreach(added, j, v)
			if (strcmp(json_string_value(v), skip_name) != 0 && found >= 0)
				found++;
		json_object_set_new(record, pl[i].label, added);
		json_decref(pl[i].before);
		pl[i].before = NULL;
	}
	json_object_set_new(record, "shared_new_not_attributable", ignored);
	return found;
}

void check_fs_no_host_residue(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = nonce(), *name = NULL, *area = NULL;
	if (!n || asprintf(&name, "residue-%s", n) < 0)
		return;
	area = strdup(env->grant->area);
	const char *home = home_of(env);
	struct place pl[] = {
		{ "work_dir", strdup(env->o->work_dir), false, NULL },
		{ "grant_parent", area ? strdup(area) : NULL, false, NULL },
		{ "output", strdup(env->grant->roots[AGSBX_ROOT_OUTPUT].path), false, NULL },
		{ "build", strdup(env->grant->roots[AGSBX_ROOT_BUILD].path), false, NULL },
		{ "tmp", strdup("/tmp"), true, NULL },
		{ "home", home ? strdup(home) : NULL, true, NULL },
	};
	json_t *rec = json_object();
	int found = residue_attempt(env, out, pl, AGSBX_ARRAY_SIZE(pl), name, rec);
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(pl); i++)
		free(pl[i].dir);
	json_object_set_new(out->facts, "new_entries", rec);
	if (found < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	out->observed_pass = found == 0;
	cf_reason(out, found == 0 ? "no new entry in the work dir, the grant's parent, its writable roots, /tmp or "
				       "$HOME after sandboxed runs"
				     : "%d new entr%s left on the host by sandboxed runs (see facts)",
		     found, found == 1 ? "y" : "ies");
}

/* ---- exit status ----------------------------------------------------------------- */

/* How the status came about: a run the timeout ended was killed by the
 * harness, not by the signal asked for (a PID 1 payload ignores its own
 * SIGTERM and SIGKILL: the kernel does not deliver them to a namespace's
 * init from inside). */
static const char *status_how(const struct agsbx_run_result *r, int sig, bool ok)
{
	if (r->timed_out)
		return sig ? " (timed out: still running after its own signal; killed by the timeout)"
			   : " (timed out: killed by the timeout)";
	if (r->term_signal)
		return " (signal)";
	return sig && ok ? " (exit code 128+N)" : "";
}

void check_exec_status_fidelity(const struct check_env *env, struct check_out *out)
{
	static const struct { const char *op, *arg; int status, sig; } cases[] = {
		{ "exit", "0", 0, 0 },        { "exit", "1", 1, 0 },         { "exit", "42", 42, 0 },
		{ "exit", "127", 127, 0 },    { "kill-self", "15", 143, 15 }, { "kill-self", "9", 137, 9 },
	};
	struct agsbx_limits lim = { .max_output_bytes = env->o->max_output_bytes, .timeout_ms = 10000, .cancel_fd = -1 };
	char detail[480] = "";
	bool pass = true, ctl_all = true;
	json_t *seen = json_array();
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(cases); i++) {
		struct agsbx_exec_result xr = { 0 };
		json_t *res;
		if (cf_sandbox_op(env, out, env->h, &lim, ARGS(cases[i].op, cases[i].arg), &res, &xr) < 0) {
			json_decref(seen);
			cf_reason(out, "provider refused to execute");
			return;
		}
		const struct agsbx_run_result *r = &xr.run;
		bool ran = res && cf_result_ok(res);
		bool ok = ran && !r->timed_out && r->status == cases[i].status &&
			  (cases[i].sig ? (r->term_signal == cases[i].sig || (r->exited && r->exit_code == cases[i].status))
					: (r->exited && r->exit_code == cases[i].status && r->term_signal == 0));
		pass &= ok;
		/* The paired control: outside, the payload really ends so. */
		json_t *cres;
		cf_control_op(env, out, ARGS(cases[i].op, cases[i].arg), &cres);
		const json_t *co = json_array_get(out->observations, json_array_size(out->observations) - 1);
		bool ctl = json_integer_value(json_object_get(co, "exit_status")) == cases[i].status &&
			   json_integer_value(json_object_get(co, "signal")) == cases[i].sig;
		ctl_all &= ctl;
		json_array_append_new(seen, json_pack("{s:s, s:s, s:i, s:i, s:b, s:i, s:b, s:b}", "op", cases[i].op, "arg",
						      cases[i].arg, "want_status", cases[i].status, "status", r->status,
						      "exited", r->exited, "signal", r->term_signal, "as_expected", ok,
						      "control_as_expected", ctl));
		size_t l = strlen(detail);
		snprintf(detail + l, sizeof detail - l, "%s%s %s -> %d%s%s", l ? ", " : "", cases[i].op, cases[i].arg,
			 r->status, status_how(r, cases[i].sig, ok), ok ? "" : ran ? " WRONG" : " (did not run)");
		agsbx_exec_result_clear(&xr);
	}
	json_object_set_new(out->facts, "cases", seen);
	if (!ctl_all) {
		cf_skip(out, "control failed: outside the sandbox the payload does not end as asked either; %s", detail);
		return;
	}
	out->observed_pass = pass;
	cf_reason(out, "%s; the controls outside ended exactly so", detail);
}

/* ---- contract: TOCTOU guard and config ------------------------------------------- */

static const char *last_refusal(const struct check_out *out)
{
	size_t n = json_array_size(out->observations);
	const json_t *o = n ? json_array_get(out->observations, n - 1) : NULL;
	return json_string_value(json_object_get(o, "refused"));
}

/* A fresh grant of its own (the shared one must stay intact for the other
 * checks) with the payload and one data file. */
static int integrity_grant(const struct check_env *env, struct agsbx_grant **g, char **data_src)
{
	uid_t uid = env->ctx->run_as ? env->ctx->run_uid : (uid_t)-1;
	gid_t gid = env->ctx->run_as ? env->ctx->run_gid : (gid_t)-1;
	char hex[17];
	agsbx_random_hex(hex, 8);
	if (asprintf(data_src, "%s/integrity-data-%s", env->o->work_dir, hex) < 0)
		return -ENOMEM;
	int r = agsbx_write_file_atomic(*data_src, "original\n", 9, 0644);
	if (r == 0)
		r = agsbx_grant_create(env->o->work_dir, "integrity", uid, gid, g);
	if (r == 0)
		r = agsbx_grant_add_file(*g, AGSBX_PAYLOAD_NAME, env->ctx->payload_path, true);
	if (r == 0)
		r = agsbx_grant_add_file(*g, "data.txt", *data_src, false);
	if (r == 0)
		r = agsbx_grant_seal(*g);
	return r;
}

/* The change a process with write access to the source root could make
 * between materialisation and execution: an append to the file name. Only
 * through fds and only to the very file the grant materialised (same
 * inode, one link, ours): the sandbox user owns the directory and may have
 * put a link to any file in its place. */
static bool tamper_source(const struct agsbx_grant *g, const char *name)
{
	const struct agsbx_bundle_file *f = NULL;
	for (size_t i = 0; i < g->nfiles; i++)
		if (strcmp(g->files[i].name, name) == 0)
			f = &g->files[i];
	_cleanup_close_ int dfd = f ? agsbx_dir_open(g->roots[AGSBX_ROOT_SOURCE].path) : -1;
	struct stat st;
	_cleanup_close_ int rd = dfd >= 0 ? agsbx_open_file_at(dfd, name, O_RDONLY, geteuid(), &st) : -1;
	if (rd < 0 || st.st_dev != f->dev || st.st_ino != f->ino)
		return false;
	if (fchmod(rd, 0644) < 0) /* the owner may: materialisation made it read-only */
		return false;
	_cleanup_close_ int fd = agsbx_open_file_at(dfd, name, O_WRONLY | O_APPEND, geteuid(), &st);
	return fd >= 0 && st.st_dev == f->dev && st.st_ino == f->ino && write(fd, "tampered\n", 9) == 9;
}

void check_bundle_integrity_enforced(const struct check_env *env, struct check_out *out)
{
	struct agsbx_grant *g = NULL;
	_cleanup_free_ char *data_src = NULL;
	int r = integrity_grant(env, &g, &data_src);
	if (data_src)
		unlink(data_src);
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	if (r < 0 || env->ops->ensure(env->ops, env->ctx, g, &h, &fail) < 0) {
		cf_reason(out, r < 0 ? "internal: cannot prepare a second grant" : "ensure of a second grant failed: %s",
			     fail.message);
		agsbx_grant_destroy(g);
		return;
	}
	json_t *before = NULL;
	cf_sandbox_op(env, out, h, NULL, ARGS("true"), &before, NULL);
	_cleanup_free_ char *inside = agsbx_handle_path(h, AGSBX_ROOT_OUTPUT, "after-change");
	_cleanup_free_ char *host = agsbx_path_join(g->roots[AGSBX_ROOT_OUTPUT].path, "after-change");
	bool changed = tamper_source(g, "data.txt");
	int after = changed ? cf_sandbox_op(env, out, h, NULL, ARGS("write", inside, "ran"), NULL, NULL) : 0;
	const char *why = after < 0 ? last_refusal(out) : NULL;
	bool ran = host && access(host, F_OK) == 0;
	agsbx_provider_release(h);
	agsbx_handle_free(h);
	agsbx_grant_destroy(g);
	json_object_set_new(out->facts, "baseline_ran", json_boolean(cf_result_ok(before)));
	json_object_set_new(out->facts, "refusal_reason", why ? json_string(why) : json_null());
	json_object_set_new(out->facts, "executed_after_change", json_boolean(ran));
	if (!cf_result_ok(before) || !changed) {
		cf_reason(out, !changed ? "the materialised source file is gone or was replaced (never followed)"
					   : "the unchanged bundle did not execute (%s)", cf_result_errno(before));
		return;
	}
	out->observed_pass = after < 0 && why && strcmp(why, "bundle_changed") == 0 && !ran;
	cf_reason(out, "after a source file changed: execution %s%s; payload %s", after < 0 ? "refused with " : "ALLOWED",
		     after < 0 ? (why ? why : "?") : "", ran ? "RAN" : "never ran");
}

void check_config_unknown_rejected(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = nonce(), *key = NULL;
	if (!n || asprintf(&key, "agsbx_unknown_%.12s", n) < 0)
		return;
	json_t *cfg = env->ctx->config ? json_deep_copy(env->ctx->config) : json_object();
	json_object_set_new(cfg, key, json_true());
	struct agsbx_ctx c = *env->ctx;
	c.config = cfg;
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	int er = env->ops->ensure(env->ops, &c, env->grant, &h, &fail);
	if (er == 0 && h) {
		agsbx_provider_release(h);
		agsbx_handle_free(h);
	}
	json_decref(cfg);
	json_object_set_new(out->facts, "unknown_key", json_string(key));
	json_object_set_new(out->facts, "ensure_reason", fail.reason ? json_string(fail.reason) : json_null());
	json_object_set_new(out->facts, "ensure_message", json_string(fail.message));
	/* The paired control is the shared handle itself: ensure with the
	 * provider's own config succeeded (the check needs it). */
	out->observed_pass = er < 0 && fail.reason && strcmp(fail.reason, "config_invalid") == 0;
	cf_reason(out, "ensure with the unknown config key '%s': %s%s; control: ensure with the given config succeeded",
		     key, er < 0 ? "refused with " : "ACCEPTED", er < 0 ? (fail.reason ? fail.reason : "no reason") : "");
}

/* ---- syscalls ----------------------------------------------------------------------- */

void check_syscalls_io_uring_denied(const struct check_env *env, struct check_out *out)
{
	json_t *res, *ctl;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("io-uring"), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	cf_control_op(env, out, ARGS("io-uring"), &ctl);
	if (!res) {
		cf_no_observation(out, "io_uring_setup");
		return;
	}
	if (!cf_result_ok(ctl)) {
		control_skip(out, "io_uring_setup is refused", ctl);
		return;
	}
	/* A user-space kernel (gVisor's Sentry) answers io_uring itself: the
	 * host's io_uring, the attack surface, is then not reachable. Seen as
	 * a kernel release inside that is not the host's. */
	json_t *un = NULL;
	if (cf_result_ok(res))
		cf_sandbox_op(env, out, env->h, NULL, ARGS("uname"), &un, NULL);
	const char *rel = json_string_value(sub(un, "release"));
	bool own_kernel = rel && env->host_kernel_release && strcmp(rel, env->host_kernel_release) != 0;
	json_object_set_new(out->facts, "served_by_sandbox_kernel", json_boolean(own_kernel));
	out->observed_pass = res && (!cf_result_ok(res) || own_kernel);
	cf_reason(out, "io_uring_setup inside: %s%s; control ok outside", denial(res),
		     cf_result_ok(res) ? (own_kernel ? " by the sandbox's own kernel, not the host's" : " by the HOST kernel") : "");
}
