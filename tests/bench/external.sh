#!/usr/bin/env bash
# Benchmarks for agsbx-external/1 (numbers, not assertions), all baselines
# measured in the same run:
#  1. protocol overhead per execute: an adapter that answers at once
#     (tests/bench/adapters/immediate.py, runs nothing) vs the payload run
#     directly (fork+exec, and trusted_local through the bounded runner);
#     plus an adapter that really runs the payload on the host (the
#     negative-control base) for the end-to-end cost. Goal: <= 1 ms p50.
#  2. a hung adapter (neg-hang.py) is detected within its deadline + 1 s:
#     execute deadline = --timeout-ms + 5 s; reported is when the harness
#     declared adapter_timeout, and collect's wall time.
# Usage: tests/bench/external.sh [BUILD_DIR] [RUNS]
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
RUNS=${2:-500}
S=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /tmp/agsbx-bench-ext-XXXXXX)
trap 'rm -rf "$W"' EXIT

echo "== 1. per-execute latency, $RUNS runs each (us)"
"$B/agsbx-evidence" bench --runs "$RUNS" --json --provider trusted_local \
  --adapter "immediate=python3 $S/tests/bench/adapters/immediate.py" --provider immediate \
  --adapter "hostrun=python3 $S/tests/negative/adapters/neg-liar.py" --provider hostrun >"$W/bench.json"
# bench --json: per provider its own p50/p90 (.provider) and, where it names
# one, its raw mechanism's (.raw); trusted_local's raw is the payload run
# directly (fork+exec+wait), the baseline here.
jq -r '(.providers[] | select(.id=="trusted_local") | .raw) as $raw
       | "fork+exec (payload direct)  p50 \($raw.p50_us)  p90 \($raw.p90_us)",
         (.providers[] | "\(.id | . + " " * (26 - length)) p50 \(.provider.p50_us // "-")  p90 \(.provider.p90_us // "-")  \(if .ratio_p50 then "x\(.ratio_p50 * 100 | round / 100) its raw mechanism" elif .unavailable then "unavailable: \(.unavailable)" else "" end)")' "$W/bench.json"
jq -r '(.providers[] | select(.id=="immediate") | .provider.p50_us) as $imm
       | (.providers[] | select(.id=="hostrun") | .provider.p50_us) as $host
       | (.providers[] | select(.id=="trusted_local") | .provider.p50_us) as $tl
       | "protocol round trip (immediate adapter) p50: \($imm) us (goal <= 1000)",
         "adapter running the payload vs trusted_local: +\($host - $tl) us p50"' "$W/bench.json"

echo "== 2. hung adapter detection (--timeout-ms 1000: execute deadline 6000 ms)"
for i in 1 2 3; do
  t0=$(date +%s%N)
  set +e
  "$B/agsbx-evidence" collect -q --unsigned --output "$W/hang.json" --timeout-ms 1000 --jobs 2 --provider hang \
    --adapter "hang=python3 $S/tests/negative/adapters/neg-hang.py" 2>/dev/null
  set -e
  t1=$(date +%s%N)
  msg=$(jq -r '.providers[0].declared.adapter.violation.message' "$W/hang.json")
  det=$(sed -n 's/.*detected after \([0-9]*\) ms.*/\1/p' <<<"$msg")
  echo "run $i: adapter_timeout detected after ${det} ms (deadline 6000, +$((det - 6000)) ms); collect wall $(((t1 - t0) / 1000000)) ms; $(jq -r '.providers[0].reason' "$W/hang.json")"
done
