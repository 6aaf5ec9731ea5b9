#!/usr/bin/env bash
# probe.truthful judges each host condition a blocked reason asserts with
# the harness's own finding (conformance/hostcond.c), through the NEGATIVE
# CONTROL adapter neg-blocked-as.py (claims COND without looking), as the
# test user: "Landlock unsupported" on a kernel with a Landlock ABI fails;
# "Docker unreachable" is decided from the host probe recorded in the same
# bundle (pass when that probe could not reach Docker, fail when it could);
# "runtime unregistered" with no runtime list to judge by stays undecided
# and fails nothing. (external-negative.sh has userns_blocked.)
source "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
stage=$(t_stage_for_user)
adapters=$(t_tmpdir adapters)
install -m 0644 "$AGSBX_SOURCE_DIR"/tests/negative/adapters/*.py "$adapters/"
w=$(t_tmpdir hostcond)
chown "$AGSBX_TEST_USER:" "$w"

# claim COND REASON: collects the adapter claiming COND; sets $F.
claim() {
  F="$w/$1.json"
  local rc=0
  as_user timeout -s KILL 300 "$stage/agsbx-evidence" collect -q --unsigned --work-dir "$w" --output "$F" \
    --timeout-ms 2000 --provider n --adapter "n=python3 $adapters/neg-blocked-as.py $1 $2" 2>"$w/$1.err" || rc=$?
  [[ $rc == 1 ]] || { cat "$w/$1.err" >&2; fail "$1: collect exited $rc, want 1 (the control does nothing)"; }
  [[ $(p .reason) == "$2" ]] || { cat "$w/$1.err" >&2; p . >&2; fail "$1: reason $(p .reason), want $2"; }
}
p() { jq -r ".providers[] | select(.id == \"n\") | $1" "$F"; }
hc='.checks[] | select(.id=="probe.truthful") | .facts.host_condition'
truthful() { p '.checks[] | select(.id=="probe.truthful") | .verdict'; }

claim landlock_unsupported no_landlock
abi=$(jq -r '.host.landlock.abi.value // empty' "$F")
if [[ $abi =~ ^[0-9]+$ && $abi -ge 1 ]]; then
  [[ $(p "$hc.condition") == landlock_unsupported && $(p "$hc.provider_says") == true &&
     $(p "$hc.harness_observed") == false && $(p "$hc.how.host_probe") == landlock.abi &&
     $(p "$hc.how.abi") == "$abi" ]] || fail "landlock: host_condition $(p "$hc")"
  [[ $(truthful) == fail ]] || fail "landlock: probe.truthful $(truthful) on a kernel with Landlock ABI $abi"
  pass "landlock_unsupported on a kernel with Landlock ABI $abi fails probe.truthful"
else
  skip landlock 1 "this kernel has no Landlock ABI, so the lie cannot be shown"
fi

claim docker_unreachable no_docker
reachable=$(jq -r '.host.docker.reachable.value' "$F")
[[ $reachable == true || $reachable == false ]] || fail "docker: the host probe has no reachable fact: $reachable"
[[ $(p "$hc.how.host_probe") == docker.reachable && $(p "$hc.how.reachable") == "$reachable" ]] ||
  fail "docker: not decided from the host probe: $(p "$hc")"
if [[ $reachable == false ]]; then want_obs=true want=pass; else want_obs=false want=fail; fi
[[ $(p "$hc.harness_observed") == "$want_obs" ]] || fail "docker: harness_observed $(p "$hc.harness_observed"), host reachable $reachable"
[[ $(truthful) == "$want" ]] || fail "docker: probe.truthful $(truthful), want $want (host reachable: $reachable)"
pass "docker_unreachable is judged by the host probe (reachable $reachable: probe.truthful $want)"

claim runtime_unregistered no_runsc
if [[ $(jq -r '.host.docker.runtimes | has("value")' "$F") == false ]]; then
  [[ $(p "$hc.harness_observed") == null && $(p "$hc.how.runtime") == runsc && $(p "$hc.how.runtimes") == null ]] ||
    fail "runtime: with no runtime list the condition must stay undecided: $(p "$hc")"
  [[ $(truthful) == pass ]] || fail "runtime: an undecided condition failed probe.truthful: $(p '.checks[] | select(.id=="probe.truthful")')"
  pass "runtime_unregistered without a runtime list to judge by stays undecided"
else
  [[ $(p "$hc.how.host_probe") == docker.runtimes && $(p "$hc.harness_observed") != null ]] ||
    fail "runtime: a runtime list was probed but not used: $(p "$hc")"
  pass "runtime_unregistered is judged by the probed runtime list"
fi
