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

# bench: the provider against `docker run --runtime=runsc` by hand, on the
# same daemon. The raw command attaches stdin (--interactive): without it
# runsc chowns the host's /dev/null to the sandbox user (nobody), which
# this run would show.
[[ $(stat -c %u:%g /dev/null) == 0:0 ]] || fail "the host's /dev/null is $(stat -c %U:%G /dev/null) before bench"
d=$(t_tmpdir gvbench)
"$AGSBX_BIN" bench --provider gvisor --runs 3 --warmup 0 --json >"$d/b.json"
jq -e '.providers[0] | .id == "gvisor" and .provider.p50_us > 0 and .raw.p50_us > 0 and .ratio_p50 > 0
       and (.raw.argv | index(["run", "--rm", "--interactive"]) != null)' "$d/b.json" >/dev/null \
  || fail "bench gvisor: $(jq -c '.providers[0]' "$d/b.json")"
[[ $(stat -c %u:%g /dev/null) == 0:0 ]] || fail "bench gvisor left the host's /dev/null $(stat -c %U:%G /dev/null)"
gv_no_containers
pass "bench gvisor: a raw docker run baseline, the host's /dev/null untouched"
