/* The bounded process runner every provider uses.
 *
 * Contract (Agently's bounded-process carrier, hardened: docs/design.md):
 *  - argv only, never a shell; stdin is /dev/null; the child gets its own
 *    session and process group; every other fd is closed in the child.
 *  - stdout and stderr are drained to EOF concurrently; at most
 *    max_output_bytes of each are kept (never more is buffered), the rest is
 *    read and discarded and the *_truncated flag is set.
 *  - the harness process is a child subreaper (agsbx_runner_init), so
 *    descendants that detach (double fork + setsid) are re-parented to us;
 *    the runner tracks every descendant of the child while it runs and, when
 *    the run ends for any reason (exit, timeout, cancel), SIGKILLs the whole
 *    tree including detached members, and reaps what was re-parented to us.
 *    Detached work is not part of the one-shot contract (spare_helpers
 *    below narrows this to what the run itself started).
 *  - PR_SET_PDEATHSIG(SIGKILL) in the child; pidfds where the kernel has them.
 *  - optional cgroup v2 leaf (when the caller may create one) for airtight
 *    tracking and cgroup.kill; never required.
 *  - timeout: the tree is killed, timed_out is set, status is 124.
 *  - cancel: when cancel_fd becomes readable (an eventfd/pipe written from
 *    another thread or a signal handler) the same cleanup runs, cancelled is
 *    set, status is 130.
 *
 * Thread-safe: independent runs may proceed concurrently from several
 * threads. Functions return 0 or -errno (library code never exits). */
#ifndef AGSBX_BASE_RUNNER_H
#define AGSBX_BASE_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AGSBX_RUN_DEFAULT_MAX_OUTPUT 20000
#define AGSBX_RUN_STATUS_TIMEOUT 124
#define AGSBX_RUN_STATUS_CANCELLED 130

struct agsbx_run_opts {
	const char *const *argv;  /* argv[0]: absolute path, or looked up in PATH of envp (or ours) */
	const char *const *envp;  /* NULL: inherit the harness environment */
	const char *cwd;          /* NULL: inherit; entered as run_uid when dropping */
	size_t max_output_bytes;  /* per stream; 0: AGSBX_RUN_DEFAULT_MAX_OUTPUT */
	int64_t timeout_ms;       /* <= 0: no timeout */
	int cancel_fd;            /* -1: none; readable => cancel */
	bool drop_privileges;     /* setgroups/setresgid/setresuid to run_uid/run_gid before exec */
	uid_t run_uid;
	gid_t run_gid;
	bool use_cgroup;          /* try a cgroup v2 leaf; silently unused when not permitted */
	/* The child joins a new, empty session keyring (as run_uid when
	 * dropping) before exec: what it runs then cannot search or possess
	 * the keys of the session keyring it would otherwise inherit. */
	bool new_session_keyring;
	int fd3;                  /* > 2: handed to the program as its fd 3 (bwrap --seccomp 3); else none */
	/* A wrapper tool's own daemons (rootless podman's pause process,
	 * conmon) outlive its run by design, and killing them breaks the
	 * tool's next run. With spare_helpers the end of the run kills only
	 * what the run started: a member is the run's when it executes
	 * own_exe (the same file, not the name), its argv carries own_word,
	 * or its parent is the run's; otherwise the child and members in the
	 * child's session (the wrapper itself) are killed, and a member that
	 * left that session (setsid: a daemon) is spared, with everything
	 * below it that is not the run's. Such a run has no cgroup leaf (the
	 * helpers it spares would be in it). */
	bool spare_helpers;
	const char *own_exe;      /* NULL: none */
	const char *own_word;     /* NULL or "": none */
};

struct agsbx_run_result {
	int status;               /* exit code; 128+signal; 124 timeout; 130 cancelled */
	bool exited;              /* normal exit: exit_code valid */
	int exit_code;
	int term_signal;          /* 0 unless killed by a signal */
	bool timed_out;
	bool cancelled;
	int spawn_errno;          /* != 0: exec failed (e.g. ENOENT); nothing ran */
	uint64_t duration_us;
	char *out;                /* NUL-terminated, out_len bytes (may contain NULs) */
	size_t out_len;
	uint64_t out_total;       /* bytes the child wrote, kept or not */
	bool out_truncated;
	char *err;
	size_t err_len;
	uint64_t err_total;
	bool err_truncated;
	unsigned killed;          /* processes the cleanup had to SIGKILL (tree + detached) */
	unsigned spared;          /* spare_helpers: the wrapper tool's helpers left running */
	bool used_cgroup;
};

/* Once per process, before threads: become a child subreaper. Idempotent. */
int agsbx_runner_init(void);

/* Runs to completion. Returns 0 when the process was started and finished
 * (whatever its status), -errno when it could not be run (spawn_errno set
 * for exec failures). result must be cleared with agsbx_run_result_clear.
 * The child is a child subreaper (PR_SET_CHILD_SUBREAPER, kept across
 * exec): orphans of its descendants are re-parented to it while it lives. */
int agsbx_run(const struct agsbx_run_opts *opts, struct agsbx_run_result *result);
void agsbx_run_result_clear(struct agsbx_run_result *result);

/* Children this process forks outside the runner (fork/posix_spawn
 * elsewhere) look, to a run's cleanup, like detached descendants that were
 * re-parented to the subreaper, unless they share our session or started
 * before that run. Code that forks such a child into a new session while
 * runs may be in progress forks it with agsbx_runner_fork_registered (and
 * unregisters it once reaped) so no cleanup ever kills it. */
void agsbx_runner_unregister_child(pid_t pid);
/* fork() whose child is registered before any cleanup can see it (the
 * registry's lock is held across the fork, so there is no moment when the
 * child exists unregistered). In the child: 0, and only exec or _exit may
 * follow. Unregister once reaped. */
pid_t agsbx_runner_fork_registered(void);

/* Process-wide abort, for an interrupted harness (SIGINT/SIGTERM/SIGHUP):
 * once fd is readable, every run in progress ends as if cancelled and
 * every later agsbx_run refuses with -ECANCELED before spawning. The fd is
 * polled, never read, so it stays readable (a pipe a signal handler wrote
 * to). -1 clears it. Set it before threads start. */
void agsbx_runner_set_abort_fd(int fd);
/* The fd given above, or -1. */
int agsbx_runner_abort_fd(void);
/* True once the abort fd is readable. */
bool agsbx_runner_aborted(void);

/* cgroup v2 leaves of harnesses that are gone: kills what is still in
 * them and removes them (unless dry_run); fn (may be NULL) sees each.
 * Returns how many were found. */
int agsbx_runner_cleanup_stale_cgroups(bool dry_run, void (*fn)(void *ud, const char *path, bool removed),
				       void *ud);

/* PIDs of live processes whose /proc/PID/cmdline contains marker
 * (excluding the caller); used by leftover-process checks. Returns count
 * (>= 0) or -errno; *pids (may be NULL) is malloc'd. */
int agsbx_find_processes_with_marker(const char *marker, pid_t **pids);

/* The same, of this process's tree only: its descendants (the runner
 * makes it a subreaper, so detached members stay below it), and root's
 * processes anywhere (only root, or a root daemon a provider drove, can
 * start those). A copy of the marker in another user's process, or in one
 * of our own uid outside the tree, counts for nothing. */
int agsbx_find_tree_processes_with_marker(const char *marker, pid_t **pids);

/* What makes a live process a dead run's leftover (cleanup): its real and
 * effective uid are among uids; it started at or after started_after (the
 * dead owner's start); an argv element is dir or a path below it (a path
 * boundary, so another TMPDIR's look-alike never matches); and it carries
 * the run's nonce in its argv (a lifecycle marker) or executes a program
 * from below dir (a staged helper). */
struct agsbx_leftover_filter {
	const char *dir;
	const char *nonce;            /* NULL or "": none recorded */
	const uid_t *uids;
	size_t nuids;
	unsigned long long started_after;
};
struct agsbx_leftover {
	pid_t pid;
	unsigned long long start;     /* with pid, its identity */
};
/* Count (>= 0) or -errno; *out malloc'd. */
int agsbx_find_run_leftovers(const struct agsbx_leftover_filter *f, struct agsbx_leftover **out);
/* SIGKILLs l through a pidfd if it is still that process: 0 (also when it
 * is already gone) or -errno. */
int agsbx_kill_leftover(const struct agsbx_leftover *l);

/* A long-lived child with pipes (an external provider's adapter): spawned,
 * dropped, placed in its own session and tracked exactly like a run, but
 * the caller talks to it over fds[0] (its stdin, ours to write) and reads
 * fds[1]/fds[2] (its stdout/stderr, non-blocking), and decides when it
 * ends. opts->timeout_ms, cancel_fd and max_output_bytes are ignored. */
struct agsbx_session;
int agsbx_session_start(const struct agsbx_run_opts *opts, struct agsbx_session **out, int fds[3]);
pid_t agsbx_session_pid(const struct agsbx_session *s);
/* Walks the child's tree and records its members (call periodically, so a
 * member that detaches is still known when the session ends). Not
 * concurrently with agsbx_session_end. */
void agsbx_session_record(struct agsbx_session *s);
/* The child has exited (it stays unreaped until agsbx_session_end). */
bool agsbx_session_exited(struct agsbx_session *s);
/* SIGKILLs the whole tree (the child too when it still runs, then
 * *child_killed), detached members included, and reaps the child.
 * Returns how many processes had to be killed. Idempotent. */
unsigned agsbx_session_end(struct agsbx_session *s, bool *child_killed, int *wstatus);
void agsbx_session_free(struct agsbx_session *s);

#endif
