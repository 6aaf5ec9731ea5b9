#!/usr/bin/env bash
# Real rootless podman (runc) under --wrap as the unprivileged test user,
# with the recipe of docs/providers/wrap.md and no `podman system migrate`:
# the pause process podman starts on first use (in a runtime dir of this
# test's own, so it is this collect's) outlives every execution, so no
# check reads podman's "invalid internal status", and the lifecycle checks
# see the payload's detached tree started and killed. The test ends the
# pause process by the pid podman recorded.
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
# make test-deps installs podman and uidmap, and workflows/test-user.sh
# gives the test user its subordinate ids: CI must not skip this.
command -v podman >/dev/null || skip podman 1 "podman is not installed"
command -v newuidmap >/dev/null || skip podman 1 "newuidmap (uidmap) is not installed: no rootless podman"
grep -q "^$AGSBX_TEST_USER:" /etc/subuid 2>/dev/null || skip podman 1 "$AGSBX_TEST_USER has no /etc/subuid range"

stage=$(t_stage_for_user)
w=$(t_tmpdir wrappod)
rt=$(t_tmpdir podrun)
rootfs=$(t_tmpdir podroot)
mkdir -p "$rootfs"/{proc,dev,sys,tmp,etc,usr}
ln -s usr/bin "$rootfs/bin"; ln -s usr/lib "$rootfs/lib"; ln -s usr/lib64 "$rootfs/lib64"
chmod 0700 "$rt"
chown -R "$AGSBX_TEST_USER:" "$w" "$rt" "$rootfs"

pause_pid() { cat "$rt/libpod/tmp/pause.pid" 2>/dev/null; }
# Ours only: the pid podman recorded in this test's runtime dir, still a
# process of the test user's.
pause_stop() {
  local pid
  pid=$(pause_pid) || return 0
  [[ -n $pid && $(stat -c %U "/proc/$pid" 2>/dev/null) == "$AGSBX_TEST_USER" ]] && kill -KILL "$pid" 2>/dev/null
  return 0
}
t_on_exit pause_stop

F=$w/pod.json
tpl="env XDG_RUNTIME_DIR=$rt podman run --rm --network=none --cap-drop=all --security-opt=no-new-privileges
     -v /usr:/usr:ro -v {source}:{source}:ro -v {build}:{build} -v {output}:{output} -v {logs}:{logs}
     -w {cwd} --rootfs $rootfs {argv}"
set +e
as_user timeout -s KILL 900 "$stage/agsbx-evidence" collect --unsigned --work-dir "$w" --output "$F" \
  --provider pod --wrap "pod=$tpl" 2>"$w/pod.err"
rc=$?
set -e
[[ -s $F ]] || { cat "$w/pod.err" >&2; fail "no bundle (collect exited $rc)"; }
p() { jq -r ".providers[] | select(.id == \"pod\") | $1" "$F"; }
chk() { p ".checks[] | select(.id == \"$1\") | $2"; }

broken=$(p '[.checks[] | select(.reason | test("invalid internal status")) | .id] | join(", ")')
[[ -z $broken ]] || fail "podman's pause process was killed under it; these checks could not run: $broken"
pid=$(pause_pid)
[[ -n $pid && -d /proc/$pid ]] || fail "podman's pause process (${pid:-no pid recorded}) did not outlive the collect"
for c in lifecycle.timeout_cleanup lifecycle.cancel_cleanup; do
  [[ $(chk $c '.verdict == "pass" and .facts.detached_tree_started and .facts.surviving_marker_processes == 0') == true ]] \
    || fail "$c: $(chk $c '"\(.verdict): \(.reason)"')"
done
[[ $(chk proc.contained .observed_pass) == true ]] || fail "proc.contained: $(chk proc.contained .reason)"
pass "rootless podman without 'podman system migrate': its pause process outlives the collect ($(p .verdict): $(p '[.checks[] | select(.verdict == "fail") | .id] | join(", ")'))"
