/* The matrix and host conditions (library level; the CLI refuses a
 * --max-output-bytes below the payload's result line, a library caller
 * may not): a payload result cut by the harness's own output limit makes
 * the checks that needed it inconclusive (skip with the reason), never
 * fail, and an axis with only inconclusive evidence is neither backed nor
 * an overclaim. Real landlock (it claims the filesystem axis). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/runner.h"
#include "base/util.h"
#include "conformance/conformance.h"
#include "tests/lib/testlib.h"

static char *tool_dir, *payload, *work;

static json_t *check_of(json_t *prov, const char *id)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(prov, "checks"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "id")), id) == 0)
			return c;
	return NULL;
}

static json_t *run(size_t max_output)
{
	struct agsbx_ctx ctx = { .tool_dir = tool_dir, .payload_path = payload, .probe_timeout_ms = 5000 };
	struct agsbx_conformance_opts o = { .ctx = &ctx, .work_dir = work, .env_canary_name = "AGSBX_T_CANARY",
				       .env_canary_value = "c4n4ry", .max_output_bytes = max_output,
				       .timeout_ms = 20000, .jobs = 2 };
	struct agsbx_error err = { 0 };
	json_t *p = agsbx_conformance_run(&agsbx_provider_landlock, &o, &err);
	ck_assert_msg(p != NULL, "matrix: %s", err.message);
	return p;
}

START_TEST(test_cut_result_is_inconclusive)
{
	json_t *p = run(16);
	const char *v = json_string_value(json_object_get(p, "verdict"));
	ck_assert_msg(strcmp(v, "defective") != 0, "a cut result made landlock defective: %s",
		      json_string_value(json_object_get(json_object_get(p, "failing_checks"), 0)));
	json_t *c = check_of(p, "fs.host_read_denied");
	ck_assert_str_eq(json_string_value(json_object_get(c, "verdict")), "skip");
	ck_assert_msg(strstr(json_string_value(json_object_get(c, "reason")), "cut by the output limit"), "%s", json_string_value(json_object_get(c, "reason")));
	json_t *t = check_of(p, "capabilities.truthful");
	ck_assert_str_eq(json_string_value(json_object_get(t, "verdict")), "pass");
	json_t *inc = json_object_get(json_object_get(t, "facts"), "inconclusive");
	bool fs = false;
	for (size_t i = 0; i < json_array_size(inc); i++)
		fs |= strcmp(json_string_value(json_array_get(inc, i)), "host_filesystem_restricted") == 0;
	ck_assert_msg(fs, "the filesystem axis is not listed as inconclusive");
	json_decref(p);
}
END_TEST

/* The paired control: with a sufficient limit the same checks pass. */
START_TEST(test_sufficient_limit_passes)
{
	json_t *p = run(20000);
	ck_assert_str_eq(json_string_value(json_object_get(check_of(p, "fs.host_read_denied"), "verdict")), "pass");
	json_decref(p);
}
END_TEST

int main(void)
{
	agsbx_runner_init();
	tool_dir = getenv("AGSBX_BUILD_DIR") ? strdup(getenv("AGSBX_BUILD_DIR")) : NULL;
	if (!tool_dir)
		agsbx_test_skip("matrix", true, "AGSBX_BUILD_DIR is not set (run through ctest)");
	payload = agsbx_test_build_path("agsbx-payload");
	struct agsbx_probe pr = { 0 };
	struct agsbx_ctx ctx = { .tool_dir = tool_dir, .payload_path = payload, .probe_timeout_ms = 5000 };
	agsbx_provider_landlock.probe(&agsbx_provider_landlock, &ctx, &pr);
	if (!pr.available)
		agsbx_test_skip("landlock", true, pr.reason ? pr.reason : "unavailable");
	agsbx_provider_probe_clear(&pr);
	work = agsbx_test_tmpdir("agsbx-t-matrix");
	Suite *s = suite_create("matrix-hostcond");
	TCase *tc = tcase_create("cut");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_cut_result_is_inconclusive);
	tcase_add_test(tc, test_sufficient_limit_passes);
	suite_add_tcase(s, tc);
	int rc = agsbx_test_run_suite(s);
	agsbx_test_rmtree(work);
	return rc;
}
