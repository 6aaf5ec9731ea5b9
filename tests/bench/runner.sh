#!/usr/bin/env bash
# Overhead of the bounded runner (base/runner.c) against raw process
# creation. Not a test: prints numbers, all measured in this run.
#
#   tests/bench/runner.sh [BUILD_DIR] [RUNS]      (BUILD_DIR default: ./build, RUNS 300)
#
# 1. spawn: RUNS x /usr/bin/true, alternating raw fork+execve+waitpid with
#    agsbx_run (pipes, pidfd, tree walk, cleanup) and agsbx_run with a cgroup
#    leaf; p50/p90 and the ratio runner/raw (driver: runner-bench.c).
# 2. flood: 1 GiB on stdout and 1 GiB on stderr through agsbx_run at the
#    default cap, against the same writers piped into `cat >/dev/null`
#    (hyperfine),
#    and the runner's peak RSS (/usr/bin/time -v).
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
runs=${2:-300}

[[ -f $build/libagsbx_base.a ]] || { echo "missing $build/libagsbx_base.a: build first" >&2; exit 2; }

work=$(mktemp -d /tmp/agsbx-bench-runner-XXXXXX)
trap 'rm -rf "$work"' EXIT

drv=$work/runner-bench
# shellcheck disable=SC2046
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$src" -o "$drv" "$src/tests/bench/runner-bench.c" \
  "$build/libagsbx_base.a" $(pkg-config --libs jansson libsodium libcurl) -lpthread

echo "== spawn overhead (uid $(id -u), $(nproc) cpus, kernel $(uname -r))"
"$drv" spawn "$runs"

echo
echo "== 2 GiB flood (1 GiB per stream), default cap"
"$drv" flood 1073741824
"$drv" raw-flood 1073741824
if command -v hyperfine >/dev/null; then
  hyperfine -N --warmup 1 --runs 5 \
    -n runner "$drv flood 1073741824" \
    -n raw "$drv raw-flood 1073741824" 2>&1 | grep -E 'Time|±|faster|runner|raw' || true
fi

echo
echo "== peak RSS"
for mode in flood raw-flood; do
  /usr/bin/time -v "$drv" "$mode" 1073741824 2>"$work/time.$mode" >/dev/null
  printf '%-10s max RSS %s KiB\n' "$mode" "$(awk -F': ' '/Maximum resident/ {print $2}' "$work/time.$mode")"
done
