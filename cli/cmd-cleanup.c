/* cleanup: removes what harnesses that died (SIGKILL, a CI timeout) left:
 * their work dirs and staged helpers, processes still running from those,
 * the home canary a run killed mid-check left, cgroup leaves, and provider
 * resources such as labelled containers. Only resources whose owning
 * process is gone (base/rundir.h), as far as its owner record confines
 * them; never a live run's. collect runs the same sweep before it starts. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/defaults.h"
#include "base/log.h"
#include "base/rundir.h"
#include "base/runner.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/harness.h"

const char agsbx_help_cleanup[] =
	"usage: agsbx-evidence cleanup [--dry-run] [--work-dir DIR] [--json]\n"
	"\n"
	"Removes the leftovers of agsbx-evidence runs whose process is gone (killed with SIGKILL, a CI\n"
	"timeout): agsbx-run-* work dirs, agsbx-tools-* helper copies and agsbx-landlock-* policy dirs in DIR, processes still running\n"
	"from them, the home canary of a run killed mid-check, stale cgroup leaves, and gVisor containers\n"
	"labelled with a dead run. Resources of a run that is still alive are never touched, nor a process\n"
	"the dead run's owner record does not confine (another user's, or one outside the run).\n"
	"\n"
	"  --dry-run        list what would be removed; remove nothing\n"
	"  --work-dir DIR   also where collect created its work dirs (always: $TMPDIR or /tmp)\n"
	"  --json           print the items as a JSON array on stdout\n"
	"\n"
	"exit status: 0 nothing left (or --dry-run), 2 bad usage, 3 something could not be removed\n";

static const char *const prefixes[] = { "agsbx-run-", "agsbx-tools-", "agsbx-landlock-" };

static bool run_dir_name(const char *name)
{
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(prefixes); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* Processes still running from a dead run's directory, as its record
 * confines them (base/runner.h): of the uids the record allows, started
 * after its owner, naming the directory in their argv, and carrying the
 * run's nonce or running a program from it. Never anyone else's, however
 * the directory or its record came to be. */
static int kill_dir_processes(const char *dir, const struct agsbx_owner_record *rec, bool dry_run, json_t *found)
{
	uid_t uids[2] = { rec->uid, rec->run_uid };
	struct agsbx_leftover_filter f = { .dir = dir, .nonce = rec->nonce, .uids = uids,
					   .nuids = rec->uid == 0 && rec->has_run_uid ? 2 : 1,
					   .started_after = rec->start };
	_cleanup_free_ struct agsbx_leftover *l = NULL;
	int n = agsbx_find_run_leftovers(&f, &l);
	int failed = 0;
	for (int i = 0; i < n; i++) {
		bool removed = !dry_run && agsbx_kill_leftover(&l[i]) == 0;
		failed += !dry_run && !removed;
		json_array_append_new(found, json_pack("{s:s, s:i, s:s, s:b}", "kind", "process", "pid", (int)l[i].pid,
						       "run_dir", dir, "removed", removed));
	}
	if (n > 0 && !dry_run)
		usleep(50 * 1000);   /* SIGKILL is asynchronous; the dir goes next */
	return failed;
}

/* The home canaries the record lists (noted before each was created);
 * one already gone is no item. */
static int remove_canaries(const struct agsbx_owner_record *rec, bool dry_run, json_t *found)
{
	int failed = 0;
	for (size_t i = 0; i < rec->ncanaries; i++) {
		int r = agsbx_rundir_remove_canary(rec->canaries[i], rec, dry_run);
		if (r == 0)
			continue;
		bool removed = !dry_run && r == 1;
		failed += !dry_run && !removed;
		json_array_append_new(found, json_pack("{s:s, s:s, s:b}", "kind", "canary", "path", rec->canaries[i],
						       "removed", removed));
	}
	return failed;
}

static int sweep_dir(const char *path, bool dry_run, json_t *found)
{
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	/* Another user's leftovers are theirs (or root's) to remove. */
	if (geteuid() != 0 && st.st_uid != geteuid())
		return 0;
	struct agsbx_owner_record rec;
	int r = agsbx_rundir_read_record(path, &rec);
	bool alive = r == 0 ? agsbx_owner_token_alive(rec.token) : agsbx_rundir_owner_alive(path) != 0;
	int failed = 0;
	/* alive, or no record to judge (never guess); a directory nobody
	 * ever claimed has no record, and no process either */
	if (!alive && r == 0) {
		failed += kill_dir_processes(path, &rec, dry_run, found);
		failed += remove_canaries(&rec, dry_run, found);
	}
	agsbx_owner_record_clear(&rec);
	if (alive)
		return 0;
	bool removed = !dry_run && agsbx_rm_tree(path) == 0;
	failed += !dry_run && !removed;
	json_array_append_new(found, json_pack("{s:s, s:s, s:b}", "kind", "directory", "path", path, "removed", removed));
	return failed;
}

struct cg_acc {
	json_t *found;
	int failed;
	bool dry_run;
};

static void on_cgroup(void *ud, const char *path, bool removed)
{
	struct cg_acc *a = ud;
	a->failed += !a->dry_run && !removed;
	json_array_append_new(a->found, json_pack("{s:s, s:s, s:b}", "kind", "cgroup", "path", path, "removed", removed));
}

static int sweep_parent(const char *given, bool dry_run, json_t *found)
{
	int failed = 0;
	/* The real path: the one a run's processes name in their argv */
	char real[PATH_MAX];
	const char *base = realpath(given, real) ? real : given;
	_cleanup_closedir_ DIR *d = opendir(base);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!run_dir_name(e->d_name))
			continue;
		_cleanup_free_ char *path = agsbx_path_join(base, e->d_name);
		if (path)
			failed += sweep_dir(path, dry_run, found);
	}
	return failed;
}

int agsbx_cleanup_dead_runs(const char *parent, const struct agsbx_ctx *ctx, bool dry_run, json_t *found)
{
	/* The work dirs live in parent; staged helpers and policy dirs in
	 * $TMPDIR whatever --work-dir said. */
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	int failed = sweep_parent(tmp, dry_run, found);
	char a[PATH_MAX], b[PATH_MAX];
	if (parent && !(realpath(parent, a) && realpath(tmp, b) && strcmp(a, b) == 0))
		failed += sweep_parent(parent, dry_run, found);
	struct cg_acc acc = { .found = found, .dry_run = dry_run };
	agsbx_runner_cleanup_stale_cgroups(dry_run, on_cgroup, &acc);
	failed += acc.failed;
	for (size_t i = 0; i < agsbx_provider_builtin_count(); i++) {
		const struct agsbx_provider_ops *p = agsbx_provider_at(i);
		if (!p->cleanup_dead || (p->applies && !p->applies(p)))
			continue;
		size_t before = json_array_size(found);
		p->cleanup_dead(p, ctx, dry_run, found);
		for (size_t k = before; k < json_array_size(found); k++) {
			json_t *it = json_array_get(found, k);
			json_object_set_new(it, "provider", json_string(p->id));
			failed += !dry_run && !json_is_true(json_object_get(it, "removed"));
		}
	}
	return failed;
}

static void print_item(const json_t *it, bool dry_run)
{
	const char *kind = json_string_value(json_object_get(it, "kind"));
	const char *what = json_string_value(json_object_get(it, "path"));
	if (!what)
		what = json_string_value(json_object_get(it, "id"));
	char pid[32] = "";
	if (!what) {
		snprintf(pid, sizeof pid, "pid %lld", (long long)json_integer_value(json_object_get(it, "pid")));
		what = pid;
	}
	printf("%s %s %s\n", dry_run ? "would remove" : json_is_true(json_object_get(it, "removed")) ? "removed" : "COULD NOT REMOVE",
	       kind, what);
}

int agsbx_cmd_cleanup(int argc, char **argv)
{
	enum { O_DRY_RUN = AGSBX_OPT_LOCAL, O_WORK_DIR };
	static const struct option lo[] = {
		{ "dry-run", no_argument, NULL, O_DRY_RUN }, { "work-dir", required_argument, NULL, O_WORK_DIR },
		AGSBX_OPTION_JSON, { 0 },
	};
	bool dry_run = false, json = false;
	const char *work_dir = NULL;
	struct agsbx_args a = { .cmd = "cleanup", .argc = argc, .argv = argv };
	int c;
	while ((c = agsbx_args_next(&a, lo)) > 0) {
		if (c == O_DRY_RUN)
			dry_run = true;
		else if (c == O_WORK_DIR)
			work_dir = a.value;
		else
			json = true;
	}
	if (c < 0 || agsbx_args_operands(&a, 0, 0, NULL, NULL))
		return AGSBX_EXIT_USAGE;
	struct stat st;
	if (work_dir && (stat(work_dir, &st) < 0 || !S_ISDIR(st.st_mode)))
		return agsbx_usage_error("cleanup", "--work-dir %s is not a directory", work_dir);
	struct agsbx_ctx ctx = { .probe_timeout_ms = AGSBX_PROBE_TIMEOUT_MS };
	_cleanup_json_ json_t *found = json_array();
	int failed = agsbx_cleanup_dead_runs(work_dir, &ctx, dry_run, found);
	size_t i;
	json_t *it;
	int w = 0;
	if (json)
		w = agsbx_cli_print_json(found, 0);
	else
		json_array_foreach(found, i, it)
			print_item(it, dry_run);
	if (!json && json_array_size(found) == 0)
		printf("nothing left by dead runs\n");
	if (w == 0)
		w = agsbx_flush_errno(stdout);
	if (w < 0) /* said here, with the write's errno: main's final flush stays silent after exit 3 */
		return agsbx_error_errno(w, "cannot write to stdout"), AGSBX_EXIT_INTERNAL;
	return failed ? AGSBX_EXIT_INTERNAL : AGSBX_EXIT_OK;
}
