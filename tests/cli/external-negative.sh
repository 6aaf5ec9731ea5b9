#!/usr/bin/env bash
# The NEGATIVE-CONTROL adapters (tests/negative/adapters/) through
# `collect --adapter`, as the unprivileged test user: each one breaks
# agsbx-external/1 in exactly one way and must come out `defective` with its
# specific reason, within its deadline (collect never hangs), in a valid
# bundle, with nothing of it left running. The adapters run each payload
# directly on the host, so the liar's lies are caught by the real checks;
# neg-argv0 isolates only argv[0] == payload (the argv[0] variants catch it).
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
$PY -c 'import jsonschema' 2>/dev/null || skip jsonschema 1 "python3-jsonschema is not installed"

stage=$(t_stage_for_user)
adapters=$(t_tmpdir adapters)
install -m 0644 "$AGSBX_SOURCE_DIR"/tests/negative/adapters/*.py "$adapters/"
w=$(t_tmpdir extneg)
chown "$AGSBX_TEST_USER:" "$w"

# pload [NAME FILTER]...: P[...] = what every run is judged on, and the
# extra FILTERs, all from one jq start (jq_fields) over the provider of
# the last run ($N in $F).
declare -A P=()
pload() {
  local v='.declared.adapter.violation'
  jq_fields P "$F" '.providers[] | select(.id == $n)' --arg n "$N" -- \
    verdict .verdict kind .kind argv0 '.declared.argv[0]' argv2 '.declared.argv[2]' reason .reason \
    vreason "$v.reason" vmessage "$v.message" voffending "$v.offending" voff_type "$v.offending | type" \
    voff_len "$v.offending | length" killed .declared.adapter.exit.killed \
    proto_failing '.failing_checks | index("adapter.protocol") != null' \
    proto '.checks[] | select(.id=="adapter.protocol") | .verdict' \
    proto_reason '.checks[] | select(.id=="adapter.protocol") | .reason' "$@"
}

# The adapters that run the whole matrix (liar, argv0, blocked, leak) run
# one at a time, as their verdicts rest on the checks' own timing. The rest
# mostly wait on a protocol deadline (a hung execute, a late answer, an
# adapter that lingers after shutdown) or break the protocol early, so
# they run in the background (at most BG_MAX at once: the two that hang
# on their first execute beside the heavy ones, the rest afterwards) and
# are judged one by one. Each has a work dir of its own: a concurrent run's directory in
# a shared one would be residue (fs.no_host_residue) in the others.
#
# start KEY ID TIMEOUT_MS ADAPTER_ARGS...: starts collect of the adapter
# neg-ADAPTER_ARGS as provider ID in the background, bundle $w/KEY.json,
# stderr $w/KEY.err, exit status $w/KEY.rc.
declare -A BG=()
BG_MAX=6
# A failing assertion must not leave a run behind: each ends by itself
# (its deadlines, or the hang guard), so the exit waits for them.
t_on_exit wait
start() {
  local key=$1 id=$2 ms=$3
  shift 3
  while (( $(jobs -rp | wc -l) >= BG_MAX )); do wait -n || true; done
  local wd="$w/wd-$key"
  mkdir "$wd"
  chown "$AGSBX_TEST_USER:" "$wd"
  (
    set +e
    # A generous hang guard, not a timing assertion: collect must end by itself.
    as_user timeout -s KILL 300 "$stage/agsbx-evidence" collect -q --unsigned --work-dir "$wd" \
      --output "$w/$key.json" --timeout-ms "$ms" --jobs 2 --provider "$id" --adapter "$id=python3 $*" 2>"$w/$key.err"
    echo $? >"$w/$key.rc"
  ) &
  BG[$key]=$!
}

# finished KEY: waits for KEY's collect (in this shell: wait cannot
# reach it from a subshell); its exit status in $RC.
finished() {
  wait "${BG[$1]}" || true
  RC=$(cat "$w/$1.rc")
}

declare -A MARKS=()
SCHEMA_CHECK=()
for n in liar hang slow garbage exit leak argv0 blocked; do
  MARKS[$n]="agsbx-negadapter-$n-$$-$RANDOM"
done

# neg NAME [NAME FILTER]...: collects neg-NAME.py as the test user (or
# takes the run started in the background batch); sets $F, $MARK and P
# (pload, with the extra reads).
neg() {
  local n=$1
  N=$n
  MARK=${MARKS[$n]}
  F="$w/$n.json"
  [[ -n ${BG[$n]:-} ]] || start "$n" "$n" 1000 "$adapters/neg-$n.py" "$MARK"
  finished "$n"
  [[ $RC == 1 ]] || { cat "$w/$n.err" >&2; fail "$n: collect exited $RC, want 1 (defect)"; }
  [[ -s $F ]] || fail "$n: no bundle"
  pload "${@:2}"
  [[ ${P[verdict]} == defective ]] || fail "$n: verdict ${P[verdict]}"
  [[ ${P[kind]} == external ]] || fail "$n: kind ${P[kind]}"
  [[ ${P[argv0]} == python3 && ${P[argv2]} == "$MARK" ]] || fail "$n: argv not recorded"
  SCHEMA_CHECK+=("$F") # validated together at the end (one python start)
  local left
  left=$(marker_processes "$MARK")
  [[ -z $left ]] || fail "$n: processes left running: $left"
}

# reason_is NAME REASON: the provider's reason and the failing adapter.protocol check.
# (from P: pload first)
reason_is() {
  [[ ${P[reason]} == "$2" ]] || fail "$1: reason ${P[reason]}, want $2"
  [[ ${P[vreason]} == "$2" ]] || fail "$1: violation ${P[vreason]}"
  [[ ${P[proto_failing]} == true ]] || fail "$1: adapter.protocol not failing"
  [[ ${P[proto]} == fail ]] || fail "$1: adapter.protocol check"
}

# The runs that only wait out a protocol deadline on their first execute
# (a hung one, a late answer: 6 s of sleep, no load) start first and run
# beside the heavy ones; judged further down.
for n in hang slow; do
  start "$n" "$n" 1000 "$adapters/neg-$n.py" "${MARKS[$n]}"
done

# The liar: well-formed protocol, every axis claimed, nothing enforced.
# The checks the lies must fail (missing ones count as not failing).
must_fail='"capabilities.truthful", "fs.host_read_denied", "fs.host_write_denied", "fs.symlink_escape_denied",
           "proc.contained", "net.namespace_distinct"'
neg liar not_failed "[$must_fail] - [.checks[] | select(.verdict == \"fail\") | .id] | join(\" \")" \
  leak '.checks[] | select(.id=="fs.host_read_denied") | .facts.secret_in_output' \
  probe_labelled .probe.facts.adapter_supplied \
  meta_labelled '[.checks[].observations[] | select(.meta) | .meta.adapter.supplied_by_adapter] | length > 5 and all' \
  uid .probe.facts.uid cwd_entries .probe.facts.cwd_entries cwd .probe.facts.cwd env '.probe.facts.env | join(",")'
[[ ${P[proto]} == pass ]] || fail "liar: protocol should be clean: ${P[proto_reason]}"
[[ -z ${P[not_failed]} ]] || fail "liar: ${P[not_failed]} did not fail"
[[ ${P[leak]} == true ]] || fail "liar: leak not recorded"
# What the adapter said is labelled as the adapter's.
[[ ${P[probe_labelled]} == true ]] || fail "liar: probe facts not labelled"
[[ ${P[meta_labelled]} == true ]] || fail "liar: result meta not labelled"
# The transport: started as the test user, in a fresh empty dir, minimal env.
[[ ${P[uid]} == "$(id -u "$AGSBX_TEST_USER")" ]] || fail "liar: adapter uid ${P[uid]}"
[[ ${P[cwd_entries]} == 0 ]] || fail "liar: adapter dir not empty"
[[ ${P[cwd]} == /tmp/agsbx-adapter-* ]] || fail "liar: adapter cwd ${P[cwd]}"
[[ ${P[env]} == AGSBX_EXTERNAL_PROTOCOL,HOME,LANG,PATH ]] || fail "liar: env ${P[env]}"
[[ ! -e ${P[cwd]} ]] || fail "liar: adapter dir not removed"
pass "liar: defective through the real checks (capabilities.truthful + attacks); transport as specified"

# As root with --run-as: the adapter is started as the sandbox user, not root
# (in a work dir only root can write: $w is the test user's).
set +e
"$stage/agsbx-evidence" collect -q --unsigned --work-dir "$(t_tmpdir runas)" --output "$w/runas.json" --run-as "$AGSBX_TEST_USER" \
  --timeout-ms 1000 --provider liar --adapter "liar=python3 $adapters/neg-liar.py" 2>"$w/runas.err"
rc=$?
set -e
[[ $rc == 1 ]] || { cat "$w/runas.err" >&2; fail "run-as: collect exited $rc"; }
[[ $(jq -r '.providers[0].probe.facts.uid' "$w/runas.json") == "$(id -u "$AGSBX_TEST_USER")" ]] \
  || fail "run-as: adapter ran as uid $(jq -r '.providers[0].probe.facts.uid' "$w/runas.json")"
pass "root --run-as: the adapter runs as $AGSBX_TEST_USER"

neg leak counted .declared.adapter.killed_processes exit_status .declared.adapter.exit.exit_status
reason_is leak adapter_leftover
[[ ${P[counted]} -ge 1 ]] || fail "leak: nothing counted"
[[ ${P[exit_status]} == 0 ]] || fail "leak: adapter did not exit cleanly"
pass "leak: the detached process is a leftover, killed and counted"

# Policy keyed on argv[0]: the payload is isolated, an interpreter is not.
# The direct attacks pass; the /bin/sh and /usr/bin/env variants fail them.
fs_attacks=(fs.host_read_denied fs.host_write_denied fs.symlink_escape_denied)
reads=()
for c in "${fs_attacks[@]}"; do
  k=".checks[] | select(.id==\"$c\")"
  reads+=("$c:verdict" "$k | .verdict" "$c:direct" "$k | .facts.argv_variants[0].outcome"
          "$c:variants" "$k | [.facts.argv_variants[1:][].outcome] | join(\",\")"
          "$c:tried" "$k | .facts.argv0_tried[1:] | join(\",\")")
done
neg argv0 "${reads[@]}"
for c in "${fs_attacks[@]}"; do
  [[ ${P[$c:verdict]} == fail ]] || fail "argv0: $c did not fail"
  [[ ${P[$c:direct]} == denied ]] || fail "argv0: $c direct not denied"
  [[ ${P[$c:variants]} == ALLOWED,ALLOWED ]] || fail "argv0: $c variants not ALLOWED"
  [[ ${P[$c:tried]} == /bin/sh,/usr/bin/env ]] || fail "argv0: $c argv0_tried"
done
[[ ${P[proto]} == pass ]] || fail "argv0: protocol should be clean: ${P[proto_reason]}"
pass "argv0: a policy that holds for the payload only fails every fs attack through /bin/sh and /usr/bin/env"

# A blocked reason the host contradicts: "user namespaces are blocked" on a
# host where the test user can create one (the harness's own probe, as that
# user) fails probe.truthful, with both facts in the bundle.
if as_user unshare --user --map-root-user --mount true 2>/dev/null; then
  hc='.checks[] | select(.id=="probe.truthful") | .facts.host_condition'
  neg blocked truthful '.checks[] | select(.id=="probe.truthful") | .verdict' hc "$hc" \
    hc_holds "$hc | .condition == \"userns_blocked\" and .provider_says == true and .harness_observed == false" \
    as_uid "$hc.how.as_uid"
  [[ ${P[truthful]} == fail ]] || fail "blocked: probe.truthful did not fail"
  [[ ${P[hc_holds]} == true ]] || fail "blocked: host_condition facts ${P[hc]}"
  [[ ${P[as_uid]} == "$(id -u "$AGSBX_TEST_USER")" ]] || fail "blocked: not decided as the test user"
  pass "blocked: a userns_blocked reason on a host that allows user namespaces fails probe.truthful"
else
  skip "user namespaces" 1 "the test user cannot create a user namespace here, so the lie cannot be shown"
fi

# The light runs, together: the lingering adapter (a whole matrix, then
# 10 s of grace after shutdown) first, then every other protocol violation
# (neg-violations.py MODE).
declare -A want=(
  [dup-id]="duplicate id" [unknown-id]="unknown id" [not-object]="not a JSON object"
  [mistyped-ok]="ok missing or not a boolean" [bad-caps]="probe: network, mechanism or safety_class"
  [long-line]="a line over the 16777216-byte limit" [bad-hello]="hello: protocol is not 1"
  [bad-reason]="reason 'made_up' is outside the declared set" [missing-field]="execute: meta or inferred missing"
  [bad-b64]="is not base64" [over-limit]="more output than max_output_bytes" [after-shutdown]="output after shutdown"
)
MARKS[v-linger]="agsbx-negadapter-v-linger-$$-$RANDOM"
# Its executes get 6 s (deadline 11 s), not 2 s: it runs the whole matrix,
# and in a fresh clone's make test, beside the fuzz and portable builds,
# one of them once took over 7 s (adapter_timeout, not the linger this
# run is about). What it tests is the 10 s grace after shutdown.
start v-linger v 6000 "$adapters/neg-violations.py" linger "${MARKS[v-linger]}"
for m in "${!want[@]}"; do
  MARKS[v-$m]="agsbx-negadapter-v-$m-$$-$RANDOM"
  start "v-$m" v 2000 "$adapters/neg-violations.py" "$m" "${MARKS[v-$m]}"
done

neg hang
reason_is hang adapter_timeout
grep -q 'execute (id [0-9]*) not answered within 6000 ms' <<<"${P[vmessage]}" || fail "hang: message ${P[vmessage]}"
[[ ${P[killed]} == true ]] || fail "hang: adapter not killed"
pass "hang: adapter_timeout at timeout_ms + 5 s, killed"

neg slow
reason_is slow adapter_timeout
pass "slow: a late answer is adapter_timeout"

neg garbage available .probe.available
reason_is garbage adapter_protocol_error
[[ ${P[voffending]} == *"not json"* ]] || fail "garbage: offending line not kept"
[[ ${P[verdict]} == defective && ${P[available]} == false ]] || fail "garbage: probe not failed"
pass "garbage: adapter_protocol_error with the offending line (escaped)"

neg exit stderr_tail .declared.adapter.stderr_tail
reason_is exit adapter_exited
grep -q 'exited with status 3' <<<"${P[vmessage]}" || fail "exit: status not reported"
grep -q 'dying mid-execute' <<<"${P[stderr_tail]}" || fail "exit: stderr tail not kept"
pass "exit: adapter_exited with its status and stderr tail"

# Every other protocol violation (neg-violations.py MODE): adapter_protocol_error
# with the specific message and the offending line, bounded and escaped.
for m in "${!want[@]}"; do
  MARK=${MARKS[v-$m]}
  N=v F="$w/v-$m.json"
  finished "v-$m"
  [[ $RC == 1 ]] || { cat "$w/v-$m.err" >&2; fail "violation $m: collect exited $RC"; }
  pload
  reason_is "$m" adapter_protocol_error
  grep -qF -- "${want[$m]}" <<<"${P[vmessage]}" || fail "violation $m: message '${P[vmessage]}', want '${want[$m]}'"
  [[ ${P[voff_type]} == string && ${P[voff_len]} -le 512 ]] || fail "violation $m: offending not a bounded string"
  [[ -z $(marker_processes "$MARK") ]] || fail "violation $m: processes left"
done
pass "protocol violations (${!want[*]}): adapter_protocol_error with their own messages"

# Answers shutdown but never exits: adapter_timeout after the 10 s grace, killed.
N=v F="$w/v-linger.json" MARK=${MARKS[v-linger]}
finished v-linger
[[ $RC == 1 ]] || { cat "$w/v-linger.err" >&2; fail "linger: collect exited $RC"; }
pload
reason_is linger adapter_timeout
grep -q 'did not exit within 10000 ms of shutdown' <<<"${P[vmessage]}" || fail "linger: message '${P[vmessage]}'"
[[ ${P[killed]} == true && -z $(marker_processes "$MARK") ]] || fail "linger: not killed"
pass "linger: not exiting after shutdown is adapter_timeout; the adapter is killed"

# Every bundle neg judged is valid against the schema (one python start).
mapfile -t got < <(schema_results "$AGSBX_SOURCE_DIR/schemas/evidence-bundle.schema.json" "${SCHEMA_CHECK[@]}")
for i in "${!SCHEMA_CHECK[@]}"; do
  [[ ${got[i]:-} == valid ]] || fail "${SCHEMA_CHECK[i]} is ${got[i]:-not checked} against the schema (above)"
done
pass "${#SCHEMA_CHECK[@]} bundles schema-valid"
