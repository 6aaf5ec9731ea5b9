/* Host processes that belong to one container. A start that fails on a
 * misconfigured runsc runtime leaves containerd-shim, runsc-gofer and
 * runsc-sandbox running after Docker has forgotten the container
 * (docs/design.md, "gVisor: a failed start leaks host processes"); each carries the container id in its
 * cmdline, so we find and stop exactly those PIDs, never by name. */
#include "providers/gvisor/gvisor.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/proc.h"
#include "base/util.h"

/* pid's cmdline (NULs as spaces) carries needle; the cmdline kept when
 * cmdline is given. */
static bool pid_matches(pid_t pid, const char *needle, char **cmdline)
{
	char *c = agsbx_proc_cmdline(pid, NULL);
	bool m = c && strstr(c, needle);
	if (m && cmdline)
		*cmdline = c;
	else
		free(c);
	return m;
}

struct needle_scan {
	const char *const *needles;
	size_t nneedles;
	pid_t self;
	struct gv_proc_match *v;
	int n;
};

/* The first needle pid's cmdline carries, recorded. */
static int needle_visit(pid_t pid, void *ud)
{
	struct needle_scan *ns = ud;
	if (pid == ns->self)
		return 0;
	_cleanup_free_ char *c = agsbx_proc_cmdline(pid, NULL);
	for (size_t i = 0; c && i < ns->nneedles; i++) {
		if (!ns->needles[i] || !*ns->needles[i] || !strstr(c, ns->needles[i]))
			continue;
		struct gv_proc_match *nv = realloc(ns->v, (size_t)(ns->n + 1) * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		ns->v = nv;
		ns->v[ns->n++] = (struct gv_proc_match){ .pid = pid, .needle = i };
		break;
	}
	return 0;
}

int gv_procs_matching_any(const char *const *needles, size_t nneedles, struct gv_proc_match **found)
{
	struct needle_scan ns = { .needles = needles, .nneedles = nneedles, .self = getpid() };
	*found = NULL;
	int r = agsbx_proc_each(needle_visit, &ns);
	if (r < 0) {
		free(ns.v);
		return r;
	}
	*found = ns.v;
	return ns.n;
}

int gv_procs_matching(const char *needle, pid_t **pids)
{
	if (pids)
		*pids = NULL;
	if (!needle || !*needle)
		return -EINVAL;
	_cleanup_free_ struct gv_proc_match *m = NULL;
	int n = gv_procs_matching_any(&needle, 1, &m);
	if (n <= 0 || !pids)
		return n;
	*pids = malloc((size_t)n * sizeof **pids);
	if (!*pids)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		(*pids)[i] = m[i].pid;
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The value of --root=... in a runsc cmdline (malloc'd) or NULL. */
static char *runsc_root(const char *cmdline)
{
	if (!strstr(cmdline, "runsc"))
		return NULL;
	const char *p = strstr(cmdline, "--root=");
	if (!p)
		return NULL;
	p += strlen("--root=");
	return strndup(p, strcspn(p, " "));
}

static bool still_carries(pid_t pid, void *needle)
{
	return pid_matches(pid, needle, NULL);
}

/* SIGKILL pid through the checked kill (base/proc.h): still the process
 * seen now, and still carrying the needle (no PID-reuse accident). */
static bool kill_exact(pid_t pid, const char *needle)
{
	struct agsbx_proc p;
	return agsbx_proc_stat(pid, &p) == 0 && agsbx_proc_signal(&p, SIGKILL, still_carries, (void *)needle);
}

static void runsc_delete(const char *runsc_path, const char *root, const char *id)
{
	_cleanup_free_ char *root_arg = NULL;
	if (asprintf(&root_arg, "--root=%s", root) < 0)
		return;
	const char *argv[] = { runsc_path, root_arg, "delete", "--force", id, NULL };
	struct agsbx_run_opts o = { .argv = argv, .timeout_ms = 10000, .cancel_fd = -1, .max_output_bytes = 4096 };
	struct agsbx_run_result r;
	/* Best effort: the processes are gone already; this only clears
	 * runsc's state directory of the dead sandbox. */
	agsbx_run(&o, &r);
	agsbx_run_result_clear(&r);
}

/* SIGKILLs exactly the processes that carry needle now; the number. */
static int kill_matching(const char *needle, char **root)
{
	_cleanup_free_ pid_t *pids = NULL;
	int n = gv_procs_matching(needle, &pids);
	int killed = 0;
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *cmd = NULL;
		if (!*root && pid_matches(pids[i], needle, &cmd))
			*root = runsc_root(cmd);
		if (kill_exact(pids[i], needle))
			killed++;
	}
	return killed;
}

int gv_procs_reap_settled(const char *needle, int grace_ms, int settle_ms, const char *runsc_path)
{
	uint64_t now = agsbx_now_us();
	uint64_t deadline = now + (uint64_t)(grace_ms > 0 ? grace_ms : 0) * 1000;
	/* However late something appears, the reap ends. */
	uint64_t hard_stop = deadline + (uint64_t)(settle_ms > 0 ? settle_ms : 0) * 1000 + 5000000;
	uint64_t quiet_since = 0;
	_cleanup_free_ char *root = NULL;
	int killed = 0;
	for (;;) {
		now = agsbx_now_us();
		int n = gv_procs_matching(needle, NULL);
		if (n < 0)
			return n;
		if (n == 0) {
			/* A failed start's runtime processes (shim, runsc) may
			 * appear after the start call returned: only a quiet
			 * window, not one empty scan, says nothing is coming. */
			if (!quiet_since)
				quiet_since = now;
			if (now - quiet_since >= (uint64_t)(settle_ms > 0 ? settle_ms : 0) * 1000 || now >= hard_stop)
				break;
		} else {
			quiet_since = 0;
			if (now >= hard_stop)
				break;
			if (now >= deadline) {
				killed += kill_matching(needle, &root);
				/* SIGKILL is asynchronous: give the kernel a moment. */
				for (int i = 0; i < 40 && gv_procs_matching(needle, NULL) > 0; i++)
					sleep_ms(50);
				continue;
			}
		}
		sleep_ms(50);
	}
	if (root && runsc_path)
		runsc_delete(runsc_path, root, needle);
	return killed;
}

int gv_procs_reap(const char *needle, int grace_ms, const char *runsc_path)
{
	return gv_procs_reap_settled(needle, grace_ms, 0, runsc_path);
}
