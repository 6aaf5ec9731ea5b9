#!/usr/bin/env bash
# NEGATIVE-CONTROL adapters whose JSON is hostile (tests/negative/adapters/
# neg-hostile-json.py: no isolation at all, well-formed protocol, one hostile
# value) run beside trusted_local, as the unprivileged test user, signed. What
# the bundle cannot hold (a real number, an integer beyond 2^53, nesting deeper
# than the bundle allows) costs that adapter its verdict, never the run; what
# is merely large is capped and recorded as truncated. In every case the other
# provider's evidence is in a bundle that `verify` accepts and `jq` reads.
# (Before: exit 3 with no bundle; a signed bundle verify, report and jq refuse;
# 410 MB of harness memory; an 80 MB bundle report refuses.)
# Peak RSS is recorded, never timed; the one memory assertion has a wide margin.
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
command -v ssh-keygen >/dev/null || skip ssh-keygen 1 "openssh-client is not installed"
[[ -x /usr/bin/time ]] || skip "GNU time" 1 "/usr/bin/time is not installed (package time)"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
$PY -c 'import jsonschema' 2>/dev/null || skip jsonschema 1 "python3-jsonschema is not installed"

stage=$(t_stage_for_user)
adapters=$(t_tmpdir adapters)
install -m 0644 "$AGSBX_SOURCE_DIR"/tests/negative/adapters/{negbase,neg-hostile-json}.py "$adapters/"
A="python3 $adapters/neg-hostile-json.py"
w=$(t_tmpdir hostile)
chown "$AGSBX_TEST_USER:" "$w"
ssh-keygen -q -t ed25519 -N '' -C hostile-json@example.invalid -f "$w/key"
chown "$AGSBX_TEST_USER:" "$w/key"

BUNDLES=()
# collect KEY ARGS...: trusted_local plus ARGS' providers, signed, as the test
# user, under GNU time; $F the bundle, $RC collect's status, $RSS its peak in
# KiB (the largest of collect and its workers; the adapters in the big-meta
# cases run no payload, so theirs stays small).
# The harness's own peak memory: the high-water mark (VmHWM) of every
# process running this test's staged agsbx-evidence (collect and its
# provider workers), sampled until the job ends. /usr/bin/time would count
# the sandboxed payload too, whose memory balloon (resources.memory_bounded)
# touches 1 GiB by design.
harness_peak_rss() {
  local job=$1 peak=0 s h
  while kill -0 "$job" 2>/dev/null; do
    for s in /proc/[0-9]*; do
      [[ $(readlink "$s/exe" 2>/dev/null) == "$stage/agsbx-evidence" ]] || continue
      h=$(awk '/^VmHWM:/ {print $2}' "$s/status" 2>/dev/null) || continue
      [[ -n $h ]] && ((h > peak)) && peak=$h
    done
    sleep 0.05
  done
  echo "$peak"
}

collect() {
  local key=$1
  shift
  local wd="$w/wd-$key"
  mkdir "$wd"
  chown "$AGSBX_TEST_USER:" "$wd"
  F="$w/$key.json"
  set +e
  # A generous hang guard, not a timing assertion: collect must end by itself.
  as_user timeout -s KILL 300 "$stage/agsbx-evidence" collect -q \
    --sign-key "$w/key" --work-dir "$wd" --output "$F" --timeout-ms 1000 --jobs 2 --provider trusted_local \
    "$@" 2>"$w/$key.err" &
  local job=$!
  RSS=$(harness_peak_rss "$job")
  wait "$job"
  RC=$?
  set -e
  [[ $RC == 1 ]] || { cat "$w/$key.err" >&2; fail "$key: collect exited $RC, want 1 (a defective provider)"; }
  [[ -s $F ]] || fail "$key: no bundle"
  BUNDLES+=("$F") # schema-validated together at the end (one python start)
}

# intact KEY: the bundle verifies (our verify, signature and trust), jq reads
# it, and trusted_local's evidence is all there: probed available, every
# check run and judged. (Its verdict is its own: under a loaded host a
# timing check such as lifecycle.timeout_cleanup may fail it either way.)
declare -A P=()
intact() {
  local out
  out=$("$AGSBX_BIN" verify "$F" --key "$w/key.pub" 2>&1) || fail "$1: verify refused the bundle: $out"
  jq -e . "$F" >/dev/null || fail "$1: jq cannot read the bundle"
  jq_fields P "$F" '.providers[] | select(.id == "trusted_local")' -- verdict .verdict avail .probe.available \
    nchecks '.checks | length' judged '[.checks[] | select(.verdict == "pass" or .verdict == "fail" or .verdict == "not_claimed")] | length'
  [[ ${P[avail]} == true && ${P[verdict]} =~ ^(conformant|defective)$ ]] ||
    fail "$1: trusted_local is ${P[verdict]} (available ${P[avail]}), want a provider that ran"
  ((P[nchecks] >= 20 && P[judged] >= 20)) || fail "$1: trusted_local has ${P[nchecks]} checks, ${P[judged]} judged"
}

# The shape the bundle cannot hold: the adapter's own protocol violation.
# (And a line of 300000 values: refused before jansson builds a tree of it,
# which took 430 MB for a 16 MiB line of "0,".)
for m in hello:real facts:bigint meta:deep meta:real hello:deep meta:manymeta:300000; do
  collect "${m/:/-}" --provider h --adapter "h=$A $m"
  intact "$m"
  jq_fields P "$F" '.providers[] | select(.id == "h")' -- verdict .verdict reason .reason \
    vmsg .declared.adapter.violation.message proto '.checks[] | select(.id=="adapter.protocol") | .verdict' \
    proto_failing '.failing_checks | index("adapter.protocol") != null'
  [[ ${P[verdict]} == defective && ${P[reason]} == adapter_protocol_error ]] ||
    fail "$m: h is ${P[verdict]} (${P[reason]}), want defective (adapter_protocol_error)"
  [[ ${P[proto]} == fail && ${P[proto_failing]} == true ]] || fail "$m: adapter.protocol did not fail"
  case $m in
    *:real) want="a number that is not an integer" ;;
    *:bigint) want="an integer beyond +-2^53" ;;
    *:deep) want="nested deeper than 32 levels" ;;
    *:manymeta:*) want="more than 262144 values in one line" ;;
  esac
  [[ ${P[vmsg]} == "$want"* ]] || fail "$m: violation '${P[vmsg]}', want '$want...'"
  pass "$m: h defective ($want), trusted_local's evidence in a bundle verify and jq accept; peak RSS $RSS KiB"
done

# 3 MB of meta on every execute: capped (64 KiB), recorded as truncated, and
# the harness's memory stays bounded (was 410 MB and exit 3: the worker's
# report went over 64 MiB).
collect bigmeta --provider h --adapter "h=$A meta:bigmeta:3000000"
intact bigmeta
echo "bigmeta: peak RSS ${RSS} KiB" >&2
jq_fields P "$F" '[.providers[] | select(.id == "h") | .checks[].observations[]? | .meta.adapter | select(.)]' -- \
  n length truncated '[.[] | select(.truncated and .meta.truncated and (.meta.why | test("cap")))] | length'
((P[n] > 0)) || fail "bigmeta: no execution recorded"
[[ ${P[truncated]} == "${P[n]}" ]] || fail "bigmeta: ${P[truncated]} of ${P[n]} metas recorded as truncated"
# Generous: an accidental copy of the 3 MB line per execution would exceed it.
((RSS > 0)) || fail "bigmeta: the harness's memory was never sampled"
# AddressSanitizer's shadow memory and quarantine (CI's sanitizer build)
# roughly double what a process holds; the bug this guards against kept
# 581 MB (a copy of every 3 MB line), far above either bound.
limit=131072
# (ldd's whole output first: `ldd | grep -q` under pipefail fails when
# grep's early exit hands ldd a SIGPIPE.)
libs=$(ldd "$stage/agsbx-evidence" 2>/dev/null || true)
[[ $libs == *libasan* ]] && limit=393216
((RSS < limit)) || fail "bigmeta: peak RSS ${RSS} KiB, want < $((limit / 1024)) MiB"
pass "bigmeta: all ${P[n]} 3 MB metas truncated at the cap; peak RSS ${RSS} KiB"

# Two adapters at 0.9 MB meta each: the bundle stays far below 64 MiB (was
# 80 MB) and report reads it.
collect two --provider h --provider g --adapter "h=$A meta:bigmeta:900000" --adapter "g=$A meta:bigmeta:900000"
intact two
size=$(stat -c %s "$F")
echo "two: bundle ${size} bytes, peak RSS ${RSS} KiB" >&2
((size < 16 << 20)) || fail "two: bundle of $size bytes"
"$AGSBX_BIN" report "$F" >"$w/two.report" 2>"$w/two.report.err" || fail "two: report refused: $(cat "$w/two.report.err")"
grep -q trusted_local "$w/two.report" || fail "two: trusted_local missing from the report"
pass "two: two adapters at 0.9 MB meta each give a $size-byte bundle that verify and report accept"

# The budget: 16 declared adapters (the most) leave each a 1 MiB share;
# the one selected sends 60 KB (under the cap) on every execute, so the
# first ones are kept and, once its share is spent, the rest are truncated.
decl=()
for i in $(seq 2 16); do decl+=(--adapter "d$i=$A meta:bigmeta:1"); done
collect budget --provider h --adapter "h=$A meta:bigmeta:60000" "${decl[@]}"
intact budget
jq_fields P "$F" '[.providers[] | select(.id == "h") | .checks[].observations[]? | .meta.adapter | select(.)]' -- \
  kept '[.[] | select(.truncated | not)] | length' kept_bytes '[.[] | select(.truncated | not) | .meta.x_hostile | length] | add // 0' \
  spent '[.[] | select(.truncated and (.meta.why | test("share"))) | .meta.limit_bytes] | unique | join(",")' \
  n_trunc '[.[] | select(.truncated)] | length'
declare -A Q=()
jq_fields Q "$F" '.providers[] | select(.id == "h") | .declared.adapter.supplied_json' -- \
  rec_kept .kept_bytes rec_share .share_bytes rec_trunc .truncated_pieces
((P[kept] > 0)) || fail "budget: nothing kept"
[[ ${P[spent]} == 1048576 ]] || fail "budget: no truncation at a 1 MiB share (${P[spent]})"
((P[kept_bytes] <= 1048576)) || fail "budget: ${P[kept_bytes]} bytes kept, over the share"
# The adapter's record says the same (it counts every piece read, some not quoted in a check).
[[ ${Q[rec_share]} == 1048576 ]] || fail "budget: recorded share ${Q[rec_share]}"
((Q[rec_kept] >= P[kept_bytes] && Q[rec_kept] <= 1048576)) || fail "budget: recorded ${Q[rec_kept]} bytes kept"
((Q[rec_trunc] >= P[n_trunc])) || fail "budget: recorded ${Q[rec_trunc]} pieces truncated, ${P[n_trunc]} in the bundle"
pass "budget: ${P[kept]} metas (${P[kept_bytes]} bytes) kept, the rest truncated once the 1 MiB share was spent"

mapfile -t got < <(schema_results "$AGSBX_SOURCE_DIR/schemas/evidence-bundle.schema.json" "${BUNDLES[@]}")
for i in "${!BUNDLES[@]}"; do
  [[ ${got[i]:-} == valid ]] || fail "${BUNDLES[i]} is ${got[i]:-not checked} against the schema (above)"
done
pass "${#BUNDLES[@]} bundles schema-valid"
