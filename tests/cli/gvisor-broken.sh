#!/usr/bin/env bash
# gvisor provider against a self-contained dockerd (broken-runsc): a runsc runtime without
# --network=none, whose containers cannot start on this kernel: blocked with
# runsc_runtime_execution_failed, and the shim/runsc processes the failed start leaks are gone.
# The assertions live in tests/test-gvisor.c (scenario broken); this script
# owns the daemon and the after-suite checks.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gvisor.sh"

gv_prereqs

dockerd_start gvb broken-runsc
gv_scenario broken

gv_no_containers
gv_no_shims
pass "gvisor on a broken runsc runtime: blocked, runsc_runtime_execution_failed, nothing leaked"
