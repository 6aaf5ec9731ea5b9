/* Result liars (tests/negative/result-liars.c, NEGATIVE CONTROLS): every
 * provider here claims every axis and misreports every run in one way;
 * the checks must turn each lie into the verdict and reason the catalogue
 * promises (no result: skipped, inconclusive; refusal: fail; forged
 * answers: judged as given, contradicted by the controls). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/runner.h"
#include "conformance/conformance.h"
#include "conformance/internal.h"
#include "evidence/bundle.h"
#include "tests/lib/provider-run.h"
#include "tests/lib/testlib.h"
#include "tests/negative/negative.h"

static char *tool_dir, *payload, *work;

static json_t *run_provider(const struct agsbx_provider_ops *ops, size_t max_out)
{
	const struct agsbx_test_run_opts t = { .tool_dir = tool_dir, .payload = payload, .work = work,
						.max_output_bytes = max_out };
	json_t *p = agsbx_test_run_provider(ops, &t);
	if (getenv("COVA_DUMP")) {
		size_t i;
		json_t *c;
		fprintf(stderr, "== %s: %s\n", ops->id, json_string_value(json_object_get(p, "verdict")));
		json_array_foreach(json_object_get(p, "checks"), i, c)
			fprintf(stderr, "%s\t%s\t%s\n", json_string_value(json_object_get(c, "id")),
				json_string_value(json_object_get(c, "verdict")),
				json_string_value(json_object_get(c, "reason")));
	}
	return p;
}


static const char *reason_of(const json_t *p, const char *id)
{
	return json_string_value(json_object_get(agsbx_test_check_of(p, id), "reason"));
}

/* id's verdict is want and its reason contains each of the NULL-ended texts. */
static void expect(const json_t *p, const char *id, const char *want, ...)
{
	const char *v = json_string_value(json_object_get(agsbx_test_check_of(p, id), "verdict"));
	const char *r = reason_of(p, id);
	ck_assert_msg(strcmp(v, want) == 0, "%s: %s is %s, want %s: %s", json_string_value(json_object_get(p, "id")),
		      id, v, want, r);
	va_list ap;
	va_start(ap, want);
	for (const char *t; (t = va_arg(ap, const char *));)
		ck_assert_msg(strstr(r, t), "%s: reason lacks '%s': %s", id, t, r);
	va_end(ap);
}

static const char *verdict_str(const json_t *p, const char *id)
{
	return json_string_value(json_object_get(agsbx_test_check_of(p, id), "verdict"));
}

static void expect_provider(const json_t *p, enum agsbx_provider_verdict want)
{
	ck_assert_msg(agsbx_provider_verdict_of(p) == want, "%s: provider verdict %s",
		      json_string_value(json_object_get(p, "id")), json_string_value(json_object_get(p, "verdict")));
}

static bool in_array(const json_t *a, const char *s)
{
	for (size_t i = 0; i < json_array_size(a); i++)
		if (strcmp(json_string_value(json_array_get(a, i)), s) == 0)
			return true;
	return false;
}

/* The sandbox observations of id: how many, and how many refused with reason. */
static size_t sandbox_obs(const json_t *p, const char *id, const char *refused, size_t *n_refused)
{
	size_t i, n = 0;
	json_t *o;
	*n_refused = 0;
	json_array_foreach(json_object_get(agsbx_test_check_of(p, id), "observations"), i, o) {
		if (strcmp(json_string_value(json_object_get(o, "role")), "sandbox") != 0)
			continue;
		n++;
		const char *r = json_string_value(json_object_get(o, "refused"));
		if (r && refused && strcmp(r, refused) == 0)
			*n_refused += 1;
	}
	return n;
}

/* NEGATIVE CONTROL neg_killed_liar: every run "killed by SIGKILL" with a
 * long stderr of control bytes. No result anywhere: the attacks are
 * skipped with the signal and the stderr's escaped, cut tail; the claims
 * are inconclusive, never backed; the checks that need the payload to
 * work (the granted write, status fidelity, the lifecycle trees) fail. */
START_TEST(test_killed_runs_are_no_observation)
{
	_cleanup_json_ json_t *p = run_provider(&neg_killed_liar, 20000);
	expect_provider(p, AGSBX_PROVIDER_DEFECTIVE);
	expect(p, "env.scrubbed", "skip", "no observation", "killed by signal 9; stderr \"...kkk", "k?[2J?end\")", NULL);
	expect(p, "fs.host_read_denied", "skip", "no observation", "killed by signal 9", NULL);
	expect(p, "proc.contained", "skip", "no observation", NULL);
	expect(p, "fs.grant_write", "fail", "did not reach the host", "killed by signal 9", NULL);
	expect(p, "exec.status_fidelity", "fail", "exit 0 -> 137 (signal) (did not run)", NULL);
	expect(p, "lifecycle.timeout_cleanup", "fail", "did NOT time out", "NEVER STARTED", NULL);
	const json_t *t = json_object_get(agsbx_test_check_of(p, "capabilities.truthful"), "facts");
	ck_assert_uint_eq(json_array_size(json_object_get(t, "overclaim")), 0);
	ck_assert(!json_is_true(json_object_get(json_object_get(p, "observed"), "process_contained")));
}
END_TEST

/* NEGATIVE CONTROL neg_timeout_liar: every run "timed out", silently. */
START_TEST(test_timed_out_runs_are_no_observation)
{
	_cleanup_json_ json_t *p = run_provider(&neg_timeout_liar, 20000);
	expect_provider(p, AGSBX_PROVIDER_DEFECTIVE);
	expect(p, "env.scrubbed", "skip", "(timed out; stderr empty)", NULL);
	expect(p, "output.bounded", "fail", "TIMED OUT", NULL);
	expect(p, "lifecycle.timeout_cleanup", "fail", "timed out (124)", "NEVER STARTED", NULL);
	expect(p, "exec.status_fidelity", "fail", "-> 124 (timed out", NULL);
}
END_TEST

/* NEGATIVE CONTROL neg_silent_refusal: execute fails with a bare -EPERM
 * and no reason. The refusal is recorded as "error" with strerror's text,
 * and every check that needed the run fails: a refusal never makes a
 * claim inconclusive (the loopback and unix-socket checks included). */
START_TEST(test_bare_refusal_fails)
{
	_cleanup_json_ json_t *p = run_provider(&neg_silent_refusal, 20000);
	expect_provider(p, AGSBX_PROVIDER_DEFECTIVE);
	static const char *const ids[] = { "fs.host_read_denied", "env.scrubbed", "net.egress_denied",
					    "net.egress_udp_denied", "net.egress_ipv6_denied", "ipc.host_sockets_denied",
					    "proc.contained", "syscalls.restricted" };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		expect(p, ids[i], "fail", "provider refused to execute", NULL);
		size_t refused, n = sandbox_obs(p, ids[i], "error", &refused);
		ck_assert_msg(n > 0 && refused == n, "%s: %zu of %zu sandbox runs recorded as refused", ids[i], refused, n);
	}
	const json_t *o = json_array_get(json_object_get(agsbx_test_check_of(p, "env.scrubbed"), "observations"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "message")), "Operation not permitted");
	const json_t *over = json_object_get(json_object_get(agsbx_test_check_of(p, "capabilities.truthful"), "facts"), "overclaim");
	ck_assert(in_array(over, "network"));
	ck_assert(in_array(over, "process_contained"));
}
END_TEST

/* NEGATIVE CONTROL neg_deep_liar: a result nested deeper than the harness
 * admits is no result (never a partial one). */
START_TEST(test_over_deep_result_is_no_result)
{
	_cleanup_json_ json_t *p = run_provider(&neg_deep_liar, 20000);
	expect_provider(p, AGSBX_PROVIDER_DEFECTIVE);
	expect(p, "fs.host_read_denied", "skip", "no observation", "(exit status 0; stderr empty)", NULL);
	expect(p, "secrets.home_denied", "skip", "no observation", NULL);
	size_t i, refused;
	json_t *o;
	ck_assert_uint_gt(sandbox_obs(p, "fs.host_read_denied", NULL, &refused), 0);
	json_array_foreach(json_object_get(agsbx_test_check_of(p, "fs.host_read_denied"), "observations"), i, o)
		if (strcmp(json_string_value(json_object_get(o, "role")), "sandbox") == 0)
			ck_assert_msg(!json_is_object(json_object_get(o, "result")), "an over-deep result was kept");
	ck_assert_ptr_null(cf_payload_result_parse("{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", 78));
}
END_TEST

/* NEGATIVE CONTROL neg_allow_liar: every answer "ALLOWED" without running:
 * the claims fail on their own answers, and where the harness counts
 * receipts on the host (UDP datagrams), the receipt, not the forged
 * answer, decides. */
START_TEST(test_forged_allowed_fails_claims)
{
	_cleanup_json_ json_t *p = run_provider(&neg_allow_liar, 20000);
	expect_provider(p, AGSBX_PROVIDER_DEFECTIVE);
	expect(p, "fs.host_read_denied", "fail", "ALLOWED inside", NULL);
	expect(p, "fs.host_write_denied", "fail", "ALLOWED", "absent on the host", NULL);
	expect(p, "exec.status_fidelity", "fail", "exit 1 -> 0 WRONG", NULL);
	expect(p, "net.egress_ipv6_denied", "fail", "REACHED (connected)", NULL);
	expect(p, "net.egress_udp_denied", "pass", "sent, nothing arrived", NULL);
	expect(p, "priv.no_escalation", "fail", "NoNewPrivs=-1 (NOT set)", NULL);
	expect(p, "resources.pids_bounded", "fail", "NOT bounded", NULL);
	expect(p, "bundle.integrity_enforced", "fail", "ALLOWED", NULL);
	const json_t *over = json_object_get(json_object_get(agsbx_test_check_of(p, "capabilities.truthful"), "facts"), "overclaim");
	ck_assert(in_array(over, "host_filesystem_restricted"));
	ck_assert(in_array(over, "network"));
}
END_TEST

/* NEGATIVE CONTROL neg_deny_liar: every answer "EACCES" without running.
 * Denials look like enforcement, but what the host can see contradicts
 * the lie: the granted nonce never arrives, exit statuses are lost, the
 * pid namespace is the host's, no capability sets were reported. */
START_TEST(test_forged_denials_are_contradicted)
{
	_cleanup_json_ json_t *p = run_provider(&neg_deny_liar, 20000);
	expect_provider(p, AGSBX_PROVIDER_DEFECTIVE);
	expect(p, "fs.grant_write", "fail", "did not reach the host (EACCES)", NULL);
	expect(p, "exec.status_fidelity", "fail", "(did not run)", NULL);
	expect(p, "proc.contained", "fail", "SHARED with the host", NULL);
	expect(p, "priv.capabilities_dropped", "fail", "no capability sets", NULL);
	expect(p, "fs.kernel_interfaces_readonly", "fail", "reported no interface", NULL);
	expect(p, "syscalls.kernel_surface_denied", "fail", "reported no surface", NULL);
	expect(p, "fs.host_write_denied", "pass", "denied (EACCES)", NULL);
	const json_t *over = json_object_get(json_object_get(agsbx_test_check_of(p, "capabilities.truthful"), "facts"), "overclaim");
	ck_assert(in_array(over, "process_contained"));
	ck_assert(in_array(over, "privilege_escalation_blocked"));
}
END_TEST

/* NEGATIVE CONTROL neg_cut_liar claims its output was truncated inside the
 * result line. Under a cap that fits any result line the claim excuses
 * nothing (no observation, no mention of the limit); under a cap below
 * the longest result line (a library caller's choice, the CLI refuses it)
 * the harness's own limit is to blame and a required check is
 * inconclusive, not failed. */
START_TEST(test_claimed_truncation)
{
	_cleanup_json_ json_t *p = run_provider(&neg_cut_liar, 20000);
	expect_provider(p, AGSBX_PROVIDER_DEFECTIVE);
	expect(p, "fs.host_read_denied", "skip", "no observation", NULL);
	ck_assert_ptr_null(strstr(reason_of(p, "fs.host_read_denied"), "output limit"));
	expect(p, "fs.grant_write", "fail", NULL);
	expect(p, "output.bounded", "fail", "truncation flags set/UNSET", NULL);
	_cleanup_json_ json_t *q = run_provider(&neg_cut_liar, 512);
	expect(q, "fs.host_read_denied", "skip", "inconclusive: a payload result line was cut by the output limit", NULL);
	expect(q, "fs.grant_write", "skip", "inconclusive: a payload result line was cut by the output limit",
	       "did not reach the host", NULL);
}
END_TEST

/* NEGATIVE CONTROL neg_ensure_refuses: ready probe, then ensure fails with
 * no reason: the provider's reason is "ensure_failed" and every check
 * that needs a handle is blocked with the refusal, none judged. */
START_TEST(test_ensure_refusal_blocks)
{
	_cleanup_json_ json_t *p = run_provider(&neg_ensure_refuses, 20000);
	if (getenv("COVA_DUMP"))
		fprintf(stderr, "%s\n", json_dumps(p, JSON_COMPACT));
	ck_assert_str_eq(json_string_value(json_object_get(p, "reason")), "ensure_failed");
	expect(p, "fs.host_read_denied", "blocked", "ensure refused after a ready probe: ? (", NULL);
	expect(p, "env.scrubbed", "blocked", "ensure refused after a ready probe", NULL);
	ck_assert(agsbx_provider_verdict_of(p) != AGSBX_PROVIDER_CONFORMANT);
}
END_TEST

/* The harness's own paired control: with RLIMIT_NOFILE too low for a few
 * concurrent runs, the provider (an honest one) is skipped with the limit
 * in the reason, neither blocked nor defective. Lowered in a child of
 * the test only. */
START_TEST(test_starved_harness_skips)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit rl = { 32, 32 };
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(2);
		json_t *p = run_provider(&agsbx_provider_trusted_local, 20000);
		const char *r = json_string_value(json_object_get(p, "reason"));
		bool ok = agsbx_provider_verdict_of(p) == AGSBX_PROVIDER_SKIPPED && r &&
			  strstr(r, "cannot open 64 more file descriptors (EMFILE; RLIMIT_NOFILE 32)") &&
			  json_array_size(json_object_get(p, "checks")) == agsbx_conformance_check_count();
		if (!ok)
			fprintf(stderr, "starved: %s: %s\n", json_string_value(json_object_get(p, "verdict")), r ? r : "-");
		_exit(ok ? 0 : 1);
	}
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the starved harness did not skip the provider");
}
END_TEST

/* An execution area that cannot be made is the harness's error, named. */
START_TEST(test_bad_work_dir_is_an_error)
{
	struct agsbx_ctx ctx = { .tool_dir = tool_dir, .payload_path = payload, .probe_timeout_ms = 5000 };
	struct agsbx_conformance_opts o = { .ctx = &ctx, .work_dir = "/proc/agsbx-no-such-dir",
				       .env_canary_name = "AGSBX_T_CANARY", .env_canary_value = "c4n4ry",
				       .max_output_bytes = 20000, .timeout_ms = 20000, .jobs = 1 };
	struct agsbx_error err = { 0 };
	json_t *p = agsbx_conformance_run(&agsbx_provider_trusted_local, &o, &err);
	ck_assert_ptr_null(p);
	ck_assert_msg(strstr(err.message, "cannot prepare the execution area in /proc/agsbx-no-such-dir"), "%s",
		      err.message);
}
END_TEST

/* NEGATIVE CONTROL neg_scripted_liar, forged capability sets: empty
 * effective and permitted sets, ambient not shown, a full bounding set
 * without NoNewPrivs, and a setuid-root exec that raised euid 1000 to 0.
 * The bounding set alone fails priv.capabilities_dropped; the reason
 * names the gain and the unshown ambient set. */
START_TEST(test_forged_caps_judged)
{
	setenv("AGSBX_NEG_ANSWER_caps", "{\"ok\":true,\"cap_eff\":\"0000000000000000\",\"cap_prm\":\"0000000000000000\","
	       "\"cap_bnd\":\"000001ffffffffff\",\"no_new_privs\":0,\"euid\":1000,\"setuid\":{\"ok\":true,\"euid\":0}}", 1);
	setenv("AGSBX_NEG_ANSWER_status", "{\"ok\":true,\"seccomp\":2,\"no_new_privs\":1,\"cap_eff_zero\":true,"
	       "\"cap_eff\":\"0000000000000000\"}", 1);
	setenv("AGSBX_NEG_ANSWER_env", "{\"ok\":true,\"present\":true}", 1);
	_cleanup_json_ json_t *p = run_provider(&neg_scripted_liar, 20000);
	expect_provider(p, AGSBX_PROVIDER_DEFECTIVE);
	expect(p, "priv.capabilities_dropped", "fail", "CapAmb (not shown; empty as CapPrm is)", "CapBnd 000001ffffffffff",
	       NULL);
	if (access("/usr/bin/su", X_OK) == 0 || access("/bin/su", X_OK) == 0)
		expect(p, "priv.capabilities_dropped", "fail", "the exec RAISED euid 1000 to 0 inside", NULL);
	expect(p, "priv.no_escalation", "pass", "NoNewPrivs=1, effective capabilities none", NULL);
	expect(p, "syscalls.restricted", "pass", "seccomp mode 2 inside", NULL);
	expect(p, "env.scrubbed", "fail", "VISIBLE", NULL);
}
END_TEST

/* NEGATIVE CONTROL neg_scripted_liar, a forged user-space kernel: another
 * kernel release inside is what lets a provider that answers io_uring
 * and runs with seccomp off pass (gVisor's Sentry): the judgement rests on
 * that release, and the reason says so. With the host's own release the
 * same answers fail. */
START_TEST(test_forged_kernel_release)
{
	setenv("AGSBX_NEG_ANSWER_status", "{\"ok\":true,\"seccomp\":0,\"kernel_release\":\"4.4.0-agsbx-forged\"}", 1);
	setenv("AGSBX_NEG_ANSWER_io_uring", "{\"ok\":true}", 1);
	setenv("AGSBX_NEG_ANSWER_uname", "{\"ok\":true,\"release\":\"4.4.0-agsbx-forged\"}", 1);
	_cleanup_json_ json_t *p = run_provider(&neg_scripted_liar, 20000);
	expect(p, "syscalls.restricted", "pass", "seccomp mode 0", "a user-space kernel mediates syscalls", NULL);
	if (strcmp(verdict_str(p, "syscalls.io_uring_denied"), "skip") != 0)
		expect(p, "syscalls.io_uring_denied", "pass", "by the sandbox's own kernel, not the host's", NULL);
	struct utsname u;
	ck_assert_int_eq(uname(&u), 0);
	char st[256];
	snprintf(st, sizeof st, "{\"ok\":true,\"seccomp\":0,\"kernel_release\":\"%s\"}", u.release);
	setenv("AGSBX_NEG_ANSWER_status", st, 1);
	snprintf(st, sizeof st, "{\"ok\":true,\"release\":\"%s\"}", u.release);
	setenv("AGSBX_NEG_ANSWER_uname", st, 1);
	_cleanup_json_ json_t *q = run_provider(&neg_scripted_liar, 20000);
	expect(q, "syscalls.restricted", "fail", "seccomp mode 0", "(the host kernel)", NULL);
	if (strcmp(verdict_str(q, "syscalls.io_uring_denied"), "skip") != 0)
		expect(q, "syscalls.io_uring_denied", "fail", "by the HOST kernel", NULL);
}
END_TEST

/* NEGATIVE CONTROL neg_scripted_liar, forged balloon ends: a run that
 * printed progress and no result counts as bounded only when it ended by
 * itself (here SIGKILL, as an OOM kill) below the cap; the harness's own
 * timeout after the same progress bounds nothing. */
START_TEST(test_forged_balloon_ends)
{
	setenv("AGSBX_NEG_ENDED_fork_bound", "137 17", 1);
	setenv("AGSBX_NEG_ENDED_balloon", "124 300", 1);
	_cleanup_json_ json_t *p = run_provider(&neg_scripted_liar, 20000);
	if (strncmp(reason_of(p, "resources.pids_bounded"), "control:", 8) != 0)
		expect(p, "resources.pids_bounded", "pass", "no result line; the run ended with status 137 after 17 of the",
		       "the sandbox ended it below the cap", NULL);
	const char *mem = reason_of(p, "resources.memory_bounded");
	if (strncmp(mem, "control:", 8) != 0 && strncmp(mem, "not attempted", 13) != 0)
		expect(p, "resources.memory_bounded", "fail", "status 124 (the harness's timeout) after 300 of the 1024 cap",
		       "NOT shown bounded", NULL);
}
END_TEST

/* NEGATIVE CONTROL neg_scripted_liar, detailed forged denials: a pid
 * namespace of its own and the harness pid not visible, and open(2),
 * openat2 and io_uring all refused: the checks pass on the answers as
 * given (what the payload reports is the observation), and the same
 * answers with one path ALLOWED fail. */
START_TEST(test_forged_denial_details)
{
	setenv("AGSBX_NEG_ANSWER_pid_visible", "{\"ok\":false,\"errno\":\"ESRCH\",\"pid_ns\":1}", 1);
	setenv("AGSBX_NEG_ANSWER_read_alt", "{\"ok\":false,\"openat2\":{\"ok\":false,\"errno\":\"EACCES\"},"
	       "\"io_uring\":{\"ok\":false,\"errno\":\"EPERM\",\"stage\":\"setup\"}}", 1);
	_cleanup_json_ json_t *p = run_provider(&neg_scripted_liar, 20000);
	expect(p, "proc.contained", "pass", "not visible inside; pid namespace distinct", NULL);
	expect(p, "fs.host_read_denied", "pass", "openat2 EACCES, io_uring EPERM", NULL);
	bool home = strncmp(reason_of(p, "secrets.home_denied"), "the sandbox user has no home", 28) != 0;
	if (home)
		expect(p, "secrets.home_denied", "pass", "denied inside (open EACCES) [openat2 EACCES, io_uring EPERM]",
		       NULL);
	setenv("AGSBX_NEG_ANSWER_pid_visible", "{\"ok\":true,\"pid_ns\":1}", 1);
	setenv("AGSBX_NEG_ANSWER_read_alt", "{\"ok\":false,\"openat2\":{\"ok\":true},"
	       "\"io_uring\":{\"ok\":false,\"errno\":\"EPERM\",\"stage\":\"setup\"}}", 1);
	_cleanup_json_ json_t *q = run_provider(&neg_scripted_liar, 20000);
	expect(q, "proc.contained", "fail", "VISIBLE inside; pid namespace distinct", NULL);
	expect(q, "fs.host_read_denied", "fail", "openat2 ALLOWED", NULL);
	if (home)
		expect(q, "secrets.home_denied", "fail", "ALLOWED inside (open EACCES) [openat2 ALLOWED", NULL);
}
END_TEST

/* A victim file of the harness's user (0600, a secret line) outside the
 * grant; the planted redirection must leave it unread and unchanged. */
static char *victim(const char *secret)
{
	char *path = NULL;
	ck_assert_int_ge(asprintf(&path, "%s/victim-%d", work, (int)getpid()), 0);
	FILE *fp = fopen(path, "we");
	ck_assert_ptr_nonnull(fp);
	fprintf(fp, "%s\n", secret);
	fclose(fp);
	ck_assert_int_eq(chmod(path, 0600), 0);
	return path;
}

static void plant_case(const char *kind, const char *why)
{
	static const char secret[] = "agsbx-covA-victim-secret-3f9c";
	_cleanup_free_ char *v = victim(secret), *plant = NULL;
	ck_assert_int_ge(asprintf(&plant, "%s%s", kind, strcmp(kind, "fifo") == 0 ? "" : v), 0);
	setenv("AGSBX_NEG_PLANT", plant, 1);
	_cleanup_json_ json_t *p = run_provider(&neg_plant_liar, 20000);
	expect(p, "fs.grant_write", "fail", "is not a file of the sandbox user's with one link", why, NULL);
	ck_assert(json_is_null(json_object_get(json_object_get(agsbx_test_check_of(p, "fs.grant_write"), "facts"), "host_read")));
	_cleanup_free_ char *all = json_dumps(p, JSON_COMPACT);
	ck_assert_msg(!strstr(all, secret), "%s: the victim's content reached the provider record", kind);
	struct stat st;
	ck_assert_int_eq(stat(v, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_eq(st.st_size, sizeof secret);
	unlink(v);
}

/* NEGATIVE CONTROL neg_plant_liar: the file the harness reads back after
 * the granted write is a symlink, a hard link to a victim, or a FIFO: the
 * harness reads none of them (the root-redirection hardening's facts.host_read), the
 * check fails naming why, and the victim is unchanged. */
START_TEST(test_planted_redirections_are_not_read)
{
	plant_case("sym:", "Too many levels of symbolic links");
	plant_case("hard:", "Too many links");
	plant_case("fifo", "Invalid argument");
}
END_TEST

/* NEGATIVE CONTROLS neg_health_liar (inverted health) and neg_ensure_once
 * (a second ensure refused, no reason): lifecycle.consistent fails on
 * each, naming what it saw. */
START_TEST(test_lifecycle_lies)
{
	_cleanup_json_ json_t *p = run_provider(&neg_health_liar, 20000);
	expect_provider(p, AGSBX_PROVIDER_DEFECTIVE);
	expect(p, "lifecycle.consistent", "fail", "health UNHEALTHY before release, READY after; execute after release refused; "
	       "result metadata matches the probe", NULL);
	_cleanup_json_ json_t *q = run_provider(&neg_ensure_once, 20000);
	expect_provider(q, AGSBX_PROVIDER_DEFECTIVE);
	expect(q, "lifecycle.consistent", "fail", "ensure failed after a ready probe: ? (", NULL);
}
END_TEST

int main(void)
{
	agsbx_runner_init();
	tool_dir = getenv("AGSBX_BUILD_DIR") ? strdup(getenv("AGSBX_BUILD_DIR")) : NULL;
	if (!tool_dir)
		agsbx_test_skip("covA-liars", true, "AGSBX_BUILD_DIR is not set (run through ctest)");
	payload = agsbx_test_build_path("agsbx-payload");
	work = agsbx_test_tmpdir("agsbx-covA-liars");
	Suite *s = suite_create("covA-liars");
	TCase *t = tcase_create("liars");
	tcase_set_timeout(t, 300);
	tcase_add_test(t, test_killed_runs_are_no_observation);
	tcase_add_test(t, test_timed_out_runs_are_no_observation);
	tcase_add_test(t, test_bare_refusal_fails);
	tcase_add_test(t, test_over_deep_result_is_no_result);
	tcase_add_test(t, test_forged_allowed_fails_claims);
	tcase_add_test(t, test_forged_denials_are_contradicted);
	tcase_add_test(t, test_claimed_truncation);
	tcase_add_test(t, test_ensure_refusal_blocks);
	tcase_add_test(t, test_starved_harness_skips);
	tcase_add_test(t, test_bad_work_dir_is_an_error);
	tcase_add_test(t, test_forged_caps_judged);
	tcase_add_test(t, test_forged_kernel_release);
	tcase_add_test(t, test_forged_balloon_ends);
	tcase_add_test(t, test_forged_denial_details);
	tcase_add_test(t, test_planted_redirections_are_not_read);
	tcase_add_test(t, test_lifecycle_lies);
	suite_add_tcase(s, t);
	int rc = agsbx_test_run_suite(s);
	agsbx_test_rmtree(work);
	return rc;
}
