#!/usr/bin/env bash
# The bubblewrap provider through `agsbx-evidence collect`, with the real
# bwrap: conformant as a normal user and as root with --run-as; refused as
# root without it; blocked (and the run non-representative) under the
# labelled blocked-userns simulation; network=true claims "inherited";
# unknown config keys are bad input; nothing is left running.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/expect.sh"

command -v bwrap >/dev/null || skip bubblewrap 1 "bwrap is not installed"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"

stage=$(t_stage_for_user)
w=$(t_tmpdir bwcli)
chown "$AGSBX_TEST_USER:" "$w"

# collect_as WHO NAME ARGS...: WHO is "user" or "root"; writes $w/NAME.json.
collect_as() {
  local who=$1 name=$2; shift 2
  local cmd=("$stage/agsbx-evidence" collect -q --provider bubblewrap --work-dir "$w"
             --output "$w/$name.json" "$@")
  if [[ $who == user ]]; then as_user "${cmd[@]}"; else "${cmd[@]}"; fi
}
prov() { jq -r ".providers[] | select(.id == \"bubblewrap\") | $2" "$w/$1.json"; }

# 1. a normal user: the real mechanism, every claimed axis backed.
expect_rc 0 collect_as user user
[[ $(prov user .verdict) == conformant ]] || fail "user: verdict $(prov user .verdict), failing $(prov user '.failing_checks|join(",")')"
[[ $(prov user .reason) == ready ]] || fail "user: reason $(prov user .reason)"
[[ $(prov user .claims.syscalls_restricted) == true ]] || fail "user: does not claim syscalls_restricted"
[[ $(prov user .claims.network) == isolated ]] || fail "user: network claim $(prov user .claims.network)"
[[ $(prov user .claims.safety_class) == namespace ]] || fail "user: safety_class"
[[ $(prov user .probe.facts.path) == /* ]] || fail "user: no bwrap path in facts"
[[ $(prov user '.probe.facts.setuid|type') == boolean ]] || fail "user: setuid not recorded"
[[ $(prov user '.probe.facts.version') == "$(bwrap --version | awk '{print $2}')" ]] || fail "user: version"
# The expected verdicts (what the namespaces, --disable-userns and the
# shared seccomp filter must stop passes): set "bubblewrap" of
# tests/data/expected-verdicts.json. Every check states why.
expect_verdicts "$w/user.json" bubblewrap bubblewrap
[[ -z $(prov user '.checks[] | select((.reason // "") == "") | .id') ]] \
  || fail "user: checks without reason: $(prov user '[.checks[] | select((.reason // "") == "") | .id] | join(" ")')"
# Each surface the control reaches outside is refused inside with the
# filter's EPERM, and the filter is recorded in the bundle.
jq -e '.providers[] | select(.id=="bubblewrap") | .checks[] | select(.id=="syscalls.kernel_surface_denied") |
  .facts.surfaces | to_entries | map(select(.value.control | startswith("reached"))) |
  length > 0 and all(.value.inside == "EPERM")' "$w/user.json" >/dev/null \
  || fail "user: a surface reached outside is not EPERM inside: $(prov user '.checks[] | select(.id=="syscalls.kernel_surface_denied") | .facts.surfaces | tostring')"
prov user '.probe.facts.sandbox_probe.argv | index("--disable-userns") and index("--seccomp")' | grep -qx true \
  || fail "user: the probe's bwrap argv lacks --disable-userns or --seccomp"
jq -e '.providers[] | select(.id=="bubblewrap") | .probe.facts.seccomp_filter |
  .instructions > 0 and (.denied | map(.syscall) | index("io_uring_setup") and index("bpf") and index("keyctl"))' \
  "$w/user.json" >/dev/null || fail "user: the seccomp filter is not recorded in the bundle"
# Catalogue v3: as a normal user no kernel interface opens for write
# outside either (skip in the set above); no resource bound is claimed; the
# cgroup mounts in bwrap's own namespace are refused.
[[ $(prov user '.checks[] | select(.id=="fs.kernel_interfaces_readonly") | .facts.mount_inside | "\(.attempted) \(.cgroup2)"') == "true EPERM" ]] \
  || fail "user: the cgroup2 mount in bwrap's namespace was not refused"
# The confinement seen from inside: NoNewPrivs, no capability at all.
[[ $(prov user '.confinement | "\(.no_new_privs) \(.cap_eff) \(.cap_bnd)"') == "1 0000000000000000 0000000000000000" ]] \
  || fail "user: confinement $(prov user '.confinement|tostring')"
pass "normal user: catalogue v2 checks pass; confinement NoNewPrivs=1, no capabilities"
pass "normal user: conformant, syscalls_restricted claimed and shown (filter recorded, every surface reached outside EPERM inside)"

# 2. root without --run-as: bwrap would keep every capability; refused.
expect_rc 0 collect_as root root
[[ $(prov root .reason) == bwrap_unsafe_as_root ]] || fail "root: reason $(prov root .reason)"
[[ $(prov root .verdict) != conformant ]] || fail "root: a sandbox holding host root reported conformant"
prov root .probe.hint | grep -qF -- '--run-as' || fail "root: hint does not mention --run-as"
[[ $(prov root '.probe.facts.sandbox_probe // "none"') == none ]] || fail "root: bwrap was run as root"
pass "root without --run-as: bwrap_unsafe_as_root"

# 3. root dropping to the test user before bwrap (a later --work-dir wins:
# with --run-as it must be one only root can write, and $w is the user's).
expect_rc 0 collect_as root runas --run-as "$AGSBX_TEST_USER" --work-dir "$(t_tmpdir bwrunas)"
[[ $(prov runas .verdict) == conformant ]] || fail "run-as: verdict $(prov runas .verdict), failing $(prov runas '.failing_checks|join(",")')"
[[ $(prov runas .probe.facts.run_as.uid) == "$(id -u "$AGSBX_TEST_USER")" ]] || fail "run-as: uid not recorded"
pass "root --run-as: conformant"

# 4. the labelled simulation: fail closed, classified, non-representative.
expect_rc 0 collect_as user sim --simulate blocked-userns
[[ $(prov sim .verdict) == blocked ]] || fail "sim: verdict $(prov sim .verdict)"
[[ $(prov sim .reason) == bwrap_user_namespace_blocked ]] || fail "sim: reason $(prov sim .reason)"
[[ $(prov sim .probe.facts.failure_class) == userns_disabled ]] || fail "sim: class $(prov sim .probe.facts.failure_class)"
prov sim .probe.facts.stderr | grep -qF 'No permissions to create new namespace' || fail "sim: bwrap's message not kept"
[[ $(jq -r .context.representative "$w/sim.json") == false ]] || fail "sim: run marked representative"
jq -e '.context.representative_reasons | index("simulated:blocked-userns")' "$w/sim.json" >/dev/null ||
  fail "sim: simulation not among the representative reasons"
if prov sim .probe.hint | grep -qiE 'sysctl|sudo|setuid|disable|unconfined|privileged container'; then
  fail "sim: hint suggests weakening the host: $(prov sim .probe.hint)"
fi
pass "simulated blocked userns: blocked, userns_disabled, non-representative"

# 5. network=true: the claim follows the config, and is still truthful.
expect_rc 0 collect_as user net --config bubblewrap.network=true
[[ $(prov net .claims.network) == inherited ]] || fail "net: claim $(prov net .claims.network)"
[[ $(prov net .verdict) == conformant ]] || fail "net: verdict $(prov net .verdict)"
prov net '.probe.facts.sandbox_probe.argv[]' | grep -qx -- --share-net || fail "net: probe argv lacks --share-net"
# Shared network: host abstract unix sockets are reachable (they live in
# the network namespace) - recorded as reached, not judged.
jq -e '.providers[] | select(.id=="bubblewrap") | .checks[] | select(.id=="ipc.host_sockets_denied") |
  .facts.abstract.judged == false and .facts.pathname.denied_inside == true' "$w/net.json" >/dev/null \
  || fail "net: ipc facts $(prov net '.checks[] | select(.id=="ipc.host_sockets_denied") | .facts | tostring')"
pass "network=true: --share-net, claim inherited"

# 6. no caller-supplied binds: unknown keys are bad input, no bundle written.
expect_rc 2 collect_as user bad --config bubblewrap.bind=/
[[ ! -e $w/bad.json ]] || fail "bad config: a bundle was written"
pass "unknown config key refused"

# 7. nothing the runs started is still alive.
left=$(user_processes "$AGSBX_TEST_USER" | grep -F -- "$w" || true)
[[ -z $left ]] || fail "processes left behind: $left"
pass "no leftover processes"
