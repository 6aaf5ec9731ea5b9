#!/usr/bin/env bash
# agsbx-evidence probe: the JSON validates against schemas/host-probe.schema.json
# (and a broken copy does not); values equal independent reads (uname -r,
# /proc/sys, id -u, a ctypes Landlock syscall, bwrap --version); usage errors
# exit 2 with nothing on stdout; Docker endpoints that are missing, not Docker,
# or not unix:// are facts (exit 0), and tcp:// is never connected to; the
# probe works as the unprivileged test user.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "not built: $AGSBX_BIN"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
$PY -c 'import jsonschema' 2>/dev/null || skip jsonschema 1 "python3-jsonschema is not installed"
SCHEMA=$AGSBX_SOURCE_DIR/schemas/host-probe.schema.json
FAKE=$AGSBX_SOURCE_DIR/tests/cli/lib-probe-fake-http.py
T=$(t_tmpdir probe)

validate() { [[ $(schema_results "$SCHEMA" "$1") == valid ]]; } # validate FILE
# validate_later FILE WHAT: validated with the others at the end.
LATER=() LATER_WHAT=()
validate_later() { LATER+=("$1"); LATER_WHAT+=("$2"); }

# probe_json OUT [env assignments...]: probe --json must exit 0, print JSON.
probe_json() {
  local out=$1; shift
  set +e; env "$@" "$AGSBX_BIN" probe --json >"$out" 2>"$out.err"; local rc=$?; set -e
  [[ $rc == 0 ]] || fail "probe --json exited $rc: $(cat "$out.err")"
  jq -e 'type == "object"' "$out" >/dev/null || fail "probe --json printed no JSON object: $(head -c 300 "$out")"
}

# --- the JSON and its schema
J=$T/host.json
probe_json "$J"
validate "$J" || fail "probe --json does not validate against $SCHEMA"
# Every value read below, from one jq start.
declare -A H=()
jq_fields H "$J" . -- schema .schema floats '[.. | numbers | select(. != floor)] | length' \
  kernel .kernel.release.value userns .userns.max_user_namespaces.value euid .privilege.euid.value \
  egid .privilege.egid.value ll_reason .landlock.abi.reason ll_value .landlock.abi.value ll .landlock.abi \
  aa_profiles '.apparmor.bwrap_profiles_loaded.value | length' aa_profiles_absent .apparmor.bwrap_profiles_loaded.absent \
  aa_enabled '.apparmor.enabled | "\(.absent) \(.reason)"' aa_enabled_json .apparmor.enabled \
  bw_path .bubblewrap.path.value bw_version_line .bubblewrap.version_line.value bw_version .bubblewrap.version \
  bw_unshare_all '.bubblewrap.options.value["--unshare-all"]' bw_package .bubblewrap.package.value \
  runsc_line .runsc.version_line.value macos .macos.sandbox_exec.reason \
  nfacts '[to_entries[] | select(.value | type == "object") | .value | keys[]] | length'
[[ ${H[schema]} == agsbx-evidence/host-probe/v1 ]] || fail "schema id"
# The schema can fail: a fact without a source, a float, an unknown family.
jq 'del(.kernel.release.source)' "$J" >"$T/bad1.json"
jq '.userns.max_user_namespaces.value = 1.5' "$J" >"$T/bad2.json"
jq '.extra = {}' "$J" >"$T/bad3.json"
jq '.docker.reachable = {"value": false, "source": "x"}' "$J" >"$T/bad4.json"
[[ $(schema_results "$SCHEMA" "$T"/bad{1,2,3,4}.json 2>/dev/null | tr '\n' ' ') == "invalid invalid invalid invalid " ]] ||
  fail "schema accepted a broken copy (bad1-4: $(schema_results "$SCHEMA" "$T"/bad{1,2,3,4}.json 2>/dev/null | tr '\n' ' '))"
# No floating point anywhere.
[[ ${H[floats]} == 0 ]] || fail "non-integer number in probe output"
pass "probe --json validates; the schema rejects broken copies"

# --- values equal independent reads
[[ ${H[kernel]} == "$(uname -r)" ]] || fail "kernel.release != uname -r"
if [[ -r /proc/sys/user/max_user_namespaces ]]; then
  [[ ${H[userns]} == "$(cat /proc/sys/user/max_user_namespaces)" ]] || fail "userns.max_user_namespaces differs from /proc"
fi
[[ ${H[euid]} == "$(id -u)" ]] || fail "privilege.euid != id -u"
[[ ${H[egid]} == "$(id -g)" ]] || fail "privilege.egid != id -g"
LL=$($PY -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
print(r if r >= 0 else "errno:%d" % ctypes.get_errno())')
case $LL in
  errno:38) [[ ${H[ll_reason]} == kernel_does_not_support_landlock ]] || fail "landlock ENOSYS reason" ;;
  errno:95) [[ ${H[ll_reason]} == landlock_disabled ]] || fail "landlock EOPNOTSUPP reason" ;;
  *) [[ ${H[ll_value]} == "$LL" ]] || fail "landlock.abi ${H[ll]} != syscall $LL" ;;
esac
# Loaded bwrap profiles: read from securityfs when readable, else absent
# with the errno; never guessed from /etc.
if [[ -r /sys/kernel/security/apparmor/profiles ]]; then
  want=$(grep -c bwrap /sys/kernel/security/apparmor/profiles || true)
  [[ ${H[aa_profiles]} == "$want" ]] || fail "apparmor.bwrap_profiles_loaded"
else
  [[ ${H[aa_profiles_absent]} == true ]] || fail "apparmor.bwrap_profiles_loaded should be absent"
fi
if [[ ! -e /sys/module/apparmor ]]; then
  [[ ${H[aa_enabled]} == "true ENOENT" ]] || fail "apparmor.enabled should be absent (ENOENT): ${H[aa_enabled_json]}"
fi
if have bwrap; then
  [[ ${H[bw_path]} == "$(command -v bwrap)" ]] || fail "bubblewrap.path"
  [[ ${H[bw_version_line]} == "$(bwrap --version)" ]] || fail "bubblewrap.version ${H[bw_version]} != $(bwrap --version)"
  [[ ${H[bw_unshare_all]} == true ]] || fail "bubblewrap.options"
  # The exact distro package version (security updates differ from upstream).
  if want=$(dpkg-query -W -f '${Package} ${Version}' bubblewrap 2>/dev/null); then
    [[ ${H[bw_package]} == "$want" ]] || fail "bubblewrap.package ${H[bw_package]} != $want"
  fi
fi
if have runsc; then
  [[ ${H[runsc_line]} == "$(runsc --version | head -n1)" ]] || fail "runsc.version_line"
fi
[[ ${H[macos]} == not_macos ]] || fail "macos on linux"
pass "values equal uname -r, /proc, id -u, the Landlock syscall, bwrap/runsc --version"

# --- human table: one row per fact, absent as "absent (reason)"
"$AGSBX_BIN" probe >"$T/table" 2>"$T/table.err" || fail "probe exited $?: $(cat "$T/table.err")"
[[ $(head -n1 "$T/table") =~ ^FAMILY\ +FACT\ +VALUE\ +SOURCE$ ]] || fail "table header: $(head -n1 "$T/table")"
nfacts=${H[nfacts]}
[[ $(($(wc -l <"$T/table") - 1)) == "$nfacts" ]] || fail "table rows != facts ($nfacts)"
grep -Eq "^kernel +release +$(uname -r | sed 's/[.+]/\\&/g') +uname\(2\)$" "$T/table" || fail "no kernel release row"
grep -Eq '^macos +sandbox_exec +absent \(not_macos\) +/usr/bin/sandbox-exec$' "$T/table" || fail "no absent row"
# A newline in $DOCKER_HOST reaches values and sources: neither may forge a row.
DOCKER_HOST=$'unix:///nonexistent/x\nFORGED row' "$AGSBX_BIN" probe >"$T/table-nl" 2>"$T/table-nl.err" ||
  fail "probe (newline in DOCKER_HOST) exited $?: $(cat "$T/table-nl.err")"
! grep -q '^FORGED' "$T/table-nl" || fail "a control character in a source forged a table row: $(grep -m1 -B1 '^FORGED' "$T/table-nl")"
[[ $(($(wc -l <"$T/table-nl") - 1)) == "$nfacts" ]] || fail "table rows != facts with a newline in DOCKER_HOST"
pass "human table"

# --- usage
expect_rc 2 "$AGSBX_BIN" probe --no-such-flag >"$T/u.out" 2>"$T/u.err"
[[ ! -s $T/u.out ]] || fail "usage error printed on stdout"
[[ -s $T/u.err ]] || fail "usage error printed nothing on stderr"
expect_rc 2 "$AGSBX_BIN" probe extra-arg >"$T/u2.out" 2>"$T/u2.err"
[[ ! -s $T/u2.out && -s $T/u2.err ]] || fail "extra-arg: stdout must be empty, stderr not"
expect_rc 2 "$AGSBX_BIN" probe -- --json >"$T/u3.out" 2>"$T/u3.err"
[[ ! -s $T/u3.out ]] || fail "probe -- --json printed on stdout"
"$AGSBX_BIN" probe --help >"$T/h.out" || fail "probe --help failed"
grep -q -- --json "$T/h.out" || fail "probe --help does not mention --json"
pass "usage errors exit 2 with an empty stdout"

# --- Docker endpoints that are not a Docker daemon
probe_json "$T/d1.json" DOCKER_HOST=unix:///nonexistent/docker.sock
[[ $(jq -r '.docker.reachable | "\(.value) \(.reason)"' "$T/d1.json") == "false ENOENT" ]] ||
  fail "missing socket: $(jq -c .docker.reachable "$T/d1.json")"
[[ $(jq -r .docker.endpoint.source "$T/d1.json") == environ:DOCKER_HOST ]] || fail "endpoint source"
validate_later "$T/d1.json" "missing socket"

probe_json "$T/d2.json" DOCKER_HOST=tcp://1.2.3.4:2375
[[ $(jq -r '.docker.reachable | "\(.value) \(.reason)"' "$T/d2.json") == "false unsupported_scheme" ]] ||
  fail "tcp: $(jq -c .docker.reachable "$T/d2.json")"
[[ $(jq -r .docker.api_version.reason "$T/d2.json") == unsupported_scheme ]] || fail "tcp: api_version"
validate_later "$T/d2.json" tcp
# No connection attempted: trace every connect(2) of the probe and its
# children, in a fresh network namespace so that even a bug sends nothing.
if have strace && [[ $(id -u) == 0 ]] && unshare -n true 2>/dev/null; then
  # LeakSanitizer cannot run under ptrace.
  DOCKER_HOST=tcp://1.2.3.4:2375 ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 unshare -n strace -f -qq -e trace=connect -o "$T/connect.trace" \
    "$AGSBX_BIN" probe --json >"$T/d2s.json" 2>"$T/d2s.err" || fail "probe under strace: $(tail -n 5 "$T/d2s.err")"
  ! grep -E 'AF_INET|1\.2\.3\.4' "$T/connect.trace" || fail "probe tried to connect for tcp:// DOCKER_HOST"
  # The trace works: a real connect shows up in it.
  strace -f -qq -e trace=connect -o "$T/control.trace" $PY -c '
import socket; s = socket.socket(); s.settimeout(1)
try: s.connect(("127.0.0.1", 9))
except OSError: pass' || true
  grep -q AF_INET "$T/control.trace" || fail "strace control: connect(2) not traced"
  pass "tcp:// DOCKER_HOST: unsupported, exit 0, no connect(2)"
else
  echo "note: strace/unshare unavailable; tcp:// no-connect is covered by test-probes" >&2
fi

# A socket that answers, but is not Docker.
# One fake server at a time; stopped by its PID, once (never a reused PID).
FAKE_PID=
fake_stop() {
  [[ -n $FAKE_PID ]] || return 0
  kill "$FAKE_PID" 2>/dev/null || true
  wait "$FAKE_PID" 2>/dev/null || true
  FAKE_PID=
}
t_on_exit fake_stop
fake_start() { # fake_start SOCKET MODE: until it listens
  $PY "$FAKE" "$1" "$2" &
  FAKE_PID=$!
  # Until it says it listens or exits (a fixed 10 s was load-dependent);
  # SECONDS only guards a hang.
  local t0=$SECONDS
  until [[ -e $1.ready ]]; do
    kill -0 "$FAKE_PID" 2>/dev/null || fail "fake server ($2) exited before listening"
    ((SECONDS - t0 < 300)) || fail "fake server ($2) did not start in 300 s (hung)"
    sleep 0.05
  done
}
for mode in hello garbage nothttp close; do
  sock=$T/fake-$mode.sock
  fake_start "$sock" "$mode"
  probe_json "$T/f-$mode.json" DOCKER_HOST="unix://$sock"
  want=$(case $mode in hello) echo not_docker_api ;; garbage) echo not_json ;; *) echo EPROTO ;; esac)
  [[ $(jq -r '.docker.reachable | "\(.value) \(.reason)"' "$T/f-$mode.json") == "false $want" ]] ||
    fail "fake $mode: $(jq -c .docker.reachable "$T/f-$mode.json")"
  [[ -s $sock.count ]] || fail "fake $mode: the probe never connected"
  validate_later "$T/f-$mode.json" "fake $mode"
  fake_stop
done
pass "non-Docker answers are reachable=false with a reason, exit 0"

# --- as the unprivileged test user
if have_test_user; then
  S=$(t_stage_for_user)
  uid=$(id -u "$AGSBX_TEST_USER")
  as_user "$S/agsbx-evidence" probe --json >"$T/user.json" 2>"$T/user.err" ||
    fail "probe as $AGSBX_TEST_USER failed: $(cat "$T/user.err")"
  validate_later "$T/user.json" user
  [[ $(jq -r .privilege.euid.value "$T/user.json") == "$uid" ]] || fail "user euid"
  [[ $(jq -r .privilege.uid.value "$T/user.json") == "$uid" ]] || fail "user uid"
  [[ $(jq -r .privilege.cap_eff.value "$T/user.json") == 0000000000000000 ]] || fail "user cap_eff"
  [[ $(jq -r .kernel.release.value "$T/user.json") == "$(uname -r)" ]] || fail "user kernel.release"
  [[ $(jq -c .landlock.abi "$T/user.json") == "$(jq -c .landlock.abi "$J")" ]] || fail "user landlock.abi"
  # A root-only socket: permission denied is a fact, not an error.
  sock=$T/rootonly.sock
  fake_start "$sock" hello
  chmod 0600 "$sock"
  as_user DOCKER_HOST="unix://$sock" "$S/agsbx-evidence" probe --json >"$T/user-d.json" 2>"$T/user-d.err" ||
    fail "probe as user with a root-only socket failed: $(cat "$T/user-d.err")"
  [[ $(jq -r '.docker.reachable | "\(.value) \(.reason)"' "$T/user-d.json") == "false EACCES" ]] ||
    fail "root-only socket as user: $(jq -c .docker.reachable "$T/user-d.json")"
  fake_stop
  pass "probe works as $AGSBX_TEST_USER (euid $uid)"
else
  user_skip="needs root and the user $AGSBX_TEST_USER (useradd -m $AGSBX_TEST_USER)" # after the schema checks
fi

# Everything queued by validate_later, in one python start.
mapfile -t got < <(schema_results "$SCHEMA" "${LATER[@]}")
for i in "${!LATER[@]}"; do
  [[ ${got[i]:-} == valid ]] || fail "schema (${LATER_WHAT[i]}): ${LATER[i]} is ${got[i]:-not checked}"
done
pass "${#LATER[@]} more probe outputs validate against the schema"
[[ -z ${user_skip:-} ]] || skip "test user" 1 "$user_skip"
