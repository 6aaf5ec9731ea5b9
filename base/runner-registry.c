/* The runner's registry, behind one lock: the children runner code
 * spawned or registered (never another run's orphans), the active runs
 * and what each has recorded, and what ended runs left behind (members
 * already exiting, helpers they spared). Every other runner file reaches
 * these through the functions here.
 *
 * Waiting is only ever for specific pids: waitpid(-1) would steal children
 * of other threads and other runs. */
#include "base/runner.h"
#include "base/runner-internal.h"
#include "base/proc.h"
#include "base/util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct agsbx_pidvec registered;           /* reg_lock */
static struct agsbx_run_tree *active_runs;       /* reg_lock */
/* Members of ended runs that were already exiting (PF_EXITING) when their
 * run ended: dead in every way that matters, reaped once they are zombies
 * (by later runs and tree ends) instead of being waited for. */
static struct agsbx_procset exiting;             /* reg_lock */
/* Helpers spared by ended runs (spare_helpers): no later sweep takes
 * them for its own orphans. */
static struct agsbx_procset helpers;             /* reg_lock */

bool agsbx_runner_registered_locked(pid_t pid)
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
	if (agsbx_pidvec_add(&registered, 0) < 0) {
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
		if (t != self && agsbx_procset_has(&t->seen, pid, start))
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

bool agsbx_runner_elsewhere_locked(const struct agsbx_run_tree *self, const struct agsbx_proc *p)
{
	return agsbx_procset_has(&exiting, p->pid, p->start) || agsbx_procset_has(&helpers, p->pid, p->start) ||
	       claimed_by_other_locked(self, p->pid, p->start) || in_other_cgroup_locked(self, p->pid);
}

void agsbx_runner_defer_locked(const struct agsbx_proc *p)
{
	agsbx_procset_add(&exiting, p);
}

void agsbx_runner_lock(void)
{
	pthread_mutex_lock(&reg_lock);
}

void agsbx_runner_unlock(void)
{
	pthread_mutex_unlock(&reg_lock);
}

/* ---- runs joining and leaving ---- */

/* The helpers the run spared stay off every later sweep; forgotten once
 * gone (reap_exiting_locked). The caller holds reg_lock. */
static void keep_helpers_locked(const struct agsbx_run_tree *t)
{
	struct agsbx_proc now;
	for (size_t i = 0; t->spare && i < t->seen.n; i++) {
		const struct agsbx_proc *p = &t->seen.v[i];
		if (p->kind == KIND_HELPER && agsbx_proc_stat(p->pid, &now) == 0 && now.start == p->start)
			agsbx_procset_add(&helpers, p);
	}
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
			agsbx_procset_add(&keep, p);
	}
	agsbx_procset_free(&helpers);
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
		agsbx_procset_add(&keep, p);
	}
	agsbx_procset_free(&exiting);
	exiting = keep;
}

void agsbx_runner_join(struct agsbx_run_tree *t)
{
	pthread_mutex_lock(&reg_lock);
	reap_exiting_locked();
	t->next = active_runs;
	active_runs = t;
	t->active = true;
	pthread_mutex_unlock(&reg_lock);
}

void agsbx_runner_leave(struct agsbx_run_tree *t)
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
	agsbx_procset_free(&t->seen);
	pthread_mutex_unlock(&reg_lock);
}
