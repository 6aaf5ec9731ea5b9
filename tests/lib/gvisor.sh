# Shared by tests/cli/gvisor-*.sh (sourced after common.sh and dockerd.sh):
# each script owns one self-contained dockerd and runs one scenario of
# tests/test-gvisor.c against it.

# gv_prereqs [RUNTIME_BINARY]: skip (with the reason) unless the daemon,
# the runtime binary, jq and the built test and payload are there.
gv_prereqs() {
  dockerd_available || skip dockerd 1 "dockerd missing or not root"
  command -v "${1:-runsc}" >/dev/null || skip "${1:-runsc}" 1 "${1:-runsc} is not installed"
  command -v jq >/dev/null || skip jq 1 "jq is not installed"
  [[ -x $AGSBX_BUILD_DIR/agsbx-payload ]] || skip agsbx-payload 1 "not built"
  GV_TEST=$AGSBX_BUILD_DIR/test-gvisor
  [[ -x $GV_TEST ]] || fail "not built: $GV_TEST"
}

# gv_scenario NAME: runs test-gvisor's scenario NAME against the daemon.
gv_scenario() {
  export DOCKERD_DIR DOCKERD_PID
  AGSBX_GV_SCENARIO=$1 "$GV_TEST" || fail "test-gvisor $1"
}

# After a scenario: no container on the daemon.
gv_no_containers() {
  local n
  n=$(dockerd_api '/containers/json?all=1' | jq length)
  [[ $n == 0 ]] || fail "$n containers left on the test daemon"
}

# After a scenario: no containerd shim or runsc process of this daemon.
gv_no_shims() {
  # containerd ends a removed container's shim on its own, asynchronously:
  # up to ${1:-5} s for the runtime's own teardown, then whatever remains leaked.
  local p cmd i left
  for i in $(seq $(( ${1:-5} * 10 ))); do
    left=
    for p in $(marker_processes "$DOCKERD_DIR" 2>/dev/null); do
      cmd=$({ tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null || true)
      [[ $cmd == *containerd-shim* || $cmd == *runsc* ]] && left="$p $cmd"
    done
    [[ -z $left ]] && return 0
    sleep 0.1
  done
  fail "leftover: $left"
}

# The host's character devices a container run could touch: runsc fchowns
# a container's stdio to the container user, so a device handed to it as
# stdio (the host's /dev/null, by default, for stdin) would change owner.
# Owner, mode and ctime of each, plus the devices this shell's own stdio
# is on (a terminal).
gv_host_devices() {
  local f fds=()
  for f in /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2; do
    f=$(readlink -f "$f" 2>/dev/null) && [[ -c $f ]] && fds+=("$f")
  done
  for f in /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty /dev/ptmx "${fds[@]}"; do
    [[ -e $f ]] && stat -c '%n %u:%g %a %F %z' "$f"
  done | sort -u
}

# gv_host_devices_unchanged BEFORE WHAT: fails naming each device whose
# owner, mode or ctime differ from the snapshot BEFORE (gv_host_devices).
gv_host_devices_unchanged() {
  local now
  now=$(gv_host_devices)
  [[ $now == "$1" ]] && return 0
  diff <(echo "$1") <(echo "$now") >&2 || true
  fail "$2 changed a host device node (restore: chown root:root /dev/null; chmod 666 /dev/null)"
}
