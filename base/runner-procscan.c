/* Process-tree tracking for the runner: who belongs to a run, and how the
 * whole tree is stopped, killed and reaped.
 *
 * Membership of a run, walked from /proc/PID/task/TID/children (or a full
 * /proc scan where that file is missing):
 *  - the child and everything below it;
 *  - orphans re-parented to us (we are a child subreaper) and everything
 *    below them, when they cannot be anyone else's: not a registered child
 *    (spawned by the runner or registered by other code), not in our own
 *    session (the run's child called setsid, so none of its descendants can
 *    be), started no earlier than the run's child, and not recorded by
 *    another active run;
 *  - members recorded by earlier walks that are still alive (identity
 *    checked with the start time, so a reused pid is never hit);
 *  - the run's cgroup members, when it has a cgroup.
 *
 * A run with spare_helpers (a wrapped tool's) judges each member as it is
 * walked (judge below): the run's and the wrapper's own are signalled, a
 * helper the tool daemonised for itself is walked but spared, and no
 * sweep of a later run takes it.
 *
 * The child of a one-shot run is itself a subreaper (runner.c), so while it
 * lives its orphans stay below it and are members by descent; only what is
 * left when it exits passes through us and needs the sweep's rules.
 *
 * Waiting is only ever for specific pids: waitpid(-1) would steal children
 * of other threads and other runs. */
#include "base/runner.h"
#include "base/runner-internal.h"
#include "base/cleanup.h"
#include "base/proc.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define SIGNAL_WALKS_US 3000000 /* walk until nothing new appears, at most */
#define EXIT_GRACE_US 10000     /* leftovers after a normal exit may finish */
#define REAP_DEADLINE_US 2000000
#define CGROUP_DEADLINE_US 1000000
#define SWEEP_ROUNDS 16         /* orphan sweeps in one walk, at most */

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

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- sets ---- */

static size_t pid_slot(pid_t pid, size_t cap)
{
	return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

static struct agsbx_proc *procset_find_pid(const struct agsbx_procset *s, pid_t pid)
{
	if (!s->idx_cap)
		return NULL;
	for (size_t h = pid_slot(pid, s->idx_cap); s->idx[h]; h = (h + 1) & (s->idx_cap - 1))
		if (s->v[s->idx[h] - 1].pid == pid)
			return &s->v[s->idx[h] - 1];
	return NULL;
}

static void procset_index(struct agsbx_procset *s, size_t i)
{
	size_t h = pid_slot(s->v[i].pid, s->idx_cap);
	while (s->idx[h])
		h = (h + 1) & (s->idx_cap - 1);
	s->idx[h] = i + 1;
}

static int procset_add(struct agsbx_procset *s, const struct agsbx_proc *p)
{
	struct agsbx_proc *old = procset_find_pid(s, p->pid);
	if (old) {
		*old = *p;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct agsbx_proc *nv = realloc(s->v, cap * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	if ((s->n + 1) * 2 > s->idx_cap) {
		size_t cap = s->idx_cap ? s->idx_cap * 2 : 64;
		size_t *ni = calloc(cap, sizeof *ni);
		if (!ni)
			return -ENOMEM;
		free(s->idx);
		s->idx = ni;
		s->idx_cap = cap;
		for (size_t i = 0; i < s->n; i++)
			procset_index(s, i);
	}
	s->v[s->n] = *p;
	procset_index(s, s->n++);
	return 0;
}

static bool procset_has(const struct agsbx_procset *s, pid_t pid, unsigned long long start)
{
	const struct agsbx_proc *p = procset_find_pid(s, pid);
	return p && p->start == start;
}

static void procset_clear(struct agsbx_procset *s)
{
	s->n = 0;
	if (s->idx)
		memset(s->idx, 0, s->idx_cap * sizeof *s->idx);
}

static void procset_free(struct agsbx_procset *s)
{
	free(s->v);
	free(s->idx);
	*s = (struct agsbx_procset){ 0 };
}

struct pidvec {
	pid_t *v;
	size_t n, cap;
};

static int pidvec_add(struct pidvec *pv, pid_t pid)
{
	if (pv->n == pv->cap) {
		size_t cap = pv->cap ? pv->cap * 2 : 16;
		pid_t *nv = realloc(pv->v, cap * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		pv->v = nv;
		pv->cap = cap;
	}
	pv->v[pv->n++] = pid;
	return 0;
}

static void parse_pids(const char *s, struct pidvec *out)
{
	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s) {
			s++;
			continue;
		}
		if (v > 0)
			pidvec_add(out, (pid_t)v);
		s = end;
	}
}

/* ---- the registry: runner children and active runs ---- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pidvec registered;                 /* reg_lock */
static struct agsbx_run_tree *active_runs;       /* reg_lock */
/* Members of ended runs that were already exiting (PF_EXITING) when their
 * run ended: dead in every way that matters, reaped once they are zombies
 * (by later runs and tree ends) instead of being waited for. */
static struct agsbx_procset exiting;             /* reg_lock */
/* Helpers spared by ended runs (spare_helpers): no later sweep takes
 * them for its own orphans. */
static struct agsbx_procset helpers;             /* reg_lock */

static bool registered_locked(pid_t pid)
{
	for (size_t i = 0; i < registered.n; i++)
		if (registered.v[i] == pid)
			return true;
	return false;
}

static void unregister_locked(pid_t pid)
{
	for (size_t i = 0; i < registered.n; i++) {
		if (registered.v[i] == pid) {
			registered.v[i] = registered.v[--registered.n];
			return;
		}
	}
}

void agsbx_runner_unregister_child(pid_t pid)
{
	pthread_mutex_lock(&reg_lock);
	unregister_locked(pid);
	pthread_mutex_unlock(&reg_lock);
}

/* Takes reg_lock with a slot reserved, so registering a child cannot fail
 * once it exists; register_unlock() fills the slot (pid > 0) and unlocks.
 * Between the two the child is created: nobody can see it unregistered. */
static int lock_with_slot(void)
{
	pthread_mutex_lock(&reg_lock);
	if (pidvec_add(&registered, 0) < 0) {
		pthread_mutex_unlock(&reg_lock);
		errno = ENOMEM;
		return -1;
	}
	registered.n--;
	return 0;
}

static pid_t register_unlock(pid_t pid)
{
	int e = errno;
	if (pid > 0)
		registered.v[registered.n++] = pid;
	pthread_mutex_unlock(&reg_lock);
	errno = e;
	return pid;
}

pid_t agsbx_runner_fork_registered(void)
{
	if (lock_with_slot() < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0)
		return 0;   /* its copy of the lock stays held: it only execs */
	return register_unlock(pid);
}

pid_t agsbx_runner_spawn_registered(int (*fn)(void *), void *stack_top, void *arg)
{
	if (lock_with_slot() < 0)
		return -1;
	return register_unlock(clone(fn, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, arg));
}

static bool claimed_by_other_locked(const struct agsbx_run_tree *self, pid_t pid,
				    unsigned long long start)
{
	for (const struct agsbx_run_tree *t = active_runs; t; t = t->next)
		if (t != self && procset_has(&t->seen, pid, start))
			return true;
	return false;
}

/* An orphan inside another run's cgroup leaf is that run's, exactly. */
static bool in_other_cgroup_locked(const struct agsbx_run_tree *self, pid_t pid)
{
	bool any = false;
	for (const struct agsbx_run_tree *t = active_runs; t && !any; t = t->next)
		any = t != self && t->used_cgroup && t->cgroup_rel;
	if (!any)
		return false;
	char path[64], *buf = NULL;
	snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
	if (agsbx_read_file(path, 1 << 16, &buf, NULL) < 0)
		return false;
	const char *v2 = strncmp(buf, "0::", 3) == 0 ? buf + 3 : strstr(buf, "\n0::");
	if (v2 && v2 != buf + 3)
		v2 += 4;
	bool found = false;
	if (v2) {
		size_t len = strcspn(v2, "\n");
		for (const struct agsbx_run_tree *t = active_runs; t && !found; t = t->next)
			found = t != self && t->used_cgroup && t->cgroup_rel &&
				strlen(t->cgroup_rel) == len && strncmp(v2, t->cgroup_rel, len) == 0;
	}
	free(buf);
	return found;
}

/* ---- walking children ---- */

static _Atomic int children_files = -1;   /* -1 unknown, 0 missing, 1 present */

static bool have_children_files(void)
{
	int v = atomic_load(&children_files);
	if (v < 0) {
		char path[80];
		snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)gettid());
		v = access(path, R_OK) == 0;
		atomic_store(&children_files, v);
	}
	return v == 1;
}

/* A full /proc scan, used when the kernel lacks the children files. */
struct snapshot {
	bool taken;
	struct agsbx_procset all;
};

static int snapshot_add(pid_t pid, void *ud)
{
	struct snapshot *s = ud;
	struct agsbx_proc p;
	if (agsbx_proc_stat(pid, &p) == 0)
		procset_add(&s->all, &p);
	return 0;
}

static void snapshot_take(struct snapshot *s)
{
	s->taken = true;
	agsbx_proc_each(snapshot_add, s);
}

static void children_of(pid_t pid, struct snapshot *snap, struct pidvec *out)
{
	out->n = 0;
	if (!have_children_files()) {
		if (!snap->taken)
			snapshot_take(snap);
		for (size_t i = 0; i < snap->all.n; i++)
			if (snap->all.v[i].ppid == pid)
				pidvec_add(out, snap->all.v[i].pid);
		return;
	}
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *buf = NULL;
		snprintf(path, sizeof path, "/proc/%d/task/%.20s/children", (int)pid, de->d_name);
		if (agsbx_read_file(path, 1 << 22, &buf, NULL) == 0)
			parse_pids(buf, out);
		free(buf);
	}
	closedir(d);
}

/* ---- a wrapper tool's own helpers (agsbx_run_opts.spare_helpers) ---- */

/* A walk's verdict on a member: the run's (killed at its end, and so is
 * everything below it), the wrapper's own (killed), or a helper the
 * wrapper tool daemonised for itself (spared). */
enum { KIND_RUN = 1, KIND_WRAPPER, KIND_HELPER };

void agsbx_runner_tree_spare(struct agsbx_run_tree *t, const char *own_exe, const char *own_word)
{
	struct stat st;
	t->spare = true;
	t->own_word = own_word;
	/* The file, not its name: the payload seen through a bind mount is
	 * the same inode; a tool's helper named like it is not. */
	if (own_exe && stat(own_exe, &st) == 0) {
		t->own_exe_known = true;
		t->own_dev = st.st_dev;
		t->own_ino = st.st_ino;
	}
}

/* It executes the run's program or its argv carries the run's word. A
 * fork of the wrapper that has not exec'd yet carries the wrapper's argv,
 * which holds the word too (the payload's argv is the end of the
 * wrapper's): that is no sign of the run, so neither the child's argv
 * nor one equal to it counts (the child is the run's by its program). */
static bool carries_run(const struct agsbx_run_tree *t, pid_t pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	if (t->own_exe_known && stat(path, &st) == 0 && st.st_dev == t->own_dev && st.st_ino == t->own_ino)
		return true;
	if (!t->own_word || !*t->own_word)
		return false;
	size_t len = 0;
	_cleanup_free_ char *argv = pid == t->child ? NULL : agsbx_proc_cmdline(pid, &len);
	if (pid == t->child || !argv || !memmem(argv, len, t->own_word, strlen(t->own_word)))
		return false;
	return !t->child_argv || len != t->child_argv_len || memcmp(argv, t->child_argv, len) != 0;
}

/* One walk over a run's members. With targets, each member not yet a
 * target becomes one on discovery and is signalled right then: a member
 * of a fork loop lives for microseconds, so a signal sent only after the
 * whole walk would mostly hit the dead. */
struct walk {
	struct agsbx_run_tree *t;
	struct agsbx_procset *set;        /* this walk's members */
	struct agsbx_procset *targets;    /* NULL: just look */
	int sig;                          /* SIGSTOP or SIGKILL */
	unsigned fresh;                   /* members new to targets */
	unsigned killed;                  /* SIGKILLs delivered */
	pid_t self;
	bool incomplete;                  /* members were still appearing */
	struct snapshot snap;
};

/* The child's argv now (it may exec again: `env PROGRAM`); a zombie's,
 * or one read in the middle of its exec, is empty and keeps the last. */
static void note_child_argv(struct agsbx_run_tree *t)
{
	size_t len = 0;
	char *argv = agsbx_proc_cmdline(t->child, &len);
	if (!argv || !len) {
		free(argv);
		return;
	}
	free(t->child_argv);
	t->child_argv = argv;
	t->child_argv_len = len;
}

/* Once the run's, always (an earlier walk saw it below the run's
 * program: a payload's child that detaches and execs something else
 * stays the run's). The wrapper's session (the child's: the runner made
 * it a session leader) is the wrapper's own; a member that left it
 * without carrying the run is a daemon of the wrapper tool. */
static int judge(const struct walk *w, const struct agsbx_proc *p)
{
	const struct agsbx_run_tree *t = w->t;
	if (p->state == 'Z')
		return KIND_RUN;   /* dead: only to be reaped */
	const struct agsbx_proc *was = procset_find_pid(&t->seen, p->pid);
	if (was && was->start == p->start && was->kind == KIND_RUN)
		return KIND_RUN;
	const struct agsbx_proc *parent = procset_find_pid(w->set, p->ppid);
	if (parent && parent->kind == KIND_RUN)
		return KIND_RUN;
	if (carries_run(t, p->pid))
		return KIND_RUN;
	return p->pid == t->child || p->sid == t->child ? KIND_WRAPPER : KIND_HELPER;
}

static void visit(struct walk *w, const struct agsbx_proc *p0)
{
	struct agsbx_proc q = *p0, *p = &q;
	q.kind = w->t->spare ? judge(w, p0) : KIND_RUN;
	procset_add(w->set, p);
	/* A spared helper is walked (what it runs for the run is the run's)
	 * but never signalled; recorded by any walk that meets it (a look
	 * may be the last walk), so the run's end hands it on (helpers). */
	if (q.kind == KIND_HELPER)
		procset_add(&w->t->seen, p);
	if (!w->targets || q.kind == KIND_HELPER || procset_has(w->targets, p->pid, p->start))
		return;
	procset_add(w->targets, p);
	/* A new zombie counts too: it may have forked just before dying,
	 * its child moving to us after this walk read our children. */
	w->fresh++;
	if (p->state == 'Z') {
		/* Dead and re-parented to us: reap it now, so a fork loop's
		 * trail of zombies does not lengthen every later walk. */
		if (p->ppid == w->self && p->pid != w->t->child)
			waitpid(p->pid, NULL, WNOHANG);
		return;
	}
	if (agsbx_proc_signal(p, w->sig, NULL, NULL) && w->sig == SIGKILL)
		w->killed++;
}

static void visit_pid(struct walk *w, pid_t pid)
{
	struct agsbx_proc p;
	if (!procset_find_pid(w->set, pid) && agsbx_proc_stat(pid, &p) == 0)
		visit(w, &p);
}

/* Visits our children that are orphans of this run (see the top of the
 * file). Returns how many were new to this walk. */
static size_t sweep_orphans_locked(struct walk *w, pid_t our_sid, struct pidvec *kids)
{
	struct agsbx_run_tree *t = w->t;
	struct agsbx_proc p;
	size_t fresh = 0;
	children_of(w->self, &w->snap, kids);
	for (size_t i = 0; i < kids->n; i++) {
		pid_t pid = kids->v[i];
		if (registered_locked(pid) || procset_find_pid(w->set, pid))
			continue;
		if (agsbx_proc_stat(pid, &p) < 0 || p.sid == our_sid)
			continue;
		if (p.start < t->child_start || procset_has(&exiting, pid, p.start) ||
		    procset_has(&helpers, pid, p.start) ||
		    claimed_by_other_locked(t, pid, p.start) || in_other_cgroup_locked(t, pid)) {
			/* Not this run's; but an adopted orphan that already died
			 * has nobody else to wait for it (its parent is gone and
			 * it was never registered), and as a zombie it would
			 * lengthen every later sweep (bench's raw bwrap leaves
			 * one per run). */
			if (p.state == 'Z')
				waitpid(pid, NULL, WNOHANG);
			continue;
		}
		visit(w, &p);
		fresh++;
	}
	return fresh;
}

/* Members recorded by earlier walks and the cgroup's, as roots. */
static void visit_known_locked(struct walk *w, bool include_child, struct pidvec *kids)
{
	struct agsbx_run_tree *t = w->t;
	struct agsbx_proc p;
	for (size_t i = 0; i < t->seen.n; i++) {
		const struct agsbx_proc *s = &t->seen.v[i];
		if (s->pid == t->child || procset_find_pid(w->set, s->pid))
			continue;
		if (agsbx_proc_stat(s->pid, &p) == 0 && p.start == s->start && p.state != 'Z')
			visit(w, &p);
	}
	if (!t->used_cgroup)
		return;
	char path[4200], *buf = NULL;
	snprintf(path, sizeof path, "%s/cgroup.procs", t->cgroup_dir);
	if (agsbx_read_file(path, 1 << 22, &buf, NULL) == 0) {
		kids->n = 0;
		parse_pids(buf, kids);
		for (size_t i = 0; i < kids->n; i++)
			if (kids->v[i] != t->child || include_child)
				visit_pid(w, kids->v[i]);
	}
	free(buf);
}

/* Every current member of the run (see the top of the file), zombies
 * included (they need reaping). The caller holds reg_lock.
 *
 * A member that is exiting hands its children to us (the subreaper) in
 * exit_notify(): read our children before that and the member's after,
 * and such a child is in neither list. So the orphan sweep is repeated
 * after the members' children were read, until it finds nobody new: a
 * child in transit is then either in its parent's list or in ours. A
 * fork chain can keep a sweep finding somebody; after SWEEP_ROUNDS the
 * walk is marked incomplete. */
static void walk_locked(struct walk *w, bool include_child, bool sweep_orphans)
{
	struct agsbx_run_tree *t = w->t;
	struct pidvec kids = { 0 };
	struct agsbx_proc p;
	pid_t our_sid = getsid(0);
	w->self = getpid();
	w->incomplete = false;
	if (t->spare)
		note_child_argv(t);
	w->snap.taken = false;
	procset_clear(&w->snap.all);
	procset_clear(w->set);

	/* Without include_child the child has exited: its children were
	 * re-parented to us before it became a zombie, so it is no root. */
	if (include_child && agsbx_proc_stat(t->child, &p) == 0 && p.start == t->child_start)
		visit(w, &p);
	if (sweep_orphans)
		sweep_orphans_locked(w, our_sid, &kids);
	visit_known_locked(w, include_child, &kids);
	size_t expanded = 0;
	for (int round = 0;; round++) {
		for (; expanded < w->set->n; expanded++) {
			children_of(w->set->v[expanded].pid, &w->snap, &kids);
			for (size_t k = 0; k < kids.n; k++)
				visit_pid(w, kids.v[k]);
		}
		/* A snapshot (no children files) is one instant, in which
		 * nobody is in transit. Nor is anybody with no member found:
		 * only a member can hand children over, and the exited child
		 * handed its own over before it became a zombie. */
		if (!sweep_orphans || !have_children_files() || !w->set->n)
			break;
		if (!sweep_orphans_locked(w, our_sid, &kids))
			break;
		if (round + 1 >= SWEEP_ROUNDS) {
			w->incomplete = true;
			break;
		}
	}
	free(kids.v);
}

/* ---- run lifecycle ---- */

static void reap_exiting_locked(void);

void agsbx_runner_tree_init(struct agsbx_run_tree *t)
{
	*t = (struct agsbx_run_tree){ .cgroup_procs_fd = -1 };
}

void agsbx_runner_tree_begin(struct agsbx_run_tree *t, pid_t child)
{
	struct agsbx_proc p;
	t->child = child;
	/* The child is unreaped, so this cannot be somebody else's entry. */
	if (agsbx_proc_stat(child, &p) == 0)
		t->child_start = p.start;
	pthread_mutex_lock(&reg_lock);
	reap_exiting_locked();
	t->next = active_runs;
	active_runs = t;
	t->active = true;
	pthread_mutex_unlock(&reg_lock);
}

void agsbx_runner_tree_record(struct agsbx_run_tree *t)
{
	struct agsbx_procset now = { 0 };
	struct walk w = { .t = t, .set = &now };
	pthread_mutex_lock(&reg_lock);
	/* Orphans re-parented to us are left to the cleanup sweep: while
	 * several runs are live, an orphan nobody saw attached cannot be
	 * attributed, and a claim here would shield it from the run that
	 * really owns it. */
	walk_locked(&w, true, false);
	/* now already holds every earlier record that is still alive. */
	procset_free(&t->seen);
	t->seen = now;
	pthread_mutex_unlock(&reg_lock);
	procset_free(&w.snap.all);
}

static void cgroup_remove(struct agsbx_run_tree *t);

/* The helpers the run spared stay off every later sweep; forgotten once
 * gone (reap_exiting_locked). The caller holds reg_lock. */
static void keep_helpers_locked(const struct agsbx_run_tree *t)
{
	struct agsbx_proc now;
	for (size_t i = 0; t->spare && i < t->seen.n; i++) {
		const struct agsbx_proc *p = &t->seen.v[i];
		if (p->kind == KIND_HELPER && agsbx_proc_stat(p->pid, &now) == 0 && now.start == p->start)
			procset_add(&helpers, p);
	}
}

unsigned agsbx_runner_tree_spared(struct agsbx_run_tree *t)
{
	struct agsbx_proc now;
	unsigned n = 0;
	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; t->spare && i < t->seen.n; i++) {
		const struct agsbx_proc *p = &t->seen.v[i];
		n += p->kind == KIND_HELPER && agsbx_proc_stat(p->pid, &now) == 0 && now.start == p->start &&
		     now.state != 'Z';
	}
	pthread_mutex_unlock(&reg_lock);
	return n;
}

void agsbx_runner_tree_end(struct agsbx_run_tree *t)
{
	pthread_mutex_lock(&reg_lock);
	if (t->active) {
		for (struct agsbx_run_tree **pp = &active_runs; *pp; pp = &(*pp)->next) {
			if (*pp == t) {
				*pp = t->next;
				break;
			}
		}
		t->active = false;
	}
	keep_helpers_locked(t);
	reap_exiting_locked();
	procset_free(&t->seen);
	pthread_mutex_unlock(&reg_lock);
	free(t->child_argv);
	t->child_argv = NULL;
	cgroup_remove(t);
}

/* Walks with sig until a walk finds no member, live or dead, that it had
 * not seen yet (bounded in time). With SIGSTOP this converges even for a fork
 * loop: a stopped process cannot fork. Members are recorded in seen,
 * which keeps other runs' sweeps off them. Returns SIGKILLs delivered. */
static unsigned signal_walks(struct agsbx_run_tree *t, bool kill_child, int sig,
			     struct agsbx_procset *targets)
{
	struct agsbx_procset now = { 0 };
	struct walk w = { .t = t, .set = &now, .targets = targets, .sig = sig };
	uint64_t until = agsbx_now_us() + SIGNAL_WALKS_US;
	do {
		w.fresh = 0;
		pthread_mutex_lock(&reg_lock);
		walk_locked(&w, kill_child, true);
		for (size_t i = 0; i < now.n; i++)
			procset_add(&t->seen, &now.v[i]);
		pthread_mutex_unlock(&reg_lock);
	} while (w.fresh && agsbx_now_us() < until);
	procset_free(&now);
	procset_free(&w.snap.all);
	return w.killed;
}

static unsigned kill_targets(const struct agsbx_procset *targets)
{
	unsigned killed = 0;
	for (size_t i = 0; i < targets->n; i++)
		if (targets->v[i].state != 'Z' && agsbx_proc_signal(&targets->v[i], SIGKILL, NULL, NULL))
			killed++;
	return killed;
}

/* Reaps the targets that end up as our (zombie) children, each by its own
 * pid. Members whose parent was another member are re-parented to us when
 * that parent dies, so this waits, boundedly, until all are gone. */
static void reap_targets(struct agsbx_run_tree *t, struct agsbx_procset *targets)
{
	pid_t self = getpid();
	uint64_t until = agsbx_now_us() + REAP_DEADLINE_US;
	long nap = 200;
	for (;;) {
		size_t left = 0;
		for (size_t i = 0; i < targets->n; i++) {
			struct agsbx_proc *p = &targets->v[i];
			struct agsbx_proc now;
			if (p->pid == 0 || p->pid == t->child)
				continue;
			if (agsbx_proc_stat(p->pid, &now) < 0 || now.start != p->start) {
				p->pid = 0;   /* gone */
				continue;
			}
			if (now.state == 'Z' && now.ppid == self) {
				waitpid(p->pid, NULL, WNOHANG);
				if (agsbx_proc_stat(p->pid, &now) < 0 || now.start != p->start) {
					p->pid = 0;
					continue;
				}
			}
			left++;
		}
		if (!left || agsbx_now_us() >= until)
			return;
		sleep_us(nap);
		if (nap < 20000)
			nap *= 2;
	}
}

static void cgroup_kill(struct agsbx_run_tree *t);

/* Live members right now, by a walk that only looks; *any also counts
 * zombies. */
static size_t live_members(struct agsbx_run_tree *t, size_t *any)
{
	struct agsbx_procset now = { 0 };
	struct walk w = { .t = t, .set = &now };
	pthread_mutex_lock(&reg_lock);
	walk_locked(&w, false, true);
	pthread_mutex_unlock(&reg_lock);
	size_t live = w.incomplete;   /* still appearing: somebody lives */
	*any = 0;
	for (size_t i = 0; i < now.n; i++) {
		bool spared = now.v[i].kind == KIND_HELPER;
		live += now.v[i].state != 'Z' && !(now.v[i].flags & AGSBX_PF_EXITING) && !spared;
		*any += !spared;
	}
	procset_free(&now);
	procset_free(&w.snap.all);
	return live;
}

/* Spared helpers that are gone or dead are forgotten (a dead one that
 * is our child is reaped by the next sweep: it is nobody's). The caller
 * holds reg_lock. */
static void forget_gone_helpers_locked(void)
{
	if (!helpers.n)
		return;
	struct agsbx_procset keep = { 0 };
	for (size_t i = 0; i < helpers.n; i++) {
		struct agsbx_proc now, *p = &helpers.v[i];
		if (agsbx_proc_stat(p->pid, &now) == 0 && now.start == p->start && now.state != 'Z')
			procset_add(&keep, p);
	}
	procset_free(&helpers);
	helpers = keep;
}

/* Reaps the deferred exiting members that have become our zombies and
 * forgets those gone (and the helpers gone). The caller holds reg_lock. */
static void reap_exiting_locked(void)
{
	forget_gone_helpers_locked();
	if (!exiting.n)
		return;
	pid_t self = getpid();
	struct agsbx_procset keep = { 0 };
	for (size_t i = 0; i < exiting.n; i++) {
		struct agsbx_proc now, *p = &exiting.v[i];
		if (agsbx_proc_stat(p->pid, &now) < 0 || now.start != p->start)
			continue;
		if (now.state == 'Z' && now.ppid == self && waitpid(p->pid, NULL, WNOHANG) == p->pid)
			continue;
		procset_add(&keep, p);
	}
	procset_free(&exiting);
	exiting = keep;
}

/* When every member still there is exiting or a zombie: zombies of ours
 * are reaped, the exiting ones go to the deferred set, and true is
 * returned. false (nothing changed) when a member is still live. */
static bool defer_exiting(struct agsbx_run_tree *t)
{
	struct agsbx_procset now = { 0 };
	struct walk w = { .t = t, .set = &now };
	pid_t self = getpid();
	pthread_mutex_lock(&reg_lock);
	walk_locked(&w, false, true);
	bool all = !w.incomplete;
	for (size_t i = 0; i < now.n && all; i++)
		all = now.v[i].state == 'Z' || (now.v[i].flags & AGSBX_PF_EXITING) || now.v[i].kind == KIND_HELPER;
	for (size_t i = 0; i < now.n && all; i++) {
		const struct agsbx_proc *p = &now.v[i];
		if (p->kind == KIND_HELPER)
			continue;
		if (p->state == 'Z' && p->ppid == self && waitpid(p->pid, NULL, WNOHANG) == p->pid)
			continue;
		procset_add(&exiting, p);
	}
	pthread_mutex_unlock(&reg_lock);
	procset_free(&now);
	procset_free(&w.snap.all);
	return all;
}

unsigned agsbx_runner_tree_kill(struct agsbx_run_tree *t, bool kill_child)
{
	struct agsbx_procset targets = { 0 };
	/* After a normal exit, members that are already on their way out
	 * (bwrap's pid-1 helper outlives the bwrap monitor by microseconds)
	 * get a short grace, so `killed` counts what really lingered. */
	if (!kill_child) {
		uint64_t until = agsbx_now_us() + EXIT_GRACE_US;
		long nap = 100;
		size_t any;
		while (live_members(t, &any) && agsbx_now_us() < until) {
			sleep_us(nap);
			if (nap < 2000)
				nap *= 2;
		}
		if (!any && !t->used_cgroup)
			return 0;   /* the exited child was the whole tree */
		/* Only exiting members and zombies are left (bwrap's pid-1
		 * tearing down its namespaces after the monitor exited): none
		 * can run again, so the run ends now and they are reaped later
		 * (a cgroup run keeps the full path: cgroup.kill and rmdir). */
		if (!t->used_cgroup && defer_exiting(t))
			return 0;
	}
	signal_walks(t, kill_child, SIGSTOP, &targets);
	if (!targets.n && !t->used_cgroup) {
		/* Nobody: the exited child was the whole tree. */
		procset_free(&targets);
		return 0;
	}
	unsigned killed = kill_targets(&targets);
	/* Belt and braces for the child's process group: safe while the
	 * child is unreaped, since its pid (the pgid) cannot be reused. */
	if (kill_child)
		kill(-t->child, SIGKILL);
	cgroup_kill(t);
	/* Anyone still appearing (a fork that completed as the stop
	 * landed) is killed on sight. */
	killed += signal_walks(t, kill_child, SIGKILL, &targets);
	reap_targets(t, &targets);
	procset_free(&targets);
	return killed;
}

/* ---- cgroup v2 leaf ---- */

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
		char path[4200];
		bool removed = false;
		if (!dry_run) {
			snprintf(path, sizeof path, "%s/%s/cgroup.kill", cg_mount, de->d_name);
			write_str(path, "1");
		}
		snprintf(path, sizeof path, "%s/%s", cg_mount, de->d_name);
		for (int i = 0; !dry_run && i < 50 && !(removed = rmdir(path) == 0); i++)
			usleep(10000);   /* killed members leave the leaf asynchronously */
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
	pthread_mutex_lock(&reg_lock);   /* other runs read it */
	t->used_cgroup = ok;
	pthread_mutex_unlock(&reg_lock);
	if (!ok)
		cgroup_remove(t);
}

static bool cgroup_populated(const struct agsbx_run_tree *t)
{
	char path[4200];
	char *buf = NULL;
	snprintf(path, sizeof path, "%s/cgroup.events", t->cgroup_dir);
	if (agsbx_read_file(path, 4096, &buf, NULL) < 0)
		return false;
	bool populated = strstr(buf, "populated 1") != NULL;
	free(buf);
	return populated;
}

static void cgroup_kill(struct agsbx_run_tree *t)
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
	struct pidvec pv = { 0 };
	parse_pids(buf, &pv);
	free(buf);
	for (size_t i = 0; i < pv.n; i++)
		if (pv.v[i] != t->child)
			kill(pv.v[i], SIGKILL);
	free(pv.v);
}

static void cgroup_remove(struct agsbx_run_tree *t)
{
	if (t->cgroup_procs_fd >= 0) {
		close(t->cgroup_procs_fd);
		t->cgroup_procs_fd = -1;
	}
	if (!t->cgroup_dir)
		return;
	pthread_mutex_lock(&reg_lock);
	t->cgroup_rel = NULL;
	pthread_mutex_unlock(&reg_lock);
	uint64_t until = agsbx_now_us() + CGROUP_DEADLINE_US;
	long nap = 200;
	/* A reaped tree leaves the cgroup empty; rmdir fails with EBUSY
	 * until the last member is gone. */
	while (t->used_cgroup && cgroup_populated(t) && agsbx_now_us() < until) {
		sleep_us(nap);
		if (nap < 20000)
			nap *= 2;
	}
	while (rmdir(t->cgroup_dir) < 0 && errno == EBUSY && agsbx_now_us() < until) {
		sleep_us(nap);
		if (nap < 20000)
			nap *= 2;
	}
	free(t->cgroup_dir);
	t->cgroup_dir = NULL;
}

/* ---- leftover-process checks ---- */

struct marker_scan {
	const char *marker;
	size_t mlen;
	pid_t self;
	struct pidvec found;
};

static int marker_visit(pid_t pid, void *ud)
{
	struct marker_scan *m = ud;
	if (pid == m->self)
		return 0;
	size_t len = 0;
	_cleanup_free_ char *buf = agsbx_proc_cmdline(pid, &len);
	if (buf && len >= m->mlen && memmem(buf, len, m->marker, m->mlen) && pidvec_add(&m->found, pid) < 0)
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
	_cleanup_free_ char *u = agsbx_status_field(status, "Uid");
	unsigned ru, eu;
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
	int kept = 0;
	for (int i = 0; i < n; i++) {
		uid_t ru, eu;
		if (descends_from(all[i], self) || (proc_uids(all[i], &ru, &eu) == 0 && ru == 0 && eu == 0))
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

/* The cheap test (argv names dir) first: it rules out nearly everyone. */
static bool is_leftover(const struct agsbx_leftover_filter *f, pid_t pid, struct agsbx_proc *p)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	_cleanup_free_ char *argv = NULL;
	size_t len = 0;
	if (agsbx_read_file(path, 4u << 20, &argv, &len) < 0 || !argv_names(argv, len, f->dir))
		return false;
	uid_t ru, eu;
	if (proc_uids(pid, &ru, &eu) < 0 || !uid_in(f, ru) || !uid_in(f, eu))
		return false;
	if (agsbx_proc_stat(pid, p) < 0 || p->state == 'Z' || p->start < f->started_after)
		return false;
	if (f->nonce && *f->nonce && memmem(argv, len, f->nonce, strlen(f->nonce)))
		return true;
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
	if (pid == ls->self || !is_leftover(ls->f, pid, &p))
		return 0;
	return procset_add(&ls->found, &p);
}

int agsbx_find_run_leftovers(const struct agsbx_leftover_filter *f, struct agsbx_leftover **out)
{
	*out = NULL;
	if (!f->dir || f->dir[0] != '/' || !f->nuids)
		return -EINVAL;
	struct leftover_scan ls = { .f = f, .self = getpid() };
	int r = agsbx_proc_each(leftover_visit, &ls);
	if (r < 0) {
		procset_free(&ls.found);
		return r;
	}
	struct agsbx_leftover *v = calloc(ls.found.n ? ls.found.n : 1, sizeof *v);
	for (size_t i = 0; v && i < ls.found.n; i++)
		v[i] = (struct agsbx_leftover){ .pid = ls.found.v[i].pid, .start = ls.found.v[i].start };
	int n = v ? (int)ls.found.n : -ENOMEM;
	procset_free(&ls.found);
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
