#!/usr/bin/env bash
# gvisor as a normal user with access to the Docker socket (the
# contributor's case), against a real self-contained dockerd with runsc:
# the container runs as the caller's uid:gid, so fs.grant_write reaches the
# caller-owned output root and the detached tree of the lifecycle checks
# starts; the provider is conformant. The daemon socket is made reachable
# to the test user by ownership of the socket inside this test's own temp
# dir; nothing on the host is loosened. Then: SIGTERM mid-run leaves no
# container, and a SIGKILLed run's labelled containers are removed by
# `cleanup` (never a live run's).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
user_gcov_env
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gvisor.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/expect.sh"

gv_prereqs
have_test_user || skip "gvisor as a user" 1 "needs root to start dockerd and the user $AGSBX_TEST_USER"
dockerd_start gvu with-runsc
# Our own temp dir and socket: traversable and owned by the test user.
chmod 0711 "$DOCKERD_DIR"
chown "$AGSBX_TEST_USER" "$DOCKERD_DIR/docker.sock"

stage=$(t_stage_for_user)
w=$(t_tmpdir gvu); chown "$AGSBX_TEST_USER" "$w"
uid=$(id -u "$AGSBX_TEST_USER"); gid=$(id -g "$AGSBX_TEST_USER")
U() {
  exec setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env -- \
    env HOME=/tmp PATH=/usr/bin:/bin TMPDIR="$w" DOCKER_HOST="$DOCKER_HOST" \
    ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} "${USER_GCOV_ENV[@]}" "$stage/agsbx-evidence" "$@"
}
Uf() { ( U "$@" ); }

devs=$(gv_host_devices)
set +e
Uf collect --provider gvisor --unsigned -q --work-dir "$w" --output "$w/u.json" 2>"$w/u.log"
rc=$?
set -e
gv_host_devices_unchanged "$devs" "collect --provider gvisor as $AGSBX_TEST_USER"
F=$w/u.json
[[ -f $F ]] || { cat "$w/u.log" >&2; fail "no bundle (exit $rc)"; }
gv() { jq -r ".providers[] | select(.id==\"gvisor\") | $1" "$F"; }
if [[ $rc != 0 || $(gv .verdict) != conformant ]]; then
  gv '.probe.detail' >&2
  jq -r '.providers[] | .checks[] | select(.verdict=="fail") | "\(.id): \(.reason)"' "$F" >&2
  fail "gvisor as $AGSBX_TEST_USER: exit $rc, verdict $(gv .verdict) (want 0, conformant)"
fi
expect_verdicts "$F" gvisor gvisor-user
gv_no_containers
# Nothing of the run's containers stays on the host either: the user
# cannot stop root's shims, so none may be left to stop (a container whose
# start fails leaves one that Docker cannot delete).
gv_no_shims 10
pass "gvisor as a normal user with Docker access: conformant, grant write and detached trees work, no shim left"

# SIGTERM while containers run: none left.
U collect --provider gvisor --unsigned -q --work-dir "$w" --output "$w/t.json" 2>"$w/t.log" &
pid=$!
for i in $(seq 300); do
  [[ $(dockerd_api '/containers/json?all=1' | jq length) -gt 0 ]] && break
  sleep 0.05
done
kill -TERM "$pid"
set +e; wait "$pid"; rc=$?; set -e
[[ $rc == 143 ]] || { cat "$w/t.log" >&2; fail "SIGTERM: exit $rc, want 143"; }
gv_no_containers
[[ -z $(find "$w" -maxdepth 1 -name 'agsbx-*') ]] || fail "SIGTERM: dirs left: $(find "$w" -maxdepth 1 -name 'agsbx-*')"
pass "SIGTERM during a gvisor run: exit 143, no container, no dir"

# SIGKILL while a container runs: cleanup removes the dead run's containers.
# kill_mid_run: sets left to the labelled containers a SIGKILLed collect
# left (up to 5 attempts to catch one alive).
kill_mid_run() {
  left=0
  local attempt i pid
  for attempt in 1 2 3 4 5; do
    U collect --provider gvisor --unsigned -q --work-dir "$w" --output "$w/k.json" 2>/dev/null &
    pid=$!
    # Until a container exists (or the run ended without one): on a loaded
    # 2-core host the first container can take well over 8 s to appear, and
    # a kill before that catches none (5 such misses failed the suite).
    for i in $(seq 3000); do
      [[ $(dockerd_api '/containers/json?all=1' | jq length) -gt 0 ]] && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.02
    done
    # the whole collect, its provider workers (children) too, as a CI
    # timeout's kill of the process group does
    kill -KILL "$pid" $(pgrep -P "$pid" || true) 2>/dev/null || true
    set +e; wait "$pid"; set -e
    # Only containers that stay: once under ctest -j6 a container counted
    # right after the kill was gone before cleanup looked (a removal the
    # killed run had asked for, which the daemon completes by itself).
    # Not "removing", and counted once the set is still.
    local prev=-1
    for i in $(seq 20); do
      left=$(dockerd_api '/containers/json?all=1' |
        jq '[.[] | select(.Labels["agsbx-evidence.owner"] and .State != "removing")] | length')
      [[ $left == "$prev" ]] && break
      prev=$left
      sleep 0.3
    done
    [[ $left -gt 0 ]] && return 0
  done
}
kill_mid_run
[[ $left -gt 0 ]] || fail "SIGKILL never caught a container alive in 5 attempts"
Uf cleanup --dry-run --work-dir "$w" --json >"$w/dry.json"
jq -e 'map(select(.kind=="container" and .removed==false)) | length >= 1' "$w/dry.json" >/dev/null \
  || fail "cleanup --dry-run lists no container: $(cat "$w/dry.json")"
[[ $(dockerd_api '/containers/json?all=1' | jq length) -gt 0 ]] || fail "--dry-run removed a container"
Uf cleanup --work-dir "$w" >"$w/clean.out" || fail "cleanup exited $?: $(cat "$w/clean.out")"
grep -q '^removed container' "$w/clean.out" || fail "cleanup removed no container: $(cat "$w/clean.out")"
gv_no_containers
# The shims are root's (containerd's): a normal user's cleanup removes the
# container through the API and dockerd then ends its shim, which for a run
# killed mid-start waits for runsc's own teardown (seconds under load).
gv_no_shims 30
[[ -z $(find "$w" -maxdepth 1 -name 'agsbx-*') ]] || fail "SIGKILL: dirs left after cleanup"
pass "SIGKILL during a gvisor run: cleanup removed $left labelled container(s) and the dirs"

# The next collect removes a SIGKILLed run's leftovers too, before its own
# run, whichever providers it runs: its sweep asks every provider (here
# trusted_local alone, so the containers it removes can only be the dead
# run's; gvisor's own end-of-run removal is the first part above).
kill_mid_run
[[ $left -gt 0 ]] || fail "SIGKILL (second run) never caught a container alive in 5 attempts"
Uf collect --provider trusted_local --unsigned -q --work-dir "$w" --output "$w/n.json" 2>"$w/n.log" \
  || fail "the next collect exited $?: $(tail -n 5 "$w/n.log") $(jq -c '[.providers[] | {verdict, reason,
       failed: [.checks[] | select(.verdict == "fail") | {id, reason}]}]' "$w/n.json" 2>/dev/null)"
gv_no_containers
gv_no_shims 30
pass "the next collect (trusted_local) removed a SIGKILLed gvisor run's $left labelled container(s) and left no shim"
