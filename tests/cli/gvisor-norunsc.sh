#!/usr/bin/env bash
# gvisor provider against a self-contained dockerd without runsc: probe and ensure refuse with
# runsc_runtime_unregistered; naming runc in config is runsc_runtime_registry_invalid; nothing is
# created; collect says blocked (fail.closed passes), exit 0. Then the same daemon with a fake
# runsc (a runsc-named runc): runsc_not_observed. One daemon for both: one start and stop fewer
# in the chain of dockerd tests that run one at a time (tests/CMakeLists.txt).
# The assertions live in tests/test-gvisor.c (scenarios norunsc, notobserved); this script
# owns the daemon and the after-suite checks.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gvisor.sh"

gv_prereqs runc

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

# Then, on the same daemon, a runtime that only looks like gVisor: a "runsc"
# whose path is a symlink named runsc pointing at runc, registered in the
# daemon's daemon.json and loaded with SIGHUP. The registry check passes
# (basename runsc) and the containers run, but the kernel release inside is
# the host's: probe and ensure must refuse with runsc_not_observed, and
# nothing may be left. The observation, not the name, is the gate.
mkdir -p "$DOCKERD_DIR/fake"
ln -s "$(command -v runc)" "$DOCKERD_DIR/fake/runsc"
jq --arg p "$DOCKERD_DIR/fake/runsc" '.runtimes = {"runsc": {"path": $p}}' \
  "$DOCKERD_DIR/daemon.json" > "$DOCKERD_DIR/daemon.json.new"
mv "$DOCKERD_DIR/daemon.json.new" "$DOCKERD_DIR/daemon.json"
kill -HUP "$DOCKERD_PID"
# Until the reload shows (this daemon had no runsc) or the daemon dies;
# SECONDS only guards a hang, the reload's time depends on the load.
t0=$SECONDS
until dockerd_api /info | jq -e '.Runtimes.runsc' >/dev/null 2>&1; do
  kill -0 "$DOCKERD_PID" 2>/dev/null || fail "dockerd exited on SIGHUP"
  ((SECONDS - t0 < 300)) || break
  sleep 0.1
done
dockerd_api /info | jq -e --arg p "$DOCKERD_DIR/fake/runsc" '.Runtimes.runsc.path == $p' >/dev/null \
  || fail "dockerd did not load the fake runsc runtime"

gv_scenario notobserved

gv_no_containers
pass "gvisor: a runsc-named runc runtime is runsc_not_observed"
