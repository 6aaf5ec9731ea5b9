# Helpers for the tests that drive Agently's own providers (sourced after
# common.sh). Agently is a test subject, never part of the repo: CI has
# ../shared beside the clone, a developer may point AGENTLY_SRC elsewhere.
AGENTLY_SRC=${AGENTLY_SRC:-$AGSBX_SOURCE_DIR/../shared/thirdparty/agently}

# Skips (a failure under AGSBX_REQUIRE_MECHANISMS=1) without the checkout,
# the test user or Debian's python3 with typing_extensions.
# The Docker and gVisor providers' tests: the checkout, runsc (tests/lib/
# gvisor.sh, sourced first) and the docker CLI upstream drives.
agently_docker_prereqs() {
  agently_require_src
  gv_prereqs runsc
  command -v docker >/dev/null || skip docker 1 "the docker CLI is not installed (docker.io)"
}

agently_require_src() {
  [[ -f $AGENTLY_SRC/agently/types/data/code_execution.py ]] \
    || skip "agently" 1 "no Agently checkout at $AGENTLY_SRC (CI has ../shared/thirdparty/agently)"
  have_test_user || skip "agently" 1 "needs root and the test user $AGSBX_TEST_USER"
  /usr/bin/python3 -c 'import typing_extensions' 2>/dev/null \
    || skip "agently" 1 "python3-typing-extensions missing (workflows/install-deps.sh --test)"
}

# Stages, world-readable, the layout the acceptance command expects:
# <stage>/src/{agsbx-evidence and helpers, providers/external/agently/,
# tests/cli/lib-agently-drive.py} and <stage>/shared/thirdparty/agently, so
# `cd <stage>/src && python3 providers/... --agently-src ../shared/...` works
# for the unprivileged user wherever the clone lives. Prints <stage>.
agently_stage() {
  local s
  s=$(t_tmpdir agently)
  local bin
  bin=$(t_stage_for_user)
  mkdir -p "$s/src/providers/external/agently" "$s/src/tests/cli" "$s/shared/thirdparty"
  cp -a "$bin"/. "$s/src/"
  cp "$bin/agsbx-payload" "$s/agsbx-payload"
  install -m 0755 "$AGSBX_SOURCE_DIR/providers/external/agently/agently-adapter.py" "$s/src/providers/external/agently/"
  install -m 0755 "$AGSBX_SOURCE_DIR/tests/cli/lib-agently-drive.py" "$s/src/tests/cli/"
  cp -r "$AGENTLY_SRC" "$s/shared/thirdparty/agently"
  chmod -R a+rX "$s"
  echo "$s"
}

# agently_collect STAGE PROVIDER OUT [collect args...]: the acceptance
# command, as the unprivileged user, from STAGE/src, the adapter declared as
# "agently-PROVIDER"; the status goes to AG_RC, stderr to OUT.log, its wall
# time to AG_WALL and the CPU (user + sys) of collect and everything it
# waited for to AG_CPU, in seconds.
agently_collect() {
  local stage=$1 p=$2 out=$3
  shift 3
  local wd
  AG_READ="" # ag_expect reads the new bundle afresh
  wd=$(t_tmpdir work)
  chown "$AGSBX_TEST_USER" "$wd" "$(dirname "$out")"
  set +e
  local t0=$EPOCHREALTIME
  (cd "$stage/src" && as_user ./agsbx-evidence collect \
    --adapter "agently-$p=python3 providers/external/agently/agently-adapter.py --agently-src ../shared/thirdparty/agently --provider $p" \
    --unsigned --work-dir "$wd" --output "$out" "$@"
   rc=$?; times >"$out.times"; exit $rc) 2>"$out.log"
  AG_RC=$?
  set -e
  AG_WALL=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  # times: the subshell's own line, then its children's "XmY.YYYs XmY.YYYs"
  AG_CPU=$(sed -n 2p "$out.times" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } printf "%.1f", s }')
  [[ -f $out ]] || { tail -n 30 "$out.log" >&2; fail "$p: no bundle (exit $AG_RC)"; }
}

# ag_jq OUT PROVIDER FILTER: FILTER applied to the provider object.
ag_jq() { jq -r --arg p "agently-$2" ".providers[] | select(.id==\$p) | $3" "$1"; }

# ag_expect OUT PROVIDER CHECK VERDICT [REASON-ERE]: the check has VERDICT
# and, when given, a reason matching REASON-ERE. Every check's verdict and
# reason are read once per bundle and provider (one jq start, not two per
# expectation); agently_collect forgets them.
declare -A AG_VERDICT=() AG_REASON=()
AG_READ=""
ag_expect() {
  if [[ $AG_READ != "$1|$2" ]]; then
    jq_checks AG_VERDICT AG_REASON "$1" '.providers[] | select(.id==$p)' --arg p "agently-$2"
    AG_READ="$1|$2"
  fi
  local got=${AG_VERDICT[$3]:-} reason=${AG_REASON[$3]:-}
  [[ $got == "$4" ]] || fail "$2 $3 is '$got', want $4 ($reason)"
  if [[ -n ${5:-} ]]; then
    [[ $reason =~ $5 ]] || fail "$2 $3 reason '$reason' does not match /$5/"
  fi
}

# ag_waits_blocking WHAT: the last agently_collect spent most of its wall
# time waiting (Agently's cancelled call that never returns holds it up to
# the execute deadline) and used at most half of it on the CPU. A wait that
# polls a descriptor that stays readable spins at 100% of a core instead:
# that is a defect of the harness, not a slow machine (measured here: 41 s
# of CPU in 41 s of wall with the spin, a few seconds without).
ag_waits_blocking() {
  awk -v c="$AG_CPU" -v w="$AG_WALL" 'BEGIN { exit !(c <= w / 2) }' \
    || fail "$1: collect used ${AG_CPU} s of CPU in ${AG_WALL} s of wall: a busy wait"
  pass "$1: collect waited without spinning (${AG_CPU} s of CPU in ${AG_WALL} s)"
}

# No process of the test user from this test (everything of ours runs from
# or under $T_ROOT) once the run is over; other tests may run as that user.
ag_no_leftovers() {
  sleep 0.2
  local left
  left=$(user_processes "$AGSBX_TEST_USER" | grep -F -- "$T_ROOT" || true)
  [[ -z $left ]] || fail "$1: processes of $AGSBX_TEST_USER remain: $left"
}

# agently_collect_docker STAGE PROVIDER OUT ADAPTER-ARGS [collect args...]:
# agently_collect for docker/gvisor: the adapter gets --docker-host and
# ADAPTER-ARGS (blank-separated words), collect gets DOCKER_HOST too (its
# host probe is what probe.truthful's docker conditions compare with).
agently_collect_docker() {
  local stage=$1 p=$2 out=$3 extra=$4
  shift 4
  local wd
  AG_READ=""
  wd=$(t_tmpdir work)
  chown "$AGSBX_TEST_USER" "$wd" "$(dirname "$out")"
  set +e
  local t0=$EPOCHREALTIME
  (cd "$stage/src" && as_user env DOCKER_HOST="$DOCKER_HOST" ./agsbx-evidence collect \
    --adapter "agently-$p=python3 providers/external/agently/agently-adapter.py --agently-src ../shared/thirdparty/agently --provider $p --docker-host $DOCKER_HOST $extra" \
    --unsigned --work-dir "$wd" --output "$out" "$@") 2>"$out.log"
  AG_RC=$?
  set -e
  AG_WALL=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  [[ -f $out ]] || { tail -n 30 "$out.log" >&2; fail "$p: no bundle (exit $AG_RC)"; }
}

# ag_no_containers WHAT: nothing left on the test daemon (upstream's
# `docker run --rm` and its `docker rm -f` on timeout must remove every
# container it started), and no containerd shim or runsc of that daemon.
ag_no_containers() {
  local left
  left=$(dockerd_api '/containers/json?all=1' | jq -c '[.[] | {Names, State, Status}]')
  [[ $left == "[]" ]] || fail "$1: containers left on the test daemon: $left"
  gv_no_shims
}

# ag_docker_shims: the containerd shims and runsc processes of this test's
# daemon (by its directory in their command line), one "PID argv0" a line.
ag_docker_shims() {
  local p cmd
  for p in $(marker_processes "$DOCKERD_DIR"); do
    cmd=$({ tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null || true)
    [[ $cmd == *containerd-shim* || $cmd == *runsc* ]] && echo "$p ${cmd%% *}"
  done
  return 0
}

# ag_devnull_guard: remembers the host /dev/null's owner and mode (what
# ag_devnull_changed compares with) and restores the node at exit. Upstream starts containers with `docker run` and
# no -i, so containerd hands runsc the host's /dev/null as the container's
# stdin and runsc fchowns it to the container user (providers/gvisor/
# container.c explains why the built-in provider never does this).
# The tests on runsc assert that change (an upstream defect) and undo it;
# they hold both dockerd locks (tests/CMakeLists.txt) so no test that
# checks the host's device nodes runs meanwhile.
# It restores root:root 0666 (the node as Debian's udev/devtmpfs creates
# it), never what it found: a snapshot taken while another suite on this
# machine (another build's ctest, outside our locks) had runsc change it
# would lock nobody:nogroup in for good, and test-gvisor's /dev/null check
# (its first failure, then a cascade) with it. Found changed, it says so
# and restores it first, so this test sees runsc's change, not another's.
AG_DEVNULL_HOST="0:0 666"
ag_devnull_guard() {
  [[ $(stat -c '%F %t:%T' /dev/null) == "character special file 1:3" ]] ||
    fail "the host's /dev/null is not the null device ($(stat -c '%F %t:%T' /dev/null)): not touching it"
  AG_DEVNULL=$(stat -c '%u:%g %a' /dev/null)
  if [[ $AG_DEVNULL != "$AG_DEVNULL_HOST" ]]; then
    echo "note: the host's /dev/null was $AG_DEVNULL (left by another run on this machine): restored to root:root 0666" >&2
    chown 0:0 /dev/null
    chmod 0666 /dev/null
    AG_DEVNULL=$AG_DEVNULL_HOST
  fi
  t_on_exit "chown 0:0 /dev/null; chmod 0666 /dev/null"
}

# ag_devnull_changed WHAT: fails unless /dev/null's owner differs from the
# guard's snapshot; prints the new owner and restores it.
ag_devnull_changed() {
  local now
  now=$(stat -c '%u:%g %a' /dev/null)
  [[ $now != "$AG_DEVNULL" ]] || fail "$1: the host's /dev/null kept its owner ($now): the runsc stdin defect documented here is gone (update the docs)"
  chown "${AG_DEVNULL% *}" /dev/null
  chmod "${AG_DEVNULL#* }" /dev/null
  echo "$now"
}
