#!/usr/bin/env bash
# gvisor provider against a runtime that only looks like gVisor: a "runsc" whose path is a symlink
# named runsc pointing at runc, registered in the self-contained dockerd's daemon.json and loaded
# with SIGHUP. The registry check passes (basename runsc) and the containers run, but the kernel
# release inside is the host's: probe and ensure must refuse with runsc_not_observed, and nothing
# may be left. This is the check that the observation, not the name, is the gate.
# The assertions live in tests/test-gvisor.c (scenario notobserved).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gvisor.sh"

gv_prereqs runc

dockerd_start gvo no-runsc
mkdir -p "$DOCKERD_DIR/fake"
ln -s "$(command -v runc)" "$DOCKERD_DIR/fake/runsc"
jq --arg p "$DOCKERD_DIR/fake/runsc" '.runtimes = {"runsc": {"path": $p}}' \
  "$DOCKERD_DIR/daemon.json" > "$DOCKERD_DIR/daemon.json.new"
mv "$DOCKERD_DIR/daemon.json.new" "$DOCKERD_DIR/daemon.json"
kill -HUP "$DOCKERD_PID"
for i in $(seq 1 50); do
  dockerd_api /info | jq -e '.Runtimes.runsc' >/dev/null 2>&1 && break
  sleep 0.2
done
dockerd_api /info | jq -e --arg p "$DOCKERD_DIR/fake/runsc" '.Runtimes.runsc.path == $p' >/dev/null \
  || fail "dockerd did not load the fake runsc runtime"

gv_scenario notobserved

gv_no_containers
pass "gvisor: a runsc-named runc runtime is runsc_not_observed"
