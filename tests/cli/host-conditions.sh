#!/usr/bin/env bash
# Host conditions are not provider defects. As the unprivileged user:
#  - inside a network namespace without a working loopback (unshare -n) the
#    egress control fails: the check is skipped as inconclusive, the
#    network claim is neither backed nor an overclaim, collect exits 0;
#  - under ulimit -n 16 the harness cannot run anything: every provider is
#    skipped with that reason, never blocked with a mechanism reason;
#  - --max-output-bytes below the payload's result line, and a config value
#    outside its key's type, are bad usage (exit 2) before anything runs.
source "$(dirname "$0")/../lib/common.sh"
user_gcov_env

have_test_user || skip "host conditions" 1 "needs root (unshare -n) and the user $AGSBX_TEST_USER"
command -v unshare >/dev/null || skip unshare 1 "util-linux unshare is missing"
stage=$(t_stage_for_user)
w=$(t_tmpdir hc); chown "$AGSBX_TEST_USER" "$w"
uid=$(id -u "$AGSBX_TEST_USER"); gid=$(id -g "$AGSBX_TEST_USER")
as_test_user() {
  setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env -- \
    env HOME=/tmp PATH=/usr/bin:/bin TMPDIR="$w" ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} "${USER_GCOV_ENV[@]}" "$@"
}

# ---- no loopback: unshare -n --------------------------------------------
set +e
unshare -n setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env -- \
  env HOME=/tmp PATH=/usr/bin:/bin TMPDIR="$w" ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} "${USER_GCOV_ENV[@]}" \
  "$stage/agsbx-evidence" collect --unsigned -q --work-dir "$w" --output "$w/netns.json" 2>"$w/netns.log"
rc=$?
set -e
F=$w/netns.json
[[ $rc == 0 ]] || { cat "$w/netns.log" >&2; [[ -f $F ]] && jq -r '.providers[] | .id as $p | .checks[] |
  select(.verdict=="fail") | "\($p) \(.id): \(.reason)"' "$F" >&2; fail "collect inside unshare -n exited $rc, want 0"; }
jq -e '.summary.defective == 0' "$F" >/dev/null || fail "a provider is defective inside unshare -n"
jq -e '[.providers[] | .checks[] | select(.id=="net.egress_denied" and .verdict != "not_claimed" and .verdict != "blocked")] |
       length > 0 and all(.verdict == "skip" and (.reason | test("inconclusive.*control failed")))' "$F" >/dev/null \
  || { jq '.providers[] | {id, c: [.checks[] | select(.id=="net.egress_denied") | {verdict, reason}]}' "$F" >&2;
       fail "net.egress_denied is not an inconclusive skip without loopback"; }
# landlock claims tcp_restricted (ABI >= 4): neither backed nor an overclaim.
if jq -e '.providers[] | select(.id=="landlock" and .verdict=="conformant" and .claims.network=="tcp_restricted")' "$F" >/dev/null; then
  jq -e '.providers[] | select(.id=="landlock") | .checks[] | select(.id=="capabilities.truthful") |
         .verdict == "pass" and (.facts.inconclusive | index("network"))' "$F" >/dev/null \
    || fail "landlock's network claim not marked inconclusive"
fi
pass "unshare -n: exit 0, no defective provider, egress inconclusive (skip) with the reason"

# ---- EMFILE: ulimit -n 16 -------------------------------------------------
set +e
as_test_user bash -c 'ulimit -n 16; exec "$0" "$@"' "$stage/agsbx-evidence" collect --unsigned -q \
  --work-dir "$w" --output "$w/emfile.json" 2>"$w/emfile.log"
rc=$?
set -e
F=$w/emfile.json
[[ $rc == 0 ]] || { cat "$w/emfile.log" >&2; fail "collect under ulimit -n 16 exited $rc, want 0"; }
jq -e '.summary.defective == 0 and .summary.blocked == 0' "$F" >/dev/null \
  || { jq -r '.providers[] | "\(.id) \(.verdict) \(.reason)"' "$F" >&2; fail "EMFILE made a provider defective or blocked"; }
jq -e 'all(.providers[] | select(.verdict != "skipped" or (.reason | test("not applicable") | not)); .verdict == "skipped" and (.reason | test("EMFILE")))' "$F" >/dev/null \
  || { jq -r '.providers[] | "\(.id) \(.verdict) \(.reason)"' "$F" >&2; fail "EMFILE: providers not skipped with the reason"; }
pass "ulimit -n 16: every provider skipped (EMFILE named), none blocked or defective"

# ---- bad usage before anything runs --------------------------------------
expect_rc 2 as_test_user "$stage/agsbx-evidence" collect --provider trusted_local --unsigned --work-dir "$w" \
  --max-output-bytes 100 --output "$w/small.json"
[[ ! -e $w/small.json ]] || fail "--max-output-bytes 100 wrote a bundle"
if command -v bwrap >/dev/null; then
  set +e
  as_test_user "$stage/agsbx-evidence" collect --provider bubblewrap --unsigned --work-dir "$w" \
    --config bubblewrap.network=maybe --output "$w/maybe.json" 2>"$w/maybe.err"
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "bubblewrap.network=maybe: exit $rc, want 2"
  grep -q "network' must be a bool" "$w/maybe.err" || fail "no type named: $(cat "$w/maybe.err")"
  [[ ! -e $w/maybe.json ]] || fail "a bundle was written for a bad config value"
  [[ -z $(find "$w" -maxdepth 1 -name 'agsbx-run-*') ]] || fail "a work dir was created before the config was checked"
fi
pass "--max-output-bytes below the result line and a mistyped config value: exit 2, nothing written"
