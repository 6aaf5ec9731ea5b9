#!/usr/bin/env bash
# gvisor provider against a self-contained dockerd (broken-runsc): a runsc runtime without
# --network=none, whose containers cannot start on this kernel: blocked with
# runsc_runtime_execution_failed, and the shim/runsc processes the failed start leaks are gone.
# The assertions live in tests/test-gvisor.c (scenario broken); this script
# owns the daemon and the after-suite checks.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"

dockerd_available || skip dockerd 1 "dockerd missing or not root"
command -v runsc >/dev/null || skip runsc 1 "runsc is not installed"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
[[ -x $AGSBX_BUILD_DIR/agsbx-payload ]] || skip agsbx-payload 1 "not built"
T=$AGSBX_BUILD_DIR/test-gvisor
[[ -x $T ]] || fail "not built: $T"

dockerd_start gvb broken-runsc
export DOCKERD_DIR DOCKERD_PID
AGSBX_GV_SCENARIO=broken "$T" || fail "test-gvisor broken"

n=$(dockerd_api '/containers/json?all=1' | jq length)
[[ $n == 0 ]] || fail "$n containers left on the test daemon"
for p in $(marker_processes "$DOCKERD_DIR" 2>/dev/null); do
  cmd=$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null || true)
  [[ $cmd == *containerd-shim* || $cmd == *runsc* ]] && fail "leftover: $p $cmd"
done
pass "gvisor on a broken runsc runtime: blocked, runsc_runtime_execution_failed, nothing leaked"
