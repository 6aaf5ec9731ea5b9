/* The git subject (evidence/subject.c) at its edges, through
 * agsbx_subject_from_repo: no git to run, a `git status` larger than the
 * 1 MiB the harness reads (dirty either way, never "clean"), and filter
 * configuration that names no driver. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "evidence/evidence.h"
#include "tests/lib/testlib.h"

static char *tmp;

static int sh(const char *fmt, ...)
{
	char *cmd = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	ck_assert_int_ge(n, 0);
	int r = system(cmd);
	free(cmd);
	return r;
}

static void setup(void)
{
	if (sh("command -v git >/dev/null") != 0)
		agsbx_test_skip("git", true, "git not installed");
	tmp = agsbx_test_tmpdir("subject");
	ck_assert_ptr_nonnull(tmp);
	ck_assert_int_eq(sh("cd '%s' && git init -q -b main repo && cd repo && echo a > f && git add f && "
			    "git -c user.name=t -c user.email=t@x commit -qm one",
			    tmp),
			 0);
}

static void teardown(void)
{
	agsbx_test_rmtree(tmp);
	free(tmp);
}

START_TEST(test_no_git_to_run)
{
	char *repo = agsbx_path_join(tmp, "repo");
	char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", tmp, 1); /* a directory without git */
	struct agsbx_error err = { 0 };
	json_t *s = agsbx_subject_from_repo(repo, &err);
	setenv("PATH", path, 1);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(err.message, "cannot run git") != NULL, "%s", err.message);
	ck_assert_ptr_nonnull(strstr(err.message, "repo"));
	free(path);
	free(repo);
}
END_TEST

/* 4600 untracked files with 240-character names: `git status --porcelain`
 * prints about 1.1 MiB, more than the harness reads. */
START_TEST(test_status_over_limit_is_dirty)
{
	ck_assert_int_eq(sh("cd '%s/repo' && mkdir u && cd u && "
			    "awk 'BEGIN { for (i = 0; i < 4600; i++) printf \"f%%0239d\\n\", i }' | xargs touch",
			    tmp),
			 0);
	char *repo = agsbx_path_join(tmp, "repo");
	struct agsbx_error err = { 0 };
	/* -uall: every untracked file, not the directory */
	ck_assert_int_eq(sh("cd '%s' && git config status.showUntrackedFiles all", repo), 0);
	json_t *s = agsbx_subject_from_repo(repo, &err);
	ck_assert_msg(s != NULL, "%s", err.message);
	ck_assert(json_is_true(json_object_get(s, "dirty")));
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(s, "commit"))), 40);
	json_decref(s);
	free(repo);
}
END_TEST

/* filter.<key> without a driver name is no filter driver: nothing to
 * override, and the subject is read as usual. */
START_TEST(test_filter_config_without_driver)
{
	char *repo = agsbx_path_join(tmp, "repo");
	ck_assert_int_eq(sh("cd '%s' && git config filter.clean 'touch \"%s/ran\"' && git config filter.x.y z", repo, tmp),
			 0);
	struct agsbx_error err = { 0 };
	json_t *s = agsbx_subject_from_repo(repo, &err);
	ck_assert_msg(s != NULL, "%s", err.message);
	ck_assert(json_is_false(json_object_get(s, "dirty")));
	ck_assert_str_eq(json_string_value(json_object_get(s, "branch")), "main");
	json_decref(s);
	char *ran = agsbx_path_join(tmp, "ran");
	ck_assert_int_ne(access(ran, F_OK), 0);
	free(ran);
	free(repo);
}
END_TEST

/* A filter driver whose name is not UTF-8 (git takes any bytes but NUL
 * and newline in a subsection): it is switched off like any other, so
 * `git status` never runs its program (found by fuzz-tools: such a name
 * got no override at all). */
START_TEST(test_filter_name_not_utf8)
{
	char *repo = agsbx_path_join(tmp, "repo");
	ck_assert_int_eq(sh("cd '%s' && printf 'f filter=\\346x\\n' > .gitattributes && git add .gitattributes && "
			    "git -c user.name=t -c user.email=t@x commit -qm attrs && "
			    "git config \"$(printf 'filter.\\346x.clean')\" 'touch \"%s/ran\"; cat' && "
			    "touch -d 2001-01-01 f",
			    repo, tmp),
			 0);
	struct agsbx_error err = { 0 };
	json_t *s = agsbx_subject_from_repo(repo, &err);
	ck_assert_msg(s != NULL, "%s", err.message);
	json_decref(s);
	char *ran = agsbx_path_join(tmp, "ran");
	ck_assert_msg(access(ran, F_OK) != 0, "the repository's filter program ran");
	/* the marker works: git status without the overrides runs it */
	ck_assert_int_eq(sh("cd '%s' && touch -d 2002-01-01 f && git status --porcelain >/dev/null && test -e '%s'",
			    repo, ran),
			 0);
	free(ran);
	free(repo);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("subject-edges");
	TCase *tc = tcase_create("subject-edges");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_no_git_to_run);
	tcase_add_test(tc, test_status_over_limit_is_dirty);
	tcase_add_test(tc, test_filter_config_without_driver);
	tcase_add_test(tc, test_filter_name_not_utf8);
	suite_add_tcase(s, tc);
	return agsbx_test_run_suite(s);
}
