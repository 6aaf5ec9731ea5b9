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
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gvisor.sh"

gv_prereqs

dockerd_start gvr with-runsc
gv_scenario ready

# After the suite: no container on the daemon, no shim or runsc process of it.
gv_no_containers
gv_no_shims
# The image came from the payload, never from a registry.
dockerd_api '/images/json' | jq -e 'length == 1 and (.[0].RepoTags[0] | startswith("agsbx-payload:"))' >/dev/null \
  || fail "unexpected images: $(dockerd_api /images/json | jq -c '[.[].RepoTags]')"
pass "gvisor on runsc: chain observed, executions contained and cleaned up"
