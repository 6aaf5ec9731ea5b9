/* Internals shared by runner.c (spawn + drain) and runner-procscan.c
 * (process-tree tracking, kill, reap, cgroup). Not an API: only the
 * runner's own files include this. */
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
};

/* agsbx_run's first step in both runners: res cleared, opts checked
 * (-EINVAL), the runner initialised, -ECANCELED once aborted. */
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
