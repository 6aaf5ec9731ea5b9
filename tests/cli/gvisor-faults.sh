#!/usr/bin/env bash
# gvisor provider against a self-contained dockerd (with-runsc): dockerd SIGKILLed while an
# execution hangs: execute fails with docker_unavailable (no crash, no hang) and the container's
# runsc/shim processes do not survive.
# The assertions live in tests/test-gvisor.c (scenario daemon-stop); this script
# owns the daemon and the after-suite checks.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gvisor.sh"

gv_prereqs

dockerd_start gvf with-runsc
gv_scenario daemon-stop
gv_no_shims
pass "gvisor: daemon killed mid-run gives docker_unavailable, no crash, nothing left"
