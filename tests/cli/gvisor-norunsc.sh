#!/usr/bin/env bash
# gvisor provider against a self-contained dockerd (no-runsc): no runsc runtime: probe and ensure
# refuse with runsc_runtime_unregistered; naming runc in config is runsc_runtime_registry_invalid;
# nothing is created. Then collect on the same daemon: blocked, fail.closed passes, exit 0.
# The assertions live in tests/test-gvisor.c (scenario norunsc); this script
# owns the daemon and the after-suite checks.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gvisor.sh"

gv_prereqs

dockerd_start gvn no-runsc
gv_scenario norunsc

# The same through collect, on the same daemon: blocked is not a defect.
d=$(t_tmpdir nr)
expect_rc 0 "$AGSBX_BIN" collect --provider gvisor --unsigned --output "$d/nr.json" -q
jq -e '.providers[0].verdict == "blocked" and .providers[0].reason == "runsc_runtime_unregistered"' "$d/nr.json" >/dev/null \
  || fail "no runsc runtime: $(jq -c '.providers[0] | {verdict, reason}' "$d/nr.json")"
jq -e '.providers[0].checks[] | select(.id=="fail.closed") | .verdict == "pass"' "$d/nr.json" >/dev/null \
  || fail "fail.closed must pass when blocked"

gv_no_containers
gv_no_shims
pass "gvisor without runsc: blocked, runsc_runtime_unregistered (provider and collect, exit 0)"
