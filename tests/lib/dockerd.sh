# A self-contained dockerd for tests (sourced after common.sh).
#   dockerd_start NAME [with-runsc|no-runsc|broken-runsc]
# Own config file, data root, exec root, pidfile and socket in a temp dir;
# iptables/ip6tables off, no bridge: the daemon never touches host
# networking. Exports DOCKER_HOST. Stopped by PID at exit, also on failure.
# Containers must always use NetworkMode none; runsc always --network=none.

dockerd_available() {
  command -v dockerd >/dev/null 2>&1 && [[ $(id -u) == 0 ]]
}

# The shared daemon (tests/lib/dockerd-shared.sh), when ctest started one
# and this test asked for a plain with-runsc daemon: nothing to start, and
# nothing to stop at the end (the fixture's cleanup does).
dockerd_use_shared() {
  local env=${AGSBX_SHARED_DOCKERD:-}/env
  [[ -n ${AGSBX_SHARED_DOCKERD:-} && -f $env ]] || return 1
  # shellcheck disable=SC1090
  source "$env"
  kill -0 "$DOCKERD_PID" 2>/dev/null || fail "the shared dockerd ($DOCKERD_PID) is gone"
  curl -sf --max-time 5 --unix-socket "$DOCKERD_DIR/docker.sock" http://localhost/version >/dev/null ||
    fail "the shared dockerd does not answer"
  DOCKERD_SHARED=1
  export DOCKER_HOST
  t_on_exit "dockerd_shared_clear"
  echo "note: using the shared dockerd $DOCKER_HOST" >&2
}

dockerd_start() {
  local name=$1 mode=${2:-with-runsc}
  dockerd_available || skip "dockerd" 1 "dockerd missing or not root"
  if [[ $mode == with-runsc ]] && dockerd_use_shared; then
    return 0
  fi
  # Short paths: the unix socket path must stay under 108 bytes.
  DOCKERD_DIR=$(mktemp -d "/tmp/agsbx-dk-XXXXXX")
  local runtimes
  case $mode in
    with-runsc) runtimes='"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]}' ;;
    no-runsc) runtimes='' ;;
    # A runsc runtime whose default network mode cannot start containers on
    # this host (docs/design.md, "gVisor: a failed start leaks host processes"): start fails, and leaks shim
    # processes unless the provider cleans up what belongs to the run.
    broken-runsc) runtimes='"runsc": {"path": "/usr/bin/runsc"}' ;;
    *) fail "dockerd_start: unknown mode $mode" ;;
  esac
  cat > "$DOCKERD_DIR/daemon.json" <<JSON
{
  "iptables": false,
  "ip6tables": false,
  "bridge": "none",
  "runtimes": { $runtimes },
  "data-root": "$DOCKERD_DIR/data",
  "exec-root": "$DOCKERD_DIR/exec",
  "pidfile": "$DOCKERD_DIR/dockerd.pid",
  "hosts": ["unix://$DOCKERD_DIR/docker.sock"]
}
JSON
  dockerd --config-file "$DOCKERD_DIR/daemon.json" \
    --containerd-namespace "agsbx-$name" --containerd-plugins-namespace "agsbx-$name-p" \
    >"$DOCKERD_DIR/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  t_on_exit "dockerd_stop"
  export DOCKER_HOST="unix://$DOCKERD_DIR/docker.sock"
  # Until it answers or exits: how long a start takes depends on the load
  # (30 s was exceeded beside other builds), so the wait is bounded by the
  # daemon's own fate; SECONDS is only a hang guard far beyond any start.
  local t0=$SECONDS
  until curl -sf --max-time 5 --unix-socket "$DOCKERD_DIR/docker.sock" http://localhost/version >/dev/null 2>&1; do
    kill -0 "$DOCKERD_PID" 2>/dev/null || { tail -n 30 "$DOCKERD_DIR/dockerd.log" >&2; fail "dockerd exited"; }
    if ((SECONDS - t0 > 300)); then
      tail -n 30 "$DOCKERD_DIR/dockerd.log" >&2
      fail "dockerd did not answer /version in 300 s (hung)"
    fi
    sleep 0.1
  done
}

dockerd_api() { # dockerd_api PATH [curl args...]
  local p=$1; shift
  curl -sf --max-time 10 --unix-socket "$DOCKERD_DIR/docker.sock" "$@" "http://localhost$p"
}

# At the exit of a test on the shared daemon: what it left there is its
# own (its users hold RESOURCE_LOCK dockerd_shared), and the next user, or
# ctest's retry of a failed test (make coverage), would count it as theirs.
# A passing test has checked it left nothing; a failing one stopped first.
dockerd_shared_clear() {
  local id n=0
  [[ -n ${DOCKERD_DIR:-} ]] || return 0
  for id in $(dockerd_api '/containers/json?all=1' | jq -r '.[].Id'); do
    [[ $id =~ ^[0-9a-f]{64}$ ]] || continue
    dockerd_api "/containers/$id?force=1&v=1" -X DELETE >/dev/null || true
    n=$((n + 1))
  done
  (( n == 0 )) || echo "note: removed $n container(s) this test left on the shared dockerd" >&2
  n=$(dockerd_api '/containers/json?all=1' | jq length)
  [[ $n == 0 ]] || echo "warning: $n container(s) remain on the shared dockerd" >&2
}

dockerd_stop() {
  if [[ -n ${DOCKERD_SHARED:-} ]]; then
    DOCKERD_SHARED= DOCKERD_PID= DOCKERD_DIR=
    return 0
  fi
  [[ -n "${DOCKERD_PID:-}" ]] || return 0
  if kill -0 "$DOCKERD_PID" 2>/dev/null; then
    kill -TERM "$DOCKERD_PID" 2>/dev/null || true
    local i
    for i in $(seq 1 100); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$DOCKERD_PID" 2>/dev/null || true
    wait "$DOCKERD_PID" 2>/dev/null || true
  fi
  DOCKERD_PID=
  # dockerd's containerd child and any shim keep our exec root in their
  # cmdline; stop exactly those, by PID.
  local p
  for p in $(marker_processes "$DOCKERD_DIR"); do kill -KILL "$p" 2>/dev/null || true; done
  umount -R "$DOCKERD_DIR/data" 2>/dev/null || true
  umount -R "$DOCKERD_DIR/exec" 2>/dev/null || true
  rm -rf "$DOCKERD_DIR" 2>/dev/null || true
}

# dockerd_grant_user USER: docker-group semantics on this one daemon: USER
# may use its socket (root-equivalent on the host: such a user can start a
# privileged container bind-mounting /). The daemon's own files stay
# root's: its directory only becomes traversable (0711).
dockerd_grant_user() {
  [[ -z ${DOCKERD_SHARED:-} ]] || fail "dockerd_grant_user: not on the shared daemon"
  chmod 0711 "$DOCKERD_DIR"
  chgrp "$(id -g "$1")" "$DOCKERD_DIR/docker.sock"
  chmod 0660 "$DOCKERD_DIR/docker.sock"
}
