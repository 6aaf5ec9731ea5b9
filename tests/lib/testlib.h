/* Shared test helpers for the Check suites. */
#ifndef AGSBX_TESTS_TESTLIB_H
#define AGSBX_TESTS_TESTLIB_H

#include <stdbool.h>
#include <sys/types.h>
#include <check.h>

#define AGSBX_SKIP 77

/* A test's prerequisite is missing: prints the reason and exits 77 (skip),
 * unless AGSBX_REQUIRE_MECHANISMS=1 and `ci_has_it`, in which case it is a
 * failure (CI must not hide a mechanism it is supposed to have). Call from
 * main() before running suites. */
void agsbx_test_skip(const char *what, bool ci_has_it, const char *reason);
bool agsbx_test_require_mechanisms(void);

/* The unprivileged test user (AGSBX_TEST_USER, default "agsbx-test").
 * Returns false if it does not exist or we are not root. */
bool agsbx_test_user(uid_t *uid, gid_t *gid, const char **name);

/* A fresh world-traversable temp dir (mode 0755) under /tmp; removed by
 * agsbx_test_rmtree. */
char *agsbx_test_tmpdir(const char *prefix);
void agsbx_test_rmtree(const char *path);

/* A fresh 0755 dir under /tmp holding copies of the built helper programs
 * (CMake's AGSBX_HELPER_LIST) and agsbx-evidence, so a dropped-privilege
 * user can run them even when the build dir lives under a private home.
 * Remove with agsbx_test_rmtree. */
char *agsbx_test_stage_tools(void);

/* Path of a build artefact: $AGSBX_BUILD_DIR/name. */
char *agsbx_test_build_path(const char *name);
/* Path of a source file: $AGSBX_SOURCE_DIR/rel (default "."). */
char *agsbx_test_source_path(const char *rel);

/* Moves the calling process (Check forks one per test) into a new user and
 * mount namespace of its own, uid and gid mapped to themselves, all mounts
 * private: whatever the test mounts there is invisible to the host and
 * gone when the process exits. False when the kernel refuses (after a
 * note; under AGSBX_REQUIRE_MECHANISMS=1 it aborts the test instead). Call
 * from a test body only. */
bool agsbx_test_own_namespaces(void);
/* parent/name as a new mount point with a tmpfs mounted there with opts
 * (inside agsbx_test_own_namespaces only); malloc'd path or NULL. */
char *agsbx_test_tmpfs(const char *parent, const char *name, const char *opts);
/* Clears every effective capability: file modes then apply to the caller
 * as to any unprivileged owner. 0 or -errno. */
int agsbx_test_drop_effective_caps(void);

/* Runs a Suite, returns EXIT_SUCCESS/EXIT_FAILURE for main(). */
int agsbx_test_run_suite(Suite *s);

#endif
