#!/usr/bin/env bash
# Every check has a test where it fails: the NEGATIVE-CONTROL providers
# compiled only into agsbx-evidence-negctl lie or leak in one way each, and
# the named check must come out "fail", the provider "defective", and
# collect must exit 1.
source "$(dirname "$0")/../lib/common.sh"

NEG="$AGSBX_BUILD_DIR/agsbx-evidence-negctl"
[[ -x $NEG ]] || fail "negative-control CLI $NEG not built"
[[ $(id -u) == 0 ]] || skip "negative controls" 1 "priv.no_escalation's failing case needs root"
d=$(t_tmpdir neg)

# collect_neg PROVIDER EXTRA_ARGS... ; sets $F
collect_neg() {
  local p=$1; shift
  F="$d/$p.json"
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
  local c v
  for c in "$@"; do
    v=$(jq -r --arg c "$c" '.providers[0].checks[] | select(.id == $c) | .verdict' "$f")
    [[ $v == fail ]] || fail "$(basename "$f"): $c is '$v', want fail"
    jq -e --arg c "$c" '.providers[0].failing_checks | index($c) != null' "$f" >/dev/null \
      || fail "$(basename "$f"): $c missing from failing_checks"
    pass "$(basename "$f" .json): $c fails"
  done
}

collect_neg neg_overclaim
expect_fail "$F" capabilities.truthful fs.host_read_denied fs.host_write_denied fs.readonly_grant_denied \
  fs.symlink_escape_denied net.namespace_distinct net.egress_denied proc.contained priv.no_escalation \
  env.scrubbed syscalls.restricted fs.remount_denied
jq -e '.providers[0].checks[] | select(.id=="capabilities.truthful") | .facts.overclaim | length >= 5' "$F" >/dev/null \
  || fail "overclaim list incomplete"
# The secret really leaked, and the bundle says so rather than hiding it.
jq -e '.providers[0].checks[] | select(.id=="fs.host_read_denied") | .facts.secret_in_output == true' "$F" >/dev/null \
  || fail "host_read: secret_in_output not recorded"

collect_neg neg_leaky
expect_fail "$F" lifecycle.timeout_cleanup lifecycle.cancel_cleanup
collect_neg neg_nocap
expect_fail "$F" output.bounded
collect_neg neg_meta_liar
expect_fail "$F" lifecycle.consistent
collect_neg neg_runs_after_release
expect_fail "$F" lifecycle.consistent
collect_neg neg_fail_open
expect_fail "$F" fail.closed
collect_neg neg_probe_liar
expect_fail "$F" probe.truthful
collect_neg neg_noop
expect_fail "$F" fs.grant_write
collect_neg neg_mountns
expect_fail "$F" fs.remount_denied
# no_new_privs alone is not blocked escalation: every capability kept.
collect_neg neg_nnp_caps
expect_fail "$F" priv.no_escalation capabilities.truthful
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
