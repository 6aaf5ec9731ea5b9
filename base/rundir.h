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
 * record (an older or foreign directory: leave it alone); -EPERM: a record
 * not safely owned (see below: leave it alone). A claim staged but not yet
 * renamed (its writer killed in between) counts as the record. */
int agsbx_rundir_owner_alive(const char *dir);

/* ---- the owner record (base/rundir-record.c) ----
 * After the token line the record holds "key value" lines: "nonce HEX"
 * (this process's run nonce, agsbx_run_nonce), "run_uid N" (the --run-as
 * user whose processes the run started) and "canary PATH" (a home canary
 * the run is about to create, appended before it exists). Its owner is
 * the file's owner, which must also own the directory; neither may be
 * group or world writable. Everything the record authorises is confined
 * to that uid (and, in a root-owned record only, run_uid): a record any
 * user can forge then only ever touches that user's own processes and
 * files. */
#define AGSBX_RUNDIR_MAX_CANARIES 64

struct agsbx_owner_record {
	char token[64];
	unsigned long long start;     /* the owner's start time (clock ticks) */
	uid_t uid;                    /* the record's and the directory's owner */
	bool has_run_uid;
	uid_t run_uid;
	char nonce[33];               /* "" when none was recorded */
	char *canaries[AGSBX_RUNDIR_MAX_CANARIES];
	size_t ncanaries;
};

/* 0 and *rec filled (clear it after) from dir's record, or the staged
 * claim when the record is missing or unreadable; -EPERM the directory or
 * record is not safely owned (see above); -ENOENT no well-formed record. */
int agsbx_rundir_read_record(const char *dir, struct agsbx_owner_record *rec);
void agsbx_owner_record_clear(struct agsbx_owner_record *rec);
/* Whether the record's run may have run processes or created files as uid. */
bool agsbx_owner_record_allows(const struct agsbx_owner_record *rec, uid_t uid);

/* This process's run nonce: 32 random hex digits, made once and inherited
 * by forked workers. Recorded in every claim; lifecycle markers carry it. */
const char *agsbx_run_nonce(void);
/* Claims made from now on record uid as the run's --run-as user. */
void agsbx_rundir_set_run_uid(uid_t uid);
/* The record canaries are noted in (collect's work dir); NULL: none. */
void agsbx_rundir_set_primary(const char *dir);
/* Appends "canary PATH" to the primary record (before PATH is created):
 * 0, also when there is no primary record; -errno. */
int agsbx_rundir_note_canary(const char *path);
/* Removes a canary directory a dead run's record lists (its files, then
 * the directory), fd-relative without following a symlink, and only when
 * it is named like one and everything in it belongs to a uid the record
 * allows. 1 removed (dry_run: would be), 0 nothing there, -errno. */
int agsbx_rundir_remove_canary(const char *path, const struct agsbx_owner_record *rec, bool dry_run);

/* The record's lines after the token, as a claim writes them (internal). */
int agsbx_rundir_record_tail(char *buf, size_t size);

/* Removes dir and everything below it without following any symlink
 * (fd-relative, O_NOFOLLOW: a sandbox may have planted links and swapped
 * directories). 0 or the first -errno. */
int agsbx_rm_tree(const char *dir);

#endif
