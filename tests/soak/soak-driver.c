/* agsbx-soak: N timeout+cancel cycles through one provider in one harness
 * process (tests/soak/soak.sh drives it). Each cycle runs the payload's
 * detached SIGTERM-ignoring tree twice: once until the timeout fires, once
 * until the cancel fd is written. After every cycle no process carrying
 * the cycle's marker and no provider resource may remain; the harness's
 * RSS is sampled so growth over the cycles shows. Prints one JSON object.
 *
 *   agsbx-soak PROVIDER CYCLES [TIMEOUT_MS]
 * exit 0: every cycle clean; 1: a leftover or a wrong outcome; 2: usage;
 * 3: the provider could not be set up. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/proc.h"
#include "base/runner.h"
#include "base/util.h"
#include "cli/harness.h"
#include "providers/provider.h"

struct cyc {
	const struct agsbx_provider_ops *ops;
	struct agsbx_handle *h;
	const char *argv[5];
	struct agsbx_limits lim;
	struct agsbx_exec_result xr;
	int rc;
};

static void *exec_thread(void *p)
{
	struct cyc *c = p;
	struct agsbx_step step = { .argv = c->argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_error fail = { 0 };
	c->rc = c->ops->execute(c->h, &step, &c->lim, &c->xr, &fail);
	return NULL;
}

static bool wait_file(const char *path, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		if (access(path, F_OK) == 0)
			return true;
		usleep(10000);
	}
	return false;
}

static int leftovers(const struct cyc *c, const char *marker)
{
	int n = 0;
	for (int i = 0; i < 40; i++) {
		n = agsbx_find_processes_with_marker(marker, NULL);
		if (n <= 0)
			break;
		usleep(25000);
	}
	if (c->ops->leftovers) {
		json_t *found = NULL;
		int k = c->ops->leftovers(c->h, marker, &found);
		json_decref(found);
		if (k > 0)
			n += k;
	}
	return n;
}

/* One execution of the detached tree, ended by timeout or by cancel. */
static int one(struct cyc *c, const struct agsbx_grant *g, bool cancel, int64_t timeout_ms, int *bad_outcome)
{
	char hex[33], marker[64], ready[64];
	agsbx_random_hex(hex, 16);
	snprintf(marker, sizeof marker, "agsbx-marker-%s", hex);
	snprintf(ready, sizeof ready, "ready-%s", hex);
	_cleanup_free_ char *pl = agsbx_handle_path(c->h, AGSBX_ROOT_SOURCE, "agsbx-payload");
	_cleanup_free_ char *in_ready = agsbx_handle_path(c->h, AGSBX_ROOT_OUTPUT, ready);
	_cleanup_free_ char *host_ready = agsbx_path_join(g->roots[AGSBX_ROOT_OUTPUT].path, ready);
	_cleanup_close_ int efd = eventfd(0, EFD_CLOEXEC);
	c->argv[0] = pl;
	c->argv[1] = "spawn-detached";
	c->argv[2] = marker;
	c->argv[3] = in_ready;
	c->argv[4] = NULL;
	c->lim = (struct agsbx_limits){ .max_output_bytes = 4096, .timeout_ms = cancel ? 60000 : timeout_ms,
					.cancel_fd = cancel ? efd : -1 };
	memset(&c->xr, 0, sizeof c->xr);
	if (cancel) {
		pthread_t t;
		if (pthread_create(&t, NULL, exec_thread, c) != 0)
			return -1;
		wait_file(host_ready, 20000);
		uint64_t v = 1;
		if (write(efd, &v, sizeof v) < 0) { /* the 60 s timeout ends it */ }
		pthread_join(t, NULL);
	} else {
		exec_thread(c);
	}
	if (c->rc < 0 || !(cancel ? c->xr.run.cancelled : c->xr.run.timed_out)) {
		(*bad_outcome)++;
		fprintf(stderr, "agsbx-soak: %s %s: rc %d, status %d, timed_out %d, cancelled %d, stderr: %.200s\n",
			c->ops->id, cancel ? "cancel" : "timeout", c->rc, c->xr.run.status, c->xr.run.timed_out,
			c->xr.run.cancelled, c->xr.run.err ? c->xr.run.err : "");
	}
	agsbx_exec_result_clear(&c->xr);
	unlink(host_ready);
	int left = leftovers(c, marker);
	if (left > 0) {
		_cleanup_free_ pid_t *pids = NULL;
		int n = agsbx_find_processes_with_marker(marker, &pids);
		for (int i = 0; i < n; i++)
			kill(pids[i], SIGKILL);   /* never leave one behind */
	}
	return left;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: agsbx-soak PROVIDER CYCLES [TIMEOUT_MS]\n");
		return 2;
	}
	const struct agsbx_provider_ops *ops = agsbx_provider_find(argv[1]);
	long cycles = strtol(argv[2], NULL, 10);
	int64_t timeout_ms = argc == 4 ? strtol(argv[3], NULL, 10) : 500;
	if (!ops || cycles < 1) {
		fprintf(stderr, "agsbx-soak: unknown provider or bad count\n");
		return 2;
	}
	agsbx_runner_init();
	struct agsbx_harness hs;
	if (agsbx_harness_init(&hs, "soak", NULL, false))
		return 3;
	const char *tmp = getenv("TMPDIR");
	struct agsbx_grant *g = NULL;
	struct agsbx_handle *h = NULL;
	struct agsbx_error fail = { 0 };
	int r = agsbx_grant_create(tmp && *tmp ? tmp : "/tmp", "agsbx-soak", (uid_t)-1, (gid_t)-1, &g);
	if (r == 0)
		r = agsbx_grant_add_file(g, "agsbx-payload", hs.payload_path, true);
	if (r == 0)
		r = agsbx_grant_seal(g);
	if (r == 0 && ops->ensure(ops, &hs.ctx, g, &h, &fail) < 0)
		r = -EIO;
	if (r < 0) {
		fprintf(stderr, "agsbx-soak: %s: set-up failed: %s %s\n", ops->id, fail.reason ? fail.reason : "",
			fail.message);
		agsbx_grant_destroy(g);
		agsbx_harness_clear(&hs);
		return 3;
	}
	struct cyc c = { .ops = ops, .h = h };
	long rss_first = -1, rss_peak = 0;
	int left_total = 0, bad = 0;
	uint64_t t0 = agsbx_now_us();
	for (long i = 0; i < cycles; i++) {
		left_total += one(&c, g, false, timeout_ms, &bad);
		left_total += one(&c, g, true, timeout_ms, &bad);
		long rss = agsbx_proc_self_status_kib("VmRSS");
		if (i == 9 || (cycles < 10 && i == 0))
			rss_first = rss;   /* after warm-up: allocator and caches settled */
		if (rss > rss_peak)
			rss_peak = rss;
	}
	long rss_last = agsbx_proc_self_status_kib("VmRSS");
	agsbx_provider_release(h);
	agsbx_handle_free(h);
	agsbx_grant_destroy(g);
	agsbx_harness_clear(&hs);
	printf("{\"provider\":\"%s\",\"cycles\":%ld,\"executions\":%ld,\"leftovers\":%d,\"wrong_outcomes\":%d,"
	       "\"rss_kib_after_warmup\":%ld,\"rss_kib_last\":%ld,\"rss_kib_peak\":%ld,\"seconds\":%.1f}\n",
	       ops->id, cycles, 2 * cycles, left_total, bad, rss_first, rss_last, rss_peak,
	       (double)(agsbx_now_us() - t0) / 1e6);
	return left_total || bad ? 1 : 0;
}
