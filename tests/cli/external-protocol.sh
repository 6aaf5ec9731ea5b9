#!/usr/bin/env bash
# agsbx-external/1 end to end with the documented example adapter (the text
# in docs/external-protocol.md, wrapping the real bwrap), as the
# unprivileged test user: conformant, kind/argv/hello recorded, nothing left
# running; its logged traffic validates against
# schemas/external-protocol.schema.json. Bad declarations exit 2 before
# anything runs.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/expect.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
command -v bwrap >/dev/null || skip bubblewrap 1 "bwrap is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
$PY -c 'import jsonschema' 2>/dev/null || skip jsonschema 1 "python3-jsonschema is not installed"

stage=$(t_stage_for_user)
w=$(t_tmpdir extproto)
chown "$AGSBX_TEST_USER:" "$w"
doc=$AGSBX_SOURCE_DIR/docs/external-protocol.md

# 1. The example is the documented text, and short.
sed -n '/<!-- example-adapter:begin -->/,/<!-- example-adapter:end -->/p' "$doc" | sed '1,2d;$d' | sed '$d' >"$w/ex.py"
cmp -s "$w/ex.py" "$AGSBX_SOURCE_DIR/docs/examples/bwrap-adapter.py" || fail "doc example differs from docs/examples/bwrap-adapter.py"
[[ $(wc -l <"$w/ex.py") -le 60 ]] || fail "example adapter longer than 60 lines"
chmod 0644 "$w/ex.py"
pass "the documented example adapter is docs/examples/bwrap-adapter.py ($(wc -l <"$w/ex.py") lines)"

# 2. Through collect as the test user, its traffic logged by tee on both sides.
MARK="agsbx-extproto-$$-$RANDOM"
cmd="sh -c 'tee $w/in.log | python3 $w/ex.py | tee $w/out.log' $MARK"
set +e
as_user "$stage/agsbx-evidence" collect -q --unsigned --work-dir "$w" --output "$w/ex.json" --provider bwx \
  --adapter "bwx=$cmd" 2>"$w/ex.err"
rc=$?
set -e
[[ $rc == 0 ]] || { cat "$w/ex.err" >&2; fail "example: collect exited $rc"; }
p() { jq -r ".providers[] | select(.id == \"bwx\") | $1" "$w/ex.json"; }
[[ $(p .verdict) == conformant ]] || fail "example: verdict $(p .verdict), failing $(p '.failing_checks|join(",")')"
[[ $(p .kind) == external ]] || fail "example: kind"
[[ $(p '.declared.argv | length') == 4 && $(p '.declared.argv[3]') == "$MARK" ]] || fail "example: argv $(p '.declared.argv | join(" ")')"
[[ $(p .declared.command) == "$cmd" ]] || fail "example: command as given not recorded"
[[ $(p .declared.hello.provider.name) == bwrap-example ]] || fail "example: hello not recorded"
[[ $(p .declared.adapter.exit.exit_status) == 0 && $(p .declared.adapter.violation) == null ]] || fail "example: adapter exit"
expect_verdicts "$w/ex.json" bwx external-bwrap-example
[[ $(p .claims.syscalls_restricted) == false ]] || fail "example: claims syscalls_restricted"
[[ -z $(marker_processes "$MARK") ]] || fail "example: adapter processes left running"
$PY - "$AGSBX_SOURCE_DIR/schemas/evidence-bundle.schema.json" "$w/ex.json" <<'EOF' || fail "example: bundle not schema-valid"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
EOF
pass "example adapter: conformant with real bwrap as $AGSBX_TEST_USER; kind, argv, hello recorded"

# 2b. Under the labelled blocked-userns simulation the whole adapter tree runs
#     behind the seccomp filter: bwrap fails, the adapter says so and
#     refuses ensure (fail.closed passes), and the harness's own userns probe
#     under the same simulation agrees (probe.truthful passes).
# 2a, in the same run: a relative path in the command (the adapter starts
#     elsewhere, in a fresh empty directory) is made absolute against
#     collect's directory, and the command as given is kept. (An adapter
#     that did not start would be defective, adapter_exited, not blocked.)
set +e
(cd "$w" && as_user "$stage/agsbx-evidence" collect -q --unsigned --work-dir "$w" --output "$w/sim.json" --provider bwx \
  --simulate blocked-userns --adapter "bwx=python3 ./ex.py" 2>"$w/sim.err")
rc=$?
set -e
[[ $rc == 0 ]] || { cat "$w/sim.err" >&2; fail "simulation: collect exited $rc"; }
declare -A S=()
jq_fields S "$w/sim.json" '.providers[] | select(.id == "bwx")' -- verdict .verdict reason .reason \
  adapter_argv0 '.declared.adapter.argv[0]' argv1 '.declared.argv[1]' argv '.declared.argv | join(" ")' \
  command .declared.command \
  fail_closed '.checks[] | select(.id=="fail.closed") | "\(.verdict): \(.reason)"' \
  probe_truthful '.checks[] | select(.id=="probe.truthful") | "\(.verdict): \(.reason)"'
[[ ${S[argv1]} == "$w/./ex.py" ]] || fail "relative: argv ${S[argv]}"
[[ ${S[command]} == "python3 ./ex.py" ]] || fail "relative: command as given"
pass "a relative path in the command is made absolute; the command as given is kept"
[[ ${S[verdict]} == blocked && ${S[reason]} == bwrap_unusable ]] || fail "simulation: ${S[verdict]} ${S[reason]}"
[[ ${S[adapter_argv0]} == */agsbx-simulate ]] || fail "simulation: adapter not started behind agsbx-simulate"
for c in fail_closed probe_truthful; do
  [[ ${S[$c]} == pass:* ]] || fail "simulation: $c ${S[$c]}"
done
pass "blocked-userns simulation: the example adapter is blocked and fails closed"

# 3. The logged session against the message schema: each request by its op,
#    each response by its request's op; overlap really happened.
$PY - "$AGSBX_SOURCE_DIR/schemas/external-protocol.schema.json" "$w/in.log" "$w/out.log" <<'EOF' || fail "traffic does not match the schema"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
# One validator per definition, built once: jsonschema.validate() checks
# the schema and builds a validator on every call (8 s for a session).
V = jsonschema.validators.validator_for(schema)
V.check_schema(schema)
whole, by_name = V(schema), {}
def check(obj, name):
    if name not in by_name:
        by_name[name] = V({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"})
    by_name[name].validate(obj)
    whole.validate(obj)
reqs = [json.loads(l) for l in open(sys.argv[2])]
resps = [json.loads(l) for l in open(sys.argv[3])]
ops = {}
for q in reqs:
    check(q, "request_" + q["op"])
    ops[q["id"]] = q["op"]
for r in resps:
    check(r, "response_" + ops[r["id"]] if r["ok"] else "refusal")
seen = {q["op"] for q in reqs}
assert seen == {"hello", "probe", "ensure", "health", "execute", "cancel", "release", "shutdown"}, seen
assert len(resps) == len(reqs), (len(resps), len(reqs))
order = [r["id"] for r in resps]
assert order != sorted(order), "responses never overlapped"
print(f"{len(reqs)} requests, {len(resps)} responses valid")
EOF
pass "logged session validates against schemas/external-protocol.schema.json"

# 4. Bad declarations: exit 2, one error line (plus the usage hint), nothing
#    runs, no output.
touch_cmd="sh -c 'touch $w/ran'"
bad() {
  local what=$1; shift
  set +e
  "$AGSBX_BIN" collect -q --unsigned --output "$w/bad.json" --adapter "t=$touch_cmd" "$@" 2>"$w/bad.err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || fail "$what: exit $rc, want 2"
  [[ $(grep -c 'error:' "$w/bad.err") == 1 ]] || fail "$what: not one error line: $(cat "$w/bad.err")"
  [[ ! -e $w/bad.json && ! -e $w/ran ]] || fail "$what: something ran or was written"
  pass "bad declaration ($what): exit 2: $(grep 'error:' "$w/bad.err")"
}
bad "no =" --adapter nocommand
bad "collides with a built-in" --adapter bubblewrap=true
bad "empty command" --adapter x=
bad "blank command" --adapter "x=   "
bad "declared twice" --adapter x=true --adapter x=false
bad "adapter and wrap share an id" --adapter x=true --wrap x=true
bad "bad id" --adapter "Bad=true"
bad "id too long" --adapter "$(printf 'a%.0s' {1..33})=true"
bad "unterminated quote" --adapter "x=sh -c 'oops"
bad "wrap without =" --wrap firejail
bad "unknown wrap claim" --wrap w=true --config w.claims=everything
bad "unknown wrap config key" --wrap w=true --config w.mode=strict

# 5. An adapter that cannot be started is a defect of that provider, with why.
set +e
"$AGSBX_BIN" collect -q --unsigned --output "$w/ns.json" --provider nope --adapter "nope=/nonexistent/adapter --x" 2>/dev/null
rc=$?
set -e
[[ $rc == 1 ]] || fail "missing adapter: exit $rc, want 1"
[[ $(jq -r '.providers[0].verdict + " " + .providers[0].reason' "$w/ns.json") == "defective adapter_start_failed" ]] \
  || fail "missing adapter: $(jq -r '.providers[0].verdict + " " + .providers[0].reason' "$w/ns.json")"
jq -r '.providers[0].probe.detail' "$w/ns.json" | grep -q 'No such file or directory' || fail "missing adapter: no cause"
pass "an adapter that cannot be started: defective (adapter_start_failed) with the cause"
