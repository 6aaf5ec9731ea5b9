/* Who is a run's member, walked from /proc/PID/task/TID/children (or a
 * full /proc scan where that file is missing):
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
 * left when it exits passes through us and needs the sweep's rules. */
#include "base/runner.h"
#include "base/runner-internal.h"
#include "base/cleanup.h"
#include "base/proc.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define SWEEP_ROUNDS 16         /* orphan sweeps in one walk, at most */

/* ---- children ---- */

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

static int snapshot_add(pid_t pid, void *ud)
{
	struct agsbx_snapshot *s = ud;
	struct agsbx_proc p;
	if (agsbx_proc_stat(pid, &p) == 0)
		agsbx_procset_add(&s->all, &p);
	return 0;
}

static void snapshot_take(struct agsbx_snapshot *s)
{
	s->taken = true;
	agsbx_proc_each(snapshot_add, s);
}

/* 0, or -ENOMEM when a child may be missing from out: the walk is then
 * incomplete (a member it cannot see must not pass for no member). */
static int children_of(pid_t pid, struct agsbx_snapshot *snap, struct agsbx_pidvec *out)
{
	int r = 0;
	out->n = 0;
	if (!have_children_files()) {
		if (!snap->taken)
			snapshot_take(snap);
		for (size_t i = 0; i < snap->all.n; i++)
			if (snap->all.v[i].ppid == pid && agsbx_pidvec_add(out, snap->all.v[i].pid) < 0)
				r = -ENOMEM;
		return r;
	}
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOMEM || errno == EMFILE || errno == ENFILE ? -ENOMEM : 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *buf = NULL;
		snprintf(path, sizeof path, "/proc/%d/task/%.20s/children", (int)pid, de->d_name);
		int rr = agsbx_read_file(path, 1 << 22, &buf, NULL);
		if (rr == 0 && agsbx_pidvec_parse(buf, out) < 0)
			r = -ENOMEM;
		else if (rr == -ENOMEM || rr == -EMFILE || rr == -ENFILE)
			r = -ENOMEM;
		free(buf);
	}
	closedir(d);
	return r;
}

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

/* A child of the child, met in the first complete walk that finds the
 * child running the run's program, in a session of its own and not
 * carrying the run: the wrapper left it there before its exec (the child
 * is a subreaper, so it adopted it), since the run's program had no time
 * to make such a process: what it forks runs its image, which carries the
 * run, until it execs (every program the harness runs is the payload,
 * whose only exec of another program, `caps`, stays in its session). A
 * walk that met the wrapper first knew the daemon as a helper already;
 * this closes the case where no walk fell between the daemon's start and
 * the wrapper's exec (cli-wrap-helpers failed so once in 3 fresh-clone
 * runs). */
static bool left_before_exec(const struct agsbx_run_tree *t, const struct agsbx_proc *p)
{
	return !t->child_was_run && p->ppid == t->child && p->sid != t->child && !carries_run(t, p->pid);
}

/* Once the run's, always (an earlier walk saw it below the run's
 * program: a payload's child that detaches and execs something else
 * stays the run's). The wrapper's session (the child's: the runner made
 * it a session leader) is the wrapper's own; a member that left it
 * without carrying the run is a daemon of the wrapper tool. */
static int judge(const struct agsbx_walk *w, const struct agsbx_proc *p)
{
	const struct agsbx_run_tree *t = w->t;
	if (p->state == 'Z')
		return KIND_RUN;   /* dead: only to be reaped */
	const struct agsbx_proc *was = agsbx_procset_find(&t->seen, p->pid);
	if (was && was->start == p->start && was->kind == KIND_RUN)
		return KIND_RUN;
	/* Once a helper, always, unless it carries the run itself: the child
	 * is a subreaper, so a daemon the wrapper started and left is adopted
	 * by it, and a wrapper that then execs the run's program would make
	 * its own daemon the run's by that adoption alone. */
	bool helper = was && was->start == p->start && was->kind == KIND_HELPER;
	const struct agsbx_proc *parent = agsbx_procset_find(w->set, p->ppid);
	if (!helper && parent && parent->kind == KIND_RUN)
		return left_before_exec(t, p) ? KIND_HELPER : KIND_RUN;
	if (carries_run(t, p->pid))
		return KIND_RUN;
	if (helper)
		return KIND_HELPER;
	return p->pid == t->child || p->sid == t->child ? KIND_WRAPPER : KIND_HELPER;
}

static void visit(struct agsbx_walk *w, const struct agsbx_proc *p0)
{
	struct agsbx_proc q = *p0, *p = &q;
	q.kind = w->t->spare ? judge(w, p0) : KIND_RUN;
	if (agsbx_procset_add(w->set, p) < 0)
		w->incomplete = true;   /* its children go unseen: walk again */
	/* A spared helper is walked (what it runs for the run is the run's)
	 * but never signalled; recorded by any walk that meets it (a look
	 * may be the last walk), so the run's end hands it on (helpers). */
	if (q.kind == KIND_HELPER)
		agsbx_procset_add(&w->t->seen, p);
	if (!w->targets || q.kind == KIND_HELPER || agsbx_procset_has(w->targets, p->pid, p->start))
		return;
	if (agsbx_procset_add(w->targets, p) < 0)
		w->incomplete = true;   /* signalled now, but not kept: walk again */
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

static void visit_pid(struct agsbx_walk *w, pid_t pid)
{
	struct agsbx_proc p;
	if (!agsbx_procset_find(w->set, pid) && agsbx_proc_stat(pid, &p) == 0)
		visit(w, &p);
}

/* Visits our children that are orphans of this run (see the top of the
 * file). Returns how many were new to this walk. */
static size_t sweep_orphans_locked(struct agsbx_walk *w, pid_t our_sid, struct agsbx_pidvec *kids)
{
	struct agsbx_run_tree *t = w->t;
	struct agsbx_proc p;
	size_t fresh = 0;
	if (children_of(w->self, &w->snap, kids) < 0)
		w->incomplete = true;
	for (size_t i = 0; i < kids->n; i++) {
		pid_t pid = kids->v[i];
		if (agsbx_runner_registered_locked(pid) || agsbx_procset_find(w->set, pid))
			continue;
		if (agsbx_proc_stat(pid, &p) < 0 || p.sid == our_sid)
			continue;
		if (p.start < t->child_start || agsbx_runner_elsewhere_locked(t, &p)) {
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
static void visit_known_locked(struct agsbx_walk *w, bool include_child, struct agsbx_pidvec *kids)
{
	struct agsbx_run_tree *t = w->t;
	struct agsbx_proc p;
	for (size_t i = 0; i < t->seen.n; i++) {
		const struct agsbx_proc *s = &t->seen.v[i];
		if (s->pid == t->child || agsbx_procset_find(w->set, s->pid))
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
		if (agsbx_pidvec_parse(buf, kids) < 0)
			w->incomplete = true;
		for (size_t i = 0; i < kids->n; i++)
			if (kids->v[i] != t->child || include_child)
				visit_pid(w, kids->v[i]);
	}
	free(buf);
}

/* After a complete walk of a spare run: whether it found the child
 * running the run's program (judge's left_before_exec). */
static void note_child_was_run(struct agsbx_walk *w, bool include_child)
{
	struct agsbx_run_tree *t = w->t;
	const struct agsbx_proc *c = include_child ? agsbx_procset_find(w->set, t->child) : NULL;
	if (t->spare && !w->incomplete && c && c->kind == KIND_RUN)
		t->child_was_run = true;
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
void agsbx_runner_walk_locked(struct agsbx_walk *w, bool include_child, bool sweep_orphans)
{
	struct agsbx_run_tree *t = w->t;
	struct agsbx_pidvec kids = { 0 };
	struct agsbx_proc p;
	pid_t our_sid = getsid(0);
	w->self = getpid();
	w->incomplete = false;
	if (t->spare)
		note_child_argv(t);
	w->snap.taken = false;
	agsbx_procset_clear(&w->snap.all);
	agsbx_procset_clear(w->set);

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
			if (children_of(w->set->v[expanded].pid, &w->snap, &kids) < 0)
				w->incomplete = true;
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
	note_child_was_run(w, include_child);
}

void agsbx_runner_walk_free(struct agsbx_walk *w)
{
	agsbx_procset_free(&w->snap.all);
}
