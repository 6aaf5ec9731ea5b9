#!/usr/bin/env bash
# gvisor provider against a self-contained dockerd (with-runsc): a runsc runtime with
# --network=none: probe ready with the chain observed (runsc runtime, kernel release inside vs
# host), then payload ops through the provider: grant write, read-only source, host canary,
# namespaces, loopback egress, exit status, timeout and cancel with no container or shim left, a 64
# MiB flood bounded, concurrent executions, run_as, lifecycle, the simulation.
# The assertions live in tests/test-gvisor.c (scenario ready); this script
# owns the daemon and the after-suite checks.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"

dockerd_available || skip dockerd 1 "dockerd missing or not root"
command -v runsc >/dev/null || skip runsc 1 "runsc is not installed"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
[[ -x $AGSBX_BUILD_DIR/agsbx-payload ]] || skip agsbx-payload 1 "not built"
T=$AGSBX_BUILD_DIR/test-gvisor
[[ -x $T ]] || fail "not built: $T"

dockerd_start gvr with-runsc
export DOCKERD_DIR DOCKERD_PID
AGSBX_GV_SCENARIO=ready "$T" || fail "test-gvisor ready"

# After the suite: no container on the daemon, no shim or runsc process of it.
n=$(dockerd_api '/containers/json?all=1' | jq length)
[[ $n == 0 ]] || fail "$n containers left on the test daemon"
for p in $(marker_processes "$DOCKERD_DIR" 2>/dev/null); do
  cmd=$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null || true)
  [[ $cmd == *containerd-shim* || $cmd == *runsc* ]] && fail "leftover: $p $cmd"
done
# The image came from the payload, never from a registry.
dockerd_api '/images/json' | jq -e 'length == 1 and (.[0].RepoTags[0] | startswith("agsbx-payload:"))' >/dev/null \
  || fail "unexpected images: $(dockerd_api /images/json | jq -c '[.[].RepoTags]')"
pass "gvisor on runsc: chain observed, executions contained and cleaned up"
