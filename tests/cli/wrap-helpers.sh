#!/usr/bin/env bash
# The end of an execution ends what the execution started, not the wrapped
# tool's own daemons. Rootless podman starts a pause process on first use
# (double fork, a session of its own) and refuses to run once it is gone
# ("invalid internal status ... podman system migrate"); a harness that
# killed it with the execution's tree made every later execution fail and
# the provider defective through no fault of the tool.
#
# The stand-in (a negative control, not podman): a wrapper script that, on
# first use, double-forks a `sleep` into a new session (its "pause
# process", carrying nothing of the run: no marker, not the payload) and
# afterwards exits 1 with podman's message when that process is gone. As
# the unprivileged test user:
# - the collect is not defective, every execution ran the payload, and the
#   lifecycle checks still see the payload's detached tree started and
#   killed (0 marker processes left): what the run started still goes;
# - the stand-in pause process outlives the collect (each execution's
#   meta.spared_helpers says how many such it left); the test then ends it
#   by its pid.
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"

stage=$(t_stage_for_user)
w=$(t_tmpdir wraphelp)
state=$(t_tmpdir pausestate)
chown "$AGSBX_TEST_USER:" "$w" "$state"

wrapper=$stage/pause-standin-wrapper
cat >"$wrapper" <<'EOF'
#!/bin/sh
# A stand-in for rootless podman (negative control): one long-lived helper
# per user, started on first use, required by every later run.
pidf=$1/pause.pid
shift
if mkdir "$pidf.lock" 2>/dev/null; then
  # the first run (executions run concurrently: one starts it, the others wait)
  ( setsid sh -c 'echo $$ >"$1.new"; mv "$1.new" "$1"; exec sleep 3599' sh "$pidf" </dev/null >/dev/null 2>&1 & )
fi
while [ ! -s "$pidf" ]; do sleep 0.01; done
pid=$(cat "$pidf")
if [ "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" != "sleep 3599 " ]; then
  echo "invalid internal status, try resetting the pause process with \"podman system migrate\": pause process $pid is gone" >&2
  exit 1
fi
exec "$@"
EOF
chmod 0755 "$wrapper"

# Whatever happens, the stand-in pause process goes, by its pid (and only
# if it still is the stand-in's sleep).
standin_stop() {
  local pid
  pid=$(cat "$state/pause.pid" 2>/dev/null) || return 0
  [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == "sleep 3599 " ]] && kill -KILL "$pid" 2>/dev/null
  return 0
}
t_on_exit standin_stop

F=$w/pause.json
set +e
as_user timeout -s KILL 600 "$stage/agsbx-evidence" collect --unsigned --work-dir "$w" --output "$F" \
  --provider pause --wrap "pause=$wrapper $state {argv}" 2>"$w/pause.err"
rc=$?
set -e
[[ -s $F ]] || { cat "$w/pause.err" >&2; fail "no bundle (collect exited $rc)"; }
p() { jq -r ".providers[] | select(.id == \"pause\") | $1" "$F"; }
chk() { p ".checks[] | select(.id == \"$1\") | $2"; }

[[ -s $state/pause.pid ]] || fail "the wrapper never started its pause process"
pid=$(cat "$state/pause.pid")
gone=$(p '[.checks[] | select(.reason | test("invalid internal status")) | .id] | join(", ")')
[[ -z $gone ]] || fail "the harness killed the wrapper's own pause process; later executions failed: $gone"
[[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == "sleep 3599 " ]] \
  || fail "the stand-in pause process $pid did not outlive the collect"
verdict=$(p .verdict)
[[ $verdict != defective ]] || fail "provider defective: $(p '[.checks[] | select(.verdict == "fail") | "\(.id): \(.reason)"] | join("; ")')"
for c in lifecycle.timeout_cleanup lifecycle.cancel_cleanup; do
  [[ $(chk $c '.verdict == "pass" and .facts.detached_tree_started and .facts.surviving_marker_processes == 0') == true ]] \
    || fail "$c: $(chk $c '"\(.verdict): \(.reason)"')"
done
# Said in the bundle: every wrapped execution that ran records how many of the
# tool's helpers it left running (the first execution, which started the
# stand-in, is the harness's own preflight, not an observation; the count
# itself is held by tests/test-runner.c).
[[ $(p '[.checks[].observations[]? | select(.role == "sandbox" and .meta != null) | .meta.spared_helpers | type == "number"] | all') == true ]] \
  || fail "a wrapped execution without meta.spared_helpers"
pass "a wrapper's own daemon (a stand-in for podman's pause process) outlives every execution; the payload's detached tree is still killed ($verdict)"
