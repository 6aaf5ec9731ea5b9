#!/usr/bin/env bash
# workflows/github/agsbx-evidence.yml: valid YAML; the opt-in bwrap step
# loads only the distribution's shipped profile, never writes the userns
# sysctl, never disables or weakens AppArmor, and hands collect the
# before-value so the bundle can say whether the run stays representative.
source "$(dirname "$0")/../lib/common.sh"
W=$AGSBX_SOURCE_DIR/workflows/github/agsbx-evidence.yml
$PY -c 'import yaml' 2>/dev/null || fail "python3-yaml missing (workflows/install-deps.sh installs it)"

$PY - "$W" <<'PY' || fail "workflow template checks"
import sys, yaml
w = yaml.safe_load(open(sys.argv[1]))
on = w.get("on", w.get(True))
inp = on["workflow_dispatch"]["inputs"]["load_distro_bwrap_profile"]
assert inp["type"] == "boolean" and inp["default"] is False, inp
steps = w["jobs"]["collect"]["steps"]
step = next(s for s in steps if s.get("id") == "bwrap_profile")
run = step["run"]
assert "inputs.load_distro_bwrap_profile" in step["if"], step["if"]
assert "sudo apparmor_parser --replace \"$profile\"" in run, run
assert "profile=/usr/share/apparmor/extra-profiles/bwrap-userns-restrict" in run, run
# read-only on the sysctl, nothing that weakens AppArmor
for bad in ("sysctl -w", "sysctl kernel", "> /proc/sys", ">/proc/sys", "tee /proc/sys", "aa-disable",
            "aa-complain", "aa-teardown", "systemctl stop apparmor", "systemctl disable apparmor",
            "apparmor_parser -R", "apparmor_parser --remove", "unconfined"):
    assert bad not in run, bad
# collect gets the flags: inline, or through the action's collect-args input
collect = next(s for s in steps if s.get("id") == "collect")
passed = collect.get("run", "") + str(collect.get("with", {}).get("collect-args", ""))
assert "${{ steps.bwrap_profile.outputs.flags }}" in passed, collect
assert "--host-policy distro-bwrap-profile --userns-sysctl-before $before" in run, run
for s in steps:
    r = s.get("run", "")
    for bad in ("sysctl -w", "aa-disable", "aa-teardown", "systemctl stop apparmor"):
        assert bad not in r, (s.get("name"), bad)
PY
pass "workflow template: opt-in distro bwrap profile, sysctl read-only, AppArmor never weakened"
