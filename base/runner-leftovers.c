/* Processes found by what they carry rather than by membership: a
 * marker in the cmdline (the leftover checks of tests and conformance),
 * a dead run's leftovers (the cleanup command), and the checked kill of
 * one of those. */
#include "base/runner.h"
#include "base/runner-internal.h"
#include "base/cleanup.h"
#include "base/proc.h"
#include "base/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- leftover-process checks ---- */

struct marker_scan {
	const char *marker;
	size_t mlen;
	pid_t self;
	struct agsbx_pidvec found;
};

static int marker_visit(pid_t pid, void *ud)
{
	struct marker_scan *m = ud;
	if (pid == m->self)
		return 0;
	size_t len = 0;
	_cleanup_free_ char *buf = agsbx_proc_cmdline(pid, &len);
	/* A process we could not read is not one without the marker. */
	if (!buf && errno == ENOMEM)
		return -ENOMEM;
	if (buf && len >= m->mlen && memmem(buf, len, m->marker, m->mlen) && agsbx_pidvec_add(&m->found, pid) < 0)
		return -ENOMEM;
	return 0;
}

int agsbx_find_processes_with_marker(const char *marker, pid_t **pids)
{
	if (pids)
		*pids = NULL;
	if (!marker || !*marker)
		return -EINVAL;
	struct marker_scan m = { .marker = marker, .mlen = strlen(marker), .self = getpid() };
	int r = agsbx_proc_each(marker_visit, &m);
	if (r < 0) {
		free(m.found.v);
		return r;
	}
	int n = (int)m.found.n;
	if (pids)
		*pids = m.found.v;
	else
		free(m.found.v);
	return n;
}

/* ---- whose a process is: the caller's tree, a dead run's leftovers ---- */

/* Real and effective uid (/proc/PID/status "Uid:"). */
static int proc_uids(pid_t pid, uid_t *ruid, uid_t *euid)
{
	_cleanup_free_ char *status = NULL;
	int r = agsbx_proc_status(pid, &status);
	if (r < 0)
		return r;
	errno = 0;
	_cleanup_free_ char *u = agsbx_status_field(status, "Uid");
	unsigned ru, eu;
	if (!u && errno == ENOMEM)
		return -ENOMEM;
	if (!u || sscanf(u, "%u %u", &ru, &eu) != 2)
		return -EIO;
	*ruid = (uid_t)ru;
	*euid = (uid_t)eu;
	return 0;
}

/* Up the parent chain: a descendant of root (alive, so its pid is its). */
static bool descends_from(pid_t pid, pid_t root)
{
	struct agsbx_proc p;
	for (int hops = 0; pid > 1 && hops < 65536; hops++) {
		if (pid == root)
			return true;
		if (agsbx_proc_stat(pid, &p) < 0)
			return false;
		pid = p.ppid;
	}
	return pid == root;
}

int agsbx_find_tree_processes_with_marker(const char *marker, pid_t **pids)
{
	pid_t *all = NULL;
	int n = agsbx_find_processes_with_marker(marker, &all);
	if (pids)
		*pids = NULL;
	if (n < 0)
		return n;
	pid_t self = getpid();
	int kept = 0, r;
	for (int i = 0; i < n; i++) {
		uid_t ru, eu;
		if (descends_from(all[i], self))
			all[kept++] = all[i];
		else if ((r = proc_uids(all[i], &ru, &eu)) == -ENOMEM) {
			free(all);   /* unknown is not "not root's" */
			return r;
		} else if (r == 0 && ru == 0 && eu == 0)
			all[kept++] = all[i];
	}
	if (pids)
		*pids = all;
	else
		free(all);
	return kept;
}

/* s is dir itself or a path below it. */
static bool path_at(const char *s, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(s, dir, n) == 0 && (s[n] == '\0' || s[n] == '/');
}

/* An argv element (NUL-separated) is dir or below it. */
static bool argv_names(const char *argv, size_t len, const char *dir)
{
	for (const char *e = argv; e < argv + len; e += strlen(e) + 1)
		if (path_at(e, dir))
			return true;
	return false;
}

/* Its executable lies below dir (also once unlinked: " (deleted)"). */
static bool runs_from(pid_t pid, const char *dir)
{
	char path[64], exe[4096 + 16];
	static const char del[] = " (deleted)";
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	if ((size_t)n > sizeof del - 1 && strcmp(exe + n - (sizeof del - 1), del) == 0)
		exe[n - (sizeof del - 1)] = '\0';
	return path_at(exe, dir) && exe[strlen(dir)] == '/';
}

static bool uid_in(const struct agsbx_leftover_filter *f, uid_t u)
{
	for (size_t i = 0; i < f->nuids; i++)
		if (f->uids[i] == u)
			return true;
	return false;
}

/* The cheap test (argv names dir) first: it rules out nearly everyone.
 * 1 a leftover, 0 not, -ENOMEM unknown (one we could not read is not one
 * that is not ours: the scan fails rather than miss it). */
static int is_leftover(const struct agsbx_leftover_filter *f, pid_t pid, struct agsbx_proc *p)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	_cleanup_free_ char *argv = NULL;
	size_t len = 0;
	int r = agsbx_read_file(path, 4u << 20, &argv, &len);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || !argv_names(argv, len, f->dir))
		return 0;
	uid_t ru, eu;
	if ((r = proc_uids(pid, &ru, &eu)) == -ENOMEM)
		return r;
	if (r < 0 || !uid_in(f, ru) || !uid_in(f, eu))
		return 0;
	if (agsbx_proc_stat(pid, p) < 0 || p->state == 'Z' || p->start < f->started_after)
		return 0;
	if (f->nonce && *f->nonce && memmem(argv, len, f->nonce, strlen(f->nonce)))
		return 1;
	return runs_from(pid, f->dir);
}

struct leftover_scan {
	const struct agsbx_leftover_filter *f;
	pid_t self;
	struct agsbx_procset found;
};

static int leftover_visit(pid_t pid, void *ud)
{
	struct leftover_scan *ls = ud;
	struct agsbx_proc p;
	if (pid == ls->self)
		return 0;
	int r = is_leftover(ls->f, pid, &p);
	return r <= 0 ? r : agsbx_procset_add(&ls->found, &p);
}

int agsbx_find_run_leftovers(const struct agsbx_leftover_filter *f, struct agsbx_leftover **out)
{
	*out = NULL;
	if (!f->dir || f->dir[0] != '/' || !f->nuids)
		return -EINVAL;
	struct leftover_scan ls = { .f = f, .self = getpid() };
	int r = agsbx_proc_each(leftover_visit, &ls);
	if (r < 0) {
		agsbx_procset_free(&ls.found);
		return r;
	}
	struct agsbx_leftover *v = calloc(ls.found.n ? ls.found.n : 1, sizeof *v);
	for (size_t i = 0; v && i < ls.found.n; i++)
		v[i] = (struct agsbx_leftover){ .pid = ls.found.v[i].pid, .start = ls.found.v[i].start };
	int n = v ? (int)ls.found.n : -ENOMEM;
	agsbx_procset_free(&ls.found);
	*out = v;
	return n;
}

int agsbx_kill_leftover(const struct agsbx_leftover *l)
{
	struct agsbx_proc p = { .pid = l->pid, .start = l->start }, now;
	if (agsbx_proc_signal(&p, SIGKILL, NULL, NULL))
		return 0;
	int e = errno;
	if (agsbx_proc_stat(l->pid, &now) < 0 || now.start != l->start || now.state == 'Z')
		return 0;   /* gone (or dying) meanwhile */
	return e ? -e : -EPERM;
}
