#!/usr/bin/env bash
# gvisor provider against a self-contained dockerd (with-runsc): dockerd SIGKILLed while an
# execution hangs: execute fails with docker_unavailable (no crash, no hang) and the container's
# runsc/shim processes do not survive.
# The assertions live in tests/test-gvisor.c (scenario daemon-stop); this script
# owns the daemon and the after-suite checks.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"

dockerd_available || skip dockerd 1 "dockerd missing or not root"
command -v runsc >/dev/null || skip runsc 1 "runsc is not installed"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
[[ -x $AGSBX_BUILD_DIR/agsbx-payload ]] || skip agsbx-payload 1 "not built"
T=$AGSBX_BUILD_DIR/test-gvisor
[[ -x $T ]] || fail "not built: $T"

dockerd_start gvf with-runsc
export DOCKERD_DIR DOCKERD_PID
AGSBX_GV_SCENARIO=daemon-stop "$T" || fail "test-gvisor daemon-stop"
for p in $(marker_processes "$DOCKERD_DIR" 2>/dev/null); do
  cmd=$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null || true)
  [[ $cmd == *containerd-shim* || $cmd == *runsc* ]] && fail "leftover: $p $cmd"
done
pass "gvisor: daemon killed mid-run gives docker_unavailable, no crash, nothing left"
