/* The syscalls axis: a seccomp filter or user-space kernel, io_uring, and
 * the kernel attack surface local privilege escalations need. */
#include "conformance/checks/attack.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/util.h"

/* ---- syscalls.restricted ------------------------------------------------ */

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

/* ---- syscalls.io_uring_denied ------------------------------------------- */

static void check_syscalls_io_uring_denied(const struct check_env *env, struct check_out *out)
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
		cf_control_skip(out, "io_uring_setup is refused", ctl);
		return;
	}
	/* A user-space kernel (gVisor's Sentry) answers io_uring itself: the
	 * host's io_uring, the attack surface, is then not reachable. Seen as
	 * a kernel release inside that is not the host's. */
	json_t *un = NULL;
	if (cf_result_ok(res))
		cf_sandbox_op(env, out, env->h, NULL, ARGS("uname"), &un, NULL);
	const char *rel = json_string_value(cf_sub(un, "release"));
	bool own_kernel = rel && env->host_kernel_release && strcmp(rel, env->host_kernel_release) != 0;
	json_object_set_new(out->facts, "served_by_sandbox_kernel", json_boolean(own_kernel));
	out->observed_pass = res && (!cf_result_ok(res) || own_kernel);
	cf_reason(out, "io_uring_setup inside: %s%s; control ok outside", cf_denial(res),
		     cf_result_ok(res) ? (own_kernel ? " by the sandbox's own kernel, not the host's" : " by the HOST kernel") : "");
}

static bool starts(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- syscalls.kernel_surface_denied ------------------------------------- */

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
	json_object_foreach((json_t *)cf_sub(res, "s"), k, v) {
		const char *in = json_string_value(v), *c = json_string_value(cf_sub(cf_sub(ctl, "s"), k));
		bool r_in = starts(in, "reached"), r_ctl = starts(c, "reached");
		bool host = r_in && !own_kernel;
		t->host_in += host;
		t->ctl += r_ctl;
		cf_append(t->detail, sizeof t->detail, k,
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
static void check_syscalls_kernel_surface_denied(const struct check_env *env, struct check_out *out)
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
	const char *rel = json_string_value(cf_sub(res, "release"));
	bool own_kernel = rel && env->host_kernel_release && strcmp(rel, env->host_kernel_release) != 0;
	struct surface_tally t = { 0 };
	json_object_set_new(out->facts, "surfaces", surface_table(res, ctl, own_kernel, &t));
	json_object_set_new(out->facts, "served_by_sandbox_kernel", json_boolean(own_kernel));
	if (!res) {
		cf_no_observation(out, "the kernel surface table");
		return;
	}
	if (!json_is_object(cf_sub(res, "s"))) {
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

const struct check_def cf_checks_syscalls[] = {
	{ .id = "syscalls.io_uring_denied", .axis = AGSBX_AXIS_SYSCALLS, .evidence = CHECK_REFUTES, .run = check_syscalls_io_uring_denied, .needs_handle = true,
	  .title = "io_uring_setup is refused (control: allowed outside)",
	  .attacks = "io_uring_setup",
	  .why = "io_uring bypasses seccomp filters and is a frequent kernel attack surface",
	  .control = "io_uring_setup succeeds outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" } } },
	{ .id = "syscalls.kernel_surface_denied", .axis = AGSBX_AXIS_SYSCALLS, .evidence = CHECK_REFUTES, .run = check_syscalls_kernel_surface_denied, .needs_handle = true,
	  .title = "nested userns, AF_PACKET, bpf, AF_ALG, userfaultfd, keyrings, perf, open_by_handle_at, finit_module do not reach the host kernel",
	  .attacks = "nested userns, AF_PACKET, bpf, AF_ALG, userfaultfd, keyrings, perf, open_by_handle_at, finit_module",
	  .why = "the surfaces the common local privilege escalations need",
	  .control = "each surface is reached outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_deny_liar" } } },
	{ .id = "syscalls.restricted", .axis = AGSBX_AXIS_SYSCALLS, .run = syscalls_restricted, .needs_handle = true,
	  .title = "a seccomp filter or a user-space kernel mediates syscalls",
	  .attacks = "reads the seccomp mode and the kernel release inside",
	  .why = "the syscalls axis itself: a filter or a user-space kernel",
	  .control = "the host's kernel release",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_silent_refusal" } } },
};
const size_t cf_checks_syscalls_count = AGSBX_ARRAY_SIZE(cf_checks_syscalls);
