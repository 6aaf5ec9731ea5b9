#!/usr/bin/env bash
# The Agently adapter on its own, over agsbx-external/1 without the harness,
# as the unprivileged user, against Agently's real landlock and trusted_local
# providers: its mappings (per-execute output limits, whole-second timeouts
# as 124 with timed_out inferred, cancel, Agently's validation and TOCTOU
# guard as refusals, upstream's health forwarded after release) and its
# start-up errors. The collect runs are in agently-{landlock,...}.sh.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/agently.sh"

adapter=$AGSBX_SOURCE_DIR/providers/external/agently/agently-adapter.py

# Start-up errors: exit 2, one line naming the problem, nothing on stdout.
out=$(python3 "$adapter" --agently-src /nonexistent --provider landlock 2>"$T_ROOT/err" </dev/null) && fail "missing checkout accepted"
[[ -z $out ]] || fail "stdout on a start-up error: $out"
grep -q "agently/types/data/code_execution.py missing" "$T_ROOT/err" || fail "error does not name the missing file: $(cat "$T_ROOT/err")"
expect_rc 2 python3 "$adapter" --agently-src /nonexistent --provider landlock </dev/null 2>/dev/null
expect_rc 2 python3 "$adapter" --agently-src /tmp --provider firejail </dev/null 2>/dev/null
pass "start-up errors exit 2 naming the problem"

agently_require_src
stage=$(agently_stage)
w=$(t_tmpdir drive); chown "$AGSBX_TEST_USER" "$w"
# Both providers at once: each drive mostly waits (whole-second timeouts,
# the detached tree's 8 s), and each has its own area and markers.
declare -A drive=()
for p in landlock trusted_local; do
  as_user python3 "$stage/src/tests/cli/lib-agently-drive.py" "$p" \
    "$stage/src/providers/external/agently/agently-adapter.py" "$stage/shared/thirdparty/agently" \
    "$stage/agsbx-payload" "$w" >"$w/$p.out" 2>&1 &
  drive[$p]=$!
done
t_on_exit wait
for p in landlock trusted_local; do
  rc=0; wait "${drive[$p]}" || rc=$?
  cat "$w/$p.out"
  [[ $rc == 0 ]] || fail "$p: the adapter's mappings (see above)"
done
# What upstream's health says after release is forwarded, not decided by
# the adapter: landlock checks its closed flag, trusted_local does not.
[[ $(cat "$w"/drive-*/health-after-release | sort | tr '\n' ' ') == "ready unhealthy " ]] \
  || fail "health after release: $(cat "$w"/drive-*/health-after-release)"
pass "health after release forwarded: landlock unhealthy, trusted_local ready (upstream's answer)"
sleep 0.2
left=$(marker_processes drive-marker- || true)
[[ -z $left ]] || fail "processes left: $left"
pass "nothing left running"
