#!/usr/bin/env bash
# One with-runsc dockerd shared by the gVisor tests that can share it (a
# ctest fixture: tests/CMakeLists.txt). Saves a daemon start and stop per
# test; tests that kill, reconfigure or need another kind of daemon still
# start their own.
#   dockerd-shared.sh start DIR   start it; DIR/env then names it
#   dockerd-shared.sh stop DIR    stop it by PID, remove what it left
# Without dockerd (or root) start does nothing: the tests then start their
# own daemon or skip, as they would alone.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/dockerd.sh"
cmd=${1:?start|stop}
dir=${2:?DIR}

case $cmd in
  start)
    rm -f "$dir/env"
    if ! dockerd_available || ! command -v runsc >/dev/null; then
      echo "note: no dockerd/runsc or not root: no shared daemon" >&2
      exit 0
    fi
    mkdir -p "$dir"
    # Outlives this script: its stop is the fixture's cleanup test.
    AGSBX_SHARED_DOCKERD= dockerd_start shared with-runsc
    printf 'DOCKERD_DIR=%q\nDOCKERD_PID=%q\nDOCKER_HOST=%q\n' "$DOCKERD_DIR" "$DOCKERD_PID" "$DOCKER_HOST" >"$dir/env"
    DOCKERD_PID=   # keep it running past our exit trap
    pass "shared dockerd $DOCKER_HOST"
    ;;
  stop)
    [[ -f $dir/env ]] || exit 0
    source "$dir/env"
    rm -f "$dir/env"
    dockerd_stop
    pass "shared dockerd stopped"
    ;;
  *) fail "usage: dockerd-shared.sh start|stop DIR" ;;
esac
