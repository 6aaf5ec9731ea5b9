#!/usr/bin/env bash
# Benchmarks for collect and the providers (numbers, not assertions), all
# measured in this run:
#  1. collect wall time: trusted_local + landlock + bubblewrap against a
#     landlock-only collect (goal: <= 1.10x, docs/performance.md; round
#     1's was <= 1.3x and <= 0.9 s on 2 cores);
#  2. `bench`: each provider's p50 against its raw mechanism run by hand
#     (goal: about 1x).
# Usage: tests/bench/collect.sh [BUILD_DIR] [RUNS]
# As root it runs everything as the unprivileged test user (AGSBX_TEST_USER,
# default agsbx-test) from a world-readable copy of the programs: bwrap
# refuses root, and a normal user is the representative case.
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
runs=${2:-10}
for tool in hyperfine jq; do
  command -v "$tool" >/dev/null || { echo "$tool missing (apt-get install $tool)" >&2; exit 2; }
done
W=$(mktemp -d /tmp/agsbx-bench-XXXXXX)
chmod 0755 "$W"
trap 'rm -rf "$W"' EXIT
run=()
if [[ $(id -u) == 0 ]]; then
  user=${AGSBX_TEST_USER:-agsbx-test}
  for f in agsbx-evidence $(cat "$B/agsbx-helpers.list"); do   # CMake's one helper list
    [[ -e $B/$f ]] && install -m 0755 "$B/$f" "$W/$f"
  done
  B=$W
  mkdir -m 1777 "$W/out"
  run=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups --reset-env
       env HOME=/tmp PATH=/usr/local/bin:/usr/bin:/bin)
  echo "(as $user)"
else
  mkdir "$W/out"
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"

c="$B/agsbx-evidence collect --unsigned -q --work-dir $W/out"
"${run[@]}" hyperfine -N --runs "$runs" --warmup 1 --export-json "$W/out/collect.json" \
  -n landlock "$c --provider landlock --output $W/out/1.json" \
  -n three "$c --provider trusted_local --provider landlock --provider bubblewrap --output $W/out/3.json" >/dev/null
jq -r '.results[] | "\(.command): median \(.median*1000|floor) ms (min \(.min*1000|floor), max \(.max*1000|floor))"' \
  "$W/out/collect.json"
jq -r '(.results | map({(.command): .median}) | add) as $m
  | "3-provider / landlock-only: \($m.three / $m.landlock * 100 | round / 100)x (goal <= 1.10); 3-provider \($m.three * 1000 | floor) ms"' \
  "$W/out/collect.json"
jq -c '{verdicts: [.providers[] | {(.id): .verdict}] | add, concurrency: .timings.concurrency}' "$W/out/3.json"

echo "== bench: each provider against its raw mechanism (same run, interleaved)"
"${run[@]}" "$B/agsbx-evidence" bench --provider trusted_local --provider landlock --provider bubblewrap --runs 200
