#!/usr/bin/env bash
# Wall time of `collect --provider gvisor` (as root) of this build against a
# baseline build and against the physical floor, one bare
# `docker run --rm -i --runtime runsc --network none IMAGE /agsbx-payload true`
# of the provider's own image, all in the same run, interleaved round by
# round (a machine whose load drifts weighs on all three alike), on one
# self-contained dockerd with a runsc --network=none runtime; then the
# bundles' verdicts compared.
#
#   tests/bench/gvisor-collect.sh BASE_BUILD_DIR [BUILD_DIR] [RUNS]
#       (BUILD_DIR default: ./build, RUNS 7; BASE_BUILD_DIR "-": no base)
#
# Prints, per command, the median and min-max of RUNS rounds, the median of
# the per-round ratios this/docker-run and this/base, the load average, and
# whether every check's verdict is the same. Numbers only; no assertion
# (performance is never a test). A base build from before the gVisor stdin
# fix changes the owner of the host's /dev/null (the bug it fixed):
# afterwards `chown root:root /dev/null; chmod 666 /dev/null`.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
base_arg=${1:?usage: gvisor-collect.sh BASE_BUILD_DIR|- [BUILD_DIR] [RUNS]}
build=$(cd "${2:-$src/build}" && pwd)
runs=${3:-7}
base=
[[ $base_arg == - ]] || base=$(cd "$base_arg" && pwd)
export AGSBX_BUILD_DIR=$build AGSBX_SOURCE_DIR=$src
source "$src/tests/lib/common.sh"
source "$src/tests/lib/dockerd.sh"

for b in $base "$build"; do
  [[ -x $b/agsbx-evidence && -x $b/agsbx-payload ]] || { echo "missing $b/agsbx-evidence: build first" >&2; exit 2; }
done
for c in docker runsc jq; do
  command -v $c >/dev/null || { echo "$c not installed" >&2; exit 2; }
done

AGSBX_SHARED_DOCKERD= dockerd_start gvcbench with-runsc
work=$(t_tmpdir gvcbench)
# Both builds' images imported before timing (each tags its own payload).
names=(this)
[[ -n $base ]] && names+=(base)
declare -A bin=([this]=$build [base]=$base)
for n in "${names[@]}"; do
  "${bin[$n]}/agsbx-evidence" collect --provider gvisor --unsigned -q --output "$work/$n.json"
done
image=$(jq -r '.providers[0].probe.facts.image.name' "$work/this.json")
[[ $image == agsbx-payload:* ]] || fail "no image name in the bundle"
# -i: without an attached stdin containerd hands runsc the host's /dev/null
# as the container's fd 0 and runsc chowns it to the sandbox user.
docker_run=(docker run --rm -i --runtime runsc --network none "$image" /agsbx-payload true)
"${docker_run[@]}" </dev/null >/dev/null

ms() { # ms CMD...: wall time in ms of one run
  local t0 t1
  t0=$(date +%s%N)
  "$@" </dev/null >/dev/null
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$work/times"
for ((i = 0; i < runs; i++)); do
  d=$(ms "${docker_run[@]}")
  t=$(ms "$build/agsbx-evidence" collect --provider gvisor --unsigned -q --output "$work/t.json")
  b=0
  [[ -n $base ]] && b=$(ms "$base/agsbx-evidence" collect --provider gvisor --unsigned -q --output "$work/b.json")
  echo "$d $t $b" >>"$work/times"
  echo "round $((i + 1)): docker-run $d ms, this $t ms${base:+, base $b ms}" >&2
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { awk -v c="$1" '{print $c}' "$work/times"; }
range() { col "$1" | sort -n | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "-" hi}'; }
printf 'docker run --runtime runsc (floor)  median %6s ms  range %s ms\n' "$(col 1 | median)" "$(range 1)"
printf 'collect --provider gvisor (this)    median %6s ms  range %s ms\n' "$(col 2 | median)" "$(range 2)"
[[ -n $base ]] && printf 'collect --provider gvisor (base)    median %6s ms  range %s ms\n' "$(col 3 | median)" "$(range 3)"
echo "ratio this/docker-run (median of $runs rounds) $(awk '{print $2 / $1}' "$work/times" | median)"
[[ -n $base ]] && echo "ratio this/base (median of $runs rounds) $(awk '{print $2 / $3}' "$work/times" | median)"
echo "load average before $load0, after $load1 ($(nproc) CPUs)"
jq -r '.providers[0].timings | "this run'"'"'s phases (last round): probe \(.probe_us / 1000 | floor) ms, ensure \(.ensure_us / 1000 | floor) ms, first exec \(.first_exec_us / 1000 | floor) ms, checks \(.checks_us / 1000 | floor) ms (concurrent \(.concurrent_checks_us / 1000 | floor) ms, alone \(.exclusive_checks_us / 1000 | floor) ms), release \(.release_us / 1000 | floor) ms, total \(.total_us / 1000 | floor) ms"' "$work/t.json"
[[ -n $base ]] && jq -r '.providers[0].timings | "base run'"'"'s phases (last round): checks \(.checks_us / 1000 | floor) ms (concurrent \(.concurrent_checks_us / 1000 | floor) ms, alone \(.exclusive_checks_us / 1000 | floor) ms), total \(.total_us / 1000 | floor) ms"' "$work/b.json"
if [[ -n $base ]]; then
  v() { jq -S '[.providers[] | {id, verdict, reason, checks: [.checks[] | {id, verdict}]}]' "$1"; }
  if diff <(v "$work/b.json") <(v "$work/t.json") >&2; then
    echo "verdicts: identical"
  else
    echo "verdicts: DIFFER"
  fi
fi
echo "containers left on the daemon: $(dockerd_api '/containers/json?all=1' | jq length)"
