/* The cgroup v2 leaf of a run: created fresh per run when wanted and
 * permitted, joined by the child before exec, killed (cgroup.kill) and
 * removed at the run's end; leaves of harnesses that died mid-run are
 * cleaned up once per process. */
#include "base/runner.h"
#include "base/runner-internal.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

/* How long a leaf's members may take to leave without one of them
 * leaving: killed members go asynchronously, and tearing down a large
 * address space (a balloon's) on a loaded machine took over 0.5 s. */
#define CGROUP_QUIET_US 2000000

/* ---- small file helpers ---- */

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, s, strlen(s));
	int r = n < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* ---- the mount and stale leaves ---- */

static pthread_once_t cg_once = PTHREAD_ONCE_INIT;
static char *cg_mount;
static _Atomic unsigned cg_counter;

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;
	for (char *r = s; *r; ) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

static void find_cgroup2_mount(void)
{
	char *buf = NULL;
	if (agsbx_read_file("/proc/self/mountinfo", 1 << 22, &buf, NULL) < 0)
		return;
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		/* fields: id parent major:minor root mountpoint ... */
		char *save = NULL, *f = strtok_r(line, " ", &save);
		for (int i = 1; f && i < 5; i++)
			f = strtok_r(NULL, " ", &save);
		if (f) {
			unescape_octal(f);
			cg_mount = strdup(f);
			break;
		}
	}
	free(buf);
}

/* Members of the cgroup at dir (lines of cgroup.procs); 0 when unreadable. */
static size_t members(const char *dir)
{
	char path[4200];
	char *buf = NULL;
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	if (agsbx_read_file(path, 1 << 22, &buf, NULL) < 0)
		return 0;
	size_t n = 0;
	for (const char *c = buf; *c; c++)
		n += *c == '\n';
	free(buf);
	return n;
}

/* Waits for the leaf at dir to empty, then removes it: true when removed.
 * The wait goes on as long as members keep leaving, and ends CGROUP_QUIET_US
 * after the last one left (or after the start, if none does). */
static bool leaf_remove(const char *dir)
{
	uint64_t until = agsbx_now_us() + CGROUP_QUIET_US;
	long nap = 200;
	for (size_t n, last = SIZE_MAX; (n = members(dir)) > 0 && agsbx_now_us() < until; last = n) {
		if (n < last)
			until = agsbx_now_us() + CGROUP_QUIET_US;
		agsbx_runner_nap(&nap, 20000);
	}
	/* Empty, yet rmdir can see EBUSY a moment longer. ENOENT: another
	 * process's sweep (every harness sweeps at its start) removed it
	 * first; it is gone, which is all that was asked. */
	while (rmdir(dir) < 0 && errno != ENOENT) {
		if (errno != EBUSY || agsbx_now_us() >= until)
			return false;
		agsbx_runner_nap(&nap, 20000);
	}
	return true;
}

/* Leaves of harnesses that died mid-run (SIGKILL, a CI timeout) would
 * stay forever: kill what is left in them and remove them. Only leaves
 * whose creator pid is gone; rmdir fails harmlessly on anything else. */
static int remove_stale_leaves(bool dry_run, void (*fn)(void *ud, const char *path, bool removed), void *ud)
{
	DIR *d = cg_mount ? opendir(cg_mount) : NULL;
	if (!d)
		return 0;
	int count = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, "agsbx-run-", 10) != 0)
			continue;
		long pid = strtol(de->d_name + 10, &end, 10);
		if (pid <= 0 || *end != '-' || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		/* Another user's leaf is not ours to sweep (we could not remove
		 * it anyway): a dead root harness's, met by a user's cleanup. */
		struct stat st;
		if (geteuid() != 0 && (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
				       st.st_uid != geteuid()))
			continue;
		char path[4200];
		bool removed = false;
		if (!dry_run) {
			snprintf(path, sizeof path, "%s/%s/cgroup.kill", cg_mount, de->d_name);
			write_str(path, "1");
		}
		snprintf(path, sizeof path, "%s/%s", cg_mount, de->d_name);
		if (!dry_run)
			removed = leaf_remove(path);
		if (fn)
			fn(ud, path, removed);
		count++;
	}
	closedir(d);
	return count;
}

static void cgroup_setup_once(void);

int agsbx_runner_cleanup_stale_cgroups(bool dry_run, void (*fn)(void *ud, const char *path, bool removed), void *ud)
{
	pthread_once(&cg_once, cgroup_setup_once);
	return remove_stale_leaves(dry_run, fn, ud);
}

static void cgroup_setup_once(void)
{
	find_cgroup2_mount();
	remove_stale_leaves(false, NULL, NULL);
}

void agsbx_runner_cgroup_prepare(struct agsbx_run_tree *t, bool want)
{
	if (!want)
		return;
	pthread_once(&cg_once, cgroup_setup_once);
	if (!cg_mount)
		return;
	unsigned char rnd[6] = { 0 };
	if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) < 0) { /* the counter still separates runs */ }
	char *dir = NULL;
	if (asprintf(&dir, "%s/agsbx-run-%d-%u-%02x%02x%02x%02x%02x%02x", cg_mount, (int)getpid(),
		     atomic_fetch_add(&cg_counter, 1), rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]) < 0)
		return;
	if (mkdir(dir, 0755) < 0) {
		free(dir);   /* not root, read-only, or no cgroup2: run without */
		return;
	}
	char path[4200];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	t->cgroup_procs_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (t->cgroup_procs_fd < 0) {
		rmdir(dir);
		free(dir);
		return;
	}
	t->cgroup_dir = dir;
	t->cgroup_rel = dir + strlen(cg_mount) - (cg_mount[strlen(cg_mount) - 1] == '/');
}

void agsbx_runner_cgroup_joined(struct agsbx_run_tree *t, bool ok)
{
	if (t->cgroup_procs_fd < 0)
		return;
	close(t->cgroup_procs_fd);
	t->cgroup_procs_fd = -1;
	agsbx_runner_lock();   /* other runs read it */
	t->used_cgroup = ok;
	agsbx_runner_unlock();
	if (!ok)
		agsbx_runner_cgroup_remove(t);
}

void agsbx_runner_cgroup_kill(struct agsbx_run_tree *t)
{
	if (!t->used_cgroup)
		return;
	char path[4200];
	snprintf(path, sizeof path, "%s/cgroup.kill", t->cgroup_dir);
	if (write_str(path, "1") == 0)
		return;
	/* Kernels before 5.14: kill what the cgroup lists (each pid is a
	 * current member, so it cannot be a reused pid of someone else). */
	char *buf = NULL;
	snprintf(path, sizeof path, "%s/cgroup.procs", t->cgroup_dir);
	if (agsbx_read_file(path, 1 << 22, &buf, NULL) < 0)
		return;
	struct agsbx_pidvec pv = { 0 };
	(void)agsbx_pidvec_parse(buf, &pv);
	free(buf);
	for (size_t i = 0; i < pv.n; i++)
		if (pv.v[i] != t->child)
			kill(pv.v[i], SIGKILL);
	free(pv.v);
}

void agsbx_runner_cgroup_remove(struct agsbx_run_tree *t)
{
	if (t->cgroup_procs_fd >= 0) {
		close(t->cgroup_procs_fd);
		t->cgroup_procs_fd = -1;
	}
	if (!t->cgroup_dir)
		return;
	agsbx_runner_lock();
	t->cgroup_rel = NULL;
	agsbx_runner_unlock();
	/* A reaped tree leaves the cgroup empty; rmdir fails with EBUSY
	 * until the last member is gone. */
	leaf_remove(t->cgroup_dir);
	free(t->cgroup_dir);
	t->cgroup_dir = NULL;
}
