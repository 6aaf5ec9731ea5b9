#!/usr/bin/env bash
# probe's docker facts against a real, self-contained dockerd (tests/lib/dockerd.sh,
# runsc runtime with --network=none): reachable, /version and /info values equal
# what curl reads from the same socket; the unprivileged user gets EACCES on
# the root-owned socket as a fact. Needs root (dockerd); stopped by PID at exit.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"

[[ -x $AGSBX_BIN ]] || fail "not built: $AGSBX_BIN"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
command -v curl >/dev/null || skip curl 1 "curl is not installed"
[[ $(id -u) == 0 ]] || skip dockerd 1 "starting a dockerd needs root"
T=$(t_tmpdir probe-dk)

dockerd_start probe with-runsc
SOCK=$DOCKERD_DIR/docker.sock

"$AGSBX_BIN" probe --json >"$T/host.json" 2>"$T/err" || fail "probe failed: $(cat "$T/err")"
$PY - "$AGSBX_SOURCE_DIR/schemas/host-probe.schema.json" "$T/host.json" <<'PY' || fail "schema"
import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
errors = list(v.iter_errors(json.load(open(sys.argv[2]))))
for e in errors: print("schema:", list(e.path), e.message[:300], file=sys.stderr)
sys.exit(1 if errors else 0)
PY
d() { jq -c ".docker.$1" "$T/host.json"; }
[[ $(jq -r .docker.reachable.value "$T/host.json") == true ]] || fail "reachable: $(d reachable)"
[[ $(jq -r .docker.socket.value "$T/host.json") == "$SOCK" ]] || fail "socket: $(d socket)"
[[ $(jq -r .docker.endpoint.value "$T/host.json") == "unix://$SOCK" ]] || fail "endpoint: $(d endpoint)"

dockerd_api /version >"$T/version.json" || fail "curl /version"
dockerd_api /info >"$T/info.json" || fail "curl /info"
eq() { # eq FACT JQ-PATH FILE
  local got want
  got=$(jq -c ".docker.$1.value" "$T/host.json")
  want=$(jq -c "$2" "$3")
  [[ $got == "$want" && $want != null ]] || fail "docker.$1 = $got, curl says $want"
}
eq version .Version "$T/version.json"
eq api_version .ApiVersion "$T/version.json"
eq min_api_version .MinAPIVersion "$T/version.json"
eq default_runtime .DefaultRuntime "$T/info.json"
eq security_options .SecurityOptions "$T/info.json"
eq cgroup_version .CgroupVersion "$T/info.json"
eq kernel_version .KernelVersion "$T/info.json"
eq server_version .ServerVersion "$T/info.json"
[[ $(jq -r '.docker.runtimes.value.runsc.path' "$T/host.json") == /usr/bin/runsc ]] ||
  fail "runsc runtime path: $(d runtimes)"
[[ $(jq -c '.docker.runtimes.value.runsc.runtimeArgs' "$T/host.json") == '["--network=none"]' ]] ||
  fail "runsc runtimeArgs: $(d runtimes)"
# Every runtime curl sees, with the same path.
[[ $(jq -c '.docker.runtimes.value | with_entries(.value = .value.path)' "$T/host.json") == \
   $(jq -c '.Runtimes | with_entries(.value = .value.path)' "$T/info.json") ]] ||
  fail "runtimes differ: $(d runtimes) vs $(jq -c .Runtimes "$T/info.json")"
pass "docker facts equal curl's /version and /info (reachable, runsc with --network=none)"

# Human table shows the same.
"$AGSBX_BIN" probe >"$T/table" || fail "probe (table) failed"
grep -Eq '^docker +reachable +true +GET /version on unix://' "$T/table" || fail "table: no reachable row"

# The socket is root's: as the test user, permission denied is a fact.
if have_test_user; then
  S=$(t_stage_for_user)
  as_user DOCKER_HOST="unix://$SOCK" "$S/agsbx-evidence" probe --json >"$T/user.json" 2>"$T/user.err" ||
    fail "probe as $AGSBX_TEST_USER failed: $(cat "$T/user.err")"
  [[ $(jq -r '.docker.reachable | "\(.value) \(.reason)"' "$T/user.json") == "false EACCES" ]] ||
    fail "as $AGSBX_TEST_USER: $(jq -c .docker.reachable "$T/user.json")"
  pass "root-owned Docker socket as $AGSBX_TEST_USER: reachable false (EACCES), exit 0"
else
  skip "test user" 1 "needs root and the user $AGSBX_TEST_USER (useradd -m $AGSBX_TEST_USER)"
fi
