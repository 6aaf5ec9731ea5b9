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

# jq_fields ARRAY FILE BASE [--arg K V]... -- NAME FILTER [NAME FILTER]...
# One jq start for many reads (jq 1.6 spends ~25 ms of CPU starting): each
# FILTER runs on FILE's BASE and ARRAY[NAME] gets what `jq -r` would print
# (strings raw, other values as compact JSON, several results one per
# line, nothing for none). A FILTER that errors gives "jq error: MESSAGE",
# which no expectation matches; a FILE that is not JSON fails the test.
jq_fields() {
  local -n _jf=$1
  local file=$2 base=$3 prog="" n
  shift 3
  local args=() names=()
  while [[ $1 != -- ]]; do args+=("$1"); shift; done
  shift
  while (($#)); do
    names+=("$1")
    prog+="${prog:+, }(try ([$2] | map(if type == \"string\" then . else tojson end) | join(\"\\n\")) catch \"jq error: \\(.)\")"
    shift 2
  done
  local vals=()
  mapfile -t -d '' vals < <(jq -j "${args[@]}" "$base | [$prog] | map(. + \"\\u0000\") | add // \"\"" "$file") ||
    fail "jq_fields: cannot read $file"
  ((${#vals[@]} == ${#names[@]})) || fail "jq_fields: $file: ${#vals[@]} values for ${#names[@]} names (no single BASE '$base'?)"
  _jf=()
  for n in "${!names[@]}"; do _jf[${names[n]}]=${vals[n]}; done
}

# jq_checks VERDICTS REASONS FILE BASE [--arg K V]...: every check of the
# provider at BASE in FILE, from one jq start: VERDICTS[id] its verdict,
# REASONS[id] its reason ("" when none). Fails when BASE has no checks.
jq_checks() {
  local -n _jv=$1 _jr=$2
  local file=$3 base=$4 vals=() i
  shift 4
  mapfile -t -d '' vals < <(jq -j "$@" "$base | .checks[] | .id, .verdict, (.reason // \"\") | . + \"\\u0000\"" "$file")
  ((${#vals[@]})) || fail "jq_checks: no checks at $base in $file"
  _jv=() _jr=()
  for ((i = 0; i + 2 < ${#vals[@]}; i += 3)); do
    _jv[${vals[i]}]=${vals[i + 1]} _jr[${vals[i]}]=${vals[i + 2]}
  done
}

# schema_results SCHEMA FILE...: "valid" or "invalid" for each FILE against
# SCHEMA (its own draft), one line each, from one python start with the
# validator built once (importing jsonschema costs ~0.2 s of CPU, and
# jsonschema.validate() re-checks the schema on every call); each error on
# stderr, naming its file.
schema_results() {
  "$PY" - "$@" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
V = jsonschema.validators.validator_for(schema)
V.check_schema(schema)
v = V(schema)
for f in sys.argv[2:]:
    errors = list(v.iter_errors(json.load(open(f))))
    for e in errors:
        print("schema: %s: %s: %s" % (f, "/".join(map(str, e.path)), e.message[:300]), file=sys.stderr)
    print("invalid" if errors else "valid")
PY
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
  local uid gid
  uid=$(id -u "$AGSBX_TEST_USER"); gid=$(id -g "$AGSBX_TEST_USER")
  user_gcov_env
  setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env -- \
    env HOME=/tmp PATH=/usr/local/bin:/usr/bin:/bin ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} "${USER_GCOV_ENV[@]}" "$@"
}

# user_gcov_env: sets USER_GCOV_ENV to the env assignments (for `env`)
# that let the test user's runs record coverage (empty outside a coverage
# build). For scripts with their own setpriv wrapper: without them the
# user's counters are lost and whatever only those runs reach (interrupt
# handling, a user's cleanup) counts as untested.
user_gcov_env() {
  USER_GCOV_ENV=()
  [[ -n ${AGSBX_GCOV_USER_DIR:-} ]] || return 0
  local uid gid
  uid=$(id -u "$AGSBX_TEST_USER" 2>/dev/null) && gid=$(id -g "$AGSBX_TEST_USER") || return 0
  [[ -e $AGSBX_GCOV_USER_DIR ]] || install -d -m 0755 -o "$uid" -g "$gid" "$AGSBX_GCOV_USER_DIR" || true
  if [[ -d $AGSBX_GCOV_USER_DIR && ! -L $AGSBX_GCOV_USER_DIR && $(stat -c %u "$AGSBX_GCOV_USER_DIR") == "$uid" ]]; then
    USER_GCOV_ENV=(GCOV_PREFIX="$AGSBX_GCOV_USER_DIR" GCOV_PREFIX_STRIP="$AGSBX_GCOV_PREFIX_STRIP")
  fi
}

# /proc/PID/cmdline as "arg arg ... " (each argument followed by a
# space), read with builtins only: the scans below visit every process of
# the machine, and two forks per process made one scan take seconds on a
# loaded host. Fails when the process is gone.
_proc_cmdline() {
  local -a a
  { mapfile -d '' -t a <"/proc/$1/cmdline"; } 2>/dev/null || return 1
  ((${#a[@]})) && printf -v _PROC_CMDLINE '%s ' "${a[@]}" || _PROC_CMDLINE=
}

# Processes of a user (for the no-leftover checks); prints "pid cmdline".
user_processes() {
  local uid
  uid=$(id -u "$1")
  local p k v
  for p in /proc/[0-9]*; do
    { while read -r k v _; do [[ $k == Uid: ]] && break; done <"$p/status"; } 2>/dev/null || continue
    [[ $k == Uid: && $v == "$uid" ]] || continue
    _proc_cmdline "${p#/proc/}" || _PROC_CMDLINE=
    printf '%s %s\n' "${p#/proc/}" "$_PROC_CMDLINE"
  done
}

# Processes whose cmdline contains a marker.
marker_processes() {
  local p
  for p in /proc/[0-9]*; do
    [[ $p == /proc/$$ ]] && continue
    _proc_cmdline "${p#/proc/}" || continue
    [[ $_PROC_CMDLINE == *"$1"* ]] && echo "${p#/proc/}"
  done
  return 0
}
