/* Seatbelt on Linux: the provider does not apply and says why; its profile
 * is derived from the grant only. (The mechanism itself runs only on macOS:
 * workflows/ has the macOS job.) */
#include <stdlib.h>
#include <string.h>

#include "providers/seatbelt/seatbelt.h"
#include "tests/lib/testlib.h"

START_TEST(test_not_macos)
{
	struct agsbx_ctx ctx = { .probe_timeout_ms = 1000 };
	struct agsbx_probe p = { 0 };
	agsbx_provider_seatbelt.probe(&ctx, &p);
#ifdef __APPLE__
	ck_assert(p.reason != NULL);
#else
	ck_assert_str_eq(p.reason, "not_macos");
	ck_assert(!p.available);
	ck_assert(!agsbx_provider_seatbelt.applies());
#endif
	ck_assert(agsbx_reason_in_set(&agsbx_provider_seatbelt, p.reason));
	agsbx_probe_clear(&p);
}
END_TEST

START_TEST(test_profile_from_grant_only)
{
	char *dir = agsbx_test_tmpdir("sb");
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(dir, "a\"b\\c", (uid_t)-1, (gid_t)-1, &g), 0);
	char *prof = agsbx_seatbelt_profile(g, false);
	ck_assert(prof != NULL);
	ck_assert(strstr(prof, "(deny default)") != NULL);
	ck_assert(strstr(prof, "(deny network*)") != NULL);
	/* read-write roots are writable, the source root explicitly not */
	ck_assert(strstr(prof, "(deny file-write* (subpath \"") != NULL);
	ck_assert(strstr(prof, "/source\"))") != NULL);
	ck_assert(strstr(prof, "/output\"))") != NULL);
	/* quotes and backslashes in paths are escaped, never break out */
	ck_assert(strstr(prof, "a\\\"b\\\\c") != NULL);
	ck_assert(strstr(prof, "/private/tmp") == NULL);
	char *open_net = agsbx_seatbelt_profile(g, true);
	ck_assert(strstr(open_net, "(allow network*)") != NULL);
	free(prof);
	free(open_net);
	agsbx_grant_destroy(g);
	agsbx_test_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_unknown_config_key)
{
	struct agsbx_failure f = { 0 };
	json_t *cfg = json_pack("{s:s}", "extra_sbpl_rules", "(allow default)");
	ck_assert_int_lt(agsbx_provider_check_config(&agsbx_provider_seatbelt, cfg, &f), 0);
	ck_assert(strstr(f.message, "extra_sbpl_rules") != NULL);
	json_decref(cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("seatbelt");
	TCase *tc = tcase_create("seatbelt");
	tcase_add_test(tc, test_not_macos);
	tcase_add_test(tc, test_profile_from_grant_only);
	tcase_add_test(tc, test_unknown_config_key);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
