#!/usr/bin/env bash
# Per-execution overhead of the bubblewrap provider against bwrap itself.
#
#   tests/bench/bubblewrap.sh [BUILD_DIR] [RUNS]      (BUILD_DIR default: ./build, RUNS 200)
#
# A small C driver, compiled here against the build's static libraries,
# ensures one handle and then alternates, RUNS times each:
#   raw       fork + exec of the very argv the provider builds (same
#             namespaces, binds and --setenv), waitpid; nothing else
#   provider  agsbx_provider_bubblewrap.execute() of /usr/bin/true: bundle
#             re-verification, argv, the bounded runner (pipes, tree
#             tracking, cleanup)
#   minimal   fork + exec of the probe's minimal bwrap (no grant binds)
# and prints p50/p90 in microseconds and the ratio provider/raw
# (goal <= 1.15). As root it drops to $AGSBX_TEST_USER (default agsbx-test)
# for all three, as the provider must. hyperfine then times the raw
# minimal command line as a cross-check of the driver's "minimal" number.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
runs=${2:-200}
user=${AGSBX_TEST_USER:-agsbx-test}

for lib in libagsbx_base.a libagsbx_probes.a providers/libagsbx_providers.a; do
  [[ -f $build/$lib ]] || { echo "missing $build/$lib: build first" >&2; exit 2; }
done
command -v bwrap >/dev/null || { echo "bwrap not installed" >&2; exit 2; }

work=$(mktemp -d /tmp/agsbx-bench-bw-XXXXXX)
chmod 0755 "$work"
trap 'rm -rf "$work"' EXIT

cat > "$work/driver.c" <<'EOF'
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/runner.h"
#include "base/util.h"
#include "providers/bubblewrap/bwrap.h"
#include "providers/provider.h"

enum { MINIMAL, RAW, RUNNER, PROVIDER };

static uid_t uid;
static gid_t gid;
static int drop;

/* fork + exec + wait, and also wait for EOF on a pipe every sandbox
 * process holds as stdout/stderr: bwrap's own exit comes before its PID
 * namespace has finished dying, and the provider's runner (rightly) waits
 * for the whole tree, so a fair baseline waits for it too. */
static uint64_t spawn_wait(char **argv)
{
	static char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		exit(1);
	uint64_t t0 = agsbx_now_us();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (drop && (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)))
			_exit(126);
		execve(argv[0], argv, env);
		_exit(127);
	}
	close(p[1]);
	char buf[512];
	while (read(p[0], buf, sizeof buf) > 0)
		;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	uint64_t dt = agsbx_now_us() - t0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "raw bwrap failed (status %d)\n", st);
		exit(1);
	}
	return dt;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, int n, int p)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return v[(n - 1) * p / 100];
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 200;
	const char *user = argc > 2 ? argv[2] : "agsbx-test";
	const char *workdir = argc > 3 ? argv[3] : "/tmp";
	if (agsbx_runner_init() < 0)
		return 1;
	struct agsbx_ctx ctx = { .probe_timeout_ms = 10000 };
	drop = geteuid() == 0;
	if (drop) {
		struct passwd *pw = getpwnam(user);
		if (!pw) {
			fprintf(stderr, "no user %s\n", user);
			return 2;
		}
		uid = pw->pw_uid;
		gid = pw->pw_gid;
		ctx.run_as = true;
		ctx.run_uid = uid;
		ctx.run_gid = gid;
		ctx.run_as_name = user;
	}
	struct agsbx_grant *g = NULL;
	if (agsbx_grant_create(workdir, "bench", drop ? uid : (uid_t)-1, drop ? gid : (gid_t)-1, &g) < 0 ||
	    agsbx_grant_seal(g) < 0)
		return 1;
	struct agsbx_handle *h = NULL;
	struct agsbx_error f = { 0 };
	if (agsbx_provider_bubblewrap.ensure(&ctx, g, &h, &f) < 0) {
		fprintf(stderr, "ensure: %s: %s\n", f.reason, f.message);
		return 1;
	}
	const char *prog[] = { "/usr/bin/true", NULL };
	struct agsbx_step step = { .argv = prog, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 20000, .timeout_ms = 20000, .cancel_fd = -1 };

	/* The same argv the provider runs, built by the provider's code. */
	char **env = agsbx_provider_min_env(h, &step);
	const char *bw = json_string_value(json_object_get(h->versions, "bwrap_path"));
	struct agsbx_bwrap_spec spec = { .bwrap = bw, .env = (const char *const *)env, .grant = g,
					 .chdir = h->paths[AGSBX_ROOT_BUILD], .argv = prog };
	char **same = NULL, **minimal = NULL;
	struct agsbx_bwrap_spec mspec = { .bwrap = bw, .argv = prog };
	if (agsbx_bwrap_build_argv(&spec, &same) < 0 || agsbx_bwrap_build_argv(&mspec, &minimal) < 0)
		return 1;

	static const char *const benv[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	uint64_t *t[4];
	for (int k = 0; k < 4; k++)
		t[k] = calloc((size_t)runs, sizeof(uint64_t));
	/* Rounds rotate the order, and each run starts after a pause: a run
	 * would otherwise pay for the previous run's namespace teardown (an
	 * async kernel worker; waitpid returns before it is done), which
	 * biases whichever mode follows a bare fork+exec. */
	for (int i = -5; i < runs; i++) { /* 5 warm-up rounds */
		for (int j = 0; j < 4; j++) {
			int k = (j + (i < 0 ? 0 : i)) % 4;
			uint64_t dt = 0;
			usleep(20000);
			if (k == MINIMAL || k == RAW) {
				dt = spawn_wait(k == RAW ? same : minimal);
			} else if (k == RUNNER) {
				struct agsbx_run_opts o;
				agsbx_provider_run_opts(h, &lim, &o);
				o.argv = (const char *const *)same;
				o.envp = benv;
				o.cwd = "/";
				struct agsbx_run_result rr;
				uint64_t t0 = agsbx_now_us();
				if (agsbx_run(&o, &rr) < 0 || rr.status != 0)
					return 1;
				dt = agsbx_now_us() - t0;
				agsbx_run_result_clear(&rr);
			} else {
				struct agsbx_exec_result res;
				uint64_t t0 = agsbx_now_us();
				if (h->ops->execute(h, &step, &lim, &res, &f) < 0 || res.run.status != 0) {
					fprintf(stderr, "execute failed: %s\n", f.reason ? f.reason : "");
					return 1;
				}
				dt = agsbx_now_us() - t0;
				agsbx_exec_result_clear(&res);
			}
			if (i >= 0)
				t[k][i] = dt;
		}
	}
	static const char *const names[] = { "minimal", "raw", "runner", "provider" };
	uint64_t p50[4];
	printf("runs %d, as %s\n", runs, drop ? user : "self");
	printf("%-10s %10s %10s  %s\n", "", "p50 (us)", "p90 (us)", "what");
	static const char *const what[] = {
		"fork+exec, wait + pipe EOF, of the probe's minimal bwrap argv",
		"fork+exec, wait + pipe EOF, of the provider's bwrap argv",
		"agsbx_run of that argv with the provider's runner options",
		"agsbx_provider_bubblewrap.execute() of /usr/bin/true",
	};
	for (int k = 0; k < 4; k++) {
		p50[k] = pct(t[k], runs, 50);
		printf("%-10s %10llu %10llu  %s\n", names[k], (unsigned long long)p50[k],
		       (unsigned long long)pct(t[k], runs, 90), what[k]);
	}
#define RATIO(a, b) (unsigned long long)((a) * 1000 / (b) / 1000), (unsigned long long)((a) * 1000 / (b) % 1000)
	printf("ratio provider/raw p50:    %llu.%03llu (goal <= 1.150)\n", RATIO(p50[PROVIDER], p50[RAW]));
	printf("  of which runner/raw:     %llu.%03llu (the bounded runner)\n", RATIO(p50[RUNNER], p50[RAW]));
	printf("  and provider/runner:     %llu.%03llu (verify, argv, env, meta)\n", RATIO(p50[PROVIDER], p50[RUNNER]));
	printf("ratio provider/minimal:    %llu.%03llu\n", RATIO(p50[PROVIDER], p50[MINIMAL]));
	if (getenv("BENCH_PRINT_MINIMAL")) {
		for (char **a = minimal; *a; a++)
			fprintf(stderr, "%s%s", a == minimal ? "" : " ", *a);
		fputc('\n', stderr);
	}
	h->ops->release(h);
	agsbx_handle_free(h);
	agsbx_grant_destroy(g);
	agsbx_strv_free(env);
	agsbx_strv_free(same);
	agsbx_strv_free(minimal);
	for (int k = 0; k < 4; k++)
		free(t[k]);
	return 0;
}
EOF

# Sanitizer builds need the runtime linked in too.
san=""
grep -q 'AGSBX_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && san="-fsanitize=address,undefined"
cc -std=gnu11 -O2 -D_GNU_SOURCE $san -I"$src" -o "$work/driver" "$work/driver.c" \
  "$build/providers/libagsbx_providers.a" "$build/libagsbx_probes.a" "$build/libagsbx_base.a" \
  $(pkg-config --cflags --libs jansson libsodium libcurl) -lpthread

echo "== driver as $(id -un): provider vs the same bwrap argv ($runs rounds)"
BENCH_PRINT_MINIMAL=1 "$work/driver" "$runs" "$user" "$work" 2> "$work/minimal.argv"
if [[ $(id -u) == 0 ]] && id -u "$user" >/dev/null 2>&1; then
  # The contributor's case: the whole harness runs as a normal user (the
  # runner then has no cgroup to create, and nothing drops privileges).
  mkdir -m 0755 "$work/u" && chown "$user:" "$work/u"
  echo "== driver as $user (whole harness unprivileged, as contributors run it)"
  setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups -- \
    "$work/driver" "$runs" "$user" "$work/u"
fi

if command -v hyperfine >/dev/null; then
  echo "== hyperfine: the minimal bwrap command line (cross-check; includes setpriv when root)"
  read -r -a minimal < "$work/minimal.argv"
  if [[ $(id -u) == 0 ]]; then
    pre=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups --)
  else
    pre=()
  fi
  q=$(printf '%q ' "${pre[@]}" "${minimal[@]}")
  hyperfine -N --warmup 5 --runs 50 --style basic "$q" "${pre[*]:-true} /usr/bin/true" 2>&1 | grep -E 'Time|±|Benchmark'
fi
