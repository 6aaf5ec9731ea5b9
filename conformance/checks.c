/* The check catalogue (docs/checks.md lists it), one row per check,
 * sorted by id. Each denial is paired with a control or a host-side
 * postcondition; `observed_pass` is recorded whether or not the provider
 * claims the axis, so an unclaimed but observed axis shows as underclaim. */
#include "conformance/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fsat.h"
#include "base/proc.h"
#include "base/rundir.h"
#include "base/util.h"

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* A failing control (or a host that cannot run the check) shows nothing
 * about the mechanism: the check is skipped with the reason, never
 * failed; a leak seen despite it still fails (a secret in the output is
 * a leak whatever the control did). */
static void inconclusive(struct check_out *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void inconclusive(struct check_out *out, const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cf_skip(out, "inconclusive on this host: %s", buf);
}

static char *host_path(const struct check_env *env, enum agsbx_root_role r, const char *rel)
{
	return agsbx_path_join(env->grant->roots[r].path, rel);
}

static char *nonce(void)
{
	char *n = malloc(33);
	if (n)
		agsbx_random_hex(n, 16);
	return n;
}

/* ---- filesystem -------------------------------------------------------- */

static void fs_grant_write(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = nonce(), *name = NULL;
	if (!n || asprintf(&name, "gw-%s", n) < 0)
		return;
	_cleanup_free_ char *inside = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, name);
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("write", inside, n), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	/* Read through the output root's fd, never a link, only a file of the
	 * sandbox user's with one link: whatever else sits there could be a
	 * host file it cannot read, and this line goes into the bundle. */
	_cleanup_close_ int dfd = agsbx_dir_open(env->grant->roots[AGSBX_ROOT_OUTPUT].path);
	_cleanup_free_ char *got = NULL;
	uid_t owner = env->ctx->run_as ? env->ctx->run_uid : AGSBX_ANY_OWNER;
	int rr = dfd < 0 ? dfd : agsbx_read_line_at(dfd, name, owner, 1 << 16, &got);
	out->observed_pass = got && strcmp(got, n) == 0;
	json_object_set_new(out->facts, "host_read", got ? agsbx_json_string_sanitized(got, strlen(got)) : json_null());
	if (rr == -ELOOP || rr == -EMLINK || rr == -EPERM || rr == -EINVAL)
		cf_reason(out, "output/%s is not a file of the sandbox user's with one link (%s): not read", name,
			     strerror(-rr));
	else if (!res && !out->observed_pass)
		cf_reason(out, "the nonce written into output did not reach the host: the payload gave no result (%s)",
			  out->no_result);
	else
		cf_reason(out, out->observed_pass ? "the host read the nonce the sandbox wrote into output"
						     : "the nonce written into output did not reach the host (%s)",
			  cf_result_errno(res));
}

static void fs_readonly_grant_denied(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = nonce(), *newname = NULL;
	if (!n || asprintf(&newname, "ro-new-%s", n) < 0)
		return;
	_cleanup_free_ char *in_canary = agsbx_handle_path(env->h, AGSBX_ROOT_SOURCE, "ro-canary.txt");
	_cleanup_free_ char *in_new = agsbx_handle_path(env->h, AGSBX_ROOT_SOURCE, newname);
	_cleanup_free_ char *host_new = host_path(env, AGSBX_ROOT_SOURCE, newname);
	json_t *r1, *r2;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("write", in_canary, n), &r1, NULL) < 0 ||
	    cf_sandbox_op(env, out, env->h, NULL, ARGS("write", in_new, n), &r2, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	_cleanup_free_ char *content = agsbx_read_line(env->ro_canary);
	bool unchanged = content && strcmp(content, env->ro_canary_content) == 0;
	bool absent = access(host_new, F_OK) < 0;
	json_object_set_new(out->facts, "source_canary_unchanged", json_boolean(unchanged));
	json_object_set_new(out->facts, "new_file_absent", json_boolean(absent));
	if ((!r1 || !r2) && unchanged && absent) {
		cf_no_observation(out, "write into the read-only source root");
		return;
	}
	out->observed_pass = r1 && r2 && !cf_result_ok(r1) && !cf_result_ok(r2) && unchanged && absent;
	cf_reason(out, "overwrite in source: %s; create in source: %s; host content %s",
		     r1 && !cf_result_ok(r1) ? cf_result_errno(r1) : "allowed", r2 && !cf_result_ok(r2) ? cf_result_errno(r2) : "allowed",
		     unchanged && absent ? "unchanged" : "CHANGED");
}

/* ---- argv[0] variants of the filesystem attacks ----------------------- */

/* What one variant of a denial showed. A variant whose interpreter does
 * not exist (or is refused) inside cannot break the claim: it is recorded
 * as not_run; the direct variant must always be conclusive. */
enum outcome { O_DENIED, O_ALLOWED, O_NOT_RUN };

struct variants {
	json_t *list;                 /* facts.argv_variants */
	json_t *argv0;                /* facts.argv0_tried */
	bool direct_denied, any_allowed;
	const char *direct_errno;
	char summary[256];
};

static void variant_record(struct variants *v, const struct check_env *env, enum agsbx_via via, enum outcome o,
			   const json_t *res)
{
	static const char *const names[] = { "denied", "ALLOWED", "not_run" };
	_cleanup_free_ char *payload = agsbx_handle_path(env->h, AGSBX_ROOT_SOURCE, AGSBX_PAYLOAD_NAME);
	const char *argv0 = via == AGSBX_VIA_DIRECT && payload ? payload : cf_via_argv0(via);
	if (via == AGSBX_VIA_DIRECT) {
		v->direct_denied = o == O_DENIED;
		v->direct_errno = cf_result_errno(res);
	} else {
		size_t len = strlen(v->summary);
		snprintf(v->summary + len, sizeof v->summary - len, "%svia %s: %s", len ? ", " : "", argv0, names[o]);
	}
	v->any_allowed |= o == O_ALLOWED;
	json_array_append_new(v->argv0, json_string(argv0));
	json_array_append_new(v->list, json_pack("{s:s, s:s, s:s}", "argv0", argv0, "outcome", names[o], "errno",
						 cf_result_errno(res)));
}

static bool variants_pass(const struct variants *v)
{
	return v->direct_denied && !v->any_allowed;
}

/* The direct run gave no result and no variant showed the attack work. */
static bool variants_unobserved(const struct variants *v)
{
	return !v->direct_denied && !v->any_allowed;
}

static void variants_facts(struct variants *v, struct check_out *out)
{
	json_object_set_new(out->facts, "argv_variants", v->list);
	json_object_set_new(out->facts, "argv0_tried", v->argv0);
}

/* A read of target through every variant; O_ALLOWED when the secret shows
 * up or the payload reports success. false when the provider refused the
 * direct run. */
static bool read_variants(const struct check_env *env, struct check_out *out, const char *op, const char *target,
			  const char *link_prefix, struct variants *v, bool *leaked_any)
{
	for (int via = 0; via < AGSBX_VIA_COUNT; via++) {
		_cleanup_free_ char *link = NULL, *n = nonce(), *name = NULL;
		if (link_prefix) {
			if (!n || asprintf(&name, "%s-%s-%d", link_prefix, n, via) < 0)
				return false;
			link = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, name);
		}
		struct agsbx_exec_result xr = { 0 };
		json_t *res;
		const char *const *args = link ? ARGS(op, link, target) : ARGS(op, target);
		if (cf_sandbox_op_via(env, out, env->h, NULL, via, args, &res, &xr) < 0) {
			if (via == AGSBX_VIA_DIRECT)
				return false;
			variant_record(v, env, via, O_NOT_RUN, NULL);
			continue;
		}
		bool leaked = cf_run_output_contains(&xr.run, env->canary_secret);
		agsbx_exec_result_clear(&xr);
		*leaked_any |= leaked;
		variant_record(v, env, via, leaked || (res && cf_result_ok(res)) ? O_ALLOWED : res ? O_DENIED : O_NOT_RUN, res);
	}
	return true;
}

/* A denial counts once the read was also refused through openat2 and
 * io_uring (cf_read_alternates): a sandbox that mediates open(2) alone
 * (a ptrace path translator) lets those through. */
static void fs_host_read_denied(const struct check_env *env, struct check_out *out)
{
	struct variants v = { .list = json_array(), .argv0 = json_array() };
	bool leaked = false;
	if (!read_variants(env, out, "read", env->canary_file, NULL, &v, &leaked)) {
		variants_facts(&v, out);
		cf_reason(out, "provider refused to execute");
		return;
	}
	char alt[128];
	int alt_r = cf_read_alternates(env, out, env->canary_file, env->canary_secret, alt, sizeof alt);
	json_t *ctl;
	cf_control_op(env, out, ARGS("read", env->canary_file), &ctl);
	bool control = ctl && cf_result_ok(ctl);
	bool denied = variants_pass(&v) && alt_r == 0;
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	json_object_set_new(out->facts, "control_read_ok", json_boolean(control));
	variants_facts(&v, out);
	out->observed_pass = denied && control;
	if (variants_unobserved(&v) && alt_r != 1)
		cf_no_observation(out, "read of a 0644 canary outside the grant");
	else if (variants_pass(&v) && alt_r < 0)
		cf_no_observation(out, "read of a 0644 canary outside the grant through openat2 and io_uring");
	else if (!control && denied)
		inconclusive(out, "control failed: the canary is not readable outside the sandbox either (%s)",
			     cf_result_errno(ctl));
	else
		cf_reason(out, "read of a 0644 canary outside the grant: %s inside (open %s) [%s] [%s]; control read %s outside",
			  denied ? "denied" : "ALLOWED", v.direct_denied ? v.direct_errno : "ALLOWED", v.summary, alt,
			  control ? "ok" : "FAILED");
}

static void fs_host_write_denied(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = nonce(), *ctl_path = NULL;
	if (!n || asprintf(&ctl_path, "%s/ctl-%s", env->canary_wdir, n) < 0)
		return;
	struct variants v = { .list = json_array(), .argv0 = json_array() };
	bool absent_all = true;
	for (int via = 0; via < AGSBX_VIA_COUNT; via++) {
		_cleanup_free_ char *in = NULL;
		if (asprintf(&in, "%s/hw-%s-%d", env->canary_wdir, n, via) < 0)
			break;
		json_t *res;
		if (cf_sandbox_op_via(env, out, env->h, NULL, via, ARGS("write", in, n), &res, NULL) < 0) {
			if (via == AGSBX_VIA_DIRECT) {
				variants_facts(&v, out);
				cf_reason(out, "provider refused to execute");
				return;
			}
			variant_record(&v, env, via, O_NOT_RUN, NULL);
			continue;
		}
		bool absent = access(in, F_OK) < 0;
		absent_all &= absent;
		variant_record(&v, env, via, !absent || (res && cf_result_ok(res)) ? O_ALLOWED : res ? O_DENIED : O_NOT_RUN, res);
	}
	json_t *ctl;
	cf_control_op(env, out, ARGS("write", ctl_path, n), &ctl);
	bool control = ctl && cf_result_ok(ctl) && access(ctl_path, F_OK) == 0;
	json_object_set_new(out->facts, "absent_on_host", json_boolean(absent_all));
	json_object_set_new(out->facts, "control_write_ok", json_boolean(control));
	out->observed_pass = variants_pass(&v) && absent_all && control;
	if (variants_unobserved(&v) && absent_all)
		cf_no_observation(out, "create outside the grant");
	else if (!control && variants_pass(&v) && absent_all)
		inconclusive(out, "control failed: cannot create in the canary dir outside the sandbox either (%s)",
			     cf_result_errno(ctl));
	else if (!control)
		cf_reason(out, "create outside the grant: ALLOWED [%s], file(s) %s on the host; control create failed",
			     v.summary, absent_all ? "absent" : "PRESENT");
	else
		cf_reason(out, "create outside the grant: %s (%s) [%s], file(s) %s on the host; control create ok",
			     v.direct_denied ? "denied" : "ALLOWED", v.direct_errno, v.summary,
			     absent_all ? "absent" : "PRESENT");
	variants_facts(&v, out);
}

static void fs_symlink_escape_denied(const struct check_env *env, struct check_out *out)
{
	struct variants v = { .list = json_array(), .argv0 = json_array() };
	bool leaked = false;
	if (!read_variants(env, out, "symlink-read", env->canary_file, "link", &v, &leaked)) {
		variants_facts(&v, out);
		cf_reason(out, "provider refused to execute");
		return;
	}
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	out->observed_pass = variants_pass(&v);
	if (variants_unobserved(&v))
		cf_no_observation(out, "read of the canary through a symlink in a writable root");
	else
		cf_reason(out, "read of the canary through a symlink in a writable root: %s (%s) [%s]",
			  v.direct_denied ? "denied" : "ALLOWED", v.direct_errno, v.summary);
	variants_facts(&v, out);
}

/* Whether a mount attempted unclaimed stays in the sandbox: its mount
 * namespace is not the host's, and either a user namespace of its own
 * owns it (a less privileged mount namespace propagates nothing back,
 * mount_namespaces(7)) or the payload holds no capability to mount with.
 * Else why not, in why. */
static bool remount_contained(const struct check_env *env, struct check_out *out, char *why, size_t size)
{
	struct stat mnt, user;
	json_t *res, *st;
	if (stat("/proc/self/ns/mnt", &mnt) < 0 || stat("/proc/self/ns/user", &user) < 0) {
		snprintf(why, size, "the host's namespaces are unreadable (%s)", strerror(errno));
		return false;
	}
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("ns"), &res, NULL) < 0 || !res) {
		snprintf(why, size, "the sandbox's mount namespace was not observed (%s)",
			 out->no_result[0] ? out->no_result : "provider refused to execute");
		return false;
	}
	const json_t *m = json_object_get(json_object_get(res, "ns"), "mnt");
	const json_t *u = json_object_get(json_object_get(res, "ns"), "user");
	if (!json_is_integer(m) || (ino_t)json_integer_value(m) == mnt.st_ino) {
		snprintf(why, size, "%s", json_is_integer(m) ? "the sandbox shares the host's mount namespace"
							      : "the sandbox's mount namespace is unreadable");
		return false;
	}
	if (json_is_integer(u) && (ino_t)json_integer_value(u) != user.st_ino)
		return true;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("status"), &st, NULL) == 0 &&
	    json_is_true(json_object_get(st, "cap_eff_zero")))
		return true;
	snprintf(why, size, "the sandbox's own mount namespace belongs to the host's user namespace and the payload may "
			    "hold capabilities (a mount could propagate to the host)");
	return false;
}

static void fs_remount_denied(const struct check_env *env, struct check_out *out)
{
	/* No host control. Unclaimed, attempted only where a mount that
	 * succeeds stays in the sandbox's own mount namespace: outside a
	 * sandbox it would change the host's mount table. */
	char why[300];
	if (!env->required && !remount_contained(env, out, why, sizeof why)) {
		cf_skip(out, "not attempted: the provider does not claim host_filesystem_restricted, and %s", why);
		json_object_set_new(out->facts, "attempted", json_false());
		return;
	}
	json_object_set_new(out->facts, "attempted", json_true());
	_cleanup_free_ char *src = agsbx_handle_path(env->h, AGSBX_ROOT_SOURCE, NULL);
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("remount", src), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (!res) {
		cf_no_observation(out, "remount and tmpfs mount");
		return;
	}
	out->observed_pass = json_object_get(res, "ok") && !cf_result_ok(res);
	json_t *rm = json_object_get(res, "remount"), *tm = json_object_get(res, "tmpfs");
	cf_reason(out, "remount read-write: %s; mount tmpfs: %s", cf_result_ok(rm) ? "ALLOWED" : cf_result_errno(rm),
		     cf_result_ok(tm) ? "ALLOWED" : cf_result_errno(tm));
}

/* ---- network ----------------------------------------------------------- */

static void net_namespace_distinct(const struct check_env *env, struct check_out *out)
{
	struct stat st;
	if (stat("/proc/self/ns/net", &st) < 0) {
		cf_skip(out, "host net namespace unreadable: %s", strerror(errno));
		return;
	}
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("ns"), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (!res) {
		cf_no_observation(out, "net namespace lookup");
		return;
	}
	json_t *inside = json_object_get(json_object_get(res, "ns"), "net");
	json_object_set_new(out->facts, "host_net_ns", json_integer((json_int_t)st.st_ino));
	if (!json_is_integer(inside)) {
		const char *e = json_string_value(json_object_get(json_object_get(res, "ns_errno"), "net"));
		cf_skip(out, "no observation: the net namespace inside is unreadable (%s)", e ? e : "not reported");
		return;
	}
	out->observed_pass = (ino_t)json_integer_value(inside) != st.st_ino;
	cf_reason(out, "net namespace inode inside %lld vs host %llu", (long long)json_integer_value(inside),
		  (unsigned long long)st.st_ino);
}

static int loopback_listener(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static void net_egress_denied(const struct check_env *env, struct check_out *out)
{
	int port = 0;
	_cleanup_close_ int lfd = loopback_listener(&port);
	if (lfd < 0) {
		cf_skip(out, "cannot open a loopback listener: %s", strerror(-lfd));
		return;
	}
	char ports[16];
	snprintf(ports, sizeof ports, "%d", port);
	json_t *res, *ctl;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("connect", "127.0.0.1", ports, "2000"), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	cf_control_op(env, out, ARGS("connect", "127.0.0.1", ports, "2000"), &ctl);
	bool control = ctl && cf_result_ok(ctl);
	json_object_set_new(out->facts, "listener", json_pack("{s:s, s:i}", "address", "127.0.0.1", "port", port));
	json_object_set_new(out->facts, "control_connect_ok", json_boolean(control));
	out->observed_pass = res && json_object_get(res, "ok") && !cf_result_ok(res) && control;
	if (!res)
		cf_no_observation(out, "connect to a host loopback listener");
	else if (!control && res && json_object_get(res, "ok") && !cf_result_ok(res))
		inconclusive(out, "control failed: the host could not connect to its own listener (%s)", cf_result_errno(ctl));
	else
		cf_reason(out, "connect to a host loopback listener: %s (%s); control connect %s",
			     res && !cf_result_ok(res) ? "denied" : "ALLOWED", cf_result_errno(res), control ? "ok" : "failed");
}

/* ---- process, privilege, environment, syscalls -------------------------- */

static void proc_contained(const struct check_env *env, struct check_out *out)
{
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)env->harness_pid);
	struct stat st;
	bool host_ns = stat("/proc/self/ns/pid", &st) == 0;
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("pid-visible", pid), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (!res) {
		cf_no_observation(out, "harness pid lookup");
		return;
	}
	json_t *ns = json_object_get(res, "pid_ns");
	bool distinct = host_ns && json_is_integer(ns) && (ino_t)json_integer_value(ns) != st.st_ino;
	bool visible = cf_result_ok(res);
	json_object_set_new(out->facts, "harness_pid", json_integer(env->harness_pid));
	json_object_set_new(out->facts, "pid_ns_distinct", json_boolean(distinct));
	out->observed_pass = !visible && distinct;
	cf_reason(out, "harness pid %d %s inside; pid namespace %s", (int)env->harness_pid,
		     visible ? "VISIBLE" : "not visible", distinct ? "distinct" : "SHARED with the host");
}

/* Both halves: no_new_privs keeps a program from gaining privileges on
 * exec, and no effective capability means it has none to begin with;
 * "NoNewPrivs=1 with every capability" (bwrap or landlock as root) is
 * not blocked escalation. */
static void priv_no_escalation(const struct check_env *env, struct check_out *out)
{
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("status"), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (!res) {
		cf_no_observation(out, "NoNewPrivs and capability status");
		return;
	}
	json_t *nnp_j = json_object_get(res, "no_new_privs");
	json_int_t nnp = json_is_integer(nnp_j) ? json_integer_value(nnp_j) : -1;
	bool capzero = json_is_true(json_object_get(res, "cap_eff_zero"));
	const char *capeff = json_string_value(json_object_get(res, "cap_eff"));
	json_object_set_new(out->facts, "no_new_privs", nnp >= 0 ? json_integer(nnp) : json_null());
	json_object_set_new(out->facts, "cap_eff", capeff ? json_string(capeff) : json_null());
	out->observed_pass = res && nnp == 1 && capzero;
	cf_reason(out, "NoNewPrivs=%lld%s, effective capabilities %s%s", (long long)nnp, nnp == 1 ? "" : " (NOT set)",
		     capzero ? "none" : capeff ? capeff : "unknown", capzero ? "" : " (NOT empty)");
}

static void env_scrubbed(const struct check_env *env, struct check_out *out)
{
	struct agsbx_exec_result xr = { 0 };
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("env", env->o->env_canary_name), &res, &xr) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	bool leaked = cf_run_output_contains(&xr.run, env->o->env_canary_value);
	agsbx_exec_result_clear(&xr);
	bool present = json_is_true(json_object_get(res, "present"));
	json_object_set_new(out->facts, "canary_variable", json_string(env->o->env_canary_name));
	if (!res && !leaked) {
		cf_no_observation(out, "harness canary variable lookup");
		return;
	}
	out->observed_pass = !present && !leaked;
	cf_reason(out, "harness canary variable %s inside", present || leaked ? "VISIBLE" : "not visible");
}

static void syscalls_restricted(const struct check_env *env, struct check_out *out)
{
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("status"), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (!res) {
		cf_no_observation(out, "seccomp status");
		return;
	}
	json_int_t mode = json_integer_value(json_object_get(res, "seccomp"));
	const char *rel = json_string_value(json_object_get(res, "kernel_release"));
	bool other_kernel = rel && env->host_kernel_release && strcmp(rel, env->host_kernel_release) != 0;
	json_object_set_new(out->facts, "host_kernel_release",
			    env->host_kernel_release ? json_string(env->host_kernel_release) : json_null());
	out->observed_pass = mode == 2 || other_kernel;
	cf_reason(out, "seccomp mode %lld inside; kernel release inside %s%s", (long long)mode, rel ? rel : "unknown",
		     other_kernel ? " (a user-space kernel mediates syscalls)" : " (the host kernel)");
}

/* ---- output and lifecycle ---------------------------------------------- */

#define FLOOD_BYTES (64u << 20)
#define FLOOD_CAP 65536u

static void output_bounded(const struct check_env *env, struct check_out *out)
{
	char bytes[32];
	snprintf(bytes, sizeof bytes, "%u", FLOOD_BYTES);
	struct agsbx_limits lim = { .max_output_bytes = FLOOD_CAP, .timeout_ms = 120000, .cancel_fd = -1 };
	long before = agsbx_proc_self_status_kib("VmHWM");
	struct agsbx_exec_result xr = { 0 };
	if (cf_sandbox_op(env, out, env->h, &lim, ARGS("flood", bytes), NULL, &xr) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	long after = agsbx_proc_self_status_kib("VmHWM");
	const struct agsbx_run_result *r = &xr.run;
	bool capped = r->out_len <= FLOOD_CAP && r->err_len <= FLOOD_CAP;
	bool flagged = r->out_truncated && r->err_truncated;
	json_object_set_new(out->facts, "limit", json_integer(FLOOD_CAP));
	json_object_set_new(out->facts, "flood_bytes_per_stream", json_integer(FLOOD_BYTES));
	json_object_set_new(out->facts, "captured_stdout", json_integer((json_int_t)r->out_len));
	json_object_set_new(out->facts, "captured_stderr", json_integer((json_int_t)r->err_len));
	json_object_set_new(out->facts, "harness_vm_hwm_kib_before", json_integer(before));
	json_object_set_new(out->facts, "harness_vm_hwm_kib_after", json_integer(after));
	out->observed_pass = capped && flagged && !r->timed_out;
	cf_reason(out, "captured %zu/%zu bytes (limit %u), truncation flags %s/%s, %s", r->out_len, r->err_len,
		     FLOOD_CAP, r->out_truncated ? "set" : "UNSET", r->err_truncated ? "set" : "UNSET",
		     r->timed_out ? "TIMED OUT" : "finished");
	agsbx_exec_result_clear(&xr);
}

/* After a run ends, no process of ours carrying the marker may remain
 * (base/runner.h: anybody can copy a marker they see in ps into a process
 * of their own; only our tree's, and root's, count); a dying process can
 * linger a few ms, so poll briefly before judging. */
static int survivors(const char *marker, json_t *facts)
{
	int n = 0;
	for (int i = 0; i < 20; i++) {
		_cleanup_free_ pid_t *pids = NULL;
		n = agsbx_find_tree_processes_with_marker(marker, &pids);
		if (n <= 0)
			break;
		usleep(50 * 1000);
	}
	json_object_set_new(facts, "surviving_marker_processes", json_integer(n < 0 ? 0 : n));
	return n;
}

/* The provider's resources left after the run: a count, -EOPNOTSUPP when
 * the provider has no inventory (nothing was looked at: never "0 left"),
 * another -errno when its inventory failed. facts.provider_inventory says
 * which. */
static int provider_leftovers(const struct check_env *env, const char *marker, json_t *facts)
{
	json_t *found = NULL;
	int n = env->ops->leftovers ? env->ops->leftovers(env->h, marker, &found) : -EOPNOTSUPP;
	json_object_set_new(facts, "provider_inventory", json_string(n == -EOPNOTSUPP ? "none" : n < 0 ? "failed" : "taken"));
	json_object_set_new(facts, "provider_leftovers", found ? found : json_array());
	return n;
}

/* "; 2 provider resource(s) left" or what stands in for it. */
static void leftovers_text(int n, char *buf, size_t size)
{
	if (n == -EOPNOTSUPP)
		snprintf(buf, size, "provider resources not inventoried (the provider has no inventory)");
	else if (n < 0)
		snprintf(buf, size, "provider resources UNKNOWN (the inventory failed: %s)", strerror(-n));
	else
		snprintf(buf, size, "%d provider resource(s) left", n);
}

static void kill_marker(const char *marker)
{
	/* Never leave an escapee behind for the next check or the host; and
	 * never hit another user's copy of the marker. */
	_cleanup_free_ pid_t *pids = NULL;
	int n = agsbx_find_tree_processes_with_marker(marker, &pids);
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
}

struct cancel_arg {
	const struct check_env *env;
	struct check_out *out;
	const char *const *args;
	struct agsbx_limits lim;
	struct agsbx_exec_result xr;
	int rc;
	int done;             /* set (atomically) when the execution returned */
};

static void *cancel_thread(void *p)
{
	struct cancel_arg *a = p;
	a->rc = cf_sandbox_op(a->env, a->out, a->env->h, &a->lim, a->args, NULL, &a->xr);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Until the payload's ready file appears, or the execution already ended
 * (a refusal must not cost the whole wait). */
static bool wait_for_ready(const char *path, const struct cancel_arg *a, int ms)
{
	for (int i = 0; i < ms / 20; i++) {
		if (access(path, F_OK) == 0)
			return true;
		if (__atomic_load_n(&a->done, __ATOMIC_ACQUIRE))
			break;
		usleep(20 * 1000);
	}
	return access(path, F_OK) == 0;
}

/* How long a cancelled run's detached tree may take to come up. */
#define CANCEL_READY_WAIT_MS 10000

/* One attempt; returns true when it was inconclusive: the timeout fired
 * before the payload had even started its detached tree (a loaded
 * machine), so nothing was shown either way. */
static bool lifecycle_cleanup(const struct check_env *env, struct check_out *out, bool cancel, int64_t timeout_ms)
{
	_cleanup_free_ char *n = nonce(), *marker = NULL, *ready = NULL;
	/* The run's nonce (its work dir's record holds it) and the check's: a
	 * killed run's detached tree is known to `cleanup` by it. */
	if (!n || asprintf(&marker, "agsbx-marker-%s-%s", agsbx_run_nonce(), n) < 0 ||
	    asprintf(&ready, "ready-%s", n) < 0)
		return false;
	_cleanup_free_ char *in_ready = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, ready);
	_cleanup_free_ char *host_ready = host_path(env, AGSBX_ROOT_OUTPUT, ready);
	_cleanup_close_ int efd = eventfd(0, EFD_CLOEXEC);
	struct cancel_arg a = {
		.env = env, .out = out, .args = ARGS("spawn-detached", marker, in_ready),
		.lim = { .max_output_bytes = env->o->max_output_bytes,
			 .timeout_ms = timeout_ms, .cancel_fd = cancel ? efd : -1,
			 /* what is left afterwards must be this run's alone */
			 .own_sandbox = true },
	};
	bool spawned;
	if (cancel) {
		pthread_t t;
		if (efd < 0 || pthread_create(&t, NULL, cancel_thread, &a) != 0) {
			cf_reason(out, "internal: cannot start the cancelling run");
			return false;
		}
		spawned = wait_for_ready(host_ready, &a, CANCEL_READY_WAIT_MS);
		uint64_t one = 1;
		if (write(efd, &one, sizeof one) < 0) { /* the join below still ends it via timeout */ }
		pthread_join(t, NULL);
	} else {
		cancel_thread(&a);
		spawned = access(host_ready, F_OK) == 0;
	}
	if (a.rc < 0) {
		cf_reason(out, "provider refused to execute");
		kill_marker(marker);
		return false;
	}
	bool ended = cancel ? a.xr.run.cancelled : (a.xr.run.timed_out && a.xr.run.status == 124);
	int left = survivors(marker, out->facts);
	int res_left = provider_leftovers(env, marker, out->facts);
	json_object_set_new(out->facts, "detached_tree_started", json_boolean(spawned));
	json_object_set_new(out->facts, "marker", json_string(marker));
	/* No inventory: nothing counted, nothing held against it (the reason
	 * says so); a failed one cannot show that nothing is left. */
	bool res_ok = res_left == 0 || res_left == -EOPNOTSUPP;
	out->observed_pass = spawned && ended && left == 0 && res_ok;
	char res_text[128];
	leftovers_text(res_left, res_text, sizeof res_text);
	/* A tree that never started: what the wrapper or provider did instead. */
	char run[sizeof out->no_result + 32] = "";
	if (!spawned)
		snprintf(run, sizeof run, " (the run: %s)", out->no_result[0] ? out->no_result : "no detail");
	cf_reason(out, "%s; detached tree %s%s; %d marker process(es) left; %s",
		  cancel ? (ended ? "cancelled" : "NOT cancelled") : (ended ? "timed out (124)" : "did NOT time out"),
		  spawned ? "started" : "NEVER STARTED", run, left, res_text);
	kill_marker(marker);
	agsbx_exec_result_clear(&a.xr);
	return !cancel && !spawned && ended && left == 0 && res_ok;
}

/* An inconclusive attempt is repeated with twice the timeout (at most
 * three attempts, all recorded): the verdict never rests on a race with
 * the machine's load, and the matrix stays quick when it is idle. */
static void lifecycle_timeout_cleanup(const struct check_env *env, struct check_out *out)
{
	int64_t t = env->lifecycle_timeout_ms;
	int attempt = 1;
	while (lifecycle_cleanup(env, out, false, t) && attempt < 3) {
		attempt++;
		t *= 2;
	}
	json_object_set_new(out->facts, "attempts", json_integer(attempt));
	json_object_set_new(out->facts, "timeout_ms", json_integer(t));
}

/* The cancel goes out once the detached tree is up (at most
 * CANCEL_READY_WAIT_MS), so the run's own timeout only has to outlast that
 * wait with room for the cancel to act: 5 s more (a gVisor container of
 * its own, the slowest, is up and killed in 1-2 s on a loaded 2-core
 * host). It is also how long a provider whose cancelled run never returns
 * holds collect up (an adapter: this plus its 5 s execute deadline), so it
 * is no longer than that. */
static void lifecycle_cancel_cleanup(const struct check_env *env, struct check_out *out)
{
	lifecycle_cleanup(env, out, true, CANCEL_READY_WAIT_MS + 5000);
}

/* ---- contract checks ---------------------------------------------------- */

static bool same_json(const json_t *a, const json_t *b)
{
	return a && b && json_equal((json_t *)a, (json_t *)b);
}

static void lifecycle_consistent(const struct check_env *env, struct check_out *out)
{
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	if (env->ops->ensure(env->ops, env->ctx, env->grant, &h, &fail) < 0) {
		cf_reason(out, "ensure failed after a ready probe: %s (%s)", fail.reason ? fail.reason : "?", fail.message);
		return;
	}
	int health_before = agsbx_provider_health(h);
	struct agsbx_exec_result xr = { 0 };
	int run = cf_sandbox_op(env, out, h, NULL, ARGS("true"), NULL, &xr);
	json_t *claims = agsbx_caps_to_json(&env->probe->caps);
	const json_t *meta = xr.meta;
	bool meta_ok = run == 0 && meta &&
		       json_is_string(json_object_get(meta, "provider")) &&
		       strcmp(json_string_value(json_object_get(meta, "provider")), env->ops->id) == 0 &&
		       same_json(json_object_get(meta, "capabilities"), claims) &&
		       json_is_string(json_object_get(meta, "mechanism")) &&
		       strcmp(json_string_value(json_object_get(meta, "mechanism")), env->probe->caps.mechanism ?: "none") == 0;
	json_object_set_new(out->facts, "probe_capabilities", claims);
	json_object_set_new(out->facts, "result_meta", meta ? json_incref((json_t *)meta) : json_null());
	agsbx_exec_result_clear(&xr);
	agsbx_provider_release(h);
	int health_after = agsbx_provider_health(h);
	_cleanup_free_ char *n = nonce(), *name = NULL;
	if (!n || asprintf(&name, "after-release-%s", n) < 0)
		name = NULL;
	_cleanup_free_ char *inside = agsbx_handle_path(h, AGSBX_ROOT_OUTPUT, name ? name : "x");
	_cleanup_free_ char *host = host_path(env, AGSBX_ROOT_OUTPUT, name ? name : "x");
	int after = cf_sandbox_op(env, out, h, NULL, ARGS("write", inside, "after-release"), NULL, NULL);
	bool ran_after = access(host, F_OK) == 0;
	agsbx_provider_release(h); /* idempotent */
	agsbx_handle_free(h);
	json_object_set_new(out->facts, "health_before_release", json_string(health_before == 0 ? "ready" : "unhealthy"));
	json_object_set_new(out->facts, "health_after_release", json_string(health_after == 0 ? "ready" : "unhealthy"));
	json_object_set_new(out->facts, "execute_after_release_refused", json_boolean(after < 0 && !ran_after));
	out->observed_pass = health_before == 0 && health_after != 0 && after < 0 && !ran_after && meta_ok;
	cf_reason(out, "health %s before release, %s after; execute after release %s; result metadata %s the probe",
		     health_before == 0 ? "ready" : "UNHEALTHY", health_after == 0 ? "READY" : "unhealthy",
		     after < 0 && !ran_after ? "refused" : "RAN", meta_ok ? "matches" : "DISAGREES WITH");
}

static void fail_closed(const struct check_env *env, struct check_out *out)
{
	bool real = !env->probe->available;
	const char *sim = env->ops->fail_closed_simulation;
	if (!real && !sim) {
		cf_skip(out, "%s has no mechanism that can be made unavailable", env->ops->id);
		return;
	}
	struct agsbx_ctx c = *env->ctx;
	if (!real)
		c.simulate = sim;
	struct agsbx_probe p = { 0 };
	env->ops->probe(env->ops, &c, &p);
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	int er = env->ops->ensure(env->ops, &c, env->grant, &h, &fail);
	_cleanup_free_ char *n = nonce(), *name = NULL;
	if (!n || asprintf(&name, "fail-closed-%s", n) < 0)
		name = NULL;
	_cleanup_free_ char *host = host_path(env, AGSBX_ROOT_OUTPUT, name ? name : "x");
	if (er == 0 && h) {
		/* Fail-open: the provider accepted work it could not isolate. */
		_cleanup_free_ char *inside = agsbx_handle_path(h, AGSBX_ROOT_OUTPUT, name ? name : "x");
		cf_sandbox_op(env, out, h, NULL, ARGS("write", inside, "fail-open"), NULL, NULL);
		agsbx_provider_release(h);
		agsbx_handle_free(h);
	}
	bool executed = access(host, F_OK) == 0;
	bool documented = fail.reason && agsbx_reason_in_set(env->ops, fail.reason) && strcmp(fail.reason, "ready") != 0;
	json_object_set_new(out->facts, "how", json_string(real ? "mechanism unavailable on this host" : "simulation"));
	json_object_set_new(out->facts, "simulation", real ? json_null() : json_string(sim));
	json_object_set_new(out->facts, "probe_under_test", agsbx_provider_probe_to_json(&p));
	json_object_set_new(out->facts, "ensure_reason", fail.reason ? json_string(fail.reason) : json_null());
	json_object_set_new(out->facts, "ensure_message", json_string(fail.message));
	json_object_set_new(out->facts, "payload_marker_written", json_boolean(executed));
	out->observed_pass = er < 0 && documented && !executed && !p.available;
	cf_reason(out, "%s: ensure %s%s%s; payload %s", real ? "unavailable" : sim,
		     er < 0 ? "refused with " : "SUCCEEDED", er < 0 ? (fail.reason ? fail.reason : "no reason") : "",
		     er < 0 && !documented ? " (NOT in the documented set)" : "", executed ? "EXECUTED" : "never executed");
	agsbx_provider_probe_clear(&p);
}

/* An unavailable provider whose reason asserts a host condition the
 * harness can decide: the harness's own probe must not show the opposite.
 * Both facts go into facts.host_condition. */
static bool blocked_reason_true(const struct check_env *env, const struct agsbx_probe *p, json_t *facts)
{
	const char *cond = p->available ? NULL : cf_reason_condition(env->ops, p->reason);
	if (!cond)
		return true;
	json_t *how = json_object();
	int holds = cf_hostcond_decide(env, cond, how);
	json_object_set_new(facts, "host_condition",
			    json_pack("{s:s, s:s, s:b, s:o, s:o}", "reason", p->reason, "condition", cond,
				      "provider_says", 1, "harness_observed", holds < 0 ? json_null() : json_boolean(holds),
				      "how", how));
	return holds != 0;
}

static void probe_truthful(const struct check_env *env, struct check_out *out)
{
	const struct agsbx_probe *p = env->probe;
	bool in_set = agsbx_reason_in_set(env->ops, p->reason);
	bool consistent = p->available == (p->reason && strcmp(p->reason, "ready") == 0);
	/* The probe must be a stable observation: a second probe agrees. */
	struct agsbx_probe again = { 0 };
	env->ops->probe(env->ops, env->ctx, &again);
	bool stable = again.reason && p->reason && strcmp(again.reason, p->reason) == 0 &&
		      again.available == p->available;
	json_object_set_new(out->facts, "reason_in_closed_set", json_boolean(in_set));
	json_object_set_new(out->facts, "available_iff_ready", json_boolean(consistent));
	json_object_set_new(out->facts, "second_probe_reason", again.reason ? json_string(again.reason) : json_null());
	/* Facts a provider shares with the host probes must agree with them. */
	static const struct { const char *fact, *family, *host_fact; } shared[] = {
		{ "system_abi", "landlock", "abi" },
		{ "bwrap_path", "bubblewrap", "path" },
		{ "bwrap_version", "bubblewrap", "version" },
		{ "server_version", "docker", "version" },
	};
	bool facts_ok = true;
	json_t *compared = json_object();
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(shared); i++) {
		const json_t *pv = json_object_get(p->facts, shared[i].fact);
		const json_t *hv = json_object_get(json_object_get(json_object_get(env->ctx->host, shared[i].family),
								   shared[i].host_fact), "value");
		if (!pv || !hv)
			continue;
		bool eq = json_equal((json_t *)pv, (json_t *)hv);
		facts_ok &= eq;
		json_object_set_new(compared, shared[i].fact, json_boolean(eq));
	}
	json_object_set_new(out->facts, "facts_match_host", compared);
	bool host_agrees = blocked_reason_true(env, p, out->facts);
	out->observed_pass = in_set && consistent && stable && facts_ok && host_agrees;
	cf_reason(out, "reason '%s' %s the closed set; available %s reason ready; second probe %s%s%s",
		     p->reason ? p->reason : "(none)", in_set ? "is in" : "is NOT in", consistent ? "<=>" : "does NOT match",
		     stable ? "agrees" : "DISAGREES", facts_ok ? "" : "; facts DISAGREE with the host probes",
		     host_agrees ? "" : "; the host does NOT have the condition the reason asserts");
	agsbx_provider_probe_clear(&again);
}

/* capabilities.truthful is computed by the matrix from all the others. */

const struct check_def cf_checks[] = {
	{ .id = "bundle.integrity_enforced", .axis = AGSBX_AXIS_CONTRACT, .run = check_bundle_integrity_enforced, .needs_handle = true,
	  .title = "a source file changed after materialisation: execution refused with bundle_changed" },
	{ .id = "capabilities.truthful", .axis = AGSBX_AXIS_CONTRACT, .phase = CHECK_PHASE_JUDGE,
	  .run = judge_capabilities_truthful, .needs_handle = true,
	  .title = "every claimed axis is backed by passing checks of that axis (an overclaim is a defect)" },
	{ .id = "config.unknown_rejected", .axis = AGSBX_AXIS_CONTRACT, .run = check_config_unknown_rejected, .needs_handle = true,
	  .title = "an unknown config key: ensure refuses with config_invalid" },
	{ .id = "env.scrubbed", .axis = AGSBX_AXIS_ENVIRONMENT, .run = env_scrubbed, .needs_handle = true,
	  .title = "a harness canary variable is not visible inside" },
	{ .id = "exec.status_fidelity", .axis = AGSBX_AXIS_CONTRACT, .run = check_exec_status_fidelity, .needs_handle = true, .long_running = true,
	  .title = "exit 0/1/42/127 and death by SIGTERM/SIGKILL are reported exactly" },
	{ .id = "fail.closed", .axis = AGSBX_AXIS_CONTRACT, .run = fail_closed,
	  .title = "an unavailable mechanism refuses work; nothing executes; no fallback" },
	{ .id = "fs.grant_write", .axis = AGSBX_AXIS_CONTRACT, .run = fs_grant_write, .needs_handle = true,
	  .title = "a nonce written into the output root reaches the host" },
	{ .id = "fs.hardlink_alias_denied", .axis = AGSBX_AXIS_FILESYSTEM, .evidence = CHECK_REFUTES, .run = check_fs_hardlink_alias_denied, .needs_handle = true,
	  .title = "a hard link to the canary cannot be made in a writable root (control: can outside)" },
	{ .id = "fs.host_read_denied", .axis = AGSBX_AXIS_FILESYSTEM, .run = fs_host_read_denied, .needs_handle = true,
	  .title = "a 0644 canary outside the grant is unreadable (control: readable outside)" },
	{ .id = "fs.host_write_denied", .axis = AGSBX_AXIS_FILESYSTEM, .run = fs_host_write_denied, .needs_handle = true,
	  .title = "creating a file outside the grant is denied and absent on the host" },
	{ .id = "fs.inherited_fds_contained", .axis = AGSBX_AXIS_FILESYSTEM, .evidence = CHECK_REFUTES, .run = check_fs_inherited_fds_contained, .needs_handle = true,
	  .title = "descriptors, cwd and root inside do not reach the canary by openat(fd, \"../..\") (control: outside they do)" },
	{ .id = "fs.kernel_interfaces_readonly", .axis = AGSBX_AXIS_FILESYSTEM, .evidence = CHECK_REFUTES, .run = check_fs_kernel_interfaces_readonly, .needs_handle = true,
	  .title = "kernel write interfaces (core_pattern, release_agent, ...) do not open for write; no cgroup mount (control: outside)" },
	{ .id = "fs.no_host_residue", .axis = AGSBX_AXIS_CONTRACT, .run = check_fs_no_host_residue, .needs_handle = true, .exclusive = true,
	  .title = "sandboxed runs leave nothing new in the work dir, grant parent, /tmp or $HOME" },
	{ .id = "fs.readonly_grant_denied", .axis = AGSBX_AXIS_FILESYSTEM, .run = fs_readonly_grant_denied, .needs_handle = true,
	  .title = "writes into the read-only source root are denied; host content unchanged" },
	{ .id = "fs.remount_denied", .axis = AGSBX_AXIS_FILESYSTEM, .run = fs_remount_denied, .needs_handle = true,
	  .title = "remounting a read-only bind read-write or mounting a filesystem is denied" },
	{ .id = "fs.symlink_escape_denied", .axis = AGSBX_AXIS_FILESYSTEM, .run = fs_symlink_escape_denied, .needs_handle = true,
	  .title = "a symlink in a writable root does not reach the canary" },
	{ .id = "ipc.host_daemons_denied", .axis = AGSBX_AXIS_PROCESS, .evidence = CHECK_REFUTES, .run = check_ipc_host_daemons_denied, .needs_handle = true,
	  .title = "well-known daemon sockets the sandbox user reaches outside are unreachable inside (connect only)" },
	{ .id = "ipc.host_sockets_denied", .axis = AGSBX_AXIS_PROCESS, .evidence = CHECK_REFUTES, .run = check_ipc_host_sockets_denied, .needs_handle = true,
	  .title = "host pathname and abstract unix sockets (and Docker's) are unreachable (control: reachable outside)" },
	{ .id = "lifecycle.cancel_cleanup", .axis = AGSBX_AXIS_CONTRACT, .run = lifecycle_cancel_cleanup, .needs_handle = true, .exclusive = AGSBX_EXCLUSIVE_ORPHANS,
	  .title = "cancelling mid-run leaves no process and no provider resource" },
	{ .id = "lifecycle.consistent", .axis = AGSBX_AXIS_CONTRACT, .run = lifecycle_consistent, .needs_handle = true,
	  .title = "probe, ensure, health, execute, release, health, execute agree" },
	{ .id = "lifecycle.timeout_cleanup", .axis = AGSBX_AXIS_CONTRACT, .run = lifecycle_timeout_cleanup, .needs_handle = true, .exclusive = AGSBX_EXCLUSIVE_ORPHANS,
	  .title = "a timeout kills a detached SIGTERM-ignoring tree; nothing left" },
	{ .id = "net.egress_denied", .axis = AGSBX_AXIS_NET_EGRESS, .run = net_egress_denied, .needs_handle = true,
	  .title = "a host loopback listener is unreachable (control: reachable outside)" },
	{ .id = "net.egress_ipv6_denied", .axis = AGSBX_AXIS_NET_EGRESS, .evidence = CHECK_REFUTES, .run = check_net_egress_ipv6_denied, .needs_handle = true, .long_running = true,
	  .title = "[::1] and ::ffff:127.0.0.1 TCP listeners are unreachable, also from a detached descendant" },
	{ .id = "net.egress_udp_denied", .axis = AGSBX_AXIS_NET_NAMESPACE, .evidence = CHECK_REFUTES, .run = check_net_egress_udp_denied, .needs_handle = true,
	  .title = "a 127.0.0.1 UDP receiver gets nothing, also from a detached descendant" },
	{ .id = "net.namespace_distinct", .axis = AGSBX_AXIS_NET_NAMESPACE, .run = net_namespace_distinct, .needs_handle = true,
	  .title = "the net namespace differs from the host's" },
	{ .id = "output.bounded", .axis = AGSBX_AXIS_CONTRACT, .run = output_bounded, .needs_handle = true, .long_running = true,
	  .title = "64 MiB floods on stdout and stderr are capped and flagged" },
	{ .id = "priv.capabilities_dropped", .axis = AGSBX_AXIS_PRIVILEGE, .evidence = CHECK_REFUTES, .run = check_priv_capabilities_dropped, .needs_handle = true,
	  .title = "no capability inside; a setuid-root program gains nothing (control: it does outside)" },
	{ .id = "priv.no_escalation", .axis = AGSBX_AXIS_PRIVILEGE, .run = priv_no_escalation, .needs_handle = true,
	  .title = "NoNewPrivs is set and no effective capability is held" },
	{ .id = "probe.truthful", .axis = AGSBX_AXIS_CONTRACT, .run = probe_truthful, .long_running = true,
	  .title = "reason in the closed set; available <=> ready; facts match the host" },
	{ .id = "proc.contained", .axis = AGSBX_AXIS_PROCESS, .run = proc_contained, .needs_handle = true,
	  .title = "own pid namespace; the harness pid is not visible" },
	{ .id = "proc.ptrace_denied", .axis = AGSBX_AXIS_PROCESS, .evidence = CHECK_REFUTES, .run = check_proc_ptrace_denied, .needs_handle = true,
	  .title = "ptrace, process_vm_readv, /proc/PID/mem and environ of a process outside are denied" },
	{ .id = "resources.memory_bounded", .axis = AGSBX_AXIS_RESOURCES, .run = check_resources_memory_bounded, .needs_handle = true, .exclusive = true,
	  .title = "a touch-every-page balloon is stopped below 1 GiB (control: the host does not bound it outside)" },
	{ .id = "resources.pids_bounded", .axis = AGSBX_AXIS_RESOURCES, .run = check_resources_pids_bounded, .needs_handle = true, .exclusive = true,
	  .title = "a fork loop is stopped below 2048 children (control: the host does not bound it outside)" },
	{ .id = "secrets.home_denied", .axis = AGSBX_AXIS_FILESYSTEM, .evidence = CHECK_REFUTES, .run = check_secrets_home_denied, .needs_handle = true,
	  .title = "a key in a dot-directory of the real $HOME is unreadable (control: readable outside)" },
	{ .id = "secrets.keyring_denied", .axis = AGSBX_AXIS_PROCESS, .evidence = CHECK_REFUTES, .run = check_secrets_keyring_denied, .needs_handle = true,
	  .title = "a key in the sandbox user's user and session keyrings is unreadable (control: readable outside)" },
	{ .id = "syscalls.io_uring_denied", .axis = AGSBX_AXIS_SYSCALLS, .evidence = CHECK_REFUTES, .run = check_syscalls_io_uring_denied, .needs_handle = true,
	  .title = "io_uring_setup is refused (control: allowed outside)" },
	{ .id = "syscalls.kernel_surface_denied", .axis = AGSBX_AXIS_SYSCALLS, .evidence = CHECK_REFUTES, .run = check_syscalls_kernel_surface_denied, .needs_handle = true,
	  .title = "nested userns, AF_PACKET, bpf, AF_ALG, userfaultfd, keyrings, perf, open_by_handle_at, finit_module do not reach the host kernel" },
	{ .id = "syscalls.restricted", .axis = AGSBX_AXIS_SYSCALLS, .run = syscalls_restricted, .needs_handle = true,
	  .title = "a seccomp filter or a user-space kernel mediates syscalls" },
};
const size_t cf_checks_count = AGSBX_ARRAY_SIZE(cf_checks);
