/* The bwrap command line. It is assembled from two sources only: the
 * grant's roots and a fixed list of system roots. There is no way for a
 * caller to add a bind, a tmpfs or a raw option (Agently's bubblewrap
 * provider takes none either), so what the sandbox can see is decided here and nowhere
 * else. */
#include "providers/bubblewrap/bwrap.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/util.h"

struct strv {
	char **v;
	size_t n;
	int err;
};

static void push(struct strv *s, const char *a)
{
	if (s->err)
		return;
	char *copy = strdup(a);
	char **nv = copy ? realloc(s->v, (s->n + 2) * sizeof *nv) : NULL;
	if (!nv) {
		free(copy);
		s->err = -ENOMEM;
		return;
	}
	nv[s->n++] = copy;
	nv[s->n] = NULL;
	s->v = nv;
}

static void push2(struct strv *s, const char *a, const char *b)
{
	push(s, a);
	push(s, b);
}

static void push3(struct strv *s, const char *a, const char *b, const char *c)
{
	push(s, a);
	push(s, b);
	push(s, c);
}

/* /bin, /lib... are symlinks into /usr on merged-/usr systems: recreate the
 * link (the target is then covered by the /usr bind) rather than bind the
 * directory it points to a second time. */
static const char *const top_dirs[] = { "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };
/* Small, non-secret pieces of /etc that dynamic binaries and TLS need. */
static const char *const etc_paths[] = { "/etc/ld.so.cache", "/etc/alternatives", "/etc/ssl" };

static void system_roots(struct strv *s)
{
	push3(s, "--ro-bind", "/usr", "/usr");
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(top_dirs); i++) {
		const char *d = top_dirs[i];
		struct stat st;
		if (lstat(d, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlink(d, target, sizeof target - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			push3(s, "--symlink", target, d);
		} else if (S_ISDIR(st.st_mode)) {
			push3(s, "--ro-bind", d, d);
		}
	}
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(etc_paths); i++)
		push3(s, "--ro-bind-try", etc_paths[i], etc_paths[i]);
}

/* A root must be an absolute path other than "/" itself: binding "/"
 * would hand the sandbox the whole host. */
static bool usable_root(const char *p)
{
	return p && p[0] == '/' && p[strspn(p, "/")] != '\0';
}

static int grant_roots(struct strv *s, const struct agsbx_grant *g)
{
	for (int r = 0; g && r < AGSBX_ROOT_COUNT; r++) {
		const struct agsbx_grant_root *root = &g->roots[r];
		if (!usable_root(root->path))
			return -EINVAL;
		push3(s, root->writable ? "--bind" : "--ro-bind", root->path, root->path);
	}
	return 0;
}

static int environment(struct strv *s, const char *const *env)
{
	push(s, "--clearenv");
	for (const char *const *e = env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || eq == *e)
			return -EINVAL;
		_cleanup_free_ char *key = strndup(*e, (size_t)(eq - *e));
		if (!key)
			return -ENOMEM;
		push3(s, "--setenv", key, eq + 1);
	}
	return 0;
}

int agsbx_bwrap_build_argv(const struct agsbx_bwrap_spec *spec, char ***out)
{
	*out = NULL;
	if (!spec->bwrap || spec->bwrap[0] != '/' || !spec->argv || !spec->argv[0])
		return -EINVAL;
	struct strv s = { 0 };
	push(&s, spec->bwrap);
	/* user, mount, pid, net, ipc, uts, cgroup; the sandbox dies with us
	 * and cannot reach our terminal (TIOCSTI) from a new session. */
	push(&s, "--unshare-all");
	if (spec->share_net)
		push(&s, "--share-net");
	push(&s, "--die-with-parent");
	push(&s, "--new-session");
	/* No nested user namespace: bwrap caps max_user_namespaces inside its
	 * own (it needs an explicit --unshare-user for that) and the shared
	 * seccomp filter (providers/seccomp-filter.c) refuses CLONE_NEWUSER.
	 * A setuid bwrap (0.8.0) cannot write that limit in the namespace it
	 * made as root and refuses to start with --disable-userns, and may run
	 * where unprivileged namespaces are off: there the filter alone
	 * denies them. A bwrap without an option refuses to start: fail
	 * closed. */
	if (!spec->setuid) {
		push(&s, "--unshare-user");
		push(&s, "--disable-userns");
	}
	if (spec->seccomp_fd > 2) {
		char fd[16];
		snprintf(fd, sizeof fd, "%d", spec->seccomp_fd);
		push2(&s, "--seccomp", fd);
	}
	int r = environment(&s, spec->env);
	if (r == 0) {
		push2(&s, "--proc", "/proc");
		push2(&s, "--dev", "/dev");
		system_roots(&s);
		r = grant_roots(&s, spec->grant);
	}
	if (r == 0) {
		push(&s, "--chdir");
		push(&s, spec->chdir ? spec->chdir : "/");
		push(&s, "--");
		for (const char *const *a = spec->argv; *a; a++)
			push(&s, *a);
		r = s.err;
	}
	if (r < 0) {
		agsbx_strv_free(s.v);
		return r;
	}
	*out = s.v;
	return 0;
}

int agsbx_bwrap_find(char **path)
{
	const char *env = getenv("PATH");
	_cleanup_free_ char *dirs = strdup(env && *env ? env : "/usr/local/bin:/usr/bin:/bin");
	if (!dirs)
		return -ENOMEM;
	char *save = NULL;
	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		/* A relative PATH entry would make the mechanism depend on the
		 * caller's cwd: never. */
		if (d[0] != '/')
			continue;
		_cleanup_free_ char *p = agsbx_path_join(d, "bwrap");
		if (!p)
			return -ENOMEM;
		struct stat st;
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0) {
			*path = TAKE_PTR(p);
			return 0;
		}
	}
	return -ENOENT;
}
