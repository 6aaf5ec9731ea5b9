#!/usr/bin/env bash
# collect runs providers concurrently, one worker process each: the bundle
# keeps the selection order (not the order they finish), the run records
# its concurrency and each provider's per-phase timings, the workers'
# intervals overlap by default and do not with --jobs 1, and the
# detached-tree lifecycle checks of providers that share the host's pid
# namespace (landlock, trusted_local) still pass side by side.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir conc)
B=$AGSBX_BIN
if have_test_user; then
  st=$(t_stage_for_user)
  chmod 1777 "$d"
  run() { as_user "$st/agsbx-evidence" "$@"; }
else
  run() { "$B" "$@"; }
fi
sel=(--provider trusted_local --provider landlock)
abi=$(/usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None,use_errno=True); print(l.syscall(444,None,0,1))')
[[ $abi -ge 1 ]] || skip landlock 1 "the kernel reports no Landlock ABI ($abi)"

run collect "${sel[@]}" --unsigned -q --work-dir "$d" --output "$d/two.json" ||
  fail "collect exited $?: $(jq -c '[.providers[] | {id, failing_checks}]' "$d/two.json" 2>/dev/null)"
# trusted_local finishes first or last: the order is the selection's either way.
jq -e '[.providers[].id] == ["trusted_local", "landlock"]' "$d/two.json" >/dev/null ||
  fail "bundle order: $(jq -c '[.providers[].id]' "$d/two.json")"
jq -e '.timings.concurrency.providers == 2 and .timings.concurrency.checks_per_provider >= 1
  and (.timings.method | length > 0) and ([.timings.providers[].id] == ["trusted_local", "landlock"])' \
  "$d/two.json" >/dev/null || fail "run timings: $(jq -c .timings "$d/two.json")"
# Concurrent: each worker started before the other ended.
jq -e '.timings.providers as [$a, $b] | $a.start_us < $b.end_us and $b.start_us < $a.end_us' "$d/two.json" >/dev/null ||
  fail "workers did not overlap: $(jq -c .timings.providers "$d/two.json")"
jq -e '[.providers[] | .timings | has("probe_us") and has("setup_us") and has("ensure_us") and has("first_exec_us")
  and has("concurrent_checks_us") and has("exclusive_checks_us") and has("release_us") and has("teardown_us")
  and .checks_us == .concurrent_checks_us + .exclusive_checks_us and (.method | length > 0)] | all' \
  "$d/two.json" >/dev/null || fail "per-phase timings: $(jq -c '[.providers[].timings]' "$d/two.json")"
for p in trusted_local landlock; do
  for c in lifecycle.timeout_cleanup lifecycle.cancel_cleanup; do
    v=$(jq -r --arg p "$p" --arg c "$c" '.providers[] | select(.id == $p) | .checks[] | select(.id == $c) | .verdict' "$d/two.json")
    [[ $v == pass ]] || fail "$p $c is $v side by side: $(jq -c --arg p "$p" --arg c "$c" '.providers[] | select(.id == $p) | .checks[] | select(.id == $c) | .facts' "$d/two.json")"
  done
done
# Host-process providers still run the detached-tree checks alone.
jq -e '[.providers[] | .timings.exclusive_checks_us > 0] | all' "$d/two.json" >/dev/null ||
  fail "lifecycle checks did not run alone: $(jq -c '[.providers[].timings]' "$d/two.json")"
pass "two providers concurrently: selection order, overlapping workers, lifecycle checks pass"

# --jobs 1: one provider after the other.
run collect "${sel[@]}" --jobs 1 --unsigned -q --work-dir "$d" --output "$d/one.json" || fail "collect --jobs 1 exited $?"
jq -e '.timings.concurrency.providers == 1 and .timings.concurrency.checks_per_provider == 1
  and (.timings.providers as [$a, $b] | $a.end_us <= $b.start_us)' "$d/one.json" >/dev/null ||
  fail "--jobs 1: $(jq -c .timings "$d/one.json")"
[[ $(jq -c '[.providers[] | {id, verdict}]' "$d/one.json") == "$(jq -c '[.providers[] | {id, verdict}]' "$d/two.json")" ]] ||
  fail "verdicts differ between --jobs 1 and concurrent runs"
pass "--jobs 1 runs providers one after the other, same verdicts"
