/* A run's process tree over its life: begin, record its members (the
 * claims other runs' orphan sweeps respect), and at its end stop, kill
 * and reap every member (runner-walk.c says who is one).
 *
 * Waiting is only ever for specific pids: waitpid(-1) would steal children
 * of other threads and other runs. */
#include "base/runner.h"
#include "base/runner-internal.h"
#include "base/proc.h"
#include "base/util.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#define SIGNAL_WALKS_US 3000000 /* walk until nothing new appears, at most */
#define EXIT_GRACE_US 10000     /* leftovers after a normal exit may finish */
#define REAP_DEADLINE_US 2000000

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
	agsbx_runner_join(t);
}

void agsbx_runner_tree_record(struct agsbx_run_tree *t)
{
	struct agsbx_procset now = { 0 };
	struct agsbx_walk w = { .t = t, .set = &now };
	agsbx_runner_lock();
	/* Orphans re-parented to us are left to the cleanup sweep: while
	 * several runs are live, an orphan nobody saw attached cannot be
	 * attributed, and a claim here would shield it from the run that
	 * really owns it. */
	agsbx_runner_walk_locked(&w, true, false);
	/* now already holds every earlier record that is still alive. */
	agsbx_procset_free(&t->seen);
	t->seen = now;
	agsbx_runner_unlock();
	agsbx_runner_walk_free(&w);
}

unsigned agsbx_runner_tree_spared(struct agsbx_run_tree *t)
{
	struct agsbx_proc now;
	unsigned n = 0;
	agsbx_runner_lock();
	for (size_t i = 0; t->spare && i < t->seen.n; i++) {
		const struct agsbx_proc *p = &t->seen.v[i];
		n += p->kind == KIND_HELPER && agsbx_proc_stat(p->pid, &now) == 0 && now.start == p->start &&
		     now.state != 'Z';
	}
	agsbx_runner_unlock();
	return n;
}

void agsbx_runner_tree_end(struct agsbx_run_tree *t)
{
	agsbx_runner_leave(t);
	free(t->child_argv);
	t->child_argv = NULL;
	agsbx_runner_cgroup_remove(t);
}

/* Walks with sig until a walk finds no member, live or dead, that it had
 * not seen yet (bounded in time). With SIGSTOP this converges even for a fork
 * loop: a stopped process cannot fork. Members are recorded in seen,
 * which keeps other runs' sweeps off them. Returns SIGKILLs delivered. */
static unsigned signal_walks(struct agsbx_run_tree *t, bool kill_child, int sig,
			     struct agsbx_procset *targets)
{
	struct agsbx_procset now = { 0 };
	struct agsbx_walk w = { .t = t, .set = &now, .targets = targets, .sig = sig };
	uint64_t until = agsbx_now_us() + SIGNAL_WALKS_US;
	do {
		w.fresh = 0;
		agsbx_runner_lock();
		agsbx_runner_walk_locked(&w, kill_child, true);
		for (size_t i = 0; i < now.n; i++)
			agsbx_procset_add(&t->seen, &now.v[i]);
		agsbx_runner_unlock();
	} while ((w.fresh || w.incomplete) && agsbx_now_us() < until);
	agsbx_procset_free(&now);
	agsbx_runner_walk_free(&w);
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
		agsbx_runner_nap(&nap, 20000);
	}
}

/* Live members right now, by a walk that only looks; *any also counts
 * zombies. */
static size_t live_members(struct agsbx_run_tree *t, size_t *any)
{
	struct agsbx_procset now = { 0 };
	struct agsbx_walk w = { .t = t, .set = &now };
	agsbx_runner_lock();
	agsbx_runner_walk_locked(&w, false, true);
	agsbx_runner_unlock();
	size_t live = w.incomplete;   /* still appearing, or unseen: somebody lives */
	*any = w.incomplete;
	for (size_t i = 0; i < now.n; i++) {
		bool spared = now.v[i].kind == KIND_HELPER;
		live += now.v[i].state != 'Z' && !(now.v[i].flags & AGSBX_PF_EXITING) && !spared;
		*any += !spared;
	}
	agsbx_procset_free(&now);
	agsbx_runner_walk_free(&w);
	return live;
}

/* When every member still there is exiting or a zombie: zombies of ours
 * are reaped, the exiting ones go to the deferred set, and true is
 * returned. false (nothing changed) when a member is still live. */
static bool defer_exiting(struct agsbx_run_tree *t)
{
	struct agsbx_procset now = { 0 };
	struct agsbx_walk w = { .t = t, .set = &now };
	pid_t self = getpid();
	agsbx_runner_lock();
	agsbx_runner_walk_locked(&w, false, true);
	bool all = !w.incomplete;
	for (size_t i = 0; i < now.n && all; i++)
		all = now.v[i].state == 'Z' || (now.v[i].flags & AGSBX_PF_EXITING) || now.v[i].kind == KIND_HELPER;
	for (size_t i = 0; i < now.n && all; i++) {
		const struct agsbx_proc *p = &now.v[i];
		if (p->kind == KIND_HELPER)
			continue;
		if (p->state == 'Z' && p->ppid == self && waitpid(p->pid, NULL, WNOHANG) == p->pid)
			continue;
		agsbx_runner_defer_locked(p);
	}
	agsbx_runner_unlock();
	agsbx_procset_free(&now);
	agsbx_runner_walk_free(&w);
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
		while (live_members(t, &any) && agsbx_now_us() < until)
			agsbx_runner_nap(&nap, 2000);
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
		agsbx_procset_free(&targets);
		return 0;
	}
	unsigned killed = kill_targets(&targets);
	/* Belt and braces for the child's process group: safe while the
	 * child is unreaped, since its pid (the pgid) cannot be reused. */
	if (kill_child)
		kill(-t->child, SIGKILL);
	agsbx_runner_cgroup_kill(t);
	/* Anyone still appearing (a fork that completed as the stop
	 * landed) is killed on sight. */
	killed += signal_walks(t, kill_child, SIGKILL, &targets);
	reap_targets(t, &targets);
	agsbx_procset_free(&targets);
	return killed;
}
