/* The landlock and bubblewrap providers under allocation failure, against
 * the real kernel, the real helper and the real bwrap: in a forked child the Nth allocation fails (once),
 * and probe, ensure, an execute that reads a host canary and one that
 * writes a granted output run through the public ops. Whichever allocation
 * fails, each op either gives what it gives without the failure or fails
 * with a reason: never a step that ran without the ruleset (the canary
 * read), never "ok" for a write that did not land, never a crash. The
 * sweep must see both outcomes, or it tested nothing. */
#include "base/cleanup.h"
#include "base/landlock.h"
#include "base/runner.h"
#include "base/util.h"
#include "providers/bubblewrap/bwrap.h"
#include "providers/provider.h"
#include "tests/lib/oom-inject.h"
#include "tests/lib/testlib.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


static const struct agsbx_provider_ops *LL;   /* the provider under test */
static const char *build_dir;
static char *stage_dir;   /* the tools, where the test user reaches them */
static bool have_user;
static uid_t user_uid;
static gid_t user_gid;
static const char *user_name;

struct fx {
	char *tmp, *canary_path, *payload_host;
	char canary[48], nonce[33];
	struct agsbx_grant *g;
	struct agsbx_ctx ctx;
};
static struct fx fx;

enum { SAME = 0, CLEAN_FAIL = 1, WRONG = 2, UNINJECTED = 4 };

static int exec_payload(struct agsbx_handle *h, const char *a1, const char *a2, const char *a3,
			struct agsbx_exec_result *res, struct agsbx_error *fail)
{
	_cleanup_free_ char *p = agsbx_handle_path(h, AGSBX_ROOT_SOURCE, "agsbx-payload");
	if (!p)
		return -ENOMEM;
	const char *argv[] = { p, a1, a2, a3, NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 65536, .timeout_ms = 20000, .cancel_fd = -1 };
	return h->ops->execute(h, &step, &lim, res, fail);
}

/* The payload's JSON line says "ok": true. */
static bool payload_ok(const struct agsbx_exec_result *res)
{
	if (!res->run.out)
		return false;
	json_error_t jerr;
	json_t *j = json_loadb(res->run.out, strcspn(res->run.out, "\n"), 0, &jerr);
	bool ok = json_is_true(json_object_get(j, "ok"));
	json_decref(j);
	return ok;
}

/* The four ops, the Nth allocation failing; the outcome (above). */
static int ops_with_nth_failing(long nth)
{
	int out = SAME;
	struct agsbx_error fail = { 0 };
	agsbx_oom_arm(nth);
	struct agsbx_probe p = { 0 };
	int r = LL->probe(LL, &fx.ctx, &p);
	agsbx_oom_disarm();
	if (r < 0 || !p.available)
		out = (r < 0 || p.reason) ? CLEAN_FAIL : WRONG;
	if (out == WRONG)
		fprintf(stderr, "allocation %ld failing: probe not available without a reason\n", nth);
	if (nth > 1000000 && out != SAME)
		fprintf(stderr, "probe without injection: %d %s %s\n", r, p.reason, p.detail ? p.detail : "");
	agsbx_provider_probe_clear(&p);

	struct agsbx_handle *h = NULL;
	agsbx_oom_arm(nth);
	r = LL->ensure(LL, &fx.ctx, fx.g, &h, &fail);
	agsbx_oom_disarm();
	if (r < 0 && (!fail.reason || h))
		fprintf(stderr, "allocation %ld failing: ensure %d without a reason (%s)\n", nth, r, fail.message);
	if (r < 0)
		return fail.reason && !h ? CLEAN_FAIL : WRONG;

	/* The canary outside the grant: whatever failed, never read. */
	struct agsbx_exec_result res = { 0 };
	agsbx_oom_arm(nth);
	r = exec_payload(h, "read", fx.canary_path, NULL, &res, &fail);
	agsbx_oom_disarm();
	if (r == 0 && res.run.out && strstr(res.run.out, fx.canary + 7)) {
		fprintf(stderr, "allocation %ld failing: the canary was read: %s\n", nth, res.run.out);
		out = WRONG;
	} else if (r < 0) {
		out = out == WRONG ? WRONG : CLEAN_FAIL;
	}
	agsbx_exec_result_clear(&res);

	/* A granted write: "ok" only when it landed. */
	_cleanup_free_ char *target = agsbx_handle_path(h, AGSBX_ROOT_OUTPUT, "f");
	memset(&res, 0, sizeof res);
	agsbx_oom_arm(nth);
	r = exec_payload(h, "write", target, fx.nonce, &res, &fail);
	agsbx_oom_disarm();
	if (r == 0 && payload_ok(&res)) {
		_cleanup_free_ char *data = NULL;
		size_t len = 0;
		if (agsbx_read_file(target, 4096, &data, &len) != 0 || strcmp(data, fx.nonce) != 0) {
			fprintf(stderr, "allocation %ld failing: write said ok, did not land\n", nth);
			out = WRONG;
		}
	} else if (out != WRONG) {
		if (nth > 1000000)
			fprintf(stderr, "write without injection: %d %s %s / %s\n", r, fail.reason,
				res.run.out ? res.run.out : "", res.run.err ? res.run.err : "");
		out = CLEAN_FAIL;
	}
	agsbx_exec_result_clear(&res);
	unlink(target);

	agsbx_oom_arm(nth);
	agsbx_provider_release(h);
	agsbx_oom_disarm();
	agsbx_handle_free(h);
	return out == SAME && !agsbx_oom_injected() ? UNINJECTED : out;
}

/* exit, not _exit: a coverage build counts what a forked child ran only
 * when its exit handlers write the counters out (stdio was flushed
 * before the fork, so nothing is written twice). */
static _Noreturn void child_exit(int code)
{
	exit(code);
}

__attribute__((unused)) /* no sweep under AddressSanitizer */
static int in_child(long nth)
{
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		child_exit(ops_with_nth_failing(nth));
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st), "allocation %ld failing: killed by signal %d", nth, WTERMSIG(st));
	return WEXITSTATUS(st);
}

/* As root for landlock; as the test user (bwrap refuses root) with the
 * staged tools for bubblewrap, the canary then the user's to read. */
static void setup_as(bool run_as)
{
	memset(&fx, 0, sizeof fx);
	fx.tmp = agsbx_test_tmpdir("agsbx-cov3-prov");
	ck_assert_ptr_nonnull(fx.tmp);
	const char *tools = run_as ? stage_dir : build_dir;
	fx.payload_host = agsbx_path_join(tools, "agsbx-payload");
	fx.ctx.tool_dir = tools;
	fx.ctx.payload_path = fx.payload_host;
	fx.ctx.probe_timeout_ms = 20000;
	fx.ctx.run_as = run_as;
	fx.ctx.run_uid = run_as ? user_uid : 0;
	fx.ctx.run_gid = run_as ? user_gid : 0;
	fx.ctx.run_as_name = run_as ? user_name : NULL;
	ck_assert_int_eq(agsbx_grant_create(fx.tmp, "area", run_as ? user_uid : (uid_t)-1,
					    run_as ? user_gid : (gid_t)-1, &fx.g), 0);
	ck_assert_int_eq(agsbx_grant_add_file(fx.g, "agsbx-payload", fx.payload_host, true), 0);
	ck_assert_int_eq(agsbx_grant_seal(fx.g), 0);
	snprintf(fx.canary, sizeof fx.canary, "CANARY-");
	agsbx_random_hex(fx.canary + 7, 16);
	agsbx_random_hex(fx.nonce, 16);
	fx.canary_path = agsbx_path_join(fx.tmp, "canary");
	int fd = open(fx.canary_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, fx.canary, strlen(fx.canary)), (ssize_t)strlen(fx.canary));
	close(fd);
	if (run_as) {
		chmod(fx.tmp, 0755);
		ck_assert_int_eq(chown(fx.canary_path, user_uid, user_gid), 0);
	}
}

static void setup_landlock(void)
{
	LL = &agsbx_provider_landlock;
	setup_as(false);
}

static void setup_bwrap(void)
{
	LL = &agsbx_provider_bubblewrap;
	setup_as(true);
}

static void teardown(void)
{
	agsbx_grant_destroy(fx.g);
	agsbx_test_rmtree(fx.tmp);
	free(fx.tmp);
	free(fx.canary_path);
	free(fx.payload_host);
}

/* Says why, once, when the injector cannot work in this process. */
static bool oom_unavailable(void)
{
	const char *why = agsbx_oom_unavailable();
	if (why)
		fprintf(stderr, "SKIP: allocation sweep: %s\n", why);
	return why != NULL;
}

START_TEST(oom_sweep)
{
	if (oom_unavailable())
		return;
#ifndef OOM_UNDER_ASAN
	/* Without injection: everything as expected, or the sweep means
	 * nothing. */
	ck_assert_int_eq(in_child(1L << 40), UNINJECTED);
	int seen[5] = { 0 };
	long nth = 1;
	for (int steps = 0; steps < 400; steps++) {
		int o = in_child(nth);
		ck_assert_msg(o == SAME || o == CLEAN_FAIL || o == UNINJECTED, "allocation %ld failing: outcome %d",
			      nth, o);
		seen[o]++;
		if (o == UNINJECTED)
			break;
		/* Every allocation at first, then a widening stride. */
		nth += nth < 300 ? 1 : nth / 16;
	}
	fprintf(stderr, "%s sweep: %d same, %d clean failures, last allocation %ld\n", LL->id, seen[SAME],
		seen[CLEAN_FAIL], nth);
	ck_assert_msg(seen[UNINJECTED] == 1, "the sweep never got past the last allocation");
	ck_assert_int_gt(seen[CLEAN_FAIL], 0);
#endif
}
END_TEST

int main(void)
{
	agsbx_runner_init();
	build_dir = getenv("AGSBX_BUILD_DIR");
	if (!build_dir)
		build_dir = ".";
	int abi = agsbx_ll_abi();
	if (abi < 0)
		agsbx_test_skip("landlock", true, strerror(-abi));
	_cleanup_free_ char *h = agsbx_path_join(build_dir, "agsbx-landlock-exec");
	_cleanup_free_ char *p = agsbx_path_join(build_dir, "agsbx-payload");
	if (access(h, X_OK) != 0 || access(p, X_OK) != 0)
		agsbx_test_skip("agsbx-landlock-exec", true, "helper or payload not built");
	char *bwrap = NULL;
	bool have_bwrap = agsbx_bwrap_find(&bwrap) == 0;
	free(bwrap);
	have_user = geteuid() == 0 && agsbx_test_user(&user_uid, &user_gid, &user_name);
	stage_dir = have_user ? agsbx_test_stage_tools() : NULL;
	Suite *s = suite_create("cov3-providers");
	TCase *tc = tcase_create("landlock");
	tcase_add_checked_fixture(tc, setup_landlock, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, oom_sweep);
	suite_add_tcase(s, tc);
	if (have_bwrap && stage_dir) {
		tc = tcase_create("bubblewrap");
		tcase_add_checked_fixture(tc, setup_bwrap, teardown);
		tcase_set_timeout(tc, 240);
		tcase_add_test(tc, oom_sweep);
		suite_add_tcase(s, tc);
	} else if (agsbx_test_require_mechanisms()) {
		fprintf(stderr, "FAIL: bwrap, root or the test user missing but AGSBX_REQUIRE_MECHANISMS=1\n");
		return EXIT_FAILURE;
	} else {
		fprintf(stderr, "SKIP: the bubblewrap sweep: needs bwrap, root and the test user\n");
	}
	int r = agsbx_test_run_suite(s);
	if (stage_dir)
		agsbx_test_rmtree(stage_dir);
	free(stage_dir);
	return r;
}
