#!/usr/bin/env bash
# Benchmarks for the conformance core (numbers, not assertions):
#  1. collect wall time for trusted_local + landlock, median of 5 (goal <= 1.5 s);
#  2. per-execution overhead of the landlock provider vs exec'ing its helper
#     directly with the same manifest, and of trusted_local vs raw fork+exec
#     (goal <= 1.15x), all measured in this run.
# Usage: tests/bench/collect.sh [BUILD_DIR]   (run as a normal user for representative numbers)
set -euo pipefail
B=${1:-build}
B=$(cd "$B" && pwd)
command -v hyperfine >/dev/null || { echo "hyperfine missing (apt-get install hyperfine)" >&2; exit 1; }
W=$(mktemp -d /tmp/agsbx-bench-XXXXXX)
trap 'rm -rf "$W"' EXIT

echo "== collect wall time (trusted_local + landlock), 5 runs"
hyperfine -N --runs 5 --warmup 1 --export-json "$W/collect.json" \
  "$B/agsbx-evidence collect --provider trusted_local --provider landlock --unsigned -q --output $W/b.json" >/dev/null
jq -r '.results[0] | "median \(.median*1000|floor) ms (min \(.min*1000|floor), max \(.max*1000|floor))"' "$W/collect.json"

echo "== per-execution latency through the providers vs fork+exec of the payload"
"$B/agsbx-evidence" bench --provider trusted_local --provider landlock --runs 200

echo "== landlock: provider execute vs the helper exec'd directly (same rules)"
mkdir -p "$W/src" "$W/out"
cp "$B/agsbx-payload" "$W/src/"
cat > "$W/manifest.json" <<JSON
{"version":1,"target_abi":7,"restrict_tcp":true,"scope":true,"rules":[
 {"path":"/usr","access":"read"},{"path":"/etc/ld.so.cache","access":"read"},
 {"path":"$W/src","access":"read"},{"path":"$W/out","access":"write"},{"path":"/dev/null","access":"write"}]}
JSON
hyperfine -N --runs 200 --warmup 10 --export-json "$W/ll.json" \
  -n raw "$W/src/agsbx-payload true" \
  -n helper "$B/agsbx-landlock-exec --manifest $W/manifest.json -- $W/src/agsbx-payload true" >/dev/null
jq -r '.results[] | "\(.command): median \(.median*1e6|floor) us"' "$W/ll.json"
bench=$("$B/agsbx-evidence" bench --provider landlock --provider trusted_local --runs 200 --json)
raw=$(jq '.results[] | select(.command=="raw") | .median*1e6' "$W/ll.json")
helper=$(jq '.results[] | select(.command=="helper") | .median*1e6' "$W/ll.json")
ll=$(echo "$bench" | jq '.providers[] | select(.id=="landlock") | .p50_us')
tl=$(echo "$bench" | jq '.providers[] | select(.id=="trusted_local") | .p50_us')
base=$(echo "$bench" | jq '.baseline.p50_us')
awk -v ll="$ll" -v helper="$helper" -v tl="$tl" -v base="$base" 'BEGIN {
  printf "landlock provider p50 %d us / helper direct %d us = %.2fx\n", ll, helper, ll / helper;
  printf "trusted_local p50 %d us / fork+exec p50 %d us = %.2fx\n", tl, base, tl / base }'
