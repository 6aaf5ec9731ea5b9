#!/usr/bin/env bash
# gvisor provider against a self-contained dockerd (no-runsc): no runsc runtime: probe and ensure
# refuse with runsc_runtime_unregistered; naming runc in config is runsc_runtime_registry_invalid;
# nothing is created.
# The assertions live in tests/test-gvisor.c (scenario norunsc); this script
# owns the daemon and the after-suite checks.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gvisor.sh"

gv_prereqs

dockerd_start gvn no-runsc
gv_scenario norunsc

gv_no_containers
gv_no_shims
pass "gvisor without runsc: blocked, runsc_runtime_unregistered"
