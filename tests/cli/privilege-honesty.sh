#!/usr/bin/env bash
# A run is representative only when the harness holds no capability at
# all, not merely when it is not uid 0: an unprivileged user with one
# ambient capability is not a normal user. The capability sets are
# recorded. (priv.no_escalation's "NoNewPrivs=1 with every capability"
# failing case is the neg_nnp_caps negative control in collect-negative.sh.)
source "$(dirname "$0")/../lib/common.sh"
user_gcov_env

have_test_user || skip "privilege honesty" 1 "needs root to give $AGSBX_TEST_USER an ambient capability"
stage=$(t_stage_for_user)
d=$(t_tmpdir priv); chown "$AGSBX_TEST_USER" "$d"
uid=$(id -u "$AGSBX_TEST_USER"); gid=$(id -g "$AGSBX_TEST_USER")

# run_with CAPS OUT: collect (trusted_local) as the test user, with ambient CAPS ("" for none).
run_with() {
  local caps=$1 out=$2 extra=()
  [[ -n $caps ]] && extra=(--inh-caps="+$caps" --ambient-caps="+$caps")
  setpriv --reuid="$uid" --regid="$gid" --init-groups "${extra[@]}" --reset-env -- \
    env HOME=/tmp PATH=/usr/bin:/bin TMPDIR="$d" ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} "${USER_GCOV_ENV[@]}" \
    "$stage/agsbx-evidence" collect --provider trusted_local --unsigned -q --output "$out" --work-dir "$d" \
    || fail "collect ($caps) exited $?"
}

run_with net_bind_service "$d/amb.json"
jq -e '.context.privilege.euid != 0 and .context.representative == false and
       (.context.representative_reasons | index("capabilities")) and
       .context.privilege.capabilities.ambient == "0000000000000400" and
       .context.privilege.capabilities.effective == "0000000000000400"' "$d/amb.json" >/dev/null \
  || { jq .context "$d/amb.json" >&2; fail "an ambient capability left the run representative"; }
pass "non-root with an ambient capability: not representative, reason 'capabilities', sets recorded"

run_with "" "$d/none.json"
jq -e '(.context.representative_reasons | index("capabilities")) == null and
       .context.privilege.capabilities.effective == "0000000000000000" and
       .context.privilege.capabilities.permitted == "0000000000000000"' "$d/none.json" >/dev/null \
  || { jq .context "$d/none.json" >&2; fail "a capability-less user was given the 'capabilities' reason"; }
pass "capability-less user: no 'capabilities' reason"
