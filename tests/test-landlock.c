/* The landlock provider against the real kernel: probe, ensure, execute
 * with the payload (denials paired with host-side postconditions and a
 * trusted_local control), lifecycle, TOCTOU guard, simulation; and the
 * helper program on its own (masks, refusals). Loop index 0 runs as root,
 * 1 with ctx.run_as set to the unprivileged test user. */
#include "tests/lib/testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/landlock.h"
#include "base/runner.h"
#include "base/util.h"
#include "providers/provider.h"

extern char **environ;

static const struct agsbx_provider_ops *LL = &agsbx_provider_landlock;
static const char *build_dir;
static char *stage_dir;        /* helpers copied where the test user can run them */
static bool have_user;
static uid_t user_uid;
static gid_t user_gid;
static const char *user_name;
static int host_abi;

/* ---- fixture ----------------------------------------------------------- */

struct fx {
	char *tmp;
	struct agsbx_grant *g;
	struct agsbx_ctx ctx;
	char *payload_src;     /* the materialised payload (host path) */
	char *payload_host;    /* $AGSBX_BUILD_DIR/agsbx-payload */
	bool run_as;
};

static void fx_ctx(struct fx *f, bool run_as)
{
	memset(&f->ctx, 0, sizeof f->ctx);
	f->ctx.tool_dir = run_as ? stage_dir : build_dir;
	f->ctx.payload_path = f->payload_host;
	f->ctx.run_as = run_as;
	f->ctx.run_uid = run_as ? user_uid : 0;
	f->ctx.run_gid = run_as ? user_gid : 0;
	f->ctx.run_as_name = run_as ? user_name : NULL;
	f->ctx.probe_timeout_ms = 5000;
}

static void fx_init(struct fx *f, int mode)
{
	memset(f, 0, sizeof *f);
	f->run_as = mode == 1;
	f->tmp = agsbx_test_tmpdir("agsbx-ll");
	ck_assert_ptr_nonnull(f->tmp);
	f->payload_host = agsbx_test_build_path("agsbx-payload");
	fx_ctx(f, f->run_as);
	int r = agsbx_grant_create(f->tmp, "area", f->run_as ? user_uid : (uid_t)-1,
				   f->run_as ? user_gid : (gid_t)-1, &f->g);
	ck_assert_int_eq(r, 0);
	r = agsbx_grant_add_file(f->g, "agsbx-payload", f->payload_host, true);
	ck_assert_msg(r == 0, "add payload: %s", strerror(-r));
	ck_assert_int_eq(agsbx_grant_seal(f->g), 0);
	f->payload_src = agsbx_path_join(f->g->roots[AGSBX_ROOT_SOURCE].path, "agsbx-payload");
}

static void fx_done(struct fx *f)
{
	agsbx_grant_destroy(f->g);
	agsbx_test_rmtree(f->tmp);
	free(f->tmp);
	free(f->payload_src);
	free(f->payload_host);
}

static struct agsbx_handle *fx_ensure(struct fx *f, const struct agsbx_provider_ops *ops)
{
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	int r = ops->ensure(ops, &f->ctx, f->g, &h, &fail);
	ck_assert_msg(r == 0, "%s ensure: %s (%s: %s)", ops->id, strerror(-r), fail.reason, fail.message);
	ck_assert_ptr_nonnull(h);
	return h;
}

static void fx_release(struct agsbx_handle *h)
{
	agsbx_provider_release(h);
	agsbx_handle_free(h);
}

/* Runs the payload with args through ops; returns its parsed JSON line. */
static json_t *payload(struct agsbx_handle *h, int64_t timeout_ms, struct agsbx_exec_result *res,
		       const char *a1, const char *a2, const char *a3)
{
	const char *argv[] = { NULL, a1, a2, a3, NULL };
	_cleanup_free_ char *p = agsbx_handle_path(h, AGSBX_ROOT_SOURCE, "agsbx-payload");
	argv[0] = p;
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 65536, .timeout_ms = timeout_ms, .cancel_fd = -1 };
	struct agsbx_error fail = { 0 };
	int r = h->ops->execute(h, &step, &lim, res, &fail);
	ck_assert_msg(r == 0, "%s execute: %s (%s: %s) stderr=%s", h->ops->id, strerror(-r), fail.reason,
		      fail.message, res->run.err ? res->run.err : "");
	if (!res->run.out || !res->run.out_len)
		return NULL;
	json_error_t jerr;
	return json_loadb(res->run.out, strcspn(res->run.out, "\n"), 0, &jerr);
}

static json_t *payload_ok(struct agsbx_handle *h, const char *a1, const char *a2, const char *a3)
{
	struct agsbx_exec_result res = { 0 };
	json_t *j = payload(h, 20000, &res, a1, a2, a3);
	ck_assert_msg(j, "no JSON from payload %s: out=%s err=%s", a1, res.run.out ? res.run.out : "",
		      res.run.err ? res.run.err : "");
	ck_assert_msg(res.run.exited && res.run.exit_code == 0, "payload %s status %d: %s", a1, res.run.status,
		      res.run.err ? res.run.err : "");
	agsbx_exec_result_clear(&res);
	return j;
}

static const char *jstr(const json_t *j, const char *k)
{
	const char *s = json_string_value(json_object_get(j, k));
	return s ? s : "(null)";
}

static bool file_exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static int count_temps(const char *dir)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strncmp(e->d_name, ".landlock-", 10) == 0;
	return n;
}

/* ---- direct helper runs (no runner: the helper on its own) ------------- */

struct spawned {
	int status;
	char err[4096];
};

static void spawn_wait(char *const argv[], struct spawned *s)
{
	int p[2];
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	pid_t pid;
	int r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	ck_assert_msg(r == 0, "spawn %s: %s", argv[0], strerror(r));
	size_t n = 0;
	for (ssize_t k; n + 1 < sizeof s->err && (k = read(p[0], s->err + n, sizeof s->err - 1 - n)) > 0;)
		n += (size_t)k;
	s->err[n] = '\0';
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &s->status, 0), pid);
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	chmod(path, mode);
}

static char *helper(void)
{
	return agsbx_path_join(build_dir, "agsbx-landlock-exec");
}

/* ---- probe ------------------------------------------------------------- */

START_TEST(test_contract_static)
{
	static const char *const want[] = { "not_linux", "kernel_does_not_support_landlock", "landlock_disabled",
					    "landlock_enforcement_failed", "ready" };
	size_t n = 0;
	for (const char *const *r = LL->reasons; *r; r++, n++)
		ck_assert_str_eq(*r, want[n]);
	ck_assert_uint_eq(n, AGSBX_ARRAY_SIZE(want));
	ck_assert_ptr_null(LL->config_keys[0]);
	ck_assert_str_eq(LL->fail_closed_simulation, AGSBX_SIM_NO_LANDLOCK);
	ck_assert(LL->applies && LL->applies(LL));
	ck_assert_ptr_eq(agsbx_provider_find("landlock"), LL);
	ck_assert_ptr_nonnull(LL->leftovers);
}
END_TEST

START_TEST(test_probe_ready)
{
	struct fx f = { 0 };
	f.payload_host = NULL;
	fx_ctx(&f, _i == 1);
	struct agsbx_probe p;
	ck_assert_int_eq(LL->probe(LL, &f.ctx, &p), 0);
	ck_assert_msg(p.available, "probe: %s: %s", p.reason, p.detail ? p.detail : "");
	ck_assert_str_eq(p.reason, "ready");
	ck_assert(agsbx_reason_in_set(LL, p.reason));
	int want_eff = host_abi < AGSBX_LL_ABI_KNOWN ? host_abi : AGSBX_LL_ABI_KNOWN;
	ck_assert_int_eq(json_integer_value(json_object_get(p.facts, "system_abi")), host_abi);
	ck_assert_int_eq(json_integer_value(json_object_get(p.facts, "target_abi")), AGSBX_LL_ABI_KNOWN);
	ck_assert_int_eq(json_integer_value(json_object_get(p.facts, "effective_abi")), want_eff);
	if (agsbx_test_require_mechanisms()) /* the CI host kind has ABI 7 */
		ck_assert_int_eq(want_eff, 7);
	ck_assert(json_is_boolean(json_object_get(p.facts, "newer_than_known")));
	ck_assert(json_object_get(p.facts, "errata"));
	/* The probe proved a denial, not only a successful setup. */
	json_t *st = json_object_get(p.facts, "self_test");
	ck_assert(json_is_true(json_object_get(st, "fs_denied")));
	if (want_eff >= 4)
		ck_assert(json_is_true(json_object_get(st, "tcp_connect_denied")));
	ck_assert_int_eq(json_integer_value(json_object_get(p.facts, "handled_access_fs")),
			 want_eff >= 9 ? 0x1ffff : want_eff >= 5 ? 0xffff : want_eff >= 3 ? 0x7fff : want_eff >= 2 ? 0x3fff : 0x1fff);
	/* Helper identity. */
	_cleanup_free_ char *hp = agsbx_path_join(f.ctx.tool_dir, "agsbx-landlock-exec");
	char sha[65];
	ck_assert_int_eq(agsbx_sha256_file(hp, sha), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(p.facts, "helper"), "sha256")), sha);
	/* Claims: exactly what Landlock enforces. */
	ck_assert(p.caps.host_filesystem_restricted);
	/* no_new_privs blocks escalation only for a sandbox without
	 * capabilities: claimed with --run-as, not as root. */
	ck_assert(p.caps.privilege_escalation_blocked == agsbx_provider_runs_without_caps(&f.ctx));
	if (_i == 1)
		ck_assert(p.caps.privilege_escalation_blocked);
	if (geteuid() == 0 && _i == 0)
		ck_assert(!p.caps.privilege_escalation_blocked);
	ck_assert(p.caps.environment_scrubbed);
	ck_assert(!p.caps.process_contained);
	/* The helper's shared seccomp filter, seen refusing by the self-test. */
	ck_assert(p.caps.syscalls_restricted);
	ck_assert(json_is_true(json_object_get(st, "seccomp_denied")));
	ck_assert_int_gt(json_integer_value(json_object_get(json_object_get(p.facts, "seccomp_filter"), "instructions")), 0);
	ck_assert_str_eq(p.caps.network, want_eff >= 4 ? AGSBX_NET_TCP_RESTRICTED : AGSBX_NET_INHERITED);
	ck_assert_str_eq(p.caps.mechanism, "landlock");
	ck_assert_str_eq(p.caps.safety_class, "filesystem_only");
	json_t *j = agsbx_provider_probe_to_json(&p);
	ck_assert(json_is_true(json_object_get(j, "available")));
	json_decref(j);
	agsbx_provider_probe_clear(&p);
}
END_TEST

START_TEST(test_probe_missing_helper)
{
	struct fx f = { 0 };
	fx_ctx(&f, false);
	_cleanup_free_ char *empty = agsbx_test_tmpdir("agsbx-ll-empty");
	f.ctx.tool_dir = empty;
	struct agsbx_probe p;
	ck_assert_int_eq(LL->probe(LL, &f.ctx, &p), 0);
	ck_assert(!p.available);
	ck_assert_str_eq(p.reason, "landlock_enforcement_failed");
	ck_assert(!p.caps.host_filesystem_restricted && !p.caps.privilege_escalation_blocked);
	ck_assert_ptr_nonnull(p.detail);
	agsbx_provider_probe_clear(&p);
	agsbx_test_rmtree(empty);
}
END_TEST

/* A lying helper (negative control: a script named agsbx-landlock-exec in
 * the tool dir) that claims success without showing a denial, reports
 * nothing or garbage, fails or hangs: the probe never says ready. */
static const struct {
	const char *body;      /* after the argument loop; $report is the report path */
	const char *detail;
} liar_cases[] = {
	{ "exit 0\n", "helper report unreadable" },
	{ "echo '{not json' > \"$report\"\n", "helper report unreadable" },
	{ "echo '{\"effective_abi\": 7, \"self_test\": {\"fs_denied\": false, \"tcp_connect_denied\": true}}' "
	  "> \"$report\"\n",
	  "self-test saw no denial" },
	{ "echo '{\"effective_abi\": 0, \"self_test\": {\"fs_denied\": true, \"tcp_connect_denied\": true}}' "
	  "> \"$report\"\n",
	  "self-test saw no denial" },
	{ "echo '{\"effective_abi\": 5, \"self_test\": {\"fs_denied\": true}}' > \"$report\"\n",
	  "self-test saw no denial" },
	/* Landlock's denial shown, the seccomp filter's not: no
	 * syscalls_restricted claim may rest on it. */
	{ "echo '{\"effective_abi\": 3, \"self_test\": {\"fs_denied\": true, \"seccomp_denied\": false}}' "
	  "> \"$report\"\n",
	  "self-test saw no denial" },
	{ "exit 3\n", "ended with status 3" },
	{ "exec sleep 30\n", "timed out" },
};

START_TEST(test_probe_lying_helper)
{
	struct fx f = { 0 };
	fx_ctx(&f, false);
	/* short only where the timeout is the point: a loaded machine must not
	 * turn the other cases into timeouts */
	bool hangs = strstr(liar_cases[_i].body, "sleep") != NULL;
	f.ctx.probe_timeout_ms = hangs ? 500 : 20000;
	_cleanup_free_ char *dir = agsbx_test_tmpdir("agsbx-ll-liar");
	_cleanup_free_ char *helper = agsbx_path_join(dir, "agsbx-landlock-exec");
	_cleanup_free_ char *script = NULL;
	ck_assert_int_ge(asprintf(&script,
				  "#!/bin/sh\n# negative control: a lying agsbx-landlock-exec\nreport=\n"
				  "while [ $# -gt 0 ]; do case $1 in --report) report=$2; shift;; --) break;; esac; "
				  "shift; done\n%s",
				  liar_cases[_i].body),
			 0);
	ck_assert_int_eq(agsbx_write_file_atomic(helper, script, strlen(script), 0755), 0);
	f.ctx.tool_dir = dir;
	struct agsbx_probe p;
	ck_assert_int_eq(LL->probe(LL, &f.ctx, &p), 0);
	ck_assert(!p.available);
	ck_assert_str_eq(p.reason, "landlock_enforcement_failed");
	ck_assert(!p.caps.host_filesystem_restricted && !p.caps.privilege_escalation_blocked);
	ck_assert_ptr_nonnull(p.detail);
	ck_assert_msg(strstr(p.detail, liar_cases[_i].detail) != NULL, "case %d: detail: %s", _i, p.detail);
	agsbx_provider_probe_clear(&p);
	agsbx_test_rmtree(dir);
}
END_TEST

/* ---- helper on its own -------------------------------------------------- */

START_TEST(test_helper_masks)
{
	_cleanup_free_ char *tmp = agsbx_test_tmpdir("agsbx-llh");
	_cleanup_free_ char *file = agsbx_path_join(tmp, "file");
	_cleanup_free_ char *dir = agsbx_path_join(tmp, "out");
	_cleanup_free_ char *man = agsbx_path_join(tmp, "m.json");
	_cleanup_free_ char *rep = agsbx_path_join(dir, "r.json");
	_cleanup_free_ char *h = helper();
	write_text(file, "x", 0644);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	json_t *m = json_pack("{s:i, s:i, s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}, {s:s, s:s}]}", "version", 1,
			      "target_abi", 7, "rules", "path", "/usr", "access", "read", "path", file, "access", "read",
			      "path", dir, "access", "write", "path", "/dev/null", "access", "write");
	ck_assert_int_eq(json_dump_file(m, man, 0), 0);
	json_decref(m);
	char *argv[] = { h, "--manifest", man, "--report", rep, "--probe", "--", "/usr/bin/true", NULL };
	struct spawned s;
	spawn_wait(argv, &s);
	ck_assert_msg(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 0, "helper: %s", s.err);
	json_error_t jerr;
	json_t *r = json_load_file(rep, 0, &jerr);
	ck_assert_ptr_nonnull(r);
	uint64_t handled = (uint64_t)json_integer_value(json_object_get(r, "handled_access_fs"));
	size_t i;
	json_t *rule;
	int seen = 0;
	json_array_foreach(json_object_get(r, "rules"), i, rule) {
		uint64_t a = (uint64_t)json_integer_value(json_object_get(rule, "allowed_access"));
		const char *path = jstr(rule, "path");
		ck_assert_msg((a & ~handled) == 0, "%s: allowed beyond handled", path);
		if (strcmp(path, file) == 0) { /* inode-compatible: no directory right on a file */
			ck_assert_str_eq(jstr(rule, "inode"), "file");
			ck_assert_uint_eq(a, AGSBX_LL_FS_EXECUTE | AGSBX_LL_FS_READ_FILE);
			seen++;
		} else if (strcmp(path, "/dev/null") == 0) {
			ck_assert_uint_eq(a & (AGSBX_LL_FS_READ_DIR | AGSBX_LL_FS_MAKE_DIR | AGSBX_LL_FS_MAKE_REG), 0);
			ck_assert(a & AGSBX_LL_FS_WRITE_FILE);
			seen++;
		} else if (strcmp(path, dir) == 0) { /* writable, but never device nodes */
			ck_assert(a & AGSBX_LL_FS_MAKE_REG);
			ck_assert_uint_eq(a & (AGSBX_LL_FS_MAKE_BLOCK | AGSBX_LL_FS_MAKE_CHAR), 0);
			seen++;
		} else if (strcmp(path, "/usr") == 0) {
			ck_assert_uint_eq(a, AGSBX_LL_FS_EXECUTE | AGSBX_LL_FS_READ_FILE | AGSBX_LL_FS_READ_DIR);
			seen++;
		}
	}
	ck_assert_int_eq(seen, 4);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "system_abi")), host_abi);
	json_decref(r);
	agsbx_test_rmtree(tmp);
}
END_TEST

/* Manifests the helper must refuse before running anything. */
static const struct {
	const char *name;
	const char *manifest; /* @T@: tmp dir */
	const char *reason;
} bad_manifests[] = {
	{ "relative", "{\"version\":1,\"target_abi\":7,\"rules\":[{\"path\":\"usr\",\"access\":\"read\"}]}",
	  "manifest_invalid" },
	{ "symlink", "{\"version\":1,\"target_abi\":7,\"rules\":[{\"path\":\"@T@/link\",\"access\":\"read\"}]}",
	  "manifest_invalid" },
	{ "dotdot", "{\"version\":1,\"target_abi\":7,\"rules\":[{\"path\":\"/usr/../etc\",\"access\":\"read\"}]}",
	  "manifest_invalid" },
	{ "duplicate",
	  "{\"version\":1,\"target_abi\":7,\"rules\":[{\"path\":\"/usr\",\"access\":\"read\"},"
	  "{\"path\":\"/usr\",\"access\":\"write\"}]}",
	  "manifest_invalid" },
	{ "empty", "{\"version\":1,\"target_abi\":7,\"rules\":[]}", "manifest_invalid" },
	{ "missing", "{\"version\":1,\"target_abi\":7,\"rules\":[{\"path\":\"@T@/nope\",\"access\":\"read\"}]}",
	  "manifest_invalid" },
	{ "access", "{\"version\":1,\"target_abi\":7,\"rules\":[{\"path\":\"/usr\",\"access\":\"all\"}]}",
	  "manifest_invalid" },
	{ "abi", "{\"version\":1,\"target_abi\":99,\"rules\":[{\"path\":\"/usr\",\"access\":\"read\"}]}",
	  "manifest_invalid" },
	{ "version", "{\"version\":2,\"target_abi\":7,\"rules\":[{\"path\":\"/usr\",\"access\":\"read\"}]}",
	  "manifest_invalid" },
	{ "unknown_key",
	  "{\"version\":1,\"target_abi\":7,\"extra_paths\":[\"/\"],\"rules\":[{\"path\":\"/usr\",\"access\":\"read\"}]}",
	  "manifest_invalid" },
	{ "dup_key", "{\"version\":1,\"version\":1,\"target_abi\":7,\"rules\":[{\"path\":\"/usr\",\"access\":\"read\"}]}",
	  "manifest_invalid" },
	{ "proc", "{\"version\":1,\"target_abi\":7,\"rules\":[{\"path\":\"/proc\",\"access\":\"read\"}]}",
	  "manifest_invalid" },
	{ "proc_self_write", "{\"version\":1,\"target_abi\":7,\"rules\":[{\"path\":\"/proc/self\",\"access\":\"write\"}]}",
	  "manifest_invalid" },
	{ "not_json", "{\"version\":1,", "manifest_invalid" },
};

START_TEST(test_helper_refuses_manifest)
{
	_cleanup_free_ char *tmp = agsbx_test_tmpdir("agsbx-llh");
	_cleanup_free_ char *man = agsbx_path_join(tmp, "m.json");
	_cleanup_free_ char *link = agsbx_path_join(tmp, "link");
	_cleanup_free_ char *ran = agsbx_path_join(tmp, "ran");
	_cleanup_free_ char *h = helper();
	ck_assert_int_eq(symlink("/usr", link), 0);
	char text[1024];
	const char *tpl = bad_manifests[_i].manifest, *at = strstr(tpl, "@T@");
	if (at)
		snprintf(text, sizeof text, "%.*s%s%s", (int)(at - tpl), tpl, tmp, at + 3);
	else
		snprintf(text, sizeof text, "%s", tpl);
	write_text(man, text, 0644);
	char *argv[] = { h, "--manifest", man, "--", "/usr/bin/touch", ran, NULL };
	struct spawned s;
	spawn_wait(argv, &s);
	ck_assert_msg(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 120, "%s: status %d", bad_manifests[_i].name,
		      s.status);
	char want[128];
	snprintf(want, sizeof want, "agsbx-landlock-exec: %s: ", bad_manifests[_i].reason);
	ck_assert_msg(strncmp(s.err, want, strlen(want)) == 0, "%s: stderr %s", bad_manifests[_i].name, s.err);
	ck_assert_msg(!file_exists(ran), "%s: the program ran", bad_manifests[_i].name);
	agsbx_test_rmtree(tmp);
}
END_TEST

START_TEST(test_helper_pinned_manifest_and_report)
{
	_cleanup_free_ char *tmp = agsbx_test_tmpdir("agsbx-llh");
	_cleanup_free_ char *man = agsbx_path_join(tmp, "m.json");
	_cleanup_free_ char *rep = agsbx_path_join(tmp, "r.json");
	_cleanup_free_ char *ran = agsbx_path_join(tmp, "ran");
	_cleanup_free_ char *h = helper();
	const char *text = "{\"version\":1,\"target_abi\":7,\"rules\":[{\"path\":\"/usr\",\"access\":\"read\"}]}";
	write_text(man, text, 0644);
	char sha[65], bad[65];
	agsbx_sha256_hex(text, strlen(text), sha);
	memcpy(bad, sha, sizeof bad);
	bad[0] = bad[0] == '0' ? '1' : '0';
	struct spawned s;
	/* A changed digest: refused, nothing runs. */
	char *argv1[] = { h, "--manifest", man, "--manifest-sha256", bad, "--", "/usr/bin/touch", ran, NULL };
	spawn_wait(argv1, &s);
	ck_assert(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 120);
	ck_assert_ptr_nonnull(strstr(s.err, "manifest_invalid: sha256"));
	ck_assert(!file_exists(ran));
	/* The right digest (control): runs. The program itself may not write
	 * $tmp (only /usr is granted): touch fails under the ruleset. */
	char *argv2[] = { h, "--manifest", man, "--manifest-sha256", sha, "--", "/usr/bin/touch", ran, NULL };
	spawn_wait(argv2, &s);
	ck_assert_msg(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 1, "status %d %s", s.status, s.err);
	ck_assert_ptr_nonnull(strstr(s.err, "Permission denied"));
	ck_assert(!file_exists(ran));
	/* A pre-placed report is never reused (O_EXCL). */
	write_text(rep, "old", 0644);
	char *argv3[] = { h, "--manifest", man, "--report", rep, "--", "/usr/bin/true", NULL };
	spawn_wait(argv3, &s);
	ck_assert(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 120);
	ck_assert_ptr_nonnull(strstr(s.err, "agsbx-landlock-exec: report_failed: "));
	/* Usage. */
	char *argv4[] = { h, "--manifest", man, NULL };
	spawn_wait(argv4, &s);
	ck_assert(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 120);
	ck_assert_ptr_nonnull(strstr(s.err, "agsbx-landlock-exec: usage: "));
	agsbx_test_rmtree(tmp);
}
END_TEST

/* Root inside Landlock keeps CAP_MKNOD: a block device node in a writable
 * root would expose the raw disk. The helper never grants MAKE_BLOCK. */
START_TEST(test_helper_no_device_nodes)
{
	if (geteuid() != 0)
		return;
	_cleanup_free_ char *tmp = agsbx_test_tmpdir("agsbx-llh");
	_cleanup_free_ char *out = agsbx_path_join(tmp, "out");
	_cleanup_free_ char *man = agsbx_path_join(tmp, "m.json");
	_cleanup_free_ char *node = agsbx_path_join(out, "blk");
	_cleanup_free_ char *ctl = agsbx_path_join(tmp, "ctl");
	_cleanup_free_ char *h = helper();
	ck_assert_int_eq(mkdir(out, 0755), 0);
	json_t *m = json_pack("{s:i, s:i, s:[{s:s, s:s}, {s:s, s:s}]}", "version", 1, "target_abi", 7, "rules",
			      "path", "/usr", "access", "read", "path", out, "access", "write");
	ck_assert_int_eq(json_dump_file(m, man, 0), 0);
	json_decref(m);
	struct spawned s;
	/* Control: outside the sandbox root can create the node. */
	char *argv0[] = { "/usr/bin/mknod", ctl, "b", "7", "0", NULL };
	spawn_wait(argv0, &s);
	ck_assert_msg(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 0 && file_exists(ctl), "control: %s", s.err);
	char *argv1[] = { h, "--manifest", man, "--", "/usr/bin/mknod", node, "b", "7", "0", NULL };
	spawn_wait(argv1, &s);
	ck_assert(WIFEXITED(s.status) && WEXITSTATUS(s.status) != 0);
	ck_assert_ptr_nonnull(strstr(s.err, "Permission denied"));
	ck_assert(!file_exists(node));
	agsbx_test_rmtree(tmp);
}
END_TEST

/* ---- execute ------------------------------------------------------------ */

START_TEST(test_exec_write_output)
{
	struct fx f;
	fx_init(&f, _i);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	ck_assert_int_eq(h->ops->health(h), 0);
	_cleanup_free_ char *target = agsbx_handle_path(h, AGSBX_ROOT_OUTPUT, "f");
	char nonce[33];
	agsbx_random_hex(nonce, 16);
	struct agsbx_exec_result res = { 0 };
	json_t *j = payload(h, 20000, &res, "write", target, nonce);
	ck_assert_msg(j && json_is_true(json_object_get(j, "ok")), "write: %s / %s", res.run.out, res.run.err);
	_cleanup_free_ char *data = NULL;
	size_t len;
	ck_assert_int_eq(agsbx_read_file(target, 4096, &data, &len), 0);
	ck_assert_str_eq(data, nonce);
	/* meta carries the same versions as the probe. */
	struct agsbx_probe p;
	ck_assert_int_eq(LL->probe(LL, &f.ctx, &p), 0);
	json_t *v = json_object_get(res.meta, "versions");
	ck_assert_str_eq(jstr(res.meta, "provider"), "landlock");
	ck_assert_str_eq(jstr(res.meta, "mechanism"), "landlock");
	static const char *const keys[] = { "system_abi", "target_abi", "effective_abi", "errata" };
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(keys); i++)
		ck_assert_msg(json_equal(json_object_get(v, keys[i]), json_object_get(p.facts, keys[i])), "%s", keys[i]);
	ck_assert(json_equal(json_object_get(v, "helper_sha256"),
			     json_object_get(json_object_get(p.facts, "helper"), "sha256")));
	agsbx_provider_probe_clear(&p);
	/* No policy file left behind. */
	ck_assert_int_eq(count_temps(f.g->roots[AGSBX_ROOT_LOGS].path), 0);
	json_t *found = NULL;
	ck_assert_int_eq(h->ops->leftovers(h, "none", &found), 0);
	ck_assert_uint_eq(json_array_size(found), 0);
	json_decref(found);
	json_decref(j);
	agsbx_exec_result_clear(&res);
	fx_release(h);
	fx_done(&f);
}
END_TEST

START_TEST(test_exec_read_canary_denied)
{
	struct fx f;
	fx_init(&f, _i);
	char canary[48] = "CANARY-";
	agsbx_random_hex(canary + 7, 16);
	_cleanup_free_ char *path = agsbx_path_join(f.tmp, "canary");
	write_text(path, canary, 0644);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	struct agsbx_exec_result res = { 0 };
	json_t *j = payload(h, 20000, &res, "read", path, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert(json_is_false(json_object_get(j, "ok")));
	ck_assert_str_eq(jstr(j, "errno"), "EACCES");
	ck_assert_ptr_null(strstr(res.run.out, canary + 7));
	json_decref(j);
	agsbx_exec_result_clear(&res);
	fx_release(h);
	/* Control: the same read without Landlock (same user) sees the canary. */
	struct agsbx_handle *t = fx_ensure(&f, &agsbx_provider_trusted_local);
	j = payload_ok(t, "read", path, NULL);
	ck_assert(json_is_true(json_object_get(j, "ok")));
	ck_assert_ptr_nonnull(strstr(jstr(j, "content"), canary));
	json_decref(j);
	fx_release(t);
	fx_done(&f);
}
END_TEST

/* The kernel surfaces of syscalls.kernel_surface_denied and io_uring
 * through the payload: each one the same user reaches without Landlock
 * (trusted_local, the control) is the shared filter's EPERM inside.
 * AF_PACKET/AF_ALG are left out (no probe may load a module). */
static json_t *surfaces(struct agsbx_handle *h, const char *file)
{
	const char *argv[] = { NULL, "kernel-surface", file, "packet=0", "alg=0", NULL };
	_cleanup_free_ char *p = agsbx_handle_path(h, AGSBX_ROOT_SOURCE, "agsbx-payload");
	argv[0] = p;
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 65536, .timeout_ms = 20000, .cancel_fd = -1 };
	struct agsbx_error fail = { 0 };
	struct agsbx_exec_result res = { 0 };
	ck_assert_int_eq(h->ops->execute(h, &step, &lim, &res, &fail), 0);
	json_error_t jerr;
	json_t *j = res.run.out ? json_loadb(res.run.out, strcspn(res.run.out, "\n"), 0, &jerr) : NULL;
	ck_assert_msg(j, "kernel-surface printed no JSON: %s", res.run.err ? res.run.err : "");
	agsbx_exec_result_clear(&res);
	json_t *s = json_incref(json_object_get(j, "s"));
	json_decref(j);
	return s;
}

START_TEST(test_exec_kernel_surface_denied)
{
	struct fx f;
	fx_init(&f, _i);
	struct agsbx_handle *t = fx_ensure(&f, &agsbx_provider_trusted_local);
	json_t *ctl = surfaces(t, f.payload_src);
	json_t *j = payload_ok(t, "io-uring", NULL, NULL);
	bool uring_ctl = json_is_true(json_object_get(j, "ok"));
	json_decref(j);
	fx_release(t);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	json_t *in = surfaces(h, f.payload_src);
	int reached = 0;
	const char *k;
	json_t *v;
	json_object_foreach(ctl, k, v) {
		if (strncmp(json_string_value(v), "reached", 7) != 0)
			continue;
		reached++;
		ck_assert_msg(strcmp(jstr(in, k), "EPERM") == 0, "%s: control reached it, inside %s", k, jstr(in, k));
	}
	ck_assert_msg(reached > 0, "the control reached no surface: nothing shown");
	j = payload_ok(h, "io-uring", NULL, NULL);
	if (uring_ctl)
		ck_assert_msg(json_is_false(json_object_get(j, "ok")) && strcmp(jstr(j, "errno"), "EPERM") == 0,
			      "io_uring_setup inside: %s", jstr(j, "errno"));
	json_decref(j);
	json_decref(in);
	json_decref(ctl);
	fx_release(h);
	fx_done(&f);
}
END_TEST

START_TEST(test_exec_write_outside_denied)
{
	struct fx f;
	fx_init(&f, _i);
	_cleanup_free_ char *outside = agsbx_path_join(f.tmp, "outside");
	ck_assert_int_eq(mkdir(outside, 0777), 0);
	chmod(outside, 0777); /* DAC would allow it: only Landlock stands in the way */
	_cleanup_free_ char *target = agsbx_path_join(outside, "x");
	_cleanup_free_ char *ctl = agsbx_path_join(outside, "ctl");
	struct agsbx_handle *h = fx_ensure(&f, LL);
	json_t *j = payload_ok(h, "write", target, "pwned");
	ck_assert(json_is_false(json_object_get(j, "ok")));
	ck_assert_str_eq(jstr(j, "errno"), "EACCES");
	ck_assert(!file_exists(target));
	json_decref(j);
	/* Into the read-only source root: denied, bundle untouched. */
	_cleanup_free_ char *src = agsbx_handle_path(h, AGSBX_ROOT_SOURCE, "x");
	j = payload_ok(h, "write", src, "pwned");
	ck_assert(json_is_false(json_object_get(j, "ok")));
	ck_assert_str_eq(jstr(j, "errno"), "EACCES");
	ck_assert(!file_exists(src));
	json_decref(j);
	j = payload_ok(h, "write", f.payload_src, "pwned");
	ck_assert(json_is_false(json_object_get(j, "ok")));
	json_decref(j);
	struct agsbx_error why = { 0 };
	ck_assert_int_eq(agsbx_grant_verify(f.g, &why), 0);
	fx_release(h);
	/* Control: without Landlock the same user writes there. */
	struct agsbx_handle *t = fx_ensure(&f, &agsbx_provider_trusted_local);
	j = payload_ok(t, "write", ctl, "ok");
	ck_assert(json_is_true(json_object_get(j, "ok")));
	ck_assert(file_exists(ctl));
	json_decref(j);
	fx_release(t);
	fx_done(&f);
}
END_TEST

static int loopback_listener(int *port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof sa;
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
	ck_assert_int_eq(listen(s, 8), 0);
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return s;
}

START_TEST(test_exec_connect_denied)
{
	if (host_abi < 4)
		return; /* TCP is not handled below ABI 4 (and not claimed) */
	struct fx f;
	fx_init(&f, _i);
	int port;
	int ls = loopback_listener(&port);
	char ports[16];
	snprintf(ports, sizeof ports, "%d", port);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	json_t *j = payload_ok(h, "connect", "127.0.0.1", ports);
	ck_assert(json_is_false(json_object_get(j, "ok")));
	ck_assert_str_eq(jstr(j, "errno"), "EACCES");
	json_decref(j);
	fx_release(h);
	/* Control: the listener is reachable without Landlock. */
	struct agsbx_handle *t = fx_ensure(&f, &agsbx_provider_trusted_local);
	j = payload_ok(t, "connect", "127.0.0.1", ports);
	ck_assert_msg(json_is_true(json_object_get(j, "ok")), "control connect: %s", jstr(j, "errno"));
	json_decref(j);
	fx_release(t);
	close(ls);
	fx_done(&f);
}
END_TEST

START_TEST(test_exec_env_and_proc)
{
	struct fx f;
	fx_init(&f, _i);
	setenv("AGSBX_LL_TEST_SECRET", "s3cret", 1);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	json_t *j = payload_ok(h, "env", "AGSBX_LL_TEST_SECRET", NULL);
	ck_assert(json_is_false(json_object_get(j, "present")));
	json_decref(j);
	j = payload_ok(h, "env", "HOME", NULL);
	ck_assert_str_eq(jstr(j, "value"), h->paths[AGSBX_ROOT_BUILD]);
	json_decref(j);
	/* no_new_privs is set; identity is the requested one. */
	j = payload_ok(h, "status", NULL, NULL);
	ck_assert_msg(json_is_true(json_object_get(j, "ok")), "status: %s", jstr(j, "errno"));
	ck_assert_int_eq(json_integer_value(json_object_get(j, "no_new_privs")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "uid")), f.run_as ? (int)user_uid : 0);
	json_decref(j);
	/* Honest non-claim: other processes stay visible (process_contained
	 * is false), though signalling them is scoped at ABI >= 6. */
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	j = payload_ok(h, "pid-visible", pid, NULL);
	ck_assert(json_is_true(json_object_get(j, "proc_exists")));
	if (host_abi >= 6)
		ck_assert(json_is_false(json_object_get(j, "kill_ok")));
	json_decref(j);
	fx_release(h);
	unsetenv("AGSBX_LL_TEST_SECRET");
	fx_done(&f);
}
END_TEST

START_TEST(test_exec_timeout_kills_tree)
{
	struct fx f;
	fx_init(&f, _i);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	char marker[48] = "agsbx-ll-marker-";
	agsbx_random_hex(marker + strlen(marker), 8);
	_cleanup_free_ char *ready = agsbx_handle_path(h, AGSBX_ROOT_BUILD, "ready");
	struct agsbx_exec_result res = { 0 };
	json_t *j = payload(h, 1500, &res, "spawn-detached", marker, ready);
	ck_assert_msg(res.run.timed_out, "not timed out: status %d err %s", res.run.status, res.run.err);
	ck_assert_int_eq(res.run.status, AGSBX_RUN_STATUS_TIMEOUT);
	ck_assert_msg(file_exists(ready), "the detached grandchild never started: %s", res.run.err);
	_cleanup_free_ pid_t *pids = NULL;
	ck_assert_int_eq(agsbx_find_processes_with_marker(marker, &pids), 0);
	ck_assert_int_eq(count_temps(f.g->roots[AGSBX_ROOT_LOGS].path), 0);
	json_decref(j);
	agsbx_exec_result_clear(&res);
	fx_release(h);
	fx_done(&f);
}
END_TEST

struct canceller {
	int fd;
};

static void *cancel_later(void *arg)
{
	struct canceller *c = arg;
	usleep(300 * 1000);
	ssize_t w = write(c->fd, "x", 1);
	(void)w;
	return NULL;
}

START_TEST(test_exec_cancel_cleans_up)
{
	struct fx f;
	fx_init(&f, _i);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	char marker[48] = "agsbx-ll-cancel-";
	agsbx_random_hex(marker + strlen(marker), 8);
	int p[2];
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	_cleanup_free_ char *pl = agsbx_handle_path(h, AGSBX_ROOT_SOURCE, "agsbx-payload");
	const char *argv[] = { pl, "linger", marker, NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 4096, .timeout_ms = 60000, .cancel_fd = p[0] };
	struct canceller c = { .fd = p[1] };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, cancel_later, &c), 0);
	struct agsbx_exec_result res = { 0 };
	struct agsbx_error fail = { 0 };
	int r = h->ops->execute(h, &step, &lim, &res, &fail);
	pthread_join(t, NULL);
	ck_assert_msg(r == 0, "execute: %s (%s)", strerror(-r), fail.message);
	ck_assert(res.run.cancelled);
	ck_assert_int_eq(res.run.status, AGSBX_RUN_STATUS_CANCELLED);
	ck_assert_int_eq(agsbx_find_processes_with_marker(marker, NULL), 0);
	ck_assert_int_eq(count_temps(f.g->roots[AGSBX_ROOT_LOGS].path), 0);
	agsbx_exec_result_clear(&res);
	close(p[0]);
	close(p[1]);
	fx_release(h);
	fx_done(&f);
}
END_TEST

START_TEST(test_exec_after_release_refused)
{
	struct fx f;
	fx_init(&f, _i);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	h->ops->release(h);
	h->ops->release(h); /* idempotent */
	ck_assert_int_lt(h->ops->health(h), 0);
	_cleanup_free_ char *target = agsbx_handle_path(h, AGSBX_ROOT_OUTPUT, "late");
	const char *argv[] = { f.payload_src, "write", target, "x", NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .timeout_ms = 5000, .cancel_fd = -1 };
	struct agsbx_exec_result res = { 0 };
	struct agsbx_error fail = { 0 };
	ck_assert_int_eq(h->ops->execute(h, &step, &lim, &res, &fail), -ESTALE);
	ck_assert_str_eq(fail.reason, "released");
	ck_assert(!file_exists(target));
	agsbx_exec_result_clear(&res);
	agsbx_handle_free(h);
	fx_done(&f);
}
END_TEST

START_TEST(test_ensure_rejects_config)
{
	struct fx f;
	fx_init(&f, 0);
	json_t *cfg = json_pack("{s:[s]}", "allowed_write_dirs", "/");
	f.ctx.config = cfg;
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	ck_assert_int_eq(LL->ensure(LL, &f.ctx, f.g, &h, &fail), -EINVAL);
	ck_assert_ptr_null(h);
	ck_assert_str_eq(fail.reason, "config_invalid");
	ck_assert_ptr_nonnull(strstr(fail.message, "allowed_write_dirs"));
	/* Control: an empty config object is accepted. */
	json_decref(cfg);
	cfg = json_object();
	f.ctx.config = cfg;
	h = fx_ensure(&f, LL);
	fx_release(h);
	json_decref(cfg);
	fx_done(&f);
}
END_TEST

START_TEST(test_exec_tampered_bundle_refused)
{
	struct fx f;
	fx_init(&f, _i);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	_cleanup_free_ char *target = agsbx_handle_path(h, AGSBX_ROOT_OUTPUT, "t");
	json_t *j = payload_ok(h, "write", target, "before"); /* control: runs before tampering */
	ck_assert(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	unlink(target);
	ck_assert_int_eq(chmod(f.payload_src, 0755), 0);
	int fd = open(f.payload_src, O_WRONLY | O_APPEND | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
	const char *argv[] = { f.payload_src, "write", target, "after", NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .timeout_ms = 5000, .cancel_fd = -1 };
	struct agsbx_exec_result res = { 0 };
	struct agsbx_error fail = { 0 };
	ck_assert_int_lt(h->ops->execute(h, &step, &lim, &res, &fail), 0);
	ck_assert_str_eq(fail.reason, "bundle_changed");
	ck_assert(!file_exists(target));
	agsbx_exec_result_clear(&res);
	fx_release(h);
	fx_done(&f);
}
END_TEST

struct conc {
	struct agsbx_handle *h;
	int idx;
	int ok;
};

static void *conc_run(void *arg)
{
	struct conc *c = arg;
	char name[16];
	snprintf(name, sizeof name, "c%d", c->idx);
	_cleanup_free_ char *target = agsbx_handle_path(c->h, AGSBX_ROOT_OUTPUT, name);
	_cleanup_free_ char *p = agsbx_handle_path(c->h, AGSBX_ROOT_SOURCE, "agsbx-payload");
	const char *argv[] = { p, "write", target, name, NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 4096, .timeout_ms = 20000, .cancel_fd = -1 };
	for (int k = 0; k < 5; k++) {
		struct agsbx_exec_result res = { 0 };
		struct agsbx_error fail = { 0 };
		int r = c->h->ops->execute(c->h, &step, &lim, &res, &fail);
		c->ok += r == 0 && res.run.exited && res.run.exit_code == 0 && res.run.out &&
			 strstr(res.run.out, "\"ok\":true");
		agsbx_exec_result_clear(&res);
	}
	return NULL;
}

START_TEST(test_exec_concurrent)
{
	struct fx f;
	fx_init(&f, _i);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	struct conc c[4];
	pthread_t t[4];
	for (int i = 0; i < 4; i++) {
		c[i] = (struct conc){ .h = h, .idx = i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, conc_run, &c[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(c[i].ok, 5);
	}
	ck_assert_int_eq(count_temps(f.g->roots[AGSBX_ROOT_LOGS].path), 0);
	fx_release(h);
	fx_done(&f);
}
END_TEST

START_TEST(test_leftovers_and_release_cleanup)
{
	struct fx f;
	fx_init(&f, 0);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	/* A manifest left by a crashed harness is reported, then removed. */
	_cleanup_free_ char *stale = agsbx_path_join(f.g->roots[AGSBX_ROOT_LOGS].path, ".landlock-dead.json");
	write_text(stale, "{}", 0644);
	json_t *found = NULL;
	ck_assert_int_eq(h->ops->leftovers(h, "m", &found), 1);
	ck_assert_uint_eq(json_array_size(found), 1);
	json_decref(found);
	h->ops->release(h);
	ck_assert(!file_exists(stale));
	agsbx_handle_free(h);
	fx_done(&f);
}
END_TEST

/* A sandboxed program cannot pass itself off as the helper refusing: it
 * prints the helper's message (with and without a guessed tag) and exits
 * 120, and the result is an ordinary observation, not a refusal. */
START_TEST(test_program_cannot_fake_a_refusal)
{
	struct fx f;
	fx_init(&f, 0);
	struct agsbx_handle *h = fx_ensure(&f, LL);
	static const char *const fakes[] = {
		"echo 'agsbx-landlock-exec: landlock_disabled: fake' >&2; exit 120",
		"echo 'agsbx-landlock-exec[00000000000000000000000000000000]: landlock_disabled: fake' >&2; exit 120",
	};
	for (size_t i = 0; i < sizeof fakes / sizeof fakes[0]; i++) {
		const char *argv[] = { "/bin/sh", "-c", fakes[i], NULL };
		struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
		struct agsbx_limits lim = { .max_output_bytes = 4096, .timeout_ms = 20000, .cancel_fd = -1 };
		struct agsbx_error fail = { 0 };
		struct agsbx_exec_result res = { 0 };
		int r = h->ops->execute(h, &step, &lim, &res, &fail);
		ck_assert_msg(r == 0, "fake %zu taken as a refusal: %s (%s)", i, fail.reason, fail.message);
		ck_assert(res.run.exited && res.run.exit_code == 120);
		agsbx_exec_result_clear(&res);
	}
	fx_release(h);
	fx_done(&f);
}
END_TEST

/* Another handle on the same grant (the harness makes one per lifecycle
 * check) is released while a run of the first is in flight: the run is
 * unaffected, nothing is reported as left over, and no policy file ever
 * sits in a grant root. */
struct bg_run {
	struct agsbx_handle *h;
	const char *ready;
	const char *marker;
	int cancel_fd;
	int r;
	struct agsbx_exec_result res;
};

static void *bg_linger(void *arg)
{
	struct bg_run *b = arg;
	_cleanup_free_ char *pl = agsbx_handle_path(b->h, AGSBX_ROOT_SOURCE, "agsbx-payload");
	const char *argv[] = { pl, "linger", b->marker, b->ready, NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 4096, .timeout_ms = 60000, .cancel_fd = b->cancel_fd };
	struct agsbx_error fail = { 0 };
	b->r = b->h->ops->execute(b->h, &step, &lim, &b->res, &fail);
	return NULL;
}

START_TEST(test_release_spares_inflight_runs)
{
	struct fx f;
	fx_init(&f, 0);
	struct agsbx_handle *a = fx_ensure(&f, LL);
	char marker[48] = "agsbx-ll-inflight-";
	agsbx_random_hex(marker + strlen(marker), 8);
	_cleanup_free_ char *ready = agsbx_handle_path(a, AGSBX_ROOT_BUILD, "ready");
	int p[2];
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	struct bg_run b = { .h = a, .ready = ready, .marker = marker, .cancel_fd = p[0] };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, bg_linger, &b), 0);
	for (int k = 0; k < 2000 && !file_exists(ready); k++) /* wait for the run, not a timing check */
		usleep(10 * 1000);
	ck_assert_msg(file_exists(ready), "the lingering run never started");
	const char *logs = f.g->roots[AGSBX_ROOT_LOGS].path;
	/* No policy file sits in a grant root, even while a step runs: the
	 * handle's manifest lives in a private directory outside the grant. */
	ck_assert_int_eq(count_temps(logs), 0);
	json_t *found = NULL;
	ck_assert_int_eq(a->ops->leftovers(a, marker, &found), 0);
	json_decref(found);
	struct agsbx_handle *other = fx_ensure(&f, LL);
	fx_release(other);
	ck_assert_int_eq(count_temps(logs), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(b.r, 0);
	ck_assert(b.res.run.cancelled);
	ck_assert_int_eq(count_temps(logs), 0);
	agsbx_exec_result_clear(&b.res);
	close(p[0]);
	close(p[1]);
	fx_release(a);
	fx_done(&f);
}
END_TEST

/* ---- simulations -------------------------------------------------------- */

START_TEST(test_sim_no_landlock)
{
	struct fx f;
	fx_init(&f, _i);
	f.ctx.simulate = AGSBX_SIM_NO_LANDLOCK;
	struct agsbx_probe p;
	ck_assert_int_eq(LL->probe(LL, &f.ctx, &p), 0);
	ck_assert(!p.available);
	ck_assert_msg(strcmp(p.reason, "kernel_does_not_support_landlock") == 0, "reason %s: %s", p.reason,
		      p.detail ? p.detail : "");
	ck_assert(!p.caps.host_filesystem_restricted);
	ck_assert_ptr_nonnull(p.hint);
	agsbx_provider_probe_clear(&p);
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	ck_assert_int_lt(LL->ensure(LL, &f.ctx, f.g, &h, &fail), 0);
	ck_assert_ptr_null(h);
	ck_assert_str_eq(fail.reason, "kernel_does_not_support_landlock");
	/* Landlock does not depend on user namespaces: still ready there. */
	f.ctx.simulate = AGSBX_SIM_BLOCKED_USERNS;
	ck_assert_int_eq(LL->probe(LL, &f.ctx, &p), 0);
	ck_assert_msg(p.available, "blocked-userns: %s: %s", p.reason, p.detail ? p.detail : "");
	agsbx_provider_probe_clear(&p);
	fx_done(&f);
}
END_TEST

/* ---- main --------------------------------------------------------------- */

int main(void)
{
	build_dir = getenv("AGSBX_BUILD_DIR");
	if (!build_dir)
		build_dir = ".";
	host_abi = agsbx_ll_abi();
	if (host_abi < 0)
		agsbx_test_skip("landlock", true, strerror(-host_abi));
	_cleanup_free_ char *h = helper();
	if (access(h, X_OK) < 0)
		agsbx_test_skip("agsbx-landlock-exec", true, "helper not built");
	_cleanup_free_ char *pl = agsbx_test_build_path("agsbx-payload");
	bool have_payload = access(pl, X_OK) == 0;
	have_user = agsbx_test_user(&user_uid, &user_gid, &user_name);
	if (!have_user && agsbx_test_require_mechanisms()) {
		fprintf(stderr, "FAIL: test user missing but AGSBX_REQUIRE_MECHANISMS=1\n");
		return EXIT_FAILURE;
	}
	if (!have_user)
		fprintf(stderr, "note: no test user (or not root): run_as variants skipped\n");
	stage_dir = agsbx_test_stage_tools(); /* the helper list, staged for a run-as user */
	agsbx_runner_init();
	int modes = have_user ? 2 : 1;

	Suite *s = suite_create("landlock");
	TCase *tc = tcase_create("probe");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_contract_static);
	tcase_add_loop_test(tc, test_probe_ready, 0, modes);
	tcase_add_test(tc, test_probe_missing_helper);
	tcase_add_loop_test(tc, test_probe_lying_helper, 0, (int)AGSBX_ARRAY_SIZE(liar_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("helper");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_helper_masks);
	tcase_add_loop_test(tc, test_helper_refuses_manifest, 0, (int)AGSBX_ARRAY_SIZE(bad_manifests));
	tcase_add_test(tc, test_helper_pinned_manifest_and_report);
	tcase_add_test(tc, test_helper_no_device_nodes);
	suite_add_tcase(s, tc);

	if (have_payload) {
		tc = tcase_create("execute");
		tcase_set_timeout(tc, 120);
		tcase_add_loop_test(tc, test_exec_write_output, 0, modes);
		tcase_add_loop_test(tc, test_exec_read_canary_denied, 0, modes);
		tcase_add_loop_test(tc, test_exec_write_outside_denied, 0, modes);
		tcase_add_loop_test(tc, test_exec_kernel_surface_denied, 0, modes);
		tcase_add_loop_test(tc, test_exec_connect_denied, 0, modes);
		tcase_add_loop_test(tc, test_exec_env_and_proc, 0, modes);
		tcase_add_loop_test(tc, test_exec_timeout_kills_tree, 0, modes);
		tcase_add_loop_test(tc, test_exec_cancel_cleans_up, 0, modes);
		tcase_add_loop_test(tc, test_exec_after_release_refused, 0, modes);
		tcase_add_test(tc, test_ensure_rejects_config);
		tcase_add_loop_test(tc, test_exec_tampered_bundle_refused, 0, modes);
		tcase_add_loop_test(tc, test_exec_concurrent, 0, modes);
		tcase_add_test(tc, test_leftovers_and_release_cleanup);
		tcase_add_test(tc, test_release_spares_inflight_runs);
		tcase_add_test(tc, test_program_cannot_fake_a_refusal);
		tcase_add_loop_test(tc, test_sim_no_landlock, 0, modes);
		suite_add_tcase(s, tc);
	}
	int rc = agsbx_test_run_suite(s);
	agsbx_test_rmtree(stage_dir);
	free(stage_dir);
	if (rc == EXIT_SUCCESS && !have_payload)
		agsbx_test_skip("agsbx-payload", true, "not built: the execute tests did not run");
	return rc;
}
