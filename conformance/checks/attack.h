/* Private to the check topics (conformance/checks/TOPIC.c): the helpers every
 * attack shares (attack-helpers.c) and each topic's rows (catalogue.c
 * assembles them into cf_checks). */
#ifndef AGSBX_CONFORMANCE_CHECKS_ATTACK_H
#define AGSBX_CONFORMANCE_CHECKS_ATTACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "conformance/internal.h"

/* A payload op's argv: ARGS("read", path). */
#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* 32 random hex digits (malloc'd), NULL on out-of-memory. */
char *cf_nonce(void);
/* REL under the host path of a grant root (malloc'd). */
char *cf_host_path(const struct check_env *env, enum agsbx_root_role r, const char *rel);
/* A failing control (or a host that cannot run the check) shows nothing
 * about the mechanism: skipped as "inconclusive on this host: ...". A
 * leak seen despite it still fails the check (a secret in the output is
 * a leak whatever the control did): callers judge that first. FMT is a
 * string literal. */
#define cf_inconclusive(out, fmt, ...) cf_skip((out), "inconclusive on this host: " fmt, __VA_ARGS__)
/* Skipped: the control failed outside too, nothing to compare. */
void cf_control_skip(struct check_out *out, const char *what, const json_t *ctl);
/* "provider refused to execute" when SR < 0, else no observation of ATTACK. */
void cf_refused_or_unobserved(struct check_out *out, const char *attack, int sr);
/* The user the sandbox runs as. */
uid_t cf_run_uid(const struct check_env *env);
gid_t cf_run_gid(const struct check_env *env);
/* The sandbox user's real home (the password database's, where ~/.ssh
 * lives, even when $HOME points elsewhere); NULL when unknown. */
const char *cf_home_of(const struct check_env *env);
const json_t *cf_sub(const json_t *res, const char *k);
/* "ALLOWED" for a successful payload step, else its errno name. */
const char *cf_denial(const json_t *o);
/* The provider shares the host's network (no claim, or `inherited`). */
bool cf_shares_net(const struct check_env *env);
/* "A B" appended to a comma-separated summary. */
void cf_append(char *buf, size_t size, const char *a, const char *b);

/* The loopback listener (TCP, TYPE SOCK_STREAM) or receiver (UDP,
 * SOCK_DGRAM) of every network and IPC attack, on 127.0.0.1 or [::1]
 * (FAMILY), non-blocking; *port gets its port. An fd or -errno. */
int cf_loopback_socket(int family, int type, int *port);
/* Connections a listener received (drained). */
int cf_accepted(int lfd);
/* Until FD is readable or DEADLINE_US (see attack-helpers.c). */
bool cf_wait_readable(int fd, uint64_t deadline_us);
/* How long a control's host-side receipt is awaited: the per-execution
 * timeout from now. */
uint64_t cf_control_deadline(const struct check_env *env);

/* Each topic's rows (conformance/checks/TOPIC.c). */
extern const struct check_def cf_checks_contract[];
extern const size_t cf_checks_contract_count;
extern const struct check_def cf_checks_env[];
extern const size_t cf_checks_env_count;
extern const struct check_def cf_checks_fs[];
extern const size_t cf_checks_fs_count;
extern const struct check_def cf_checks_ipc[];
extern const size_t cf_checks_ipc_count;
extern const struct check_def cf_checks_lifecycle[];
extern const size_t cf_checks_lifecycle_count;
extern const struct check_def cf_checks_net[];
extern const size_t cf_checks_net_count;
extern const struct check_def cf_checks_priv[];
extern const size_t cf_checks_priv_count;
extern const struct check_def cf_checks_proc[];
extern const size_t cf_checks_proc_count;
extern const struct check_def cf_checks_resources[];
extern const size_t cf_checks_resources_count;
extern const struct check_def cf_checks_secrets[];
extern const size_t cf_checks_secrets_count;
extern const struct check_def cf_checks_syscalls[];
extern const size_t cf_checks_syscalls_count;
/* Checks the matrix adds itself for declared providers (no run function):
 * listed by the catalogue, never run from cf_checks. */
extern const struct check_def cf_checks_declared[];
extern const size_t cf_checks_declared_count;

#endif
