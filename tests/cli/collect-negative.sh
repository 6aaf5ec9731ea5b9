#!/usr/bin/env bash
# Every check has a test where it fails: the NEGATIVE-CONTROL providers
# compiled only into agsbx-evidence-negctl lie or leak in one way each, and
# the checks must come out "fail", the provider "defective", and collect
# must exit 1. Which checks each provider fails is the catalogue's
# (`checks --json`: the rows whose negative control is that provider in
# this script), and every provider it names here is run.
source "$(dirname "$0")/../lib/common.sh"

NEG="$AGSBX_BUILD_DIR/agsbx-evidence-negctl"
[[ -x $NEG ]] || fail "negative-control CLI $NEG not built"
[[ $(id -u) == 0 ]] || skip "negative controls" 1 "priv.no_escalation's failing case needs root"
d=$(t_tmpdir neg)
"$AGSBX_BIN" checks --json >"$d/catalogue.json" || fail "checks --json"
me=tests/cli/collect-negative.sh

# neg_checks PROVIDER: the checks the catalogue says PROVIDER makes fail here.
neg_checks() {
  jq -r --arg p "$1" --arg t "$me" '[.checks[] | select(any(.negative_control[]; .test == $t and .provider == $p))
    | .id] | join(" ")' "$d/catalogue.json"
}
RAN=()

# collect_neg PROVIDER EXTRA_ARGS... ; sets $F
collect_neg() {
  local p=$1; shift
  F="$d/$p.json"
  RAN+=("$p")
  set +e
  "$NEG" collect --provider "$p" --unsigned --output "$F" --jobs 1 -q "$@" 2>"$d/$p.err"
  local rc=$?
  set -e
  [[ $rc == 1 ]] || { cat "$d/$p.err" >&2; fail "$p: collect exited $rc, want 1 (defect)"; }
  [[ $(jq -r '.providers[0].verdict' "$F") == defective ]] || fail "$p: verdict not defective"
}

# expect_fail FILE CHECK...
expect_fail() {
  local f=$1; shift
  (($# > 0)) || fail "$(basename "$f"): no check to fail (the catalogue names none for it)"
  local c v
  # Every check's verdict and the failing_checks list, in two jq starts for
  # the whole bundle (two per check cost 50 ms of CPU each).
  local -A verdict_of=() reason_of=() F=()
  jq_checks verdict_of reason_of "$f" '.providers[0]'
  jq_fields F "$f" '.providers[0]' -- failing '.failing_checks | join(" ")'
  for c in "$@"; do
    v=${verdict_of[$c]:-}
    [[ $v == fail ]] || fail "$(basename "$f"): $c is '$v', want fail: $(jq -c --arg c "$c" \
      '.providers[0].checks[] | select(.id == $c) | {reason, facts}' "$f")"
    [[ " ${F[failing]} " == *" $c "* ]] || fail "$(basename "$f"): $c missing from failing_checks"
    pass "$(basename "$f" .json): $c fails"
  done
}

# The unsandboxed liar, run as root here (so its capabilities and ptrace
# rights are real), claims every axis: it fails every isolation check,
# its ensure ignores config and never re-verifies the bundle, it opens
# core_pattern and release_agent for write (never writing), reaches the
# host kernel's attack surface, and no bound stops its fork loop or its
# balloon (it claims resources_bounded too).
collect_neg neg_overclaim
want=$(neg_checks neg_overclaim)
if [[ $(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0) != 0 ]]; then
  want=${want/syscalls.io_uring_denied/}
  echo "# note: syscalls.io_uring_denied's failing case: io_uring is disabled on this host (its control fails)"
fi
expect_fail "$F" $want
jq -e '.providers[0].checks[] | select(.id=="capabilities.truthful") | .facts.overclaim | length >= 5' "$F" >/dev/null \
  || fail "overclaim list incomplete"
# The secret really leaked, and the bundle says so rather than hiding it.
jq -e '.providers[0].checks[] | select(.id=="fs.host_read_denied") | .facts.secret_in_output == true' "$F" >/dev/null \
  || fail "host_read: secret_in_output not recorded"

jq -e '.providers[0].checks[] | select(.id=="secrets.home_denied") | .facts.canary_removed == true' "$F" >/dev/null \
  || fail "the \$HOME canary was not removed"
jq -e '.providers[0].checks[] | select(.id=="proc.ptrace_denied") | .facts.secret_in_output == true' "$F" >/dev/null \
  || fail "ptrace: the target's secret did not show in the liar's output"
# Host-side receipts, attributed: the liar's own connection/datagram is
# counted as the sandbox's, the control's (a different text) as the
# control's, each awaited rather than assumed after a pause.
jq -e '.providers[0].checks[] | select(.id=="ipc.host_sockets_denied") | .facts
       | [.pathname, .abstract] | all(.listener_accepted == 1 and .control_accepted == 1)' "$F" >/dev/null \
  || fail "ipc: listener receipts not recorded as inside 1 / control 1"
jq -e '.providers[0].checks[] | select(.id=="net.egress_udp_denied") | .facts
       | [."udp_127.0.0.1", ."udp_127.0.0.1_detached"] | all(.received_from_inside == 1 and .control_received)' "$F" >/dev/null \
  || fail "udp: datagrams not attributed as inside 1 / control received"
pass "neg_overclaim: host-side receipts attributed to inside and control"
jq -e '.providers[0].checks[] | select(.id=="fs.kernel_interfaces_readonly") | .facts.interfaces.core_pattern
       | .inside == "opened" and .control == "opened"' "$F" >/dev/null || fail "kernel interfaces: core_pattern not recorded as opened"
jq -e '.providers[0].checks[] | select(.id=="resources.pids_bounded") | .facts.inside.forked == 2048' "$F" >/dev/null \
  || fail "pids: the fork loop did not stop exactly at its cap"
collect_neg neg_residue
expect_fail "$F" $(neg_checks neg_residue)
collect_neg neg_status_liar
expect_fail "$F" $(neg_checks neg_status_liar)

# The $HOME canary goes even when collect is interrupted while it exists:
# neg_hang_on_canary stalls on its read and first names the canary on a
# FIFO (readiness without polling; other runs' canaries may come and go in
# the same $HOME); SIGTERM arrives then.
home=$(getent passwd "$(id -un)" | cut -d: -f6)
# Only our own canary is judged: other runs as this user (concurrent tests,
# a contributor's collect) have theirs under fresh names.
mkfifo -m 0600 "$d/hang.ready"
AGSBX_NEG_HANG_READY="$d/hang.ready" "$NEG" collect --provider neg_hang_on_canary --unsigned --work-dir "$d" \
  --output "$d/hang.json" -q --jobs 1 2>"$d/hang.err" &
hp=$!
# Opened read-write so the open never blocks; read until the announcement
# arrives or collect is gone (slices only so that a dead collect is seen).
exec 3<>"$d/hang.ready"
canary=""
until read -r -t 5 canary <&3; do kill -0 $hp 2>/dev/null || break; done
exec 3<&-
if [[ $canary != "$home"/.agsbx-canary-*/id_key || ! -f $canary ]]; then
  kill -KILL $hp 2>/dev/null || true
  [[ $canary == "$home"/.agsbx-canary-*/id_key ]] && rm -f "$canary" && rmdir "$(dirname "$canary")"
  fail "the canary was not announced or is not in $home: '$canary' ($(cat "$d/hang.err"))"
fi
kill -TERM $hp
set +e; wait $hp; rc=$?; set -e
[[ $rc == 143 ]] || fail "interrupted collect exited $rc, want 143 (SIGTERM)"
[[ ! -e $canary && ! -e $(dirname "$canary") ]] || fail "the canary survived SIGTERM: $canary"
[[ ! -e $d/hang.json ]] || fail "an interrupted collect left a bundle"
pass "SIGTERM while the \$HOME canary exists: removed, no bundle"

collect_neg neg_leaky
expect_fail "$F" $(neg_checks neg_leaky)
collect_neg neg_nocap
expect_fail "$F" $(neg_checks neg_nocap)
collect_neg neg_meta_liar
expect_fail "$F" $(neg_checks neg_meta_liar)
collect_neg neg_runs_after_release
expect_fail "$F" $(neg_checks neg_runs_after_release)
collect_neg neg_fail_open
expect_fail "$F" $(neg_checks neg_fail_open)
collect_neg neg_probe_liar
expect_fail "$F" $(neg_checks neg_probe_liar)
collect_neg neg_noop
expect_fail "$F" $(neg_checks neg_noop)
collect_neg neg_mountns
expect_fail "$F" $(neg_checks neg_mountns)
jq -e '.providers[0].checks[] | select(.id=="fs.kernel_interfaces_readonly") | .facts.mount_inside
       | .attempted and .cgroup2 == "mounted"' "$F" >/dev/null || fail "neg_mountns: the cgroup2 mount not recorded"
# Root of its own user and cgroup namespaces (nobody outside): nothing
# opens for write, the cgroup mounts alone fail the check.
collect_neg neg_cgroupns
expect_fail "$F" $(neg_checks neg_cgroupns)
jq -e '.providers[0].checks[] | select(.id=="fs.kernel_interfaces_readonly") | .facts
       | ([.interfaces[] | select(.inside == "opened")] | length == 0) and .mount_inside.cgroup2 == "mounted"' "$F" >/dev/null \
  || fail "neg_cgroupns: not failed by the mount alone: $(jq -c '.providers[0].checks[] | select(.id=="fs.kernel_interfaces_readonly") | .facts' "$F")"
# no_new_privs alone is not blocked escalation: every capability kept.
collect_neg neg_nnp_caps
expect_fail "$F" $(neg_checks neg_nnp_caps)
jq -e '.providers[0].checks[] | select(.id=="priv.no_escalation") | .facts.no_new_privs == 1 and
       (.facts.cap_eff | test("^0+$") | not)' "$F" >/dev/null || fail "neg_nnp_caps: NoNewPrivs and CapEff not both recorded"

# The negative controls never leak into the shipped binary.
if "$AGSBX_BIN" collect --provider neg_overclaim --unsigned --output "$d/x.json" 2>/dev/null; then
  fail "shipped binary knows a negative control"
fi
[[ ! -e $d/x.json ]] || fail "partial output after bad input"
pass "negative controls are test-only"

# Hostile sandbox output (reals, huge integers, invalid UTF-8, NUL, control
# bytes) cannot stop a valid, signable bundle from being written.
"$AGSBX_BIN" keygen -f "$d/key" >/dev/null 2>&1 || fail "keygen"
set +e
"$NEG" collect --provider neg_hostile --sign-key "$d/key" --output "$d/hostile.json" -q 2>"$d/hostile.err"
rc=$?
set -e
[[ $rc == 1 ]] || { cat "$d/hostile.err" >&2; fail "neg_hostile: collect exited $rc, want 1"; }
jq -e '[.. | numbers | select(. != floor)] | length == 0' "$d/hostile.json" >/dev/null || fail "a real number reached the bundle"
expect_rc 0 "$AGSBX_BIN" verify "$d/hostile.json" --key "$d/key.pub"
/usr/bin/python3 - "$d/hostile.json" <<'PY' || fail "bundle not valid UTF-8 JSON"
import json, sys
raw = open(sys.argv[1], 'rb').read()
raw.decode('utf-8')           # strict: raises on invalid UTF-8
json.loads(raw)
PY
pass "hostile sandbox output sanitised; bundle valid and verifiable"

# A provider that claims every axis and then refuses every execution has
# shown nothing: every check that needs a run fails, the refusal is
# recorded, and none of them passes by default.
collect_neg neg_refuses
refused=$(jq '[.providers[0].checks[] | select(.reason == "provider refused to execute")] | length' "$F")
[[ $refused -ge 12 ]] || fail "neg_refuses: only $refused checks report the refusal"
jq -e '[.providers[0].checks[] | select(.reason == "provider refused to execute") | .verdict] | all(. == "fail")' "$F" \
  >/dev/null || fail "neg_refuses: a refused check did not fail"
jq -e '[.providers[0].checks[] | select(.reason == "provider refused to execute") | .observations[]
       | select(.role == "sandbox") | .refused] | all(. == "run_failed") and length > 0' "$F" >/dev/null ||
  fail "neg_refuses: the refusal is not recorded in the observations"
expect_fail "$F" $(neg_checks neg_refuses)
pass "neg_refuses: $refused checks fail on a refused execution, each recorded"

# Every provider the catalogue names for this script ran here.
for p in $(jq -r --arg t "$me" '[.checks[].negative_control[] | select(.test == $t) | .provider] | unique[]' \
             "$d/catalogue.json"); do
  [[ " ${RAN[*]} " == *" $p "* ]] || fail "the catalogue names $p as a negative control here, but it never ran"
done
pass "every negative-control provider the catalogue names for this script ran"
