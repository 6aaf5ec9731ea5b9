#!/usr/bin/env bash
# Stability under load (not a timed test): N rounds of two concurrent
# 3-provider collects (trusted_local + landlock + bubblewrap); every bundle
# must show the same verdicts as the first, and every check verdict must
# agree too. Prints a line per round and a summary; exit 1 on a difference.
# Usage: tests/bench/collect-stable.sh [BUILD_DIR] [ROUNDS]   (as root: runs as the test user)
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
rounds=${2:-20}
W=$(mktemp -d /tmp/agsbx-stable-XXXXXX)
chmod 0755 "$W"
trap 'rm -rf "$W"' EXIT
run=()
if [[ $(id -u) == 0 ]]; then
  user=${AGSBX_TEST_USER:-agsbx-test}
  for f in agsbx-evidence $(cat "$B/agsbx-helpers.list"); do   # CMake's one helper list
    [[ -e $B/$f ]] && install -m 0755 "$B/$f" "$W/$f"
  done
  B=$W
  run=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups --reset-env
       env HOME=/tmp PATH=/usr/local/bin:/usr/bin:/bin)
fi
mkdir -m 1777 "$W/out"
sig() { jq -c '[.providers[] | {id, verdict, checks: [.checks[] | {(.id): .verdict}] | add}]' "$1"; }
collect() {
  "${run[@]}" "$B/agsbx-evidence" collect --provider trusted_local --provider landlock --provider bubblewrap \
    --unsigned -q --work-dir "$W/out" --output "$1" 2>"$1.log"
}
want=""
bad=0
for r in $(seq 1 "$rounds"); do
  t0=$(date +%s%N)
  collect "$W/out/a$r.json" & pa=$!
  collect "$W/out/b$r.json" & pb=$!
  ra=0; rb=0
  wait $pa || ra=$?
  wait $pb || rb=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  for x in a b; do
    f=$W/out/$x$r.json
    [[ -f $f ]] || { echo "round $r $x: no bundle (exit $ra/$rb): $(tail -3 "$f.log")"; bad=1; continue; }
    s=$(sig "$f")
    [[ -n $want ]] || want=$s
    if [[ $s != "$want" ]]; then
      bad=1
      echo "round $r $x: DIFFERENT: $(jq -c '[.providers[] | {id, verdict, failing_checks}]' "$f")"
      diff <(jq -r '.[] | .id as $p | .checks | to_entries[] | "\($p) \(.key) \(.value)"' <<<"$want") \
           <(jq -r '.[] | .id as $p | .checks | to_entries[] | "\($p) \(.key) \(.value)"' <<<"$s") |
        grep '^[<>]' | sed 's/^/    /' || true
    fi
  done
  echo "round $r: exit $ra/$rb, ${ms} ms, load $(cut -d' ' -f1 /proc/loadavg), $(jq -c '[.providers[] | .verdict]' "$W/out/a$r.json" 2>/dev/null)"
done
echo "verdicts: $(jq -c '[.providers[] | {(.id): .verdict}] | add' "$W/out/a1.json")"
[[ $bad == 0 ]] && echo "stable: $((rounds * 2)) bundles, identical verdicts and check verdicts" || { echo "UNSTABLE"; exit 1; }
