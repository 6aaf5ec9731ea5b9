/* The bubblewrap provider against the real bwrap.
 *
 * Groups (each added only when its prerequisites are present; a missing
 * one is printed, and is a failure with AGSBX_REQUIRE_MECHANISMS=1):
 *   classify   recorded bwrap messages -> classes, reasons, hints
 *   argv       the command line is built from the grant and system roots only
 *   config     unknown keys and bad values refused before anything runs
 *   real       the classifier against messages bwrap really prints on this
 *              host: seccomp EPERM/ENOSPC (agsbx-simulate), a nested userns
 *              with max_user_namespaces=0, and a Landlock-denied /proc
 *   root       as root without run_as: bwrap_unsafe_as_root, ensure refuses
 *   provider   as the unprivileged user: probe, ensure, the payload's
 *              observations, timeout cleanup, simulation, lifecycle */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "base/cleanup.h"
#include "base/landlock.h"
#include "base/runner.h"
#include "base/util.h"
#include "providers/bubblewrap/bwrap.h"
#include "providers/seccomp-filter.h"
#include "providers/provider.h"
#include "tests/lib/testlib.h"

/* ---- shared state (set in main, read by the forked tests) ------------- */

static uid_t t_uid;
static gid_t t_gid;
static const char *t_user;
static char *t_bwrap;
static char *t_payload;
static char *t_simulate;
static char *t_build_dir;
static char *t_scratch;                  /* per-suite scratch dir, 0755 */
static char t_marker_prefix[64];         /* in every marker this run uses */

static void init_runner(void)
{
	ck_assert_int_eq(agsbx_runner_init(), 0);
}

static bool strv_has(char **v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

/* Index of the consecutive slice a b c in v, or -1. */
static int strv_find3(char **v, const char *a, const char *b, const char *c)
{
	for (int i = 0; v && v[i] && v[i + 1] && v[i + 2]; i++)
		if (strcmp(v[i], a) == 0 && strcmp(v[i + 1], b) == 0 && strcmp(v[i + 2], c) == 0)
			return i;
	return -1;
}

/* ---- classify --------------------------------------------------------- */

struct sample {
	const char *text;
	const char *cls;
};

/* Recorded texts: the ones the CI host kind produces (docs/design.md,
 * "Simulating a host that blocks user namespaces")
 * and the ones reported from Ubuntu 24.04, containers and old bwraps. */
static const struct sample samples[] = {
	{ "bwrap: setting up uid map: Permission denied\n", "uid_map_denied" },
	{ "bwrap: No permissions to create new namespace, likely because the kernel does not allow "
	  "non-privileged user namespaces. See <https://deb.li/bubblewrap> or "
	  "<file:///usr/share/doc/bubblewrap/README.Debian.gz>.\n", "userns_disabled" },
	{ "bwrap: No permissions to create a new namespace\n", "userns_disabled" },
	{ "bwrap: Creating new namespace failed, likely because the kernel does not support user "
	  "namespaces.  bwrap must be installed setuid on such systems.\n", "userns_disabled" },
	{ "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces "
	  "exceeded (ENOSPC)\n", "userns_limit" },
	{ "bwrap: Failed to make / slave: Operation not permitted\n", "mount_denied" },
	{ "bwrap: Failed to make / slave: Permission denied\n", "mount_denied" },
	{ "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n", "proc_mount_denied" },
	{ "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted\n", "netlink_denied" },
	{ "bwrap: loopback: Failed RTM_NEWLINK: Operation not permitted\n", "netlink_denied" },
	{ "bwrap: Unknown option --perms\n", "unknown_option" },
	{ "bwrap: execvp /nonexistent: No such file or directory\n", "exec_failed" },
	{ "bwrap: Unexpected capabilities but not setuid, old file caps config?\n", "other" },
	{ "", "other" },
};

START_TEST(test_classify_samples)
{
	const struct sample *s = &samples[_i];
	const char *cls = agsbx_bwrap_classify(s->text, strlen(s->text));
	ck_assert_msg(strcmp(cls, s->cls) == 0, "'%s' -> %s, want %s", s->text, cls, s->cls);
	bool in_set = false;
	for (const char *const *c = agsbx_bwrap_classes; *c; c++)
		in_set |= strcmp(*c, cls) == 0;
	ck_assert(in_set);
}
END_TEST

/* The golden corpus (tests/data/bwrap-stderr/): real messages of bwrap
 * 0.4 to 0.12, Debian's and Ubuntu's patched ones, each with its class. */
START_TEST(test_classify_corpus)
{
	const char *src = getenv("AGSBX_SOURCE_DIR");
	ck_assert_msg(src, "AGSBX_SOURCE_DIR unset");
	_cleanup_free_ char *dir = agsbx_path_join(src, "tests/data/bwrap-stderr");
	_cleanup_free_ char *idx = agsbx_path_join(dir, "expected.tsv");
	_cleanup_fclose_ FILE *f = fopen(idx, "re");
	ck_assert_msg(f, "cannot open %s", idx);
	char line[512];
	int n = 0, other = 0;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = '\0';
		char *tab = strchr(line, '\t');
		ck_assert_msg(tab, "bad line '%s'", line);
		*tab = '\0';
		_cleanup_free_ char *path = agsbx_path_join(dir, line);
		char text[2048];
		_cleanup_fclose_ FILE *m = fopen(path, "re");
		ck_assert_msg(m, "cannot open %s", path);
		size_t len = fread(text, 1, sizeof text, m);
		const char *cls = agsbx_bwrap_classify(text, len);
		ck_assert_msg(strcmp(cls, tab + 1) == 0, "%s -> %s, want %s", line, cls, tab + 1);
		n++;
		other += strcmp(cls, "other") == 0;
	}
	ck_assert_int_ge(n, 40);
	ck_assert_int_ge(other, 1); /* an unknown message stays "other" */
}
END_TEST

START_TEST(test_classify_edges)
{
	ck_assert_str_eq(agsbx_bwrap_classify(NULL, 0), "other");
	/* Binary noise before the message: stderr is bytes, not a C string. */
	static const char buf[] = "\x01\x00garbage\x00bwrap: setting up uid map: Permission denied";
	ck_assert_str_eq(agsbx_bwrap_classify(buf, sizeof buf - 1), "uid_map_denied");
	/* Only the first len bytes count. */
	const char *t = "bwrap: Can't mount proc on /newroot/proc";
	ck_assert_str_eq(agsbx_bwrap_classify(t, 10), "other");
	/* An unknown option explains everything after it. */
	const char *two = "bwrap: Unknown option --foo\nbwrap: setting up uid map: Permission denied\n";
	ck_assert_str_eq(agsbx_bwrap_classify(two, strlen(two)), "unknown_option");
}
END_TEST

START_TEST(test_class_reasons)
{
	for (const char *const *c = agsbx_bwrap_classes; *c; c++) {
		bool ns = strcmp(*c, "unknown_option") != 0 && strcmp(*c, "other") != 0 &&
			  strcmp(*c, "bind_refused") != 0 && strcmp(*c, "exec_failed") != 0;
		ck_assert_str_eq(agsbx_bwrap_class_reason(*c),
				 ns ? "bwrap_user_namespace_blocked" : "bwrap_mechanism_failed");
		ck_assert(agsbx_bwrap_class_is_namespace(*c) == ns);
		ck_assert(agsbx_reason_in_set(&agsbx_provider_bubblewrap, agsbx_bwrap_class_reason(*c)));
	}
}
END_TEST

/* A hint must never tell anyone to weaken the host. */
static const char *const banned[] = {
	"sysctl", "sudo", "setuid", "chmod", "u+s", "--privileged", "privileged container",
	"disable", "unconfined", "complain", "aa-teardown", "seccomp=", "kernel.", "=1", "=0",
};

static void check_hint(const char *cls, const json_t *host)
{
	char *h = agsbx_bwrap_class_hint(cls, host);
	ck_assert_ptr_nonnull(h);
	ck_assert_msg(strlen(h) > 20, "hint for %s too short", cls);
	for (size_t i = 0; i < sizeof banned / sizeof banned[0]; i++)
		ck_assert_msg(!strcasestr(h, banned[i]), "hint for %s mentions '%s': %s", cls, banned[i], h);
	free(h);
}

START_TEST(test_hints_never_weaken)
{
	json_t *hosts[6];
	hosts[0] = agsbx_bwrap_host_facts();
	hosts[1] = json_pack("{s:{s:b}}", "dockerenv", "value", 1);
	hosts[2] = json_pack("{s:{s:i}}", "apparmor_restrict_unprivileged_userns", "value", 1);
	hosts[3] = json_pack("{s:{s:i}, s:{s:b}}", "seccomp", "value", 2, "containerenv", "value", 1);
	hosts[4] = json_pack("{s:{s:i}}", "max_user_namespaces", "value", 0);
	hosts[5] = NULL;
	for (const char *const *c = agsbx_bwrap_classes; *c; c++)
		for (int i = 0; i < 6; i++)
			check_hint(*c, hosts[i]);
	/* Where they can, hints point to a concrete way out. */
	char *h = agsbx_bwrap_class_hint("uid_map_denied", hosts[2]);
	ck_assert_ptr_nonnull(strstr(h, "bwrap-userns-restrict"));
	ck_assert_ptr_nonnull(strstr(h, "landlock"));
	free(h);
	h = agsbx_bwrap_class_hint("userns_disabled", hosts[1]);
	ck_assert_ptr_nonnull(strstr(h, "outside the container"));
	free(h);
	h = agsbx_bwrap_class_hint("userns_disabled", hosts[3]);
	ck_assert_ptr_nonnull(strstr(h, "Seccomp: 2"));
	free(h);
	h = agsbx_bwrap_class_hint("userns_limit", hosts[4]);
	ck_assert_ptr_nonnull(strstr(h, "max_user_namespaces is 0"));
	free(h);
	for (int i = 0; i < 5; i++)
		json_decref(hosts[i]);
}
END_TEST

START_TEST(test_suspected_layers)
{
	json_t *host = json_pack("{s:{s:i}, s:{s:i}, s:{s:i}, s:{s:i}, s:{s:b}, s:{s:b}}",
				 "seccomp", "value", 2, "apparmor_restrict_unprivileged_userns", "value", 1,
				 "max_user_namespaces", "value", 0, "unprivileged_userns_clone", "value", 0,
				 "dockerenv", "value", 0, "containerenv", "value", 1);
	json_t *l = agsbx_bwrap_suspected_layers(host);
	json_t *want = json_pack("[s, s, s, s, s]", "seccomp", "apparmor", "userns_limit", "userns_clone", "container");
	ck_assert_msg(json_equal(l, want), "layers %s", json_dumps(l, JSON_COMPACT));
	json_decref(l);
	json_decref(want);
	json_decref(host);
	/* Absent facts point at nothing. */
	host = json_pack("{s:{s:b, s:s}}", "seccomp", "absent", 1, "reason", "ENOENT");
	l = agsbx_bwrap_suspected_layers(host);
	ck_assert_uint_eq(json_array_size(l), 0);
	json_decref(l);
	json_decref(host);
	l = agsbx_bwrap_suspected_layers(NULL);
	ck_assert_uint_eq(json_array_size(l), 0);
	json_decref(l);
}
END_TEST

START_TEST(test_host_facts_shape)
{
	json_t *h = agsbx_bwrap_host_facts();
	static const char *const names[] = {
		"apparmor_restrict_unprivileged_userns", "apparmor_restrict_unprivileged_unconfined",
		"max_user_namespaces", "unprivileged_userns_clone", "seccomp", "no_new_privs",
		"dockerenv", "containerenv", "apparmor_label", "apparmor_bwrap_profile",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		json_t *f = json_object_get(h, names[i]);
		ck_assert_msg(json_is_object(f), "fact %s missing", names[i]);
		ck_assert_msg(json_is_string(json_object_get(f, "source")), "fact %s has no source", names[i]);
		ck_assert(json_object_get(f, "value") || json_is_true(json_object_get(f, "absent")));
	}
	/* This host: the sysctl exists and is read as a number. */
	if (access("/proc/sys/user/max_user_namespaces", R_OK) == 0)
		ck_assert(json_is_integer(agsbx_bwrap_fact(h, "max_user_namespaces")));
	ck_assert(json_is_integer(agsbx_bwrap_fact(h, "seccomp")));
	json_decref(h);
}
END_TEST

/* ---- argv ------------------------------------------------------------- */

static struct agsbx_grant *new_grant(uid_t owner, gid_t group)
{
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(t_scratch, "grant", owner, group, &g), 0);
	return g;
}

START_TEST(test_argv_grant_only)
{
	struct agsbx_grant *g = new_grant((uid_t)-1, (gid_t)-1);
	setenv("AGSBX_CANARY", "argv-canary-value", 1);
	static const char *const env[] = { "PATH=/usr/bin:/bin", "HOME=/h", "X=a=b", NULL };
	static const char *const prog[] = { "/usr/bin/true", "arg one", NULL };
	struct agsbx_bwrap_spec spec = {
		.bwrap = "/usr/bin/bwrap", .env = env, .grant = g,
		.chdir = g->roots[AGSBX_ROOT_BUILD].path, .argv = prog,
	};
	char **v = NULL;
	ck_assert_int_eq(agsbx_bwrap_build_argv(&spec, &v), 0);

	ck_assert_str_eq(v[0], "/usr/bin/bwrap");
	ck_assert(strv_has(v, "--unshare-all"));
	ck_assert(strv_has(v, "--die-with-parent"));
	ck_assert(strv_has(v, "--new-session"));
	ck_assert(strv_has(v, "--clearenv"));
	ck_assert(!strv_has(v, "--share-net"));
	/* No nested user namespace; no filter fd given, no --seccomp. */
	ck_assert(strv_has(v, "--unshare-user") && strv_has(v, "--disable-userns"));
	ck_assert(!strv_has(v, "--seccomp"));
	const char *src = g->roots[AGSBX_ROOT_SOURCE].path;
	ck_assert_int_ge(strv_find3(v, "--ro-bind", src, src), 0);
	for (int r = AGSBX_ROOT_BUILD; r < AGSBX_ROOT_COUNT; r++)
		ck_assert_int_ge(strv_find3(v, "--bind", g->roots[r].path, g->roots[r].path), 0);
	ck_assert_int_ge(strv_find3(v, "--ro-bind", "/usr", "/usr"), 0);
	ck_assert_int_ge(strv_find3(v, "--setenv", "X", "a=b"), 0);
	ck_assert_int_ge(strv_find3(v, "--setenv", "HOME", "/h"), 0);

	/* Nothing outside the grant and the fixed system roots, never "/". */
	static const char *const allowed[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
					       "/libx32", "/etc/ld.so.cache", "/etc/alternatives", "/etc/ssl" };
	int binds = 0;
	for (int i = 0; v[i]; i++) {
		if (strcmp(v[i], "--") == 0)
			break;
		bool bind = strcmp(v[i], "--bind") == 0 || strcmp(v[i], "--ro-bind") == 0 ||
			    strcmp(v[i], "--ro-bind-try") == 0 || strcmp(v[i], "--dev-bind") == 0 ||
			    strcmp(v[i], "--bind-try") == 0 || strcmp(v[i], "--dev-bind-try") == 0;
		if (!bind)
			continue;
		binds++;
		ck_assert_msg(strcmp(v[i + 1], "/") != 0, "%s / is in the argv", v[i]);
		ck_assert_str_eq(v[i + 1], v[i + 2]);
		bool ok = strncmp(v[i + 1], g->area, strlen(g->area)) == 0;
		for (size_t k = 0; k < sizeof allowed / sizeof allowed[0]; k++)
			ok |= strcmp(v[i + 1], allowed[k]) == 0;
		ck_assert_msg(ok, "unexpected bind of %s", v[i + 1]);
		ck_assert_msg(strcmp(v[i], "--bind") != 0 || strncmp(v[i + 1], g->area, strlen(g->area)) == 0,
			      "read-write bind outside the grant: %s", v[i + 1]);
	}
	ck_assert_int_ge(binds, 5);
	/* Merged /usr on this host: the links are recreated, not bound. */
	struct stat st;
	if (lstat("/bin", &st) == 0 && S_ISLNK(st.st_mode))
		ck_assert_int_ge(strv_find3(v, "--symlink", "usr/bin", "/bin"), 0);
	/* The host environment does not leak into the command line. */
	for (int i = 0; v[i]; i++)
		ck_assert_msg(!strstr(v[i], "argv-canary-value"), "host env in argv: %s", v[i]);

	/* It ends with --chdir DIR -- ARGV. */
	int n = 0;
	while (v[n])
		n++;
	ck_assert_int_ge(n, 5);
	ck_assert_str_eq(v[n - 1], "arg one");
	ck_assert_str_eq(v[n - 2], "/usr/bin/true");
	ck_assert_str_eq(v[n - 3], "--");
	ck_assert_str_eq(v[n - 4], g->roots[AGSBX_ROOT_BUILD].path);
	ck_assert_str_eq(v[n - 5], "--chdir");
	agsbx_strv_free(v);

	spec.share_net = true;
	spec.seccomp_fd = 3;
	ck_assert_int_eq(agsbx_bwrap_build_argv(&spec, &v), 0);
	ck_assert(strv_has(v, "--share-net"));
	int sc = 0;
	while (v[sc] && strcmp(v[sc], "--seccomp") != 0)
		sc++;
	ck_assert_ptr_nonnull(v[sc]);
	ck_assert_str_eq(v[sc + 1], "3");
	agsbx_strv_free(v);
	agsbx_grant_destroy(g);
}
END_TEST

/* The shared filter's program and its description agree; too small a
 * buffer is refused rather than truncated (a truncated program would end
 * without a return and the kernel would reject it, or worse, allow). */
START_TEST(test_seccomp_program)
{
	struct sock_filter insns[AGSBX_SECCOMP_MAX_INSNS];
	int n = agsbx_seccomp_build(insns, AGSBX_SECCOMP_MAX_INSNS);
	ck_assert_int_gt(n, 4);
	ck_assert_int_eq(agsbx_seccomp_build(insns, 4), -ENOSPC);
	/* First the architecture (seccomp_data.arch at offset 4), last allow. */
	ck_assert_uint_eq(insns[0].code, BPF_LD | BPF_W | BPF_ABS);
	ck_assert_uint_eq(insns[0].k, 4);
	ck_assert_uint_eq(insns[n - 1].code, BPF_RET | BPF_K);
	ck_assert_uint_eq(insns[n - 1].k, SECCOMP_RET_ALLOW);
	json_t *d = agsbx_seccomp_describe();
	ck_assert_int_eq(json_integer_value(json_object_get(d, "instructions")), n);
	ck_assert_str_eq(json_string_value(json_object_get(d, "other_architectures")), "kill_process");
	size_t i;
	json_t *r;
	int uring = 0, eperm = 0;
	json_array_foreach(json_object_get(d, "denied"), i, r) {
		const char *sc = json_string_value(json_object_get(r, "syscall"));
		uring += strncmp(sc, "io_uring_", 9) == 0;
		eperm += strcmp(json_string_value(json_object_get(r, "errno")), "EPERM") == 0;
	}
	ck_assert_int_eq(uring, 3);
	ck_assert_int_eq(eperm, (int)json_array_size(json_object_get(d, "denied")) - 1); /* clone3: ENOSYS */
	json_decref(d);
	int fd = agsbx_seccomp_memfd();
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)n * (off_t)sizeof insns[0]);
	ck_assert_int_lt(write(fd, "x", 1), 0); /* sealed */
	close(fd);
}
END_TEST

START_TEST(test_argv_refuses)
{
	static const char *const prog[] = { "/usr/bin/true", NULL };
	static const char *const bad_env[] = { "NOEQUALS", NULL };
	static const char *const empty_key[] = { "=x", NULL };
	struct agsbx_bwrap_spec spec = { .bwrap = "/usr/bin/bwrap", .argv = prog };
	char **v = NULL;
	ck_assert_int_eq(agsbx_bwrap_build_argv(&spec, &v), 0);
	agsbx_strv_free(v);

	spec.env = bad_env;
	ck_assert_int_eq(agsbx_bwrap_build_argv(&spec, &v), -EINVAL);
	ck_assert_ptr_null(v);
	spec.env = empty_key;
	ck_assert_int_eq(agsbx_bwrap_build_argv(&spec, &v), -EINVAL);
	spec.env = NULL;

	spec.bwrap = "bwrap"; /* relative: would depend on PATH at exec time */
	ck_assert_int_eq(agsbx_bwrap_build_argv(&spec, &v), -EINVAL);
	spec.bwrap = "/usr/bin/bwrap";

	static const char *const none[] = { NULL };
	spec.argv = none;
	ck_assert_int_eq(agsbx_bwrap_build_argv(&spec, &v), -EINVAL);
	spec.argv = prog;

	/* A grant whose root is "/" would expose the host: refused. */
	struct agsbx_grant g = { 0 };
	char slash[] = "/", rel[] = "relative/dir", ok[] = "/tmp/x";
	for (int r = 0; r < AGSBX_ROOT_COUNT; r++)
		g.roots[r].path = ok;
	g.roots[AGSBX_ROOT_OUTPUT].path = slash;
	g.roots[AGSBX_ROOT_OUTPUT].writable = true;
	spec.grant = &g;
	ck_assert_int_eq(agsbx_bwrap_build_argv(&spec, &v), -EINVAL);
	g.roots[AGSBX_ROOT_OUTPUT].path = rel;
	ck_assert_int_eq(agsbx_bwrap_build_argv(&spec, &v), -EINVAL);
}
END_TEST

START_TEST(test_find_bwrap)
{
	char *p = NULL;
	char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	setenv("PATH", "relative/bin:/nonexistent-dir", 1);
	ck_assert_int_eq(agsbx_bwrap_find(&p), -ENOENT);
	setenv("PATH", "/usr/bin", 1);
	ck_assert_int_eq(agsbx_bwrap_find(&p), 0);
	ck_assert_str_eq(p, "/usr/bin/bwrap");
	free(p);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
}
END_TEST

/* ---- contexts, grants, payload ---------------------------------------- */

static struct agsbx_ctx user_ctx(void)
{
	struct agsbx_ctx c = {
		.tool_dir = t_build_dir,
		.payload_path = t_payload,
		.run_as = true,
		.run_uid = t_uid,
		.run_gid = t_gid,
		.run_as_name = t_user,
		.probe_timeout_ms = 20000,
	};
	return c;
}

/* ---- config ------------------------------------------------------------ */

START_TEST(test_config_refused)
{
	struct agsbx_grant *g = new_grant((uid_t)-1, (gid_t)-1);
	static const char *const bad[] = {
		"{\"bind_rw\": [\"/\"]}", "{\"extra_bwrap_args\": [\"--bind\", \"/\", \"/\"]}",
		"{\"network\": false, \"x\": 1}", "{\"network\": \"yes\"}", "{\"network\": 1}", "[]",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *cfg = json_loads(bad[i], 0, NULL);
		ck_assert_ptr_nonnull(cfg);
		struct agsbx_ctx c = user_ctx();
		c.config = cfg;
		struct agsbx_error f = { 0 };
		struct agsbx_handle *h = NULL;
		ck_assert_int_eq(agsbx_provider_bubblewrap.ensure(&agsbx_provider_bubblewrap, &c, g, &h, &f), -EINVAL);
		ck_assert_ptr_null(h);
		ck_assert_str_eq(f.reason, "config_invalid");
		json_decref(cfg);
	}
	agsbx_grant_destroy(g);
}
END_TEST

START_TEST(test_ops_shape)
{
	const struct agsbx_provider_ops *o = &agsbx_provider_bubblewrap;
	ck_assert_str_eq(o->id, "bubblewrap");
	ck_assert_str_eq(o->fail_closed_simulation, AGSBX_SIM_BLOCKED_USERNS);
	static const char *const want[] = { "not_linux", "bwrap_binary_missing", "bwrap_mechanism_failed",
					    "bwrap_user_namespace_blocked", "bwrap_unsafe_as_root", "ready" };
	size_t n = 0;
	for (const char *const *r = o->reasons; *r; r++)
		n++;
	ck_assert_uint_eq(n, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < n; i++)
		ck_assert(agsbx_reason_in_set(o, want[i]));
	ck_assert_str_eq(o->config_keys[0], "network:bool");
	ck_assert_ptr_null(o->config_keys[1]);
	ck_assert(o->applies && o->applies(o));
	ck_assert_ptr_eq(agsbx_provider_find("bubblewrap"), o);
}
END_TEST

/* ---- real messages from this host -------------------------------------- */

struct capture {
	int status;
	char err[8192];
	size_t err_len;
};

/* Landlock for way C: read everything, write only /tmp and /dev. /proc is
 * then not writable, so bwrap's uid_map write is denied: the Ubuntu 24.04
 * symptom without touching the host's AppArmor. */
static int landlock_readonly_proc(void)
{
	int abi = agsbx_ll_abi();
	if (abi < 1)
		return -1;
	uint64_t all = (1ULL << 13) - 1;
	if (abi >= 2)
		all |= AGSBX_LL_FS_REFER;
	if (abi >= 3)
		all |= AGSBX_LL_FS_TRUNCATE;
	if (abi >= 5)
		all |= AGSBX_LL_FS_IOCTL_DEV;
	struct agsbx_ll_ruleset_attr attr = { .handled_access_fs = all };
	int rs = (int)agsbx_ll_create_ruleset(&attr, agsbx_ll_attr_size(abi), 0);
	if (rs < 0)
		return -1;
	struct { const char *path; uint64_t access; } rules[] = {
		{ "/", AGSBX_LL_FS_EXECUTE | AGSBX_LL_FS_READ_FILE | AGSBX_LL_FS_READ_DIR },
		{ "/tmp", all },
		{ "/dev", all },
	};
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		struct agsbx_ll_path_beneath_attr pb = { .allowed_access = rules[i].access };
		pb.parent_fd = open(rules[i].path, O_PATH | O_CLOEXEC);
		if (pb.parent_fd < 0 || agsbx_ll_add_rule(rs, AGSBX_LL_RULE_PATH_BENEATH, &pb, 0) < 0)
			return -1;
		close(pb.parent_fd);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || agsbx_ll_restrict_self(rs, 0) < 0)
		return -1;
	close(rs);
	return 0;
}

/* Runs argv as the test user (optionally under the Landlock domain above)
 * and keeps its stderr: the messages must come from the real bwrap. */
static void run_capture(const char *const *argv, bool landlock, struct capture *c)
{
	memset(c, 0, sizeof *c);
	int p[2];
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(null, 0);
		dup2(null, 1);
		dup2(p[1], 2);
		if (setgroups(0, NULL) < 0 || setresgid(t_gid, t_gid, t_gid) < 0 ||
		    setresuid(t_uid, t_uid, t_uid) < 0)
			_exit(120);
		if (landlock && landlock_readonly_proc() < 0)
			_exit(121);
		static const char *const env[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
		execve(argv[0], (char *const *)argv, (char *const *)env);
		_exit(122);
	}
	close(p[1]);
	for (;;) {
		ssize_t n = read(p[0], c->err + c->err_len, sizeof c->err - 1 - c->err_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		c->err_len += (size_t)n;
	}
	close(p[0]);
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	c->err[c->err_len] = '\0';
}

/* The probe's own minimal sandbox argv, so the messages are what the
 * provider would see. */
static char **probe_argv(void)
{
	static const char *const prog[] = { "/usr/bin/true", NULL };
	struct agsbx_bwrap_spec spec = { .bwrap = t_bwrap, .argv = prog };
	char **v = NULL;
	ck_assert_int_eq(agsbx_bwrap_build_argv(&spec, &v), 0);
	return v;
}

/* prefix + probe argv, NULL-terminated (malloc'd array of borrowed strings). */
static const char **prefixed(const char *const *prefix, char **v)
{
	size_t np = 0, nv = 0;
	while (prefix[np])
		np++;
	while (v[nv])
		nv++;
	const char **out = calloc(np + nv + 1, sizeof *out);
	for (size_t i = 0; i < np; i++)
		out[i] = prefix[i];
	for (size_t i = 0; i < nv; i++)
		out[np + i] = v[i];
	return out;
}

static void expect_class(const struct capture *c, const char *cls, const char *needle)
{
	ck_assert_msg(c->status == 1, "status %d, stderr: %s", c->status, c->err);
	ck_assert_msg(strstr(c->err, needle), "stderr lacks '%s': %s", needle, c->err);
	ck_assert_str_eq(agsbx_bwrap_classify(c->err, c->err_len), cls);
}

START_TEST(test_real_control)
{
	/* The control: the same argv as the same user works unhindered. */
	char **v = probe_argv();
	struct capture c;
	run_capture((const char *const *)v, false, &c);
	ck_assert_msg(c.status == 0, "bwrap as %s failed: %s", t_user, c.err);
	agsbx_strv_free(v);
}
END_TEST

START_TEST(test_real_landlock_uid_map)
{
	char **v = probe_argv();
	struct capture c;
	run_capture((const char *const *)v, true, &c);
	expect_class(&c, "uid_map_denied", "setting up uid map: Permission denied");
	agsbx_strv_free(v);
}
END_TEST

START_TEST(test_real_nested_userns_limit)
{
	/* Our own child userns (uid mapped to itself, caps kept only to write
	 * that namespace's limit, then dropped so bwrap runs unprivileged).
	 * The host's value is per-namespace and stays as it is. */
	char uid[32], gid[32];
	snprintf(uid, sizeof uid, "--map-user=%u", (unsigned)t_uid);
	snprintf(gid, sizeof gid, "--map-group=%u", (unsigned)t_gid);
	const char *const prefix[] = {
		"/usr/bin/unshare", "-U", uid, gid, "--keep-caps", "/bin/sh", "-c",
		"echo 0 > /proc/sys/user/max_user_namespaces && "
		"exec setpriv --inh-caps=-all --ambient-caps=-all \"$@\"", "sh", NULL,
	};
	char *before = agsbx_read_line("/proc/sys/user/max_user_namespaces");
	char **v = probe_argv();
	const char **argv = prefixed(prefix, v);
	struct capture c;
	run_capture(argv, false, &c);
	expect_class(&c, "userns_limit", "max_*_namespaces exceeded (ENOSPC)");
	char *after = agsbx_read_line("/proc/sys/user/max_user_namespaces");
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	free(argv);
	agsbx_strv_free(v);
}
END_TEST

START_TEST(test_real_seccomp_eperm)
{
	const char *const prefix[] = { t_simulate, "--blocked-userns", "--", NULL };
	char **v = probe_argv();
	const char **argv = prefixed(prefix, v);
	struct capture c;
	run_capture(argv, false, &c);
	expect_class(&c, "userns_disabled", "No permissions to create new namespace");
	free(argv);
	agsbx_strv_free(v);
}
END_TEST

START_TEST(test_real_seccomp_enospc)
{
	const char *const prefix[] = { t_simulate, "--blocked-userns", "--errno=ENOSPC", "--", NULL };
	char **v = probe_argv();
	const char **argv = prefixed(prefix, v);
	struct capture c;
	run_capture(argv, false, &c);
	expect_class(&c, "userns_limit", "(ENOSPC)");
	free(argv);
	agsbx_strv_free(v);
}
END_TEST

START_TEST(test_real_unknown_option)
{
	/* A real "Unknown option" from this bwrap. */
	const char *const argv[] = { t_bwrap, "--no-such-option-agsbx", "/usr/bin/true", NULL };
	struct capture c;
	run_capture(argv, false, &c);
	ck_assert_int_ne(c.status, 0);
	ck_assert_str_eq(agsbx_bwrap_classify(c.err, c.err_len), "unknown_option");
}
END_TEST

/* ---- root safety -------------------------------------------------------- */

START_TEST(test_root_refused)
{
	struct agsbx_ctx c = user_ctx();
	c.run_as = false;
	struct agsbx_probe p;
	ck_assert_int_eq(agsbx_provider_bubblewrap.probe(&agsbx_provider_bubblewrap, &c, &p), 0);
	ck_assert(!p.available);
	ck_assert_str_eq(p.reason, "bwrap_unsafe_as_root");
	ck_assert_ptr_nonnull(p.hint);
	ck_assert_ptr_nonnull(strstr(p.hint, "--run-as"));
	ck_assert(!p.caps.process_contained && !p.caps.host_filesystem_restricted &&
		  !p.caps.privilege_escalation_blocked && !p.caps.environment_scrubbed);
	ck_assert_str_eq(json_string_value(json_object_get(p.facts, "path")), t_bwrap);
	ck_assert(json_is_boolean(json_object_get(p.facts, "setuid")));
	/* Nothing was sandboxed as root: no sandbox_probe was run. */
	ck_assert_ptr_null(json_object_get(p.facts, "sandbox_probe"));
	agsbx_provider_probe_clear(&p);

	struct agsbx_grant *g = new_grant((uid_t)-1, (gid_t)-1);
	struct agsbx_error f = { 0 };
	struct agsbx_handle *h = NULL;
	ck_assert_int_eq(agsbx_provider_bubblewrap.ensure(&agsbx_provider_bubblewrap, &c, g, &h, &f), -EPERM);
	ck_assert_ptr_null(h);
	ck_assert_str_eq(f.reason, "bwrap_unsafe_as_root");
	ck_assert_ptr_nonnull(strstr(f.hint, "--run-as"));

	/* Dropping "to root" is no drop. */
	c.run_as = true;
	c.run_uid = 0;
	c.run_gid = 0;
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(agsbx_provider_bubblewrap.ensure(&agsbx_provider_bubblewrap, &c, g, &h, &f), -EPERM);
	ck_assert_str_eq(f.reason, "bwrap_unsafe_as_root");
	agsbx_grant_destroy(g);
}
END_TEST

/* ---- provider, as the unprivileged user -------------------------------- */

struct env {
	struct agsbx_ctx ctx;
	json_t *config;
	struct agsbx_grant *grant;
	struct agsbx_handle *h;
	char *payload;                 /* sandbox-side path */
	char *canary_dir;              /* outside the grant, owned by the user */
	char *canary_file;
	char secret[33];
};

static void env_up(struct env *e, const char *config)
{
	memset(e, 0, sizeof *e);
	e->ctx = user_ctx();
	if (config) {
		e->config = json_loads(config, 0, NULL);
		e->ctx.config = e->config;
	}
	e->grant = new_grant(t_uid, t_gid);
	ck_assert_int_eq(agsbx_grant_add_file(e->grant, "agsbx-payload", t_payload, true), 0);
	ck_assert_int_eq(agsbx_grant_seal(e->grant), 0);
	struct agsbx_error f = { 0 };
	int r = agsbx_provider_bubblewrap.ensure(&agsbx_provider_bubblewrap, &e->ctx, e->grant, &e->h, &f);
	ck_assert_msg(r == 0, "ensure: %d %s: %s (hint: %s)", r, f.reason ? f.reason : "-", f.message, f.hint);
	e->payload = agsbx_handle_path(e->h, AGSBX_ROOT_SOURCE, "agsbx-payload");

	/* A canary the running user could read if it were visible. */
	agsbx_random_hex(e->secret, 16);
	ck_assert_int_ge(asprintf(&e->canary_dir, "%s/canary-%s", t_scratch, e->secret + 24), 0);
	ck_assert_int_eq(mkdir(e->canary_dir, 0755), 0);
	ck_assert_int_eq(chown(e->canary_dir, t_uid, t_gid), 0);
	e->canary_file = agsbx_path_join(e->canary_dir, "canary");
	ck_assert_int_eq(agsbx_write_file_atomic(e->canary_file, e->secret, strlen(e->secret), 0644), 0);
	ck_assert_int_eq(chown(e->canary_file, t_uid, t_gid), 0);
}

static void env_down(struct env *e)
{
	if (e->h) {
		agsbx_provider_release(e->h);
		agsbx_handle_free(e->h);
	}
	agsbx_grant_destroy(e->grant);
	agsbx_test_rmtree(e->canary_dir);
	free(e->canary_dir);
	free(e->canary_file);
	free(e->payload);
	json_decref(e->config);
}

/* Runs the payload with args; returns its JSON (new ref), result kept in *res. */
static json_t *payload_run(struct env *e, const char *const *args, int64_t timeout_ms, struct agsbx_exec_result *res)
{
	const char *argv[16] = { e->payload };
	size_t n = 1;
	for (; args[n - 1] && n < 15; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 65536, .timeout_ms = timeout_ms, .cancel_fd = -1 };
	struct agsbx_error f = { 0 };
	int r = e->h->ops->execute(e->h, &step, &lim, res, &f);
	ck_assert_msg(r == 0, "execute %s: %d %s %s", args[0], r, f.reason ? f.reason : "-", f.message);
	ck_assert_ptr_nonnull(res->meta);
	if (res->run.timed_out)
		return NULL;
	json_error_t je;
	json_t *j = json_loadb(res->run.out ? res->run.out : "", res->run.out_len, JSON_DISABLE_EOF_CHECK, &je);
	ck_assert_msg(j, "payload %s printed no JSON (status %d): out=%s err=%s", args[0], res->run.status,
		      res->run.out ? res->run.out : "", res->run.err ? res->run.err : "");
	return j;
}

static json_t *payload(struct env *e, const char *const *args)
{
	struct agsbx_exec_result res;
	json_t *j = payload_run(e, args, 30000, &res);
	agsbx_exec_result_clear(&res);
	return j;
}

static bool jbool(const json_t *j, const char *k)
{
	return json_is_true(json_object_get(j, k));
}

static const char *jstr(const json_t *j, const char *k)
{
	const char *s = json_string_value(json_object_get(j, k));
	return s ? s : "(null)";
}

START_TEST(test_probe_ready)
{
	struct agsbx_ctx c = user_ctx();
	struct agsbx_probe p;
	ck_assert_int_eq(agsbx_provider_bubblewrap.probe(&agsbx_provider_bubblewrap, &c, &p), 0);
	ck_assert_msg(p.available, "probe: %s: %s", p.reason, p.detail ? p.detail : "");
	ck_assert_str_eq(p.reason, "ready");
	ck_assert(p.caps.process_contained && p.caps.host_filesystem_restricted &&
		  p.caps.privilege_escalation_blocked && p.caps.environment_scrubbed);
	ck_assert(p.caps.syscalls_restricted); /* the shared seccomp filter */
	ck_assert(json_is_true(json_object_get(json_object_get(p.facts, "needed_options"), "--disable-userns")));
	ck_assert_int_gt(json_integer_value(json_object_get(json_object_get(p.facts, "seccomp_filter"), "instructions")), 0);
	ck_assert_str_eq(p.caps.network, AGSBX_NET_ISOLATED);
	ck_assert_str_eq(p.caps.mechanism, "bubblewrap");
	ck_assert_str_eq(p.caps.safety_class, "namespace");
	ck_assert_str_eq(jstr(p.facts, "path"), t_bwrap);
	ck_assert(json_is_string(json_object_get(p.facts, "version")));
	ck_assert(json_is_boolean(json_object_get(p.facts, "setuid")));
	json_t *sp = json_object_get(p.facts, "sandbox_probe");
	ck_assert(json_is_object(sp));
	ck_assert_int_eq(json_integer_value(json_object_get(sp, "status")), 0);
	ck_assert_ptr_null(json_object_get(p.facts, "failure_class"));
	json_t *pj = agsbx_provider_probe_to_json(&p);
	ck_assert(json_is_true(json_object_get(pj, "available")));
	json_decref(pj);
	agsbx_provider_probe_clear(&p);
}
END_TEST

START_TEST(test_grant_write_visible)
{
	struct env e;
	env_up(&e, NULL);
	char nonce[33];
	agsbx_random_hex(nonce, 16);
	char *inside = agsbx_handle_path(e.h, AGSBX_ROOT_OUTPUT, "nonce.txt");
	json_t *j = payload(&e, (const char *[]){ "write", inside, nonce, NULL });
	ck_assert_msg(jbool(j, "ok"), "write denied: %s", jstr(j, "errno"));
	json_decref(j);
	char *host = agsbx_path_join(e.grant->roots[AGSBX_ROOT_OUTPUT].path, "nonce.txt");
	char *got = agsbx_read_line(host);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, nonce);
	struct stat st;
	ck_assert_int_eq(stat(host, &st), 0);
	ck_assert_uint_eq(st.st_uid, t_uid); /* written by the user, not by root */
	free(got);
	free(host);
	free(inside);
	env_down(&e);
}
END_TEST

START_TEST(test_host_read_denied)
{
	struct env e;
	env_up(&e, NULL);
	struct agsbx_exec_result res;
	json_t *j = payload_run(&e, (const char *[]){ "read", e.canary_file, NULL }, 30000, &res);
	ck_assert(!jbool(j, "ok"));
	ck_assert_str_eq(jstr(j, "errno"), "ENOENT"); /* not mounted at all */
	ck_assert(!memmem(res.run.out, res.run.out_len, e.secret, strlen(e.secret)));
	ck_assert(!res.run.err || !memmem(res.run.err, res.run.err_len, e.secret, strlen(e.secret)));
	json_decref(j);
	agsbx_exec_result_clear(&res);
	/* Control: the same user reads it outside the sandbox. */
	const char *const cat[] = { "/bin/cat", e.canary_file, NULL };
	struct agsbx_run_opts o = { .argv = cat, .cancel_fd = -1, .timeout_ms = 10000, .drop_privileges = true,
				    .run_uid = t_uid, .run_gid = t_gid };
	struct agsbx_run_result rr;
	ck_assert_int_eq(agsbx_run(&o, &rr), 0);
	ck_assert_int_eq(rr.status, 0);
	ck_assert_ptr_nonnull(memmem(rr.out, rr.out_len, e.secret, strlen(e.secret)));
	agsbx_run_result_clear(&rr);
	/* /etc/shadow and /etc/hostname are not there either. */
	j = payload(&e, (const char *[]){ "read", "/etc/hostname", NULL });
	ck_assert(!jbool(j, "ok"));
	json_decref(j);
	env_down(&e);
}
END_TEST

/* The payload's kernel-surface table (AF_PACKET/AF_ALG left out: no probe
 * may load a module) and io_uring, run as the test user outside (the
 * control) and inside: each surface reached outside is the shared filter's
 * EPERM inside. Without the filter keyrings and perf events are reached. */
static json_t *control_run(const char *const *argv)
{
	struct agsbx_run_opts o = { .argv = argv, .cancel_fd = -1, .timeout_ms = 20000, .drop_privileges = true,
				    .run_uid = t_uid, .run_gid = t_gid, .cwd = "/" };
	struct agsbx_run_result rr;
	ck_assert_int_eq(agsbx_run(&o, &rr), 0);
	json_error_t je;
	json_t *j = rr.out ? json_loadb(rr.out, rr.out_len, JSON_DISABLE_EOF_CHECK, &je) : NULL;
	ck_assert_msg(j, "control printed no JSON: %s", rr.err ? rr.err : "");
	agsbx_run_result_clear(&rr);
	return j;
}

START_TEST(test_kernel_surface_denied)
{
	struct env e;
	env_up(&e, NULL);
	const char *const ctl_argv[] = { t_payload, "kernel-surface", t_payload, "packet=0", "alg=0", NULL };
	json_t *ctl = control_run(ctl_argv);
	json_t *in = payload(&e, (const char *[]){ "kernel-surface", e.payload, "packet=0", "alg=0", NULL });
	json_t *cs = json_object_get(ctl, "s"), *is = json_object_get(in, "s");
	int reached = 0;
	const char *k;
	json_t *v;
	json_object_foreach(cs, k, v) {
		if (strncmp(json_string_value(v), "reached", 7) != 0)
			continue;
		reached++;
		ck_assert_msg(strcmp(jstr(is, k), "EPERM") == 0, "%s: control reached it, inside %s", k, jstr(is, k));
	}
	ck_assert_msg(reached > 0, "the control reached no surface: nothing shown");
	json_decref(ctl);
	json_decref(in);
	const char *const uring_argv[] = { t_payload, "io-uring", NULL };
	ctl = control_run(uring_argv);
	in = payload(&e, (const char *[]){ "io-uring", NULL });
	if (jbool(ctl, "ok"))
		ck_assert_msg(!jbool(in, "ok") && strcmp(jstr(in, "errno"), "EPERM") == 0, "io_uring_setup inside: %s",
			      jstr(in, "errno"));
	json_decref(ctl);
	json_decref(in);
	env_down(&e);
}
END_TEST

START_TEST(test_host_write_denied)
{
	struct env e;
	env_up(&e, NULL);
	char *target = agsbx_path_join(e.canary_dir, "planted");
	json_t *j = payload(&e, (const char *[]){ "write", target, "x", NULL });
	ck_assert(!jbool(j, "ok"));
	json_decref(j);
	ck_assert_int_eq(access(target, F_OK), -1);
	/* /usr is bound read-only. */
	j = payload(&e, (const char *[]){ "write", "/usr/agsbx-bw-planted", "x", NULL });
	ck_assert(!jbool(j, "ok"));
	ck_assert_str_eq(jstr(j, "errno"), "EROFS");
	json_decref(j);
	ck_assert_int_eq(access("/usr/agsbx-bw-planted", F_OK), -1);
	/* The source root is read-only inside although the user owns it. */
	char *src = agsbx_handle_path(e.h, AGSBX_ROOT_SOURCE, "planted");
	j = payload(&e, (const char *[]){ "write", src, "x", NULL });
	ck_assert(!jbool(j, "ok"));
	ck_assert_str_eq(jstr(j, "errno"), "EROFS");
	json_decref(j);
	char *src_host = agsbx_path_join(e.grant->roots[AGSBX_ROOT_SOURCE].path, "planted");
	ck_assert_int_eq(access(src_host, F_OK), -1);
	free(src_host);
	free(src);
	free(target);
	env_down(&e);
}
END_TEST

START_TEST(test_remount_denied)
{
	struct env e;
	env_up(&e, NULL);
	const char *src = e.grant->roots[AGSBX_ROOT_SOURCE].path;
	json_t *j = payload(&e, (const char *[]){ "remount", src, NULL });
	ck_assert_msg(!jbool(j, "ok"), "remount of the source root succeeded inside bwrap");
	ck_assert(!json_is_true(json_object_get(json_object_get(j, "remount"), "ok")));
	ck_assert(!json_is_true(json_object_get(json_object_get(j, "tmpfs"), "ok")));
	json_decref(j);
	env_down(&e);
}
END_TEST

static json_int_t host_ns_inode(const char *name)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/self/ns/%s", name);
	struct stat st;
	ck_assert_int_eq(stat(p, &st), 0);
	return (json_int_t)st.st_ino;
}

START_TEST(test_namespaces_distinct)
{
	struct env e;
	env_up(&e, NULL);
	json_t *j = payload(&e, (const char *[]){ "ns", NULL });
	json_t *ns = json_object_get(j, "ns");
	static const char *const names[] = { "net", "pid", "mnt", "user", "uts", "ipc", "cgroup" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		json_t *v = json_object_get(ns, names[i]);
		ck_assert_msg(json_is_integer(v), "ns %s not observed", names[i]);
		ck_assert_msg(json_integer_value(v) != host_ns_inode(names[i]), "ns %s shared with host", names[i]);
	}
	json_decref(j);
	env_down(&e);
}
END_TEST

static int loopback_listener(int *port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(s, 16), 0);
	socklen_t len = sizeof a;
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return s;
}

static void host_connect_control(int port)
{
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	ck_assert_int_eq(connect(c, (struct sockaddr *)&a, sizeof a), 0);
	close(c);
}

START_TEST(test_network_isolated)
{
	struct env e;
	env_up(&e, "{\"network\": false}");
	ck_assert_str_eq(e.h->caps.network, AGSBX_NET_ISOLATED);
	int port = 0;
	int l = loopback_listener(&port);
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	json_t *j = payload(&e, (const char *[]){ "connect", "127.0.0.1", ps, "2000", NULL });
	ck_assert_msg(!jbool(j, "ok"), "connected to the host's loopback from an isolated sandbox");
	json_decref(j);
	host_connect_control(port);
	close(l);
	env_down(&e);
}
END_TEST

START_TEST(test_network_shared_when_configured)
{
	struct env e;
	env_up(&e, "{\"network\": true}");
	ck_assert_str_eq(e.h->caps.network, AGSBX_NET_INHERITED);
	int port = 0;
	int l = loopback_listener(&port);
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	json_t *j = payload(&e, (const char *[]){ "connect", "127.0.0.1", ps, "2000", NULL });
	ck_assert_msg(jbool(j, "ok"), "network:true but connect failed: %s", jstr(j, "errno"));
	json_decref(j);
	j = payload(&e, (const char *[]){ "ns", NULL });
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "ns"), "net")), host_ns_inode("net"));
	json_decref(j);
	close(l);
	struct agsbx_probe p;
	ck_assert_int_eq(agsbx_provider_bubblewrap.probe(&agsbx_provider_bubblewrap, &e.ctx, &p), 0);
	ck_assert_str_eq(p.caps.network, AGSBX_NET_INHERITED);
	json_t *argv = json_object_get(json_object_get(p.facts, "sandbox_probe"), "argv");
	bool share = false;
	size_t i;
	json_t *a;
	json_array_foreach(argv, i, a)
		share |= strcmp(json_string_value(a), "--share-net") == 0;
	ck_assert(share);
	agsbx_provider_probe_clear(&p);
	env_down(&e);
}
END_TEST

START_TEST(test_pid_contained)
{
	struct env e;
	env_up(&e, NULL);
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	json_t *j = payload(&e, (const char *[]){ "pid-visible", pid, NULL });
	ck_assert_msg(!jbool(j, "ok"), "harness pid visible inside");
	json_decref(j);
	env_down(&e);
}
END_TEST

START_TEST(test_no_privileges)
{
	struct env e;
	env_up(&e, NULL);
	json_t *j = payload(&e, (const char *[]){ "status", NULL });
	bool nnp = json_integer_value(json_object_get(j, "no_new_privs")) == 1;
	ck_assert_msg(nnp || jbool(j, "cap_eff_zero"), "caps %s, nnp %d", jstr(j, "cap_eff"), nnp);
	/* As the unprivileged user bwrap leaves no effective capability. */
	ck_assert(jbool(j, "cap_eff_zero"));
	ck_assert_int_eq(json_integer_value(json_object_get(j, "uid")), t_uid);
	json_decref(j);
	env_down(&e);
}
END_TEST

START_TEST(test_env_scrubbed)
{
	setenv("AGSBX_CANARY", "bw-canary-secret", 1);
	struct env e;
	env_up(&e, NULL);
	json_t *j = payload(&e, (const char *[]){ "env", "AGSBX_CANARY", NULL });
	ck_assert(!jbool(j, "present"));
	json_decref(j);
	/* The minimal environment is what the sandbox sees. */
	j = payload(&e, (const char *[]){ "env", "TMPDIR", NULL });
	ck_assert(jbool(j, "present"));
	ck_assert_str_eq(jstr(j, "value"), e.grant->roots[AGSBX_ROOT_BUILD].path);
	ck_assert_int_le(json_integer_value(json_object_get(j, "count")), 8);
	json_decref(j);
	env_down(&e);
}
END_TEST

static int count_marker(const char *marker)
{
	pid_t *pids = NULL;
	int n = agsbx_find_processes_with_marker(marker, &pids);
	free(pids);
	return n;
}

START_TEST(test_timeout_cleanup)
{
	struct env e;
	env_up(&e, NULL);
	char marker[96];
	snprintf(marker, sizeof marker, "%s-%d", t_marker_prefix, (int)getpid());
	char *ready = agsbx_handle_path(e.h, AGSBX_ROOT_OUTPUT, "ready");
	struct agsbx_exec_result res;
	json_t *j = payload_run(&e, (const char *[]){ "spawn-detached", marker, ready, NULL }, 1500, &res);
	json_decref(j);
	ck_assert(res.run.timed_out);
	ck_assert_int_eq(res.run.status, AGSBX_RUN_STATUS_TIMEOUT);
	agsbx_exec_result_clear(&res);
	/* The grandchild did start (so the check could fail)... */
	char *ready_host = agsbx_path_join(e.grant->roots[AGSBX_ROOT_OUTPUT].path, "ready");
	ck_assert_int_eq(access(ready_host, F_OK), 0);
	/* ...and nothing carrying the marker survived. */
	ck_assert_int_eq(count_marker(marker), 0);
	free(ready_host);
	free(ready);
	env_down(&e);
}
END_TEST

START_TEST(test_simulated_block_fails_closed)
{
	struct agsbx_ctx c = user_ctx();
	c.simulate = AGSBX_SIM_BLOCKED_USERNS;
	struct agsbx_probe p;
	ck_assert_int_eq(agsbx_provider_bubblewrap.probe(&agsbx_provider_bubblewrap, &c, &p), 0);
	ck_assert(!p.available);
	ck_assert_str_eq(p.reason, "bwrap_user_namespace_blocked");
	ck_assert_str_eq(jstr(p.facts, "failure_class"), "userns_disabled");
	ck_assert(json_is_array(json_object_get(p.facts, "suspected_layers")));
	ck_assert_ptr_nonnull(strstr(jstr(p.facts, "stderr"), "No permissions to create new namespace"));
	ck_assert_str_eq(jstr(p.facts, "simulate"), AGSBX_SIM_BLOCKED_USERNS);
	ck_assert(!p.caps.process_contained && !p.caps.host_filesystem_restricted);
	ck_assert_ptr_nonnull(p.hint);
	agsbx_provider_probe_clear(&p);

	struct agsbx_grant *g = new_grant(t_uid, t_gid);
	ck_assert_int_eq(agsbx_grant_add_file(g, "agsbx-payload", t_payload, true), 0);
	ck_assert_int_eq(agsbx_grant_seal(g), 0);
	struct agsbx_error f = { 0 };
	struct agsbx_handle *h = NULL;
	ck_assert_int_lt(agsbx_provider_bubblewrap.ensure(&agsbx_provider_bubblewrap, &c, g, &h, &f), 0);
	ck_assert_ptr_null(h);
	ck_assert_str_eq(f.reason, "bwrap_user_namespace_blocked");
	ck_assert(f.hint[0] != '\0');
	/* Nothing ran: the writable roots are still empty. */
	for (int r = AGSBX_ROOT_BUILD; r < AGSBX_ROOT_COUNT; r++) {
		DIR *d = opendir(g->roots[r].path);
		ck_assert_ptr_nonnull(d);
		int n = 0;
		for (struct dirent *de; (de = readdir(d));)
			n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
		closedir(d);
		ck_assert_int_eq(n, 0);
	}
	agsbx_grant_destroy(g);
}
END_TEST

START_TEST(test_lifecycle)
{
	struct env e;
	env_up(&e, NULL);
	const struct agsbx_provider_ops *o = e.h->ops;
	ck_assert_int_eq(o->health(e.h), 0);
	struct agsbx_probe p;
	ck_assert_int_eq(o->probe(o, &e.ctx, &p), 0);
	struct agsbx_exec_result res;
	json_t *j = payload_run(&e, (const char *[]){ "true", NULL }, 30000, &res);
	json_decref(j);
	ck_assert_int_eq(res.run.status, 0);
	/* meta = the probe's provider, mechanism, capabilities; versions from ensure. */
	ck_assert_str_eq(jstr(res.meta, "provider"), "bubblewrap");
	ck_assert_str_eq(jstr(res.meta, "mechanism"), "bubblewrap");
	json_t *caps = agsbx_caps_to_json(&p.caps);
	ck_assert(json_equal(caps, json_object_get(res.meta, "capabilities")));
	json_decref(caps);
	json_t *ver = json_object_get(res.meta, "versions");
	ck_assert_str_eq(jstr(ver, "bwrap"), jstr(p.facts, "version"));
	ck_assert(json_equal(json_object_get(ver, "setuid"), json_object_get(p.facts, "setuid")));
	agsbx_exec_result_clear(&res);
	agsbx_provider_probe_clear(&p);

	agsbx_provider_release(e.h);
	agsbx_provider_release(e.h); /* idempotent */
	ck_assert_int_lt(o->health(e.h), 0);
	const char *argv[] = { e.payload, "true", NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .timeout_ms = 10000, .cancel_fd = -1 };
	struct agsbx_error f = { 0 };
	ck_assert_int_lt(o->execute(e.h, &step, &lim, &res, &f), 0);
	ck_assert_str_eq(f.reason, "released");
	agsbx_exec_result_clear(&res);
	env_down(&e);
}
END_TEST

START_TEST(test_bundle_changed_refused)
{
	struct env e;
	env_up(&e, NULL);
	/* Swap the payload after ensure: the TOCTOU guard must catch it. */
	const char *path = e.grant->files[0].path;
	ck_assert_int_eq(chmod(path, 0755), 0);
	FILE *fp = fopen(path, "ae");
	ck_assert_ptr_nonnull(fp);
	fputs("tampered", fp);
	fclose(fp);
	char *inside = agsbx_handle_path(e.h, AGSBX_ROOT_OUTPUT, "ran");
	const char *argv[] = { e.payload, "write", inside, "x", NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .timeout_ms = 10000, .cancel_fd = -1 };
	struct agsbx_error f = { 0 };
	struct agsbx_exec_result res;
	ck_assert_int_lt(e.h->ops->execute(e.h, &step, &lim, &res, &f), 0);
	ck_assert_str_eq(f.reason, "bundle_changed");
	agsbx_exec_result_clear(&res);
	char *host = agsbx_path_join(e.grant->roots[AGSBX_ROOT_OUTPUT].path, "ran");
	ck_assert_int_eq(access(host, F_OK), -1);
	free(host);
	free(inside);
	env_down(&e);
}
END_TEST

struct worker {
	struct env *e;
	int index;
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	for (int k = 0; k < 3; k++) {
		char name[32], text[32];
		snprintf(name, sizeof name, "t%d-%d", w->index, k);
		snprintf(text, sizeof text, "%d:%d", w->index, k);
		char *inside = agsbx_handle_path(w->e->h, AGSBX_ROOT_OUTPUT, name);
		const char *argv[] = { w->e->payload, "write", inside, text, NULL };
		struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
		struct agsbx_limits lim = { .max_output_bytes = 4096, .timeout_ms = 30000, .cancel_fd = -1 };
		struct agsbx_exec_result res;
		if (w->e->h->ops->execute(w->e->h, &step, &lim, &res, NULL) < 0 || res.run.status != 0)
			w->failures++;
		agsbx_exec_result_clear(&res);
		char *host = agsbx_path_join(w->e->grant->roots[AGSBX_ROOT_OUTPUT].path, name);
		char *got = agsbx_read_line(host);
		if (!got || strcmp(got, text) != 0)
			w->failures++;
		free(got);
		free(host);
		free(inside);
	}
	return NULL;
}

START_TEST(test_execute_threads)
{
	struct env e;
	env_up(&e, NULL);
	pthread_t th[4];
	struct worker w[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ .e = &e, .index = i };
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(w[i].failures, 0);
	}
	env_down(&e);
}
END_TEST

START_TEST(test_binary_missing)
{
	setenv("PATH", "/nonexistent-agsbx-bin", 1);
	struct agsbx_ctx c = user_ctx();
	struct agsbx_probe p;
	ck_assert_int_eq(agsbx_provider_bubblewrap.probe(&agsbx_provider_bubblewrap, &c, &p), 0);
	ck_assert(!p.available);
	ck_assert_str_eq(p.reason, "bwrap_binary_missing");
	ck_assert(json_is_null(json_object_get(p.facts, "path")));
	ck_assert_ptr_nonnull(p.hint);
	agsbx_provider_probe_clear(&p);
	struct agsbx_grant *g = new_grant(t_uid, t_gid);
	struct agsbx_error f = { 0 };
	struct agsbx_handle *h = NULL;
	ck_assert_int_lt(agsbx_provider_bubblewrap.ensure(&agsbx_provider_bubblewrap, &c, g, &h, &f), 0);
	ck_assert_ptr_null(h);
	ck_assert_str_eq(f.reason, "bwrap_binary_missing");
	agsbx_grant_destroy(g);
}
END_TEST

/* Negative control: a bwrap that predates --disable-userns (a script named
 * bwrap on PATH whose --help lacks it, otherwise the real one). The probe
 * fails closed before any sandbox runs, saying which option is missing. */
START_TEST(test_old_bwrap_refused)
{
	char *dir = agsbx_path_join(t_scratch, "oldbw");
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	char *fake = agsbx_path_join(dir, "bwrap");
	char *script = NULL;
	ck_assert_int_ge(asprintf(&script,
				  "#!/bin/sh\n# negative control: a bwrap without --disable-userns\n"
				  "case \"$1\" in --version) echo 'bubblewrap 0.7.0';;\n"
				  "--help) '%s' --help | grep -v -- --disable-userns;;\n*) exec '%s' \"$@\";; esac\n",
				  t_bwrap, t_bwrap),
			 0);
	ck_assert_int_eq(agsbx_write_file_atomic(fake, script, strlen(script), 0755), 0);
	char path[512];
	snprintf(path, sizeof path, "%s:/usr/bin:/bin", dir);
	setenv("PATH", path, 1);
	struct agsbx_ctx c = user_ctx();
	struct agsbx_probe p;
	ck_assert_int_eq(agsbx_provider_bubblewrap.probe(&agsbx_provider_bubblewrap, &c, &p), 0);
	ck_assert(!p.available);
	ck_assert_str_eq(p.reason, "bwrap_mechanism_failed");
	ck_assert_ptr_nonnull(strstr(p.detail, "--disable-userns"));
	ck_assert(!p.caps.syscalls_restricted && !p.caps.process_contained);
	json_t *need = json_object_get(p.facts, "needed_options");
	ck_assert(json_is_false(json_object_get(need, "--disable-userns")));
	ck_assert(json_is_true(json_object_get(need, "--seccomp")));
	ck_assert_ptr_null(json_object_get(p.facts, "sandbox_probe"));
	agsbx_provider_probe_clear(&p);
	ck_assert_int_eq(unlink(fake), 0);
	ck_assert_int_eq(rmdir(dir), 0);
	free(script);
	free(fake);
	free(dir);
}
END_TEST

START_TEST(test_probe_spawn_error)
{
	/* The simulation wrapper is missing: nothing could be started. */
	struct agsbx_ctx c = user_ctx();
	c.simulate = AGSBX_SIM_BLOCKED_USERNS;
	c.tool_dir = "/nonexistent-agsbx-tools";
	struct agsbx_probe p;
	ck_assert_int_eq(agsbx_provider_bubblewrap.probe(&agsbx_provider_bubblewrap, &c, &p), 0);
	ck_assert(!p.available);
	ck_assert_str_eq(p.reason, "bwrap_mechanism_failed");
	ck_assert_str_eq(jstr(json_object_get(p.facts, "sandbox_probe"), "spawn_errno"), "ENOENT");
	agsbx_provider_probe_clear(&p);
}
END_TEST

START_TEST(test_probe_timeout)
{
	/* Negative control: a bwrap that stalls (first on PATH, this forked
	 * test only). Not the real bwrap with a 1 ms deadline: on a loaded
	 * host the runner may next look after bwrap has already finished,
	 * and then it rightly reports an exit, not a timeout (CI saw it). */
	char *dir = agsbx_path_join(t_scratch, "stalling-bwrap");
	char *fake = agsbx_path_join(dir, "bwrap");
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	FILE *f = fopen(fake, "w");
	ck_assert_ptr_nonnull(f);
	/* --version and --help answered by the real one: the stall is in the
	 * sandbox probe itself. */
	fprintf(f, "#!/bin/sh\ncase \"$1\" in --version|--help) exec '%s' \"$1\";; esac\nsleep 30\n", t_bwrap);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(fake, 0755), 0);
	char *path = NULL;
	ck_assert_int_ge(asprintf(&path, "%s:%s", dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin"), 0);
	ck_assert_int_eq(setenv("PATH", path, 1), 0);
	struct agsbx_ctx c = user_ctx();
	c.probe_timeout_ms = 300;
	struct agsbx_probe p;
	ck_assert_int_eq(agsbx_provider_bubblewrap.probe(&agsbx_provider_bubblewrap, &c, &p), 0);
	ck_assert(!p.available);
	ck_assert_str_eq(p.reason, "bwrap_mechanism_failed");
	ck_assert(json_is_true(json_object_get(json_object_get(p.facts, "sandbox_probe"), "timed_out")));
	ck_assert_str_eq(jstr(p.facts, "path"), fake);
	agsbx_provider_probe_clear(&p);
	ck_assert_int_eq(count_marker(t_scratch), 0);
	free(path);
	free(fake);
	free(dir);
}
END_TEST

START_TEST(test_health_rechecks)
{
	/* A handle that was ready turns unhealthy when the mechanism stops
	 * working underneath it: health runs a real probe, it does not
	 * remember. */
	struct env e;
	env_up(&e, NULL);
	ck_assert_int_eq(e.h->ops->health(e.h), 0);
	e.ctx.simulate = AGSBX_SIM_BLOCKED_USERNS;
	ck_assert_int_lt(e.h->ops->health(e.h), 0);
	e.ctx.simulate = NULL;
	ck_assert_int_eq(e.h->ops->health(e.h), 0);
	env_down(&e);
}
END_TEST

START_TEST(test_setuid_bwrap)
{
	/* A setuid-root bwrap (as some distributions ship it): recorded, and
	 * the sandbox still holds no privilege. The copy lives in a directory
	 * only root and the test user's group can enter, for this test only. */
	char *dir = agsbx_path_join(t_scratch, "suid");
	ck_assert_int_eq(mkdir(dir, 0750), 0);
	ck_assert_int_eq(chown(dir, 0, t_gid), 0);
	char *copy = agsbx_path_join(dir, "bwrap");
	char cmd[512];
	snprintf(cmd, sizeof cmd, "install -o root -g root -m 4755 '%s' '%s'", t_bwrap, copy);
	ck_assert_int_eq(system(cmd), 0);
	char path[256];
	snprintf(path, sizeof path, "%s:/usr/bin:/bin", dir);
	setenv("PATH", path, 1);

	struct env e;
	env_up(&e, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(e.h->versions, "bwrap_path")), copy);
	ck_assert(json_is_true(json_object_get(e.h->versions, "setuid")));
	json_t *j = payload(&e, (const char *[]){ "status", NULL });
	ck_assert(jbool(j, "cap_eff_zero"));
	ck_assert_int_eq(json_integer_value(json_object_get(j, "euid")), t_uid);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "seccomp")), 2);
	json_decref(j);
	/* Without --disable-userns (setuid bwrap refuses it) the filter alone
	 * refuses a nested user namespace. */
	j = payload(&e, (const char *[]){ "kernel-surface", e.payload, "packet=0", "alg=0", NULL });
	ck_assert_str_eq(jstr(json_object_get(j, "s"), "userns"), "EPERM");
	json_decref(j);
	j = payload(&e, (const char *[]){ "remount", e.grant->roots[AGSBX_ROOT_SOURCE].path, NULL });
	ck_assert(!jbool(j, "ok"));
	json_decref(j);
	j = payload(&e, (const char *[]){ "read", e.canary_file, NULL });
	ck_assert(!jbool(j, "ok"));
	json_decref(j);
	env_down(&e);
	ck_assert_int_eq(unlink(copy), 0);
	ck_assert_int_eq(rmdir(dir), 0);
	free(copy);
	free(dir);
}
END_TEST

/* Last: nothing this suite started is still running (any user). */
START_TEST(test_no_leftovers)
{
	ck_assert_int_eq(count_marker(t_marker_prefix), 0);
	ck_assert_int_eq(count_marker(t_scratch), 0);
}
END_TEST

/* ---- main --------------------------------------------------------------- */

/* A group that cannot run is printed; with AGSBX_REQUIRE_MECHANISMS=1 it
 * fails the suite, because the CI host has all of them. */
static int missing;

static bool want(bool have, const char *group, const char *why)
{
	if (!have) {
		fprintf(stderr, "SKIP group %s: %s\n", group, why);
		missing++;
	}
	return have;
}

static TCase *tc(Suite *s, const char *name, int timeout)
{
	TCase *t = tcase_create(name);
	tcase_add_checked_fixture(t, init_runner, NULL);
	tcase_set_timeout(t, timeout);
	suite_add_tcase(s, t);
	return t;
}

static bool is_executable(const char *p)
{
	return p && access(p, X_OK) == 0;
}

int main(void)
{
	if (agsbx_runner_init() < 0)
		agsbx_test_skip("runner", true, "cannot become a child subreaper");
	/* The sandboxes run as the test user: use copies of the helpers it can
	 * reach even when the build dir is private. */
	char *stage = agsbx_test_stage_tools();
	if (!stage)
		agsbx_test_skip("staging dir", true, "cannot create a directory under /tmp");
	t_build_dir = stage;
	t_payload = agsbx_path_join(stage, "agsbx-payload");
	t_simulate = agsbx_path_join(stage, "agsbx-simulate");
	t_scratch = agsbx_test_tmpdir("agsbx-bw");
	if (!t_scratch)
		agsbx_test_skip("scratch dir", true, "cannot create a directory under /tmp");
	char hex[17];
	agsbx_random_hex(hex, 8);
	snprintf(t_marker_prefix, sizeof t_marker_prefix, "agsbx-bw-marker-%s", hex);

	bool have_bwrap = agsbx_bwrap_find(&t_bwrap) == 0;
	bool have_user = agsbx_test_user(&t_uid, &t_gid, &t_user);
	bool have_payload = is_executable(t_payload);
	bool have_sim = is_executable(t_simulate);
	bool have_landlock = agsbx_ll_abi() >= 1;

	Suite *s = suite_create("bubblewrap");
	TCase *t = tc(s, "classify", 30);
	tcase_add_loop_test(t, test_classify_samples, 0, (int)(sizeof samples / sizeof samples[0]));
	tcase_add_test(t, test_classify_edges);
	tcase_add_test(t, test_classify_corpus);
	tcase_add_test(t, test_class_reasons);
	tcase_add_test(t, test_hints_never_weaken);
	tcase_add_test(t, test_suspected_layers);
	tcase_add_test(t, test_host_facts_shape);
	t = tc(s, "argv", 30);
	tcase_add_test(t, test_argv_grant_only);
	tcase_add_test(t, test_argv_refuses);
	tcase_add_test(t, test_seccomp_program);
	tcase_add_test(t, test_ops_shape);
	if (want(have_bwrap, "argv/find", "no bwrap on PATH"))
		tcase_add_test(t, test_find_bwrap);
	if (want(have_user, "config", "needs root and the test user")) {
		t = tc(s, "config", 30);
		tcase_add_test(t, test_config_refused);
	}
	bool real = want(have_bwrap && have_user, "real", "needs bwrap, root and the test user");
	if (real) {
		t = tc(s, "real", 60);
		tcase_add_test(t, test_real_control);
		tcase_add_test(t, test_real_nested_userns_limit);
		tcase_add_test(t, test_real_unknown_option);
		if (want(have_landlock, "real/landlock", "Landlock unavailable"))
			tcase_add_test(t, test_real_landlock_uid_map);
		if (want(have_sim, "real/seccomp", "build/agsbx-simulate missing")) {
			tcase_add_test(t, test_real_seccomp_eperm);
			tcase_add_test(t, test_real_seccomp_enospc);
		}
	}
	if (want(real, "root", "needs bwrap, root and the test user")) {
		t = tc(s, "root", 60);
		tcase_add_test(t, test_root_refused);
	}
	if (want(real && have_payload, "provider", "needs build/agsbx-payload")) {
		t = tc(s, "provider", 120);
		tcase_add_test(t, test_probe_ready);
		tcase_add_test(t, test_grant_write_visible);
		tcase_add_test(t, test_host_read_denied);
		tcase_add_test(t, test_kernel_surface_denied);
		tcase_add_test(t, test_old_bwrap_refused);
		tcase_add_test(t, test_host_write_denied);
		tcase_add_test(t, test_remount_denied);
		tcase_add_test(t, test_namespaces_distinct);
		tcase_add_test(t, test_network_isolated);
		tcase_add_test(t, test_network_shared_when_configured);
		tcase_add_test(t, test_pid_contained);
		tcase_add_test(t, test_no_privileges);
		tcase_add_test(t, test_env_scrubbed);
		tcase_add_test(t, test_timeout_cleanup);
		tcase_add_test(t, test_lifecycle);
		tcase_add_test(t, test_bundle_changed_refused);
		tcase_add_test(t, test_execute_threads);
		tcase_add_test(t, test_binary_missing);
		tcase_add_test(t, test_probe_timeout);
		tcase_add_test(t, test_health_rechecks);
		tcase_add_test(t, test_setuid_bwrap);
		tcase_add_test(t, test_probe_spawn_error);
		if (want(have_sim, "provider/simulate", "build/agsbx-simulate missing"))
			tcase_add_test(t, test_simulated_block_fails_closed);
		tcase_add_test(t, test_no_leftovers);
	}
	int rc = agsbx_test_run_suite(s);
	agsbx_test_rmtree(t_scratch);
	agsbx_test_rmtree(t_build_dir);
	if (missing && agsbx_test_require_mechanisms()) {
		fprintf(stderr, "FAIL: %d group(s) skipped but AGSBX_REQUIRE_MECHANISMS=1\n", missing);
		return EXIT_FAILURE;
	}
	return rc;
}
