# Shared helpers for tests/cli/*.sh (sourced). Tests exit 77 to skip with a
# printed reason; with AGSBX_REQUIRE_MECHANISMS=1 a skip of something the CI
# host has is a failure instead.
set -euo pipefail

AGSBX_BIN=${AGSBX_BIN:-$PWD/build/agsbx-evidence}
AGSBX_BUILD_DIR=${AGSBX_BUILD_DIR:-$(dirname "$AGSBX_BIN")}
AGSBX_SOURCE_DIR=${AGSBX_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
AGSBX_TEST_USER=${AGSBX_TEST_USER:-agsbx-test}
# jsonschema and friends come from Debian's python3, not a pyenv shim.
PY=/usr/bin/python3

_t_cleanups=()
t_on_exit() { _t_cleanups+=("$*"); }
_t_run_cleanups() {
  local rc=$?
  local i
  for ((i=${#_t_cleanups[@]}-1; i>=0; i--)); do eval "${_t_cleanups[i]}" || true; done
  exit $rc
}
trap _t_run_cleanups EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok - $*"; }

# skip WHAT CI_HAS_IT(0/1) REASON
skip() {
  if [[ "$2" == 1 && "${AGSBX_REQUIRE_MECHANISMS:-0}" == 1 ]]; then
    fail "$1 unavailable but AGSBX_REQUIRE_MECHANISMS=1: $3"
  fi
  echo "SKIP: $1: $3" >&2
  exit 77
}

# One root per test script, registered for removal here in the main shell:
# t_tmpdir is usually called as $(t_tmpdir x), a subshell whose cleanup
# registrations would be lost.
T_ROOT=$(mktemp -d /tmp/agsbx-t-XXXXXX)
chmod 0755 "$T_ROOT"
t_on_exit "chmod -R u+rwX '$T_ROOT' 2>/dev/null; rm -rf '$T_ROOT'"

# have TOOL: true when TOOL is on PATH. A part of a test that depends on
# it runs under `if have TOOL`; when TOOL is missing the part is reported,
# and with AGSBX_REQUIRE_MECHANISMS=1 (CI, which installs every tool) it is
# a failure rather than a silently shorter test.
have() {
  command -v "$1" >/dev/null && return 0
  [[ "${AGSBX_REQUIRE_MECHANISMS:-0}" == 1 ]] && fail "$1 missing but AGSBX_REQUIRE_MECHANISMS=1"
  echo "note: $1 missing; the part of this test that needs it did not run" >&2
  return 1
}

t_tmpdir() {
  local d
  d=$(mktemp -d "$T_ROOT/${1:-x}-XXXXXX")
  chmod 0755 "$d"
  echo "$d"
}

# expect_rc WANT CMD... : runs CMD, fails unless its status is WANT.
expect_rc() {
  local want=$1; shift
  set +e; "$@"; local got=$?; set -e
  [[ $got == "$want" ]] || fail "expected exit $want, got $got: $*"
}

have_test_user() { [[ $(id -u) == 0 ]] && id -u "$AGSBX_TEST_USER" >/dev/null 2>&1; }

# The helper programs, one name a line: CMake's one list (agsbx_add_helper),
# written into the build dir at configure time.
t_helpers() {
  [[ -s $AGSBX_BUILD_DIR/agsbx-helpers.list ]] || fail "$AGSBX_BUILD_DIR/agsbx-helpers.list missing (re-run cmake)"
  cat "$AGSBX_BUILD_DIR/agsbx-helpers.list"
}

# Copies the built programs into a world-readable dir so the unprivileged
# test user can run them even when the clone lives under a private home.
t_stage_for_user() {
  local d helpers
  d=$(t_tmpdir stage)
  helpers=$(t_helpers)
  local f
  for f in agsbx-evidence agsbx-evidence-negctl $helpers; do
    [[ -e "$AGSBX_BUILD_DIR/$f" ]] && install -m 0755 "$AGSBX_BUILD_DIR/$f" "$d/$f"
  done
  echo "$d"
}

# as_user CMD...: runs CMD as the unprivileged test user (setpriv, no sudo).
# In a coverage build its counters go to a dir of that user's (created here,
# used only if it is a real dir the user owns), merged by the coverage target.
as_user() {
  local uid gid gcov=()
  uid=$(id -u "$AGSBX_TEST_USER"); gid=$(id -g "$AGSBX_TEST_USER")
  if [[ -n ${AGSBX_GCOV_USER_DIR:-} ]]; then
    [[ -e $AGSBX_GCOV_USER_DIR ]] || install -d -m 0755 -o "$uid" -g "$gid" "$AGSBX_GCOV_USER_DIR" || true
    if [[ -d $AGSBX_GCOV_USER_DIR && ! -L $AGSBX_GCOV_USER_DIR && $(stat -c %u "$AGSBX_GCOV_USER_DIR") == "$uid" ]]; then
      gcov=(GCOV_PREFIX="$AGSBX_GCOV_USER_DIR" GCOV_PREFIX_STRIP="$AGSBX_GCOV_PREFIX_STRIP")
    fi
  fi
  setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env -- \
    env HOME=/tmp PATH=/usr/local/bin:/usr/bin:/bin ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} "${gcov[@]}" "$@"
}

# Processes of a user (for the no-leftover checks); prints "pid cmdline".
user_processes() {
  local uid
  uid=$(id -u "$1")
  local p
  for p in /proc/[0-9]*; do
    [[ -r $p/status ]] || continue
    if awk -v u="$uid" '/^Uid:/ { exit !($2 == u) }' "$p/status" 2>/dev/null; then
      printf '%s %s\n' "${p#/proc/}" "$({ tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null)"
    fi
  done
}

# Processes whose cmdline contains a marker.
marker_processes() {
  local p
  for p in /proc/[0-9]*; do
    [[ $p == /proc/$$ ]] && continue
    if { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null | grep -qF -- "$1"; then
      echo "${p#/proc/}"
    fi
  done
}
