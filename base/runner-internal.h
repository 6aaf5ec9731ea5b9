/* Internals shared by the Linux runner's files, one job each: runner.c
 * (spawn + drain), runner-sets.c (pid sets), runner-registry.c (runner
 * children and active runs, behind one lock), runner-walk.c (who is a
 * run's member), runner-tree.c (a run's tree: record, stop, kill, reap),
 * runner-cgroup.c (the cgroup v2 leaf) and runner-leftovers.c (marker
 * and leftover scans). Not an API: only the runner's own files include
 * this. */
#ifndef AGSBX_BASE_RUNNER_INTERNAL_H
#define AGSBX_BASE_RUNNER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/proc.h"

struct agsbx_run_result;

/* A set keyed by pid (one entry per pid; a re-add with another start
 * time replaces it), hashed: a fork loop's trail can be thousands long. */
struct agsbx_procset {
	struct agsbx_proc *v;
	size_t n, cap;
	size_t *idx;              /* open addressing: index + 1, 0 = empty */
	size_t idx_cap;           /* power of two, > 2n */
};

/* A plain growing list of pids. */
struct agsbx_pidvec {
	pid_t *v;
	size_t n, cap;
};

/* runner-sets.c. add: 0 or -ENOMEM; parse appends the positive numbers
 * of a whitespace-separated list (a children or cgroup.procs file). */
int agsbx_pidvec_add(struct agsbx_pidvec *pv, pid_t pid);
int agsbx_pidvec_parse(const char *s, struct agsbx_pidvec *out);
struct agsbx_proc *agsbx_procset_find(const struct agsbx_procset *s, pid_t pid);
int agsbx_procset_add(struct agsbx_procset *s, const struct agsbx_proc *p);
/* The entry for pid has this start time (is that very process). */
bool agsbx_procset_has(const struct agsbx_procset *s, pid_t pid, unsigned long long start);
void agsbx_procset_clear(struct agsbx_procset *s);
void agsbx_procset_free(struct agsbx_procset *s);

struct agsbx_run_tree {
	pid_t child;
	unsigned long long child_start;
	uint64_t start_us;                /* monotonic, just before fork */
	struct agsbx_procset seen;        /* recorded members; registry lock */
	struct agsbx_run_tree *next;      /* active runs; registry lock */
	bool active;
	char *cgroup_dir;
	const char *cgroup_rel;           /* cgroup_dir below the mount, "/..." */
	int cgroup_procs_fd;
	bool used_cgroup;
	/* agsbx_run_opts.spare_helpers: what tells the run's own members
	 * from the wrapper tool's helpers (agsbx_runner_tree_spare). */
	bool spare;
	bool own_exe_known;
	dev_t own_dev;
	ino_t own_ino;
	const char *own_word;             /* the caller's, for the run */
	char *child_argv;                 /* the child's, as last read */
	size_t child_argv_len;
	/* A complete walk before the current one found the child running the
	 * run's program (spare runs; runner-walk.c, judge). */
	bool child_was_run;
};

/* ---- runner-registry.c: the registry lock and what it guards ---- */

void agsbx_runner_lock(void);
void agsbx_runner_unlock(void);
/* A runner child (spawned or registered): never another run's orphan. */
bool agsbx_runner_registered_locked(pid_t pid);
/* p is not self's to take as an orphan: deferred as exiting, a helper
 * an ended run spared, recorded by another active run, or in another
 * run's cgroup leaf. */
bool agsbx_runner_elsewhere_locked(const struct agsbx_run_tree *self, const struct agsbx_proc *p);
/* An ended run's member that was already exiting: reaped later. */
void agsbx_runner_defer_locked(const struct agsbx_proc *p);
/* t joins the active runs (the deferred zombies reaped first). */
void agsbx_runner_join(struct agsbx_run_tree *t);
/* t leaves them: its spared helpers handed on, its records freed. */
void agsbx_runner_leave(struct agsbx_run_tree *t);

/* ---- runner-walk.c: who is a run's member ---- */

/* A walk's verdict on a member: the run's (killed at its end, and so is
 * everything below it), the wrapper's own (killed), or a helper the
 * wrapper tool daemonised for itself (spared). */
enum { KIND_RUN = 1, KIND_WRAPPER, KIND_HELPER };

/* A full /proc scan, used when the kernel lacks the children files. */
struct agsbx_snapshot {
	bool taken;
	struct agsbx_procset all;
};

/* One walk over a run's members. With targets, each member not yet a
 * target becomes one on discovery and is signalled right then: a member
 * of a fork loop lives for microseconds, so a signal sent only after the
 * whole walk would mostly hit the dead. */
struct agsbx_walk {
	struct agsbx_run_tree *t;
	struct agsbx_procset *set;        /* this walk's members */
	struct agsbx_procset *targets;    /* NULL: just look */
	int sig;                          /* SIGSTOP or SIGKILL */
	unsigned fresh;                   /* members new to targets */
	unsigned killed;                  /* SIGKILLs delivered */
	pid_t self;
	bool incomplete;                  /* members were still appearing, or one could not be kept (ENOMEM) */
	struct agsbx_snapshot snap;
};

/* Every current member of w->t into w->set, zombies included (they need
 * reaping); the caller holds the registry lock. include_child: the child
 * is alive and a root; sweep_orphans: our re-parented children that can
 * be nobody else's are members too. */
void agsbx_runner_walk_locked(struct agsbx_walk *w, bool include_child, bool sweep_orphans);
/* What the walks kept between them (the snapshot). */
void agsbx_runner_walk_free(struct agsbx_walk *w);

/* ---- runner-cgroup.c (prepare and joined below) ---- */

/* cgroup.kill (or SIGKILL to each listed member on older kernels). */
void agsbx_runner_cgroup_kill(struct agsbx_run_tree *t);
/* Waits (bounded) for the leaf to empty, then removes it. */
void agsbx_runner_cgroup_remove(struct agsbx_run_tree *t);

/* Sleeps *us microseconds, then doubles *us while below max_us: the
 * back-off of every bounded wait for the kernel. (runner-common.c) */
void agsbx_runner_nap(long *us, long max_us);

/* agsbx_run's first step in both runners: res cleared, opts checked
 * (-EINVAL), -ECANCELED once aborted; the caller then initialises the
 * runner (agsbx_runner_init), so this file calls none back. */
/* How a run's wait ended. */
enum run_end { END_EXITED, END_TIMEOUT, END_CANCEL };

/* res's exit fields from a wait status, then timeout or cancel on top. */
void agsbx_runner_fill_status(struct agsbx_run_result *res, int st, enum run_end end);

struct agsbx_run_opts;
struct agsbx_run_result;
int agsbx_runner_run_begin(const struct agsbx_run_opts *opts, struct agsbx_run_result *res);

/* clone(fn, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, arg) with the
 * new pid entered in the registry of runner children before any other
 * run can look at our children (the lock is held until the child has
 * exec'd). Returns the pid, or -1 with errno. */
pid_t agsbx_runner_spawn_registered(int (*fn)(void *), void *stack_top, void *arg);

void agsbx_runner_tree_init(struct agsbx_run_tree *t);
/* The child exists: remember its identity and join the active runs. */
void agsbx_runner_tree_begin(struct agsbx_run_tree *t, pid_t child);
/* Before begin: at its end the run spares the wrapper tool's helpers
 * (agsbx_run_opts.spare_helpers); own_exe and own_word may be NULL. */
void agsbx_runner_tree_spare(struct agsbx_run_tree *t, const char *own_exe, const char *own_word);
/* Walks the tree now and records every member (the claims other runs'
 * orphan sweeps respect). */
void agsbx_runner_tree_record(struct agsbx_run_tree *t);
/* Stops, then SIGKILLs every member (the child itself only when
 * kill_child), reaps members re-parented to us, removes the cgroup.
 * Returns how many processes were SIGKILLed. The child is not reaped. */
unsigned agsbx_runner_tree_kill(struct agsbx_run_tree *t, bool kill_child);
/* After the kill: the helpers it spared that still run. */
unsigned agsbx_runner_tree_spared(struct agsbx_run_tree *t);
/* Leaves the active runs and frees everything. Idempotent. */
void agsbx_runner_tree_end(struct agsbx_run_tree *t);

/* cgroup v2 leaf: prepare creates a fresh leaf and opens its
 * cgroup.procs (silently nothing when not wanted or not permitted); the
 * child writes itself into it before exec and joined reports whether
 * that worked (the leaf is removed when not). */
void agsbx_runner_cgroup_prepare(struct agsbx_run_tree *t, bool want);
void agsbx_runner_cgroup_joined(struct agsbx_run_tree *t, bool ok);

#endif
