#include "tests/lib/testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#endif

bool agsbx_test_require_mechanisms(void)
{
	const char *v = getenv("AGSBX_REQUIRE_MECHANISMS");
	return v && strcmp(v, "1") == 0;
}

void agsbx_test_skip(const char *what, bool ci_has_it, const char *reason)
{
	if (ci_has_it && agsbx_test_require_mechanisms()) {
		fprintf(stderr, "FAIL: %s unavailable but AGSBX_REQUIRE_MECHANISMS=1: %s\n", what, reason);
		exit(EXIT_FAILURE);
	}
	fprintf(stderr, "SKIP: %s: %s\n", what, reason);
	exit(AGSBX_SKIP);
}

bool agsbx_test_user(uid_t *uid, gid_t *gid, const char **name)
{
	const char *n = getenv("AGSBX_TEST_USER");
	if (!n || !*n)
		n = "agsbx-test";
	struct passwd *pw = getpwnam(n);
	if (!pw || geteuid() != 0)
		return false;
	if (uid)
		*uid = pw->pw_uid;
	if (gid)
		*gid = pw->pw_gid;
	if (name)
		*name = n;
	return true;
}

char *agsbx_test_tmpdir(const char *prefix)
{
	char *p = NULL;
	if (asprintf(&p, "/tmp/%s-XXXXXX", prefix) < 0)
		return NULL;
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	chmod(p, 0755);
	return p;
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	/* Tests may have made things read-only; make the parent writable. */
	remove(path);
	return 0;
}

void agsbx_test_rmtree(const char *path)
{
	if (!path)
		return;
	char *cmd = NULL;
	/* chmod first: read-only grant roots would stop remove(). */
	if (asprintf(&cmd, "chmod -R u+rwX '%s' 2>/dev/null", path) >= 0) {
		if (system(cmd) != 0) { /* best effort */ }
		free(cmd);
	}
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

char *agsbx_test_build_path(const char *name)
{
	const char *dir = getenv("AGSBX_BUILD_DIR");
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir ? dir : ".", name) < 0)
		return NULL;
	return p;
}

char *agsbx_test_source_path(const char *rel)
{
	const char *dir = getenv("AGSBX_SOURCE_DIR");
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir ? dir : ".", rel) < 0)
		return NULL;
	return p;
}

int agsbx_test_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static void stage_one(const char *dir, const char *name)
{
	char *src = agsbx_test_build_path(name);
	char *cmd = NULL;
	if (src && access(src, F_OK) == 0 && asprintf(&cmd, "install -m 0755 '%s' '%s/%s'", src, dir, name) >= 0) {
		if (system(cmd) != 0)
			fprintf(stderr, "warning: cannot stage %s\n", src);
	}
	free(cmd);
	free(src);
}

char *agsbx_test_stage_tools(void)
{
	char *dir = agsbx_test_tmpdir("agsbx-stage");
	/* The helpers are CMake's one list (agsbx_add_helper), plus the CLI. */
	char *list = strdup(AGSBX_HELPER_LIST ":agsbx-evidence");
	char *save = NULL;
	for (char *name = strtok_r(list, ":", &save); dir && name; name = strtok_r(NULL, ":", &save))
		stage_one(dir, name);
	free(list);
	return dir;
}

#ifdef __linux__
static void write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_msg(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "%s: %s", path, strerror(errno));
	close(fd);
}

bool agsbx_test_own_namespaces(void)
{
	const char *fork_mode = getenv("CK_FORK");
	ck_assert_msg(!fork_mode || strcmp(fork_mode, "no") != 0, "namespace tests need CK_FORK (one process per test)");
	uid_t uid = getuid();
	gid_t gid = getgid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		ck_assert_msg(!agsbx_test_require_mechanisms(), "unshare(user+mount): %s", strerror(errno));
		fprintf(stderr, "note: user+mount namespace unavailable (%s): this test did not run\n", strerror(errno));
		return false;
	}
	char map[64];
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	write_proc("/proc/self/uid_map", map);
	write_proc("/proc/self/setgroups", "deny");
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	write_proc("/proc/self/gid_map", map);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	return true;
}

char *agsbx_test_tmpfs(const char *parent, const char *name, const char *opts)
{
	char *mp = NULL;
	if (asprintf(&mp, "%s/%s", parent, name) < 0)
		return NULL;
	if (mkdir(mp, 0755) < 0 || mount("agsbx-test", mp, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		fprintf(stderr, "tmpfs at %s: %s\n", mp, strerror(errno));
		free(mp);
		return NULL;
	}
	return mp;
}

int agsbx_test_drop_effective_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	data[0].effective = data[1].effective = 0;
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}
#else
/* Namespaces and capabilities are Linux's: these tests do not apply. */
bool agsbx_test_own_namespaces(void)
{
	fprintf(stderr, "note: no user+mount namespaces on this platform: this test did not run\n");
	return false;
}

char *agsbx_test_tmpfs(const char *parent, const char *name, const char *opts)
{
	(void)parent;
	(void)name;
	(void)opts;
	return NULL;
}

int agsbx_test_drop_effective_caps(void)
{
	return -ENOSYS;
}
#endif
