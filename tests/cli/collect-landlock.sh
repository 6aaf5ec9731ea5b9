#!/usr/bin/env bash
# Acceptance of the conformance core: landlock and trusted_local through
# collect, as root and as an unprivileged user; no process of that user
# remains afterwards.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/expect.sh"
d=$(t_tmpdir ll)

abi=$(/usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None,use_errno=True); print(l.syscall(444,None,0,1))')
[[ $abi -ge 1 ]] || skip "landlock" 1 "the kernel reports no Landlock ABI ($abi)"

# The expected verdicts: tests/data/expected-verdicts.json, sets "landlock"
# (with the ones for root and the kernel's ABI below) and "trusted_local".
ll_sets=(landlock)
[[ $abi -ge 4 ]] && ll_sets+=(landlock+abi4)
[[ $abi -lt 9 ]] && ll_sets+=(landlock+abi-below-9)

# collect_ok OUTPUT ARGS...: collect must exit 0; on failure show why
# (the progress log and every failing check), not just the status.
collect_ok() {
  local out=$1; shift
  set +e
  "$@" --output "$out" 2>"$out.log"
  local rc=$?
  set -e
  if [[ $rc != 0 ]]; then
    tail -n 40 "$out.log" >&2
    [[ -f $out ]] && jq -r '.providers[] | .id as $p | .checks[] | select(.verdict=="fail") |
      "\($p) \(.id): \(.reason)\n  facts: \(.facts|tostring)"' "$out" >&2
    fail "exit $rc, want 0: $*"
  fi
}

check_bundle() {
  local f=$1 who=$2 c v
  [[ $(jq -r '.providers[] | select(.id=="landlock") | .verdict' "$f") == conformant ]] \
    || { jq '.providers[] | select(.id=="landlock") | .checks[] | select(.verdict=="fail") | {id,reason}' "$f" >&2; fail "$who: landlock not conformant"; }
  # Every landlock check's verdict and reason, in one jq start (one per
  # check cost 25 ms of CPU each).
  local -A verdict_of=() reason_of=()
  jq_checks verdict_of reason_of "$f" '.providers[] | select(.id=="landlock")'
  local sets=("${ll_sets[@]}")
  # As root without --run-as the sandbox keeps every capability: no
  # escalation claim (no_new_privs alone does not block it, and the
  # observation shows it).
  [[ $who == root ]] && sets+=(landlock+root)
  expect_verdicts "$f" landlock "${sets[@]}"
  local n=$EXPECT_COUNT
  if [[ $who == root ]]; then
    jq -e '.providers[] | select(.id=="landlock") | .checks[] | select(.id=="priv.no_escalation") |
           .observed_pass == false and .facts.no_new_privs == 1' "$f" >/dev/null \
      || fail "root: landlock priv.no_escalation observation wrong"
  fi
  [[ $(jq -r '.providers[] | select(.id=="trusted_local") | .verdict' "$f") == conformant ]] || fail "$who: trusted_local"
  expect_verdicts "$f" trusted_local trusted_local
  # Every check states why.
  for c in "${!verdict_of[@]}"; do
    [[ -n ${reason_of[$c]} ]] || fail "$who: landlock $c without reason"
  done
  # Kernel write interfaces: where the control opens one outside (root),
  # the Landlock domain opens none (pass); where it opens none (a normal
  # user), a skip that says so.
  local ctl_opened
  ctl_opened=$(jq '[.providers[] | select(.id=="landlock") | .checks[] | select(.id=="fs.kernel_interfaces_readonly")
                    | .facts.interfaces[] | select(.control == "opened")] | length' "$f")
  v=${verdict_of[fs.kernel_interfaces_readonly]:-}
  if [[ $ctl_opened -gt 0 ]]; then [[ $v == pass ]]; else [[ $v == skip ]]; fi \
    || fail "$who: landlock fs.kernel_interfaces_readonly is $v (control opened $ctl_opened): ${reason_of[fs.kernel_interfaces_readonly]:-}"
  # Below ABI 9 the pathname unix socket is reached inside (set
  # landlock+abi-below-9: not_claimed); the facts say so.
  if [[ $abi -lt 9 ]]; then
    jq -e '.providers[] | select(.id=="landlock") | .checks[] | select(.id=="ipc.host_sockets_denied") |
      .facts.pathname.denied_inside == false' "$f" >/dev/null \
      || fail "$who: landlock below ABI 9 should reach the pathname socket"
  fi
  # syscalls_restricted claimed; every surface the control reaches outside
  # is the filter's EPERM inside; the filter itself is in the bundle.
  jq -e '.providers[] | select(.id=="landlock") | .claims.syscalls_restricted == true and
    (.checks[] | select(.id=="syscalls.kernel_surface_denied") | .facts.surfaces | to_entries |
     map(select(.value.control | startswith("reached"))) | length > 0 and all(.value.inside == "EPERM")) and
    (.probe.facts.seccomp_filter.instructions > 0) and .probe.facts.self_test.seccomp_denied == true' "$f" >/dev/null \
    || fail "$who: landlock seccomp filter not shown: $(jq -c '.providers[] | select(.id=="landlock") | .checks[] | select(.id=="syscalls.kernel_surface_denied") | .facts.surfaces' "$f")"
  # The effective ABI and the masks are recorded.
  jq -e '.providers[] | select(.id=="landlock") | .probe.facts | has("effective_abi") or has("system_abi")' "$f" >/dev/null \
    || fail "$who: landlock ABI facts missing"
  pass "$who: landlock conformant (sets ${sets[*]}: $n checks as expected), trusted_local conformant"
}

# As root.
collect_ok "$d/root.json" "$AGSBX_BIN" collect --provider landlock --provider trusted_local --unsigned
check_bundle "$d/root.json" root
jq -e '.context.representative == false and (.context.representative_reasons | index("root")) and
       (.context.representative_reasons | index("capabilities")) and
       (.context.privilege.capabilities.effective | test("^0+$") | not)' "$d/root.json" >/dev/null \
  || fail "root run must not be representative (root, capabilities)"

# As root dropping to the test user with --run-as.
if have_test_user; then
  collect_ok "$d/runas.json" "$AGSBX_BIN" collect --provider landlock --provider trusted_local --unsigned \
    --run-as "$AGSBX_TEST_USER"
  check_bundle "$d/runas.json" run-as
  jq -e --arg u "$AGSBX_TEST_USER" '.context.privilege.run_as == $u' "$d/runas.json" >/dev/null || fail "run_as not recorded"
fi

# As the unprivileged user itself (the contributor's case).
if have_test_user; then
  stage=$(t_stage_for_user)
  out=$(t_tmpdir out); chown "$AGSBX_TEST_USER" "$out"
  collect_ok "$out/user.json" as_user "$stage/agsbx-evidence" collect --provider landlock --provider trusted_local \
    --unsigned --work-dir "$out"
  check_bundle "$out/user.json" unprivileged
  jq -e '.context.privilege.euid != 0' "$out/user.json" >/dev/null || fail "euid not recorded"
  sleep 0.2
  # Only this test's processes: other tests may run as the same user at
  # the same time; everything of ours runs from or under $T_ROOT.
  left=$(user_processes "$AGSBX_TEST_USER" | grep -F -- "$T_ROOT" || true)
  [[ -z $left ]] || fail "processes of $AGSBX_TEST_USER remain: $left"
  pass "no process of $AGSBX_TEST_USER remains"
elif [[ $(id -u) != 0 ]]; then
  collect_ok "$d/user.json" "$AGSBX_BIN" collect --provider landlock --provider trusted_local --unsigned
  check_bundle "$d/user.json" unprivileged
else
  skip "unprivileged run" 1 "test user $AGSBX_TEST_USER missing"
fi
