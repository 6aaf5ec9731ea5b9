#!/usr/bin/env bash
# Per-execution overhead of the gvisor provider against the Docker CLI, on a
# self-contained dockerd with a runsc --network=none runtime.
#
#   tests/bench/gvisor.sh [BUILD_DIR] [RUNS]      (BUILD_DIR default: ./build, RUNS 20)
#
#   provider   agsbx_provider_gvisor.execute() of the payload's `true`, RUNS
#              times on one handle (test-gvisor bench): each a request to the
#              execution server of the handle's shared container (a fork and
#              exec inside it), bounded capture; the first also waits for the
#              container's boot. Median from the driver.
#   baseline   hyperfine: `docker run --rm --network=none --runtime=runsc
#              IMAGE /agsbx-payload true`, the same image the provider imported
#   context    the same with --runtime=runc (what gVisor costs on top)
# Prints medians in ms and the ratio provider/baseline. Numbers only; no
# assertion (performance is never a test).
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
runs=${2:-20}
export AGSBX_BUILD_DIR=$build AGSBX_SOURCE_DIR=$src
source "$src/tests/lib/common.sh"
source "$src/tests/lib/dockerd.sh"

for f in test-gvisor agsbx-payload; do
  [[ -x $build/$f ]] || { echo "missing $build/$f: build first" >&2; exit 2; }
done
command -v hyperfine >/dev/null || { echo "hyperfine not installed" >&2; exit 2; }
command -v docker >/dev/null || { echo "docker CLI not installed" >&2; exit 2; }
command -v runsc >/dev/null || { echo "runsc not installed" >&2; exit 2; }

dockerd_start gvbench with-runsc
work=$(t_tmpdir gvbench)

echo "provider: $runs executions of 'true' on one handle" >&2
"$build/test-gvisor" bench "$runs" > "$work/provider.json"
prov_us=$(jq -r .median_us "$work/provider.json")

image=$(dockerd_api /images/json | jq -r '[.[].RepoTags[]? | select(startswith("agsbx-payload:"))][0]')
[[ -n $image && $image != null ]] || fail "the provider did not import its image"

# -i: without an attached stdin containerd hands runsc the host's /dev/null
# as the container's fd 0 and runsc chowns it to the sandbox user (seen
# here: the host's /dev/null became nobody:nogroup); with -i the CLI
# forwards hyperfine's stdin over the attach, a pipe, as the provider does.
hyperfine -N --runs "$runs" --warmup 2 --export-json "$work/docker.json" \
  -n docker-runsc "docker run --rm -i --network=none --runtime=runsc $image /agsbx-payload true" \
  -n docker-runc "docker run --rm -i --network=none --runtime=runc $image /agsbx-payload true" >&2
[[ $(stat -c %u:%g /dev/null) == 0:0 ]] || fail "the host's /dev/null is now $(stat -c %U:%G /dev/null)"

runsc_s=$(jq -r '.results[] | select(.command == "docker-runsc") | .median' "$work/docker.json")
runc_s=$(jq -r '.results[] | select(.command == "docker-runc") | .median' "$work/docker.json")
left=$(dockerd_api '/containers/json?all=1' | jq length)

awk -v p="$prov_us" -v s="$runsc_s" -v c="$runc_s" -v ens="$(jq -r .ensure_us "$work/provider.json")" \
    -v n="$runs" -v left="$left" 'BEGIN {
  printf "gvisor provider execute (median of %d)      %8.1f ms\n", n, p / 1000
  printf "docker run --runtime=runsc (hyperfine)      %8.1f ms\n", s * 1000
  printf "docker run --runtime=runc  (hyperfine)      %8.1f ms\n", c * 1000
  printf "ratio provider / docker-runsc               %8.2f\n", (p / 1000) / (s * 1000)
  printf "ratio docker-runsc / docker-runc            %8.2f\n", s / c
  printf "provider ensure (4 observation containers)  %8.1f ms\n", ens / 1000
  printf "containers left on the daemon               %8d\n", left
}'
