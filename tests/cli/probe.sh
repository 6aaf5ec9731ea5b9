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

validate() { # validate FILE: against the schema, every error printed
  $PY - "$SCHEMA" "$1" <<'PY'
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
errors = list(Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))
for e in errors:
    print("schema: %s: %s" % ("/".join(map(str, e.path)), e.message[:300]), file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}

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
[[ $(jq -r .schema "$J") == agsbx-evidence/host-probe/v1 ]] || fail "schema id"
# The schema can fail: a fact without a source, a float, an unknown family.
jq 'del(.kernel.release.source)' "$J" >"$T/bad1.json"
jq '.userns.max_user_namespaces.value = 1.5' "$J" >"$T/bad2.json"
jq '.extra = {}' "$J" >"$T/bad3.json"
jq '.docker.reachable = {"value": false, "source": "x"}' "$J" >"$T/bad4.json"
for b in bad1 bad2 bad3 bad4; do
  if validate "$T/$b.json" 2>/dev/null; then fail "schema accepted $b"; fi
done
# No floating point anywhere.
[[ $(jq '[.. | numbers | select(. != floor)] | length' "$J") == 0 ]] || fail "non-integer number in probe output"
pass "probe --json validates; the schema rejects broken copies"

# --- values equal independent reads
[[ $(jq -r .kernel.release.value "$J") == "$(uname -r)" ]] || fail "kernel.release != uname -r"
if [[ -r /proc/sys/user/max_user_namespaces ]]; then
  [[ $(jq -r .userns.max_user_namespaces.value "$J") == "$(cat /proc/sys/user/max_user_namespaces)" ]] ||
    fail "userns.max_user_namespaces differs from /proc"
fi
[[ $(jq -r .privilege.euid.value "$J") == "$(id -u)" ]] || fail "privilege.euid != id -u"
[[ $(jq -r .privilege.egid.value "$J") == "$(id -g)" ]] || fail "privilege.egid != id -g"
LL=$($PY -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
print(r if r >= 0 else "errno:%d" % ctypes.get_errno())')
case $LL in
  errno:38) [[ $(jq -r .landlock.abi.reason "$J") == kernel_does_not_support_landlock ]] || fail "landlock ENOSYS reason" ;;
  errno:95) [[ $(jq -r .landlock.abi.reason "$J") == landlock_disabled ]] || fail "landlock EOPNOTSUPP reason" ;;
  *) [[ $(jq -r .landlock.abi.value "$J") == "$LL" ]] || fail "landlock.abi $(jq -c .landlock.abi "$J") != syscall $LL" ;;
esac
# Loaded bwrap profiles: read from securityfs when readable, else absent
# with the errno; never guessed from /etc.
if [[ -r /sys/kernel/security/apparmor/profiles ]]; then
  want=$(grep -c bwrap /sys/kernel/security/apparmor/profiles || true)
  [[ $(jq -r '.apparmor.bwrap_profiles_loaded.value | length' "$J") == "$want" ]] || fail "apparmor.bwrap_profiles_loaded"
else
  [[ $(jq -r '.apparmor.bwrap_profiles_loaded.absent' "$J") == true ]] || fail "apparmor.bwrap_profiles_loaded should be absent"
fi
if [[ ! -e /sys/module/apparmor ]]; then
  [[ $(jq -r '.apparmor.enabled | "\(.absent) \(.reason)"' "$J") == "true ENOENT" ]] ||
    fail "apparmor.enabled should be absent (ENOENT): $(jq -c .apparmor.enabled "$J")"
fi
if have bwrap; then
  [[ $(jq -r .bubblewrap.path.value "$J") == "$(command -v bwrap)" ]] || fail "bubblewrap.path"
  [[ $(jq -r .bubblewrap.version_line.value "$J") == "$(bwrap --version)" ]] ||
    fail "bubblewrap.version $(jq -c .bubblewrap.version "$J") != $(bwrap --version)"
  [[ $(jq -r '.bubblewrap.options.value["--unshare-all"]' "$J") == true ]] || fail "bubblewrap.options"
  # The exact distro package version (security updates differ from upstream).
  if want=$(dpkg-query -W -f '${Package} ${Version}' bubblewrap 2>/dev/null); then
    [[ $(jq -r .bubblewrap.package.value "$J") == "$want" ]] || fail "bubblewrap.package $(jq -c .bubblewrap.package "$J") != $want"
  fi
fi
if have runsc; then
  [[ $(jq -r .runsc.version_line.value "$J") == "$(runsc --version | head -n1)" ]] || fail "runsc.version_line"
fi
[[ $(jq -r .macos.sandbox_exec.reason "$J") == not_macos ]] || fail "macos on linux"
pass "values equal uname -r, /proc, id -u, the Landlock syscall, bwrap/runsc --version"

# --- human table: one row per fact, absent as "absent (reason)"
"$AGSBX_BIN" probe >"$T/table" 2>"$T/table.err" || fail "probe exited $?: $(cat "$T/table.err")"
[[ $(head -n1 "$T/table") =~ ^FAMILY\ +FACT\ +VALUE\ +SOURCE$ ]] || fail "table header: $(head -n1 "$T/table")"
nfacts=$(jq '[to_entries[] | select(.value | type == "object") | .value | keys[]] | length' "$J")
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
validate "$T/d1.json" || fail "schema (missing socket)"

probe_json "$T/d2.json" DOCKER_HOST=tcp://1.2.3.4:2375
[[ $(jq -r '.docker.reachable | "\(.value) \(.reason)"' "$T/d2.json") == "false unsupported_scheme" ]] ||
  fail "tcp: $(jq -c .docker.reachable "$T/d2.json")"
[[ $(jq -r .docker.api_version.reason "$T/d2.json") == unsupported_scheme ]] || fail "tcp: api_version"
validate "$T/d2.json" || fail "schema (tcp)"
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
  local _
  $PY "$FAKE" "$1" "$2" &
  FAKE_PID=$!
  for _ in $(seq 1 200); do [[ -e $1.ready ]] && return 0; sleep 0.05; done
  fail "fake server ($2) did not start"
}
for mode in hello garbage nothttp close; do
  sock=$T/fake-$mode.sock
  fake_start "$sock" "$mode"
  probe_json "$T/f-$mode.json" DOCKER_HOST="unix://$sock"
  want=$(case $mode in hello) echo not_docker_api ;; garbage) echo not_json ;; *) echo EPROTO ;; esac)
  [[ $(jq -r '.docker.reachable | "\(.value) \(.reason)"' "$T/f-$mode.json") == "false $want" ]] ||
    fail "fake $mode: $(jq -c .docker.reachable "$T/f-$mode.json")"
  [[ -s $sock.count ]] || fail "fake $mode: the probe never connected"
  validate "$T/f-$mode.json" || fail "schema (fake $mode)"
  fake_stop
done
pass "non-Docker answers are reachable=false with a reason, exit 0"

# --- as the unprivileged test user
if have_test_user; then
  S=$(t_stage_for_user)
  uid=$(id -u "$AGSBX_TEST_USER")
  as_user "$S/agsbx-evidence" probe --json >"$T/user.json" 2>"$T/user.err" ||
    fail "probe as $AGSBX_TEST_USER failed: $(cat "$T/user.err")"
  validate "$T/user.json" || fail "schema (user)"
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
  skip "test user" 1 "needs root and the user $AGSBX_TEST_USER (useradd -m $AGSBX_TEST_USER)"
fi
