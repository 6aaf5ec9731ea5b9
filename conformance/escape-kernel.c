/* Catalogue v3, kernel and resources: writable
 * kernel interfaces and cgroup mounts, the kernel attack surface local
 * privilege escalations need, and bounds on processes and memory. The
 * attacks change nothing on the host: interfaces are opened for write and
 * closed unwritten, a mount happens only in the sandbox's own mount
 * namespace (and is undone at once), no probe can load a kernel module,
 * and the balloons stay under a hard cap. */
#include "conformance/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/proc.h"
#include "base/util.h"

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The balloons' hard caps: the payload never goes beyond them. */
#define PIDS_CAP 2048
#define MEMORY_CAP_MIB 1024

static const json_t *sub(const json_t *res, const char *k)
{
	return json_object_get(res, k);
}

static bool starts(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "A B" appended to a comma-separated summary. */
static void append(char *buf, size_t size, const char *a, const char *b)
{
	size_t l = strlen(buf);
	if (l < size)
		snprintf(buf + l, size - l, "%s%s %s", l ? ", " : "", a, b);
}

/* ---- fs.kernel_interfaces_readonly ------------------------------------- */

struct iface_tally {
	int opened_in, opened_ctl;
	char in[200], ctl[160];
};

/* Interface by interface: what the sandbox and the control got. */
static json_t *iface_table(const json_t *res, const json_t *ctl, struct iface_tally *t)
{
	json_t *table = json_object();
	const json_t *w = sub(res, "w"), *cw = sub(ctl, "w");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)w, k, v) {
		const char *in = json_string_value(v), *out = json_string_value(sub(cw, k));
		bool o_in = in && (!strcmp(in, "opened")), o_ctl = out && !strcmp(out, "opened");
		t->opened_in += o_in;
		t->opened_ctl += o_ctl;
		if (o_in)
			append(t->in, sizeof t->in, k, "OPENED");
		else if (in && strcmp(in, "absent") != 0)
			append(t->in, sizeof t->in, k, in);
		if (out && strcmp(out, "absent") != 0)
			append(t->ctl, sizeof t->ctl, k, out);
		json_object_set_new(table, k, json_pack("{s:s, s:s, s:b}", "inside", in ? in : "no result", "control",
							out ? out : "no result", "opened_inside", o_in));
	}
	return table;
}

static const char *mount_summary(const json_t *m, char *buf, size_t size)
{
	if (!json_is_true(sub(m, "attempted")))
		snprintf(buf, size, "%s", json_string_value(sub(m, "why")) ?: "no result");
	else
		snprintf(buf, size, "cgroup v1 (%s) %s, cgroup2 %s", json_string_value(sub(m, "cgroup1_controller")) ?: "?",
			 json_string_value(sub(m, "cgroup1")) ?: "?", json_string_value(sub(m, "cgroup2")) ?: "?");
	return buf;
}

/* Fails where the sandbox opened any interface for write (whatever the
 * control did: one the control could not open is worse) or was permitted
 * a cgroup mount; passes where the control opened at least one and the
 * sandbox none; otherwise (the control opened none: an unprivileged user
 * outside) a skip that says so. */
void check_fs_kernel_interfaces_readonly(const struct check_env *env, struct check_out *out)
{
	struct stat st;
	if (stat("/proc/self/ns/mnt", &st) < 0) {
		cf_skip(out, "the host mount namespace cannot be read: %s", strerror(errno));
		return;
	}
	char ino[32];
	snprintf(ino, sizeof ino, "%llu", (unsigned long long)st.st_ino);
	_cleanup_free_ char *in_out = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, NULL);
	json_t *res, *ctl;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("kernel-ifaces", ino, in_out), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	cf_control_op(env, out, ARGS("kernel-ifaces", ino, env->grant->roots[AGSBX_ROOT_OUTPUT].path), &ctl);
	struct iface_tally t = { 0 };
	json_object_set_new(out->facts, "interfaces", iface_table(res, ctl, &t));
	json_object_set_new(out->facts, "mount_inside", json_incref((json_t *)(sub(res, "mount") ?: json_null())));
	json_object_set_new(out->facts, "recorded_inside", json_pack("{s:O?, s:O?, s:O?}", "kcore", sub(res, "kcore"),
								      "kallsyms", sub(res, "kallsyms"), "debugfs", sub(res, "debugfs")));
	json_object_set_new(out->facts, "recorded_control", json_pack("{s:O?, s:O?, s:O?}", "kcore", sub(ctl, "kcore"),
								       "kallsyms", sub(ctl, "kallsyms"), "debugfs", sub(ctl, "debugfs")));
	json_int_t mounts = json_integer_value(sub(res, "mounts_permitted"));
	char m[160];
	mount_summary(sub(res, "mount"), m, sizeof m);
	if (!res) {
		cf_no_observation(out, "zero-byte opens for write of kernel interfaces");
		return;
	}
	if (!json_is_object(sub(res, "w"))) {
		cf_reason(out, "the payload reported no interface (%s)", cf_result_errno(res));
		return;
	}
	if (t.opened_in == 0 && mounts == 0 && t.opened_ctl == 0) {
		cf_skip(out, "control failed: as uid %d outside no kernel interface opens for write either (%s); the "
			     "check shows something only where code runs as uid 0 inside. Inside: %s; mounts: %s",
			(int)(env->ctx->run_as ? env->ctx->run_uid : getuid()), t.ctl[0] ? t.ctl : "none present",
			t.in[0] ? t.in : "none present", m);
		return;
	}
	out->observed_pass = t.opened_in == 0 && mounts == 0;
	cf_reason(out, "opened for write inside: %d (%s); mounts: %s; control opened %d outside; kallsyms %s, kcore %s, "
		       "debugfs %s inside (recorded)", t.opened_in, t.in[0] ? t.in : "none present", m, t.opened_ctl,
		  json_string_value(sub(res, "kallsyms")) ?: "?", json_string_value(sub(res, "kcore")) ?: "?",
		  json_string_value(sub(res, "debugfs")) ?: "?");
}

/* ---- syscalls.kernel_surface_denied --------------------------------------- */

/* Whether FILE (a /proc text) has a line starting with WORD followed by
 * a blank. */
static bool has_line(const char *file, const char *word)
{
	_cleanup_fclose_ FILE *f = fopen(file, "re");
	char line[512];
	size_t n = strlen(word);
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, word, n) == 0 && (line[n] == ' ' || line[n] == '\t'))
			return true;
	return false;
}

/* Decided on the host, whose kernel would load the module: a family is
 * probed only where it is already registered (/proc/net/protocols) and,
 * for AF_ALG's bind to hash/sha256, algif_hash and sha256 are present
 * (/proc/modules, /sys/module, /proc/crypto); a kernel without module
 * support (no /proc/modules) can load none. */
static void module_safe(bool *packet, bool *alg, json_t *facts)
{
	bool modules = access("/proc/modules", F_OK) == 0;
	bool hash = access("/sys/module/algif_hash", F_OK) == 0 || has_line("/proc/modules", "algif_hash");
	bool sha = false;
	_cleanup_fclose_ FILE *f = fopen("/proc/crypto", "re");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		sha |= starts(line, "name") && strstr(line, ": sha256\n");
	*packet = !modules || has_line("/proc/net/protocols", "PACKET");
	*alg = !modules || (has_line("/proc/net/protocols", "ALG") && hash && sha);
	json_object_set_new(facts, "module_loading", json_pack("{s:b, s:b, s:b}", "kernel_loads_modules", modules,
							       "af_packet_probed", *packet, "af_alg_probed", *alg));
}

struct surface_tally {
	int host_in, ctl;
	char detail[400];
};

static json_t *surface_table(const json_t *res, const json_t *ctl, bool own_kernel, struct surface_tally *t)
{
	json_t *table = json_object();
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)sub(res, "s"), k, v) {
		const char *in = json_string_value(v), *c = json_string_value(sub(sub(ctl, "s"), k));
		bool r_in = starts(in, "reached"), r_ctl = starts(c, "reached");
		bool host = r_in && !own_kernel;
		t->host_in += host;
		t->ctl += r_ctl;
		append(t->detail, sizeof t->detail, k,
		       host ? "REACHED the host kernel" : r_in ? "served by the sandbox's kernel" : in ? in : "no result");
		json_object_set_new(table, k, json_pack("{s:s, s:s, s:b}", "inside", in ? in : "no result", "control",
							c ? c : "no result", "host_kernel_reached_inside", host));
	}
	return table;
}

/* Fails where a surface the host kernel serves was reached inside (a
 * user-space kernel, seen as a kernel release inside that is not the
 * host's, serves it itself: recorded, not counted); passes where the
 * control reached at least one surface outside and the sandbox none;
 * a skip where the control reached none. */
void check_syscalls_kernel_surface_denied(const struct check_env *env, struct check_out *out)
{
	bool packet, alg;
	module_safe(&packet, &alg, out->facts);
	_cleanup_free_ char *in_file = agsbx_handle_path(env->h, AGSBX_ROOT_SOURCE, AGSBX_PAYLOAD_NAME);
	_cleanup_free_ char *host_file = agsbx_path_join(env->grant->roots[AGSBX_ROOT_SOURCE].path, AGSBX_PAYLOAD_NAME);
	const char *pk = packet ? "packet=1" : "packet=0", *al = alg ? "alg=1" : "alg=0";
	json_t *res, *ctl;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("kernel-surface", in_file, pk, al), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	cf_control_op(env, out, ARGS("kernel-surface", host_file, pk, al), &ctl);
	const char *rel = json_string_value(sub(res, "release"));
	bool own_kernel = rel && env->host_kernel_release && strcmp(rel, env->host_kernel_release) != 0;
	struct surface_tally t = { 0 };
	json_object_set_new(out->facts, "surfaces", surface_table(res, ctl, own_kernel, &t));
	json_object_set_new(out->facts, "served_by_sandbox_kernel", json_boolean(own_kernel));
	if (!res) {
		cf_no_observation(out, "the kernel surface table");
		return;
	}
	if (!json_is_object(sub(res, "s"))) {
		cf_reason(out, "the payload reported no surface (%s)", cf_result_errno(res));
		return;
	}
	if (t.host_in == 0 && t.ctl == 0) {
		cf_skip(out, "control failed: outside, as the same user, no surface is reachable either; inside: %s",
			t.detail);
		return;
	}
	out->observed_pass = t.host_in == 0;
	cf_reason(out, "%d surface(s) of the host kernel reached inside; %s; control reached %d outside", t.host_in,
		  t.detail, t.ctl);
}

/* ---- resources.pids_bounded, resources.memory_bounded ---------------------- */

/* Never two balloons at once on the machine (another provider's worker,
 * another collect): an abstract unix socket bound for the duration is
 * the lock; the kernel releases it with the process, however it ends.
 * Waits at most LOCK_WAIT_MS; -EBUSY then. */
#define LOCK_WAIT_MS 120000
static int machine_lock(void)
{
	static const char name[] = "@agsbx-evidence-resource-checks";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	memcpy(a.sun_path, name, sizeof name - 1);
	a.sun_path[0] = '\0';
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sizeof name - 1);
	for (int waited = 0; waited <= LOCK_WAIT_MS; waited += 100) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (bind(fd, (struct sockaddr *)&a, len) == 0)
			return fd;
		int e = errno;
		close(fd);
		if (e != EADDRINUSE || agsbx_runner_aborted())
			return -e;
		usleep(100 * 1000);
	}
	return -EBUSY;
}

/* Wall-clock microseconds: lock windows compared across processes. */
static int64_t unix_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A bound the host already sets outside (the control's `limits`), below
 * CAP (in the units of KEY): the sandbox's own bound is then not shown. */
static bool host_bounds(const json_t *ctl, const char *key, json_int_t cap)
{
	const json_t *v = sub(ctl, key);
	return json_is_integer(v) && json_integer_value(v) < cap;
}

struct balloon {
	const char *op, *what;
	json_int_t cap;
	char cap_arg[16];
};

/* The last "agsbx-progress N" the payload wrote on stderr, or -1. */
static long long last_progress(const struct agsbx_run_result *r)
{
	long long n = -1;
	const char *e = r->err ? r->err + r->err_len : NULL;
	for (const char *p = r->err; p && p < e && (p = memmem(p, (size_t)(e - p), "agsbx-progress ", 15)); p += 15)
		n = strtoll(p + 15, NULL, 10);
	return n;
}

/* No result line: the sandbox ended the whole run (its runtime killed or
 * lost it). Bounded when it ended by itself, not by the harness's timeout
 * or cancel, before the progress reached the cap. */
static void judge_ended(struct check_out *out, const struct balloon *b, const struct agsbx_run_result *r)
{
	long long got = last_progress(r);
	json_object_set_new(out->facts, "progress_before_end", json_integer(got));
	/* no "agsbx-progress 0": the payload never started, nothing was bounded */
	if (got < 0) {
		cf_no_observation(out, b->what);
		return;
	}
	bool by_sandbox = !r->timed_out && !r->cancelled && r->status != 0;
	out->observed_pass = by_sandbox && got < b->cap;
	cf_reason(out, "%s inside: no result line; the run ended with status %d%s after %lld of the %lld cap%s", b->what,
		  r->status, r->timed_out ? " (the harness's timeout)" : "", got < 0 ? 0 : got, (long long)b->cap,
		  out->observed_pass ? ": the sandbox ended it below the cap" : ": NOT shown bounded");
}

/* The run inside, in a sandbox of its own where the provider has one (an
 * out-of-memory kill must not take a shared one with it). */
static void balloon_run(const struct check_env *env, struct check_out *out, const struct balloon *b)
{
	struct agsbx_limits lim = { .max_output_bytes = env->o->max_output_bytes, .timeout_ms = env->o->timeout_ms,
				    .cancel_fd = -1, .own_sandbox = true };
	struct agsbx_exec_result xr = { 0 };
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, &lim, ARGS(b->op, b->cap_arg), &res, &xr) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	json_object_set_new(out->facts, "cap", json_integer(b->cap));
	json_object_set_new(out->facts, "inside", res ? json_incref(res) : json_null());
	if (!res) {
		judge_ended(out, b, &xr.run);
	} else {
		out->observed_pass = json_is_true(sub(res, "bounded"));
		cf_reason(out, "%s inside: stopped at %lld of the %lld cap (%s)%s", b->what,
			  (long long)json_integer_value(sub(res, json_is_integer(sub(res, "forked")) ? "forked" : "reached_mib")),
			  (long long)b->cap, json_string_value(sub(res, "stopped")) ?: cf_result_errno(res),
			  out->observed_pass ? ": the sandbox bounds it" : ": NOT bounded");
	}
	agsbx_exec_result_clear(&xr);
}

static void resources_check(const struct check_env *env, struct check_out *out, const struct balloon *b,
			    const char *const *host_keys, json_int_t host_cap)
{
	json_t *ctl;
	cf_control_op(env, out, ARGS("limits"), &ctl);
	json_object_set_new(out->facts, "host_limits", ctl ? json_incref(ctl) : json_null());
	for (; *host_keys; host_keys++)
		if (host_bounds(ctl, *host_keys, host_cap)) {
			cf_skip(out, "control: the host already bounds it outside the sandbox (%s %lld, below the cap %lld)",
				*host_keys, (long long)json_integer_value(sub(ctl, *host_keys)), (long long)b->cap);
			return;
		}
	/* Host safety: the balloon runs only where the machine has room for
	 * it twice over, in case the sandbox does not stop it. */
	if (strcmp(b->op, "balloon") == 0 && json_is_integer(sub(ctl, "mem_available_kib")) &&
	    json_integer_value(sub(ctl, "mem_available_kib")) < 2 * b->cap * 1024) {
		cf_skip(out, "not attempted: the host has %lld MiB available, under twice the %lld MiB cap",
			(long long)json_integer_value(sub(ctl, "mem_available_kib")) / 1024, (long long)b->cap);
		return;
	}
	uint64_t t0 = agsbx_now_us();
	int lock = machine_lock();
	if (lock < 0) {
		cf_skip(out, "not attempted: another resource check held the machine's lock (%s)", strerror(-lock));
		return;
	}
	int64_t from = unix_us();
	uint64_t waited = agsbx_now_us() - t0;
	balloon_run(env, out, b);
	json_object_set_new(out->facts, "machine_lock", json_pack("{s:I, s:I, s:I}", "waited_us", (json_int_t)waited,
								  "held_from_unix_us", (json_int_t)from, "held_until_unix_us",
								  (json_int_t)unix_us()));
	close(lock);
	/* The harness keeps only the capped output of the run. */
	json_object_set_new(out->facts, "harness_vm_hwm_kib", json_integer(agsbx_proc_self_status_kib("VmHWM")));
}

void check_resources_pids_bounded(const struct check_env *env, struct check_out *out)
{
	struct balloon b = { "fork-bound", "sleeping children", PIDS_CAP, "" };
	snprintf(b.cap_arg, sizeof b.cap_arg, "%d", PIDS_CAP);
	/* RLIMIT_NPROC binds a user outside too (root ignores it). */
	const char *const keys_user[] = { "cgroup_pids_max", "rlimit_nproc", NULL };
	const char *const keys_root[] = { "cgroup_pids_max", NULL };
	bool root = (env->ctx->run_as ? env->ctx->run_uid : getuid()) == 0;
	resources_check(env, out, &b, root ? keys_root : keys_user, PIDS_CAP);
}

void check_resources_memory_bounded(const struct check_env *env, struct check_out *out)
{
	struct balloon b = { "balloon", "MiB touched", MEMORY_CAP_MIB, "" };
	snprintf(b.cap_arg, sizeof b.cap_arg, "%d", MEMORY_CAP_MIB);
	const char *const keys[] = { "cgroup_memory_max", "rlimit_as", "rlimit_data", NULL };
	resources_check(env, out, &b, keys, (json_int_t)MEMORY_CAP_MIB << 20);
}
