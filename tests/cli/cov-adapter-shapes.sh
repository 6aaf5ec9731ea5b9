#!/usr/bin/env bash
# Every field check of agsbx-external/1's hello, probe, ensure, execute,
# cancel and health answers and of the response line itself, through
# `collect --adapter` as the unprivileged test user: the NEGATIVE-CONTROL
# adapter tests/negative/adapters/neg-shapes.py breaks exactly one field per
# mode (mistyped, missing, too long, outside the declared set, not JSON), and
# each provider must come out `defective` with adapter_protocol_error, the
# violation message naming that field, and adapter.protocol failing; the
# other providers of the same run are judged alone (16 adapters a run, the
# most one run declares). Nothing of the adapters is left running.
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"

stage=$(t_stage_for_user)
adapters=$(t_tmpdir adapters)
install -m 0644 "$AGSBX_SOURCE_DIR"/tests/negative/adapters/{negbase,neg-shapes}.py "$adapters/"
w=$(t_tmpdir shapes)
chown "$AGSBX_TEST_USER:" "$w"

# MODE=the violation message it must give (a substring)
declare -A WANT=(
  [hello-refused]="reason 'broken' is outside the declared set"
  [hello-protocol2]="hello: protocol is not 1"
  [hello-protocol-str]="hello: protocol is not 1"
  [hello-provider-str]="hello: provider {name, version} missing or mistyped"
  [hello-name-int]="hello: provider {name, version} missing or mistyped"
  [hello-version-missing]="hello: provider {name, version} missing or mistyped"
  [hello-name-long]="hello: provider name or version longer than 128 bytes"
  [hello-version-long]="hello: provider name or version longer than 128 bytes"
  [hello-reasons-empty]="hello: reasons missing, empty, or not [a-z0-9_] strings"
  [hello-reasons-obj]="hello: reasons missing, empty, or not [a-z0-9_] strings"
  [hello-reason-upper]="hello: reasons missing, empty, or not [a-z0-9_] strings"
  [hello-reason-long]="hello: reasons missing, empty, or not [a-z0-9_] strings"
  [hello-reason-int]="hello: reasons missing, empty, or not [a-z0-9_] strings"
  [hello-ready-unknown]="hello: a ready reason is outside reasons"
  [hello-ready-notarray]="hello: ready_reasons mistyped"
  [hello-no-ready]="hello: reasons lacks 'ready' (and no ready_reasons)"
  [hello-config-keys-int]="hello: config_keys missing or mistyped"
  [hello-config-keys-missing]="hello: config_keys missing or mistyped"
  [hello-conds-array]="hello: reason_conditions is not an object"
  [hello-conds-undeclared]="hello: reason_conditions names a reason outside reasons"
  [hello-conds-unknown]="hello: reason_conditions maps to an unknown host condition"
  [probe-refused]="probe: probe refused"
  [probe-available-str]="probe: available, reason or facts missing or mistyped"
  [probe-reason-missing]="probe: available, reason or facts missing or mistyped"
  [probe-facts-array]="probe: available, reason or facts missing or mistyped"
  [probe-reason-undeclared]="probe: probe reason outside the declared set"
  [probe-detail-int]="probe: detail or hint is not a string"
  [probe-hint-obj]="probe: detail or hint is not a string"
  [probe-caps-array]="probe: capabilities missing"
  [probe-caps-bool-str]="probe: a capability axis is not a boolean"
  [probe-caps-env-str]="probe: environment_scrubbed is neither a boolean nor null"
  [probe-caps-net-open]="probe: network, mechanism or safety_class missing or invalid"
  [probe-caps-mech-missing]="probe: network, mechanism or safety_class missing or invalid"
  [probe-caps-mech-long]="probe: mechanism or safety_class longer than 128 bytes"
  [probe-caps-class-long]="probe: mechanism or safety_class longer than 128 bytes"
  [ensure-refused-undeclared]="reason 'elsewhere' is outside the declared set"
  [ensure-refused-nomessage]="refusal without a string reason and message"
  [ensure-handle-missing]="ensure: handle (at most 128 bytes) or meta missing or mistyped"
  [ensure-handle-long]="ensure: handle (at most 128 bytes) or meta missing or mistyped"
  [ensure-meta-array]="ensure: handle (at most 128 bytes) or meta missing or mistyped"
  [cancel-str]="cancel response without a boolean 'cancelled'"
  [cancel-missing]="cancel response without a boolean 'cancelled'"
  [health-weird]='health: status is neither "ready" nor "unhealthy"'
  [line-array]="not a JSON object"
  [line-notjson]="not JSON: "
  [line-id-str]="response without an integer id"
  [line-ok-str]="ok missing or not a boolean"
  [line-id-unknown]="unknown id 999"
  [line-id-duplicate]="duplicate id 1"
  [line-real]="a number that is not an integer"
  [exec-result-array]="execute: result missing"
  [exec-exit-str]="execute: exit_code, signal or a *_total is missing or not an integer or null"
  [exec-signal-str]="execute: exit_code, signal or a *_total is missing or not an integer or null"
  [exec-timed-out-int]="execute: a result flag is missing or not a boolean"
  [exec-cancelled-missing]="execute: a result flag is missing or not a boolean"
  [exec-trunc-str]="execute: a result flag is missing or not a boolean"
  [exec-stdout-int]="execute: stdout_b64 or stderr_b64 missing"
  [exec-stderr-missing]="execute: stdout_b64 or stderr_b64 missing"
  [exec-b64-bad]="execute: stdout_b64/stderr_b64 is not base64"
  [exec-duration-neg]="execute: duration_us missing or negative"
  [exec-duration-str]="execute: duration_us missing or negative"
  [exec-meta-array]="execute: meta or inferred missing"
  [exec-inferred-obj]="execute: meta or inferred missing"
  [exec-inferred-int]="execute: inferred holds a non-string"
  [exec-total-big]="an integer beyond +-2^53"
)
# the adapter and this table name the same modes
mapfile -t have_modes < <($PY -c '
import ast, sys
t = ast.parse(open(sys.argv[1]).read())
for n in t.body:
    if isinstance(n, ast.Assign) and n.targets[0].id in ("BAD", "BADRES"):
        for k in n.value.keys: print(k.value)' "$adapters/neg-shapes.py" | sort)
mapfile -t want_modes < <(printf '%s\n' "${!WANT[@]}" | sort)
[[ "${have_modes[*]}" == "${want_modes[*]}" ]] || fail "neg-shapes.py's modes and this table differ"

# run N MODE...: one collect with each MODE as provider mN
run() {
  local n=$1 args=() i=0 m rc
  shift
  for m in "$@"; do
    i=$((i + 1))
    args+=(--adapter "m$i=python3 $adapters/neg-shapes.py $m" --provider "m$i")
  done
  set +e
  as_user "$stage/agsbx-evidence" collect -q --unsigned --timeout-ms 10000 --work-dir "$w" \
    --output "$w/b$n.json" "${args[@]}" 2>"$w/b$n.err"
  rc=$?
  set -e
  [[ $rc == 1 ]] || { cat "$w/b$n.err" >&2; fail "run $n: collect exited $rc, want 1 (a provider defect)"; }
  i=0
  local -A P
  for m in "$@"; do
    i=$((i + 1))
    jq_fields P "$w/b$n.json" '.providers[] | select(.id == $n)' --arg n "m$i" -- \
      verdict .verdict reason .reason msg .declared.adapter.violation.message \
      proto '.checks[] | select(.id=="adapter.protocol") | .verdict'
    [[ ${P[verdict]} == defective && ${P[reason]} == adapter_protocol_error ]] ||
      fail "$m: verdict ${P[verdict]}, reason ${P[reason]} (want defective, adapter_protocol_error)"
    [[ ${P[msg]} == *"${WANT[$m]}"* ]] || fail "$m: violation '${P[msg]}', want '${WANT[$m]}'"
    [[ ${P[proto]} == fail ]] || fail "$m: adapter.protocol ${P[proto]}"
  done
  [[ -z $(pgrep -u "$AGSBX_TEST_USER" -f "$adapters/neg-shapes.py" || true) ]] || fail "run $n: adapters left running"
  pass "run $n: $# malformed answers, each defective with its own message ($*)"
}

modes=("${want_modes[@]}")
for ((k = 0; k < ${#modes[@]}; k += 16)); do
  run $((k / 16)) "${modes[@]:k:16}"
done
