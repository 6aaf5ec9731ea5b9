/* Secrets of the sandbox user: a key in the real $HOME and in the kernel
 * keyrings, placed just before and removed right after (also on signals). */
#include "conformance/checks/attack.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fsat.h"
#include "base/rundir.h"
#include "base/util.h"

/* ---- secrets.home_denied: interrupt-safe clean-up of the canary --------- */

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
	uid_t uid = env->ctx->run_as ? cf_run_uid(env) : (uid_t)-1;
	int r = agsbx_create_file_at(home_canary.dir_fd, CANARY_KEY, secret, strlen(secret), 0600, uid, cf_run_gid(env));
	if (r == 0 && env->ctx->run_as && fchown(home_canary.dir_fd, cf_run_uid(env), cf_run_gid(env)) < 0)
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

static void check_secrets_home_denied(const struct check_env *env, struct check_out *out)
{
	const char *home = cf_home_of(env);
	struct stat st;
	if (!home || stat(home, &st) < 0 || !S_ISDIR(st.st_mode)) {
		cf_skip(out, "the sandbox user has no home directory on this host (%s)", home ? home : "none");
		return;
	}
	_cleanup_free_ char *secret = cf_nonce();
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
	if (!cf_result_ok(ctl) || !json_is_string(cf_sub(ctl, "content")) || strcmp(json_string_value(cf_sub(ctl, "content")), secret) != 0) {
		cf_control_skip(out, "the home canary is not readable", ctl);
		return;
	}
	home_judge(out, res, leaked, alt_r, alt);
}

/* ---- secrets.keyring_denied --------------------------------------------- */

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
	json_array_foreach(cf_sub(res, "searches"), i, v) {
		const char *c = json_string_value(cf_sub(v, "content"));
		bool r = cf_result_ok(v) && c && strcmp(c, secret) == 0;
		got |= r;
		size_t l = strlen(detail);
		snprintf(detail + l, cap - l, "%s%s keyring %s", l ? ", " : "", json_string_value(cf_sub(v, "keyring")) ?: "?",
			 r ? "READ" : cf_result_errno(v));
	}
	const json_t *b = cf_sub(res, "by_serial");
	const char *c = json_string_value(cf_sub(b, "content"));
	bool r = cf_result_ok(b) && c && strcmp(c, secret) == 0;
	size_t l = strlen(detail);
	snprintf(detail + l, cap - l, "%sby serial %s", l ? ", " : "", r ? "READ" : cf_result_errno(b));
	return got || r;
}

static void check_secrets_keyring_denied(const struct check_env *env, struct check_out *out)
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
	kc.uid = cf_run_uid(env);
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
		cf_refused_or_unobserved(out, "search and read the key", sr);
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

const struct check_def cf_checks_secrets[] = {
	{ .id = "secrets.home_denied", .axis = AGSBX_AXIS_FILESYSTEM, .evidence = CHECK_REFUTES, .run = check_secrets_home_denied, .needs_handle = true,
	  .title = "a key in a dot-directory of the real $HOME is unreadable (control: readable outside)",
	  .attacks = "reads a key in a dot-directory of the sandbox user's real $HOME",
	  .why = "~/.ssh, ~/.aws and friends are what an attacker wants",
	  .control = "the key is readable outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" } } },
	{ .id = "secrets.keyring_denied", .axis = AGSBX_AXIS_PROCESS, .evidence = CHECK_REFUTES, .run = check_secrets_keyring_denied, .needs_handle = true,
	  .title = "a key in the sandbox user's user and session keyrings is unreadable (control: readable outside)",
	  .attacks = "searches and reads a key in the sandbox user's user and session keyrings",
	  .why = "kernel keyrings are not namespaced per container (BOtB)",
	  .control = "the key is readable outside",
	  .negative = { { "tests/cli/escape-ipc.sh", "neg_overclaim" } } },
};
const size_t cf_checks_secrets_count = AGSBX_ARRAY_SIZE(cf_checks_secrets);
