/* collect's parts shared by its files: the options (collect-options.c),
 * the terminal (progress.c) and the run (cmd-collect.c). */
#ifndef AGSBX_CLI_COLLECT_H
#define AGSBX_CLI_COLLECT_H

#include <stdbool.h>

#define MAX_LIST 32

struct collect_opts {
	const char *providers[MAX_LIST];
	int nproviders;
	const char *configs[MAX_LIST];
	int nconfigs;
	const char *attach[MAX_LIST];
	int nattach;
	const char *declared[MAX_LIST];
	bool declared_wrap[MAX_LIST];
	int ndeclared;
	const char *output, *sign_key, *run_as, *simulate, *work_dir, *challenge, *subject_repo;
	const char *host_policy, *userns_before;
	bool unsigned_, json, quiet;
	long long timeout_ms, max_output, jobs;
};

/* argv into o, checked: 0 or a usage error's exit status (2). */
int agsbx_collect_parse_args(int argc, char **argv, struct collect_opts *o);

/* agsbx-evidence-<host>-<UTC time>.json (malloc'd; NULL on ENOMEM). */
char *agsbx_collect_default_output(void);
/* --output names a regular file (or nothing) in a writable directory:
 * 0 or a usage error's exit status, before anything runs. */
int agsbx_collect_check_output(const char *path);
/* The run's work dir under parent (NULL: $TMPDIR or /tmp), claimed for
 * this process: 0 with *out set, or an exit status (error printed). */
int agsbx_collect_make_work_dir(const char *parent, bool run_as, char **out);

#endif
