#!/usr/bin/env bash
# Wall time of `collect --provider gvisor` (as root) of this build against a
# baseline build, both in the same run on one self-contained dockerd with a
# runsc --network=none runtime; then the two bundles' verdicts compared.
#
#   tests/bench/gvisor-collect.sh BASE_BUILD_DIR [BUILD_DIR] [RUNS]
#       (BUILD_DIR default: ./build, RUNS 5)
#
# Prints hyperfine's table, the ratio this/base of the means, and whether
# every check's verdict is the same. Numbers only; no assertion (performance
# is never a test). A base build from before the gVisor stdin fix changes
# the owner of the host's /dev/null (the bug it fixed): afterwards
# `chown root:root /dev/null; chmod 666 /dev/null`.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
base=$(cd "${1:?usage: gvisor-collect.sh BASE_BUILD_DIR [BUILD_DIR] [RUNS]}" && pwd)
build=$(cd "${2:-$src/build}" && pwd)
runs=${3:-5}
export AGSBX_BUILD_DIR=$build AGSBX_SOURCE_DIR=$src
source "$src/tests/lib/common.sh"
source "$src/tests/lib/dockerd.sh"

for b in "$base" "$build"; do
  [[ -x $b/agsbx-evidence && -x $b/agsbx-payload ]] || { echo "missing $b/agsbx-evidence: build first" >&2; exit 2; }
done
command -v hyperfine >/dev/null || { echo "hyperfine not installed" >&2; exit 2; }
command -v runsc >/dev/null || { echo "runsc not installed" >&2; exit 2; }

AGSBX_SHARED_DOCKERD= dockerd_start gvcbench with-runsc
work=$(t_tmpdir gvcbench)
# Both builds' images imported before timing (each tags its own payload).
for b in base:"$base" this:"$build"; do
  "${b#*:}/agsbx-evidence" collect --provider gvisor --unsigned -q --output "$work/${b%%:*}.json"
done
hyperfine -N --runs "$runs" --warmup 0 --export-json "$work/h.json" \
  -n base "$base/agsbx-evidence collect --provider gvisor --unsigned -q --output $work/b.json" \
  -n this "$build/agsbx-evidence collect --provider gvisor --unsigned -q --output $work/t.json" >&2
jq -r '.results[] | "\(.command)\tmean \(.mean * 1000 | floor) ms\tmedian \(.median * 1000 | floor) ms\tmin \(.min * 1000 | floor) ms"' "$work/h.json"
jq -r '[.results[] | .mean] | "ratio this/base (means) \(.[1] / .[0] * 100 | floor / 100)"' "$work/h.json"
v() { jq -S '[.providers[] | {id, verdict, reason, checks: [.checks[] | {id, verdict}]}]' "$1"; }
if diff <(v "$work/b.json") <(v "$work/t.json") >&2; then
  echo "verdicts: identical"
else
  echo "verdicts: DIFFER"
fi
echo "containers left on the daemon: $(dockerd_api '/containers/json?all=1' | jq length)"
