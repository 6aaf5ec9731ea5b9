#!/usr/bin/env bash
# verify and diff on a ~1 MiB signed bundle, against `jq -cjS . F` (parse +
# canonical serialisation of the same file) measured in the same run.
#
#   tests/bench/evidence.sh [BUILD_DIR] [RUNS]     (BUILD_DIR default ./build, RUNS 100)
#
# Goals: verify <= 0.05x jq (and <= 5 ms), diff <= 50 ms, `matrix` over 200
# bundles <= 1 s. Prints the means, the ratios to the jq baseline and the
# bare process start-up (`--version`; libcurl is no longer loaded at start)
# so the in-process part can be read off; does not fail on a missed goal
# (timing is not a test). verify reads the bundle in one streaming pass;
# AGSBX_VERIFY_TREE=1 (a hidden switch for this comparison) makes it read
# the tree as before: both run under `env` so they pay the same exec.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
runs=${2:-100}
B=$build/agsbx-evidence
D=$src/tests/data/bundles
for tool in hyperfine jq ssh-keygen; do
  command -v "$tool" >/dev/null || { echo "$tool not installed" >&2; exit 2; }
done
[[ -x $B ]] || { echo "missing $B: build first" >&2; exit 2; }

work=$(mktemp -d /tmp/agsbx-bench-evidence-XXXXXX)
trap 'rm -rf "$work"' EXIT

# ~1 MiB: the full fixture's providers repeated with many checks, each with
# a 1 KiB output excerpt (realistic: excerpts are capped at 2 KiB). Keys
# sorted, as collect writes them (verify hashes as it reads); the same
# bundle with its top-level keys in reverse order is verify's other path
# (the root object's members reordered when it closes, then hashed).
jq -S --arg blob "$(head -c 1024 /dev/zero | tr '\0' 'x')" '
  .providers as $p
  | .providers = [range(0; 8) as $i | $p[$i % 2] | .id = "\(.id)-\($i)"
      | .checks = [range(0; 60) as $c | .checks[$c % (.checks | length)]
          | .id = "\(.id).\($c)" | .observations |= map(.stdout = $blob)]]' \
  "$D/full.json" >"$work/big-unsigned.json"
# signed with stock tools over the canonical bytes (see docs/evidence.md)
ssh-keygen -q -t ed25519 -N '' -C bench@example.invalid -f "$work/key"
jq -cjS 'del(.signature)' "$work/big-unsigned.json" >"$work/msg"
ssh-keygen -q -Y sign -f "$work/key" -n agsbx-evidence "$work/msg"
fp=$(ssh-keygen -l -E sha256 -f "$work/key.pub" | cut -d' ' -f2)
jq --rawfile a "$work/msg.sig" --arg pub "$(cat "$work/key.pub")" --arg fp "$fp" \
  '.signature = {format: "sshsig", namespace: "agsbx-evidence", hash: "sha512", armored: $a,
                 public_key: $pub, fingerprint: $fp}' "$work/big-unsigned.json" >"$work/big.json"
# a changed copy for diff: some verdicts and a host fact
jq '.providers[3].checks[7].verdict = "fail" | .providers[5].verdict = "blocked"
    | .host.kernel.release.value = "6.19.0"' "$work/big.json" >"$work/big2.json"
jq 'to_entries | reverse | from_entries' "$work/big.json" >"$work/big-unsorted.json"
"$B" verify "$work/big.json" --key "$work/key.pub" >/dev/null
"$B" verify "$work/big-unsorted.json" --key "$work/key.pub" >/dev/null
size=$(stat -c %s "$work/big.json")
echo "bundle: $size bytes, $(jq '[.providers[].checks | length] | add' "$work/big.json") checks"

# 200 bundles for matrix: the full fixture under 200 host names.
mkdir "$work/many"
for i in $(seq -w 1 200); do
  jq -c --arg h "host-$i" '.host.os.hostname.value = $h | .created_at = "2026-01-01T00:00:00Z"' \
    "$D/full.json" >"$work/many/b$i.json"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"

hyperfine -N -w 5 -r "$runs" --export-json "$work/h.json" \
  -n jq "jq -cjS . $work/big.json" \
  -n startup "$B --version" \
  -n verify "$B verify $work/big.json --key $work/key.pub" \
  -n verify-unsorted "$B verify $work/big-unsorted.json --key $work/key.pub" \
  -n verify-stream-env "env AGSBX_VERIFY_TREE=0 $B verify $work/big.json --key $work/key.pub" \
  -n verify-tree-env "env AGSBX_VERIFY_TREE=1 $B verify $work/big.json --key $work/key.pub" \
  -n verify-unsorted-stream-env "env AGSBX_VERIFY_TREE=0 $B verify $work/big-unsorted.json --key $work/key.pub" \
  -n verify-unsorted-tree-env "env AGSBX_VERIFY_TREE=1 $B verify $work/big-unsorted.json --key $work/key.pub" \
  -n diff-self "$B diff $work/big.json $work/big.json" \
  -n diff "$B diff $work/big.json $work/big2.json --format json" -i \
  -n matrix200 "$B matrix --format json $(echo "$work"/many/b*.json)" \
  >"$work/h.out" 2>&1 || { cat "$work/h.out"; exit 1; }
grep -E '^(Benchmark|  Time)' "$work/h.out" || true

jq -r '
  (.results | map({(.command): .mean}) | add) as $m
  | (.results | map({(.command): .min}) | add) as $n
  | ($m["jq"]) as $base
  | "\nmean (ms)      jq \($base * 1000 | . * 100 | round / 100)",
    (["verify", "verify-unsorted", "diff-self", "diff"][] as $k
      | "  \($k): \($m[$k] * 1000 | . * 100 | round / 100) ms, ratio to jq \($m[$k] / $base | . * 100 | round / 100)"),
    "  one pass / tree (both under env): sorted \($m["verify-stream-env"] / $m["verify-tree-env"] | . * 100 | round / 100), unsorted \($m["verify-unsorted-stream-env"] / $m["verify-unsorted-tree-env"] | . * 100 | round / 100); cpu (user+sys) sorted \((.results | map({(.command): (.user + .system)}) | add) as $c | $c["verify-stream-env"] / $c["verify-tree-env"] | . * 100 | round / 100)",
    "  fastest runs (min; less exposed to a loaded machine): verify \($n["verify"] * 1000 | . * 100 | round / 100) ms / jq \($n["jq"] * 1000 | . * 100 | round / 100) ms = \($n["verify"] / $n["jq"] | . * 1000 | round / 1000); one pass / tree \($n["verify-stream-env"] / $n["verify-tree-env"] | . * 100 | round / 100); startup \($n["startup"] * 1000 | . * 100 | round / 100) ms",
    "  process startup alone (--version): \($m["startup"] * 1000 | . * 100 | round / 100) ms; verify less startup: \(($m["verify"] - $m["startup"]) * 1000 | . * 100 | round / 100) ms",
    "  cpu (user+sys) verify / jq: \((.results | map({(.command): (.user + .system)}) | add) as $c | $c["verify"] / $c["jq"] | . * 100 | round / 100) (wall ratios suffer most from a loaded machine)",
    "  matrix over 200 bundles: \($m["matrix200"] * 1000 | . * 100 | round / 100) ms",
    "goals: verify <= 0.05x jq: \(if $m["verify"] <= 0.05 * $base then "met" else "MISSED" end); verify <= 5 ms: \(if $m["verify"] <= 0.005 then "met" else "MISSED" end); diff <= 50 ms: \(if $m["diff"] <= 0.05 then "met" else "MISSED" end); matrix200 <= 1 s: \(if $m["matrix200"] <= 1 then "met" else "MISSED" end)"
' "$work/h.json"
