/* Run ownership: what a harness creates outside itself (its work dir, the
 * helpers it staged, containers, cgroup leaves) records which process owns
 * it, as "<pid> <start time> <pid namespace inode>" (the start time in clock
 * ticks since boot, so a reused pid is never taken for the owner; a token
 * from another pid namespace is never judged). A later run can then tell the
 * leftovers of a harness that died (SIGKILL, a CI timeout) from the
 * resources of a run that is still alive, and remove only the former. */
#ifndef AGSBX_BASE_RUNDIR_H
#define AGSBX_BASE_RUNDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define AGSBX_RUNDIR_OWNER_FILE ".agsbx-owner"
/* Where a claim is written before it is renamed into place. */
#define AGSBX_RUNDIR_OWNER_STAGED ".agsbx-owner.claim"
/* Seconds after which an empty, unclaimed run directory is a dead run's. */
#define AGSBX_RUNDIR_CLAIM_GRACE_S 60

/* "<pid> <start> <pidns>" of this process into buf (>= 64 bytes). */
int agsbx_owner_token(char *buf, size_t size);
/* True when token names a process that still exists with that start
 * time; a malformed token is alive (never remove what cannot be judged). */
bool agsbx_owner_token_alive(const char *token);

/* Writes dir/AGSBX_RUNDIR_OWNER_FILE naming this process. */
int agsbx_rundir_claim(const char *dir);
/* 1: the owner is alive; 0: the owner is gone (or an empty directory
 * nobody claimed for AGSBX_RUNDIR_CLAIM_GRACE_S); -ENOENT: no readable owner
 * record (an older or foreign directory: leave it alone). A claim staged
 * but not yet renamed (its writer killed in between) counts as the record. */
int agsbx_rundir_owner_alive(const char *dir);

/* Removes dir and everything below it without following any symlink
 * (fd-relative, O_NOFOLLOW: a sandbox may have planted links and swapped
 * directories). 0 or the first -errno. */
int agsbx_rm_tree(const char *dir);

#endif
