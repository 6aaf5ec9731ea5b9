#!/usr/bin/env bash
# cleanup's input handling and its judgement of run directories, as the
# unprivileged user in a private TMPDIR: bad usage is exit 2 with one line
# and nothing on stdout; --dry-run lists exactly the dead runs' agsbx-run-*,
# agsbx-tools-* and agsbx-landlock-* dirs (in TMPDIR and in --work-dir) and
# removes nothing; cleanup removes exactly those, nested read-only content
# included; a live owner's dir, a dir without an owner record, a symlink, a
# dir of another name and another user's dir stay. (interrupt.sh covers the
# dirs and processes a real SIGKILLed collect leaves.)
source "$(dirname "$0")/../lib/common.sh"

have_test_user || skip "cleanup" 1 "needs root to run as $AGSBX_TEST_USER (make test creates it)"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
stage=$(t_stage_for_user)
T=$(t_tmpdir cleanup)
tmp=$T/tmp work=$T/work
mkdir -p "$tmp" "$work"
chown "$AGSBX_TEST_USER" "$tmp" "$work"
C() { as_user env TMPDIR="$tmp" "$stage/agsbx-evidence" cleanup "$@"; }

bad() {
  local rc=0
  C "$@" >"$T/out" 2>"$T/err" || rc=$?
  [[ $rc == 2 ]] || fail "cleanup $*: exit $rc, want 2"
  [[ ! -s $T/out ]] || fail "cleanup $*: wrote to stdout: $(cat "$T/out")"
  [[ $(grep -c '^agsbx-evidence: error: ' "$T/err") == 1 ]] || fail "cleanup $*: want one error line, got: $(cat "$T/err")"
}
bad --no-such-option
bad --work-dir
bad stray-argument
bad --work-dir "$T/nonexistent"
touch "$T/a-file"
bad --work-dir "$T/a-file"
grep -q "a-file" "$T/err" || fail "the --work-dir error does not name the path: $(cat "$T/err")"
C --help | grep -q -- '--dry-run' || fail "cleanup --help lacks --dry-run"
pass "cleanup: bad usage is exit 2, one line, nothing on stdout"

# Owner records: this shell (alive) and the same pid with another start
# time (a dead run whose pid was reused).
start=$(sed 's/.*) //' "/proc/$$/stat" | awk '{print $20}')
pidns=$(stat -L -c %i /proc/self/ns/pid)
alive="$$ $start $pidns"
dead="$$ $((start + 1)) $pidns"
rundir() { # rundir PATH OWNER-TOKEN|-
  mkdir -p "$1"
  [[ $2 == - ]] || echo "$2" >"$1/.agsbx-owner"
  chown -R "$AGSBX_TEST_USER" "$1"
}
rundir "$tmp/agsbx-run-dead" "$dead"
mkdir -p "$tmp/agsbx-run-dead/area/source/sub"
echo x >"$tmp/agsbx-run-dead/area/source/sub/f"
chown -R "$AGSBX_TEST_USER" "$tmp/agsbx-run-dead"
chmod 0500 "$tmp/agsbx-run-dead/area/source/sub" "$tmp/agsbx-run-dead/area/source"
rundir "$tmp/agsbx-tools-dead" "$dead"
rundir "$work/agsbx-landlock-dead" "$dead"
rundir "$tmp/agsbx-run-alive" "$alive"
rundir "$tmp/agsbx-run-noowner" -
rundir "$tmp/agsbx-run-garbled" "not a token"
rundir "$tmp/other-dead" "$dead"
rundir "$T/linked" "$dead"
ln -s "$T/linked" "$tmp/agsbx-run-link"
# another user's (root's) dead run: not the test user's to remove
mkdir -p "$tmp/agsbx-run-root"; echo "$dead" >"$tmp/agsbx-run-root/.agsbx-owner"

want_dead=$(printf '%s\n' "$tmp/agsbx-run-dead" "$tmp/agsbx-tools-dead" "$work/agsbx-landlock-dead" | sort)
stays=("$tmp/agsbx-run-alive" "$tmp/agsbx-run-noowner" "$tmp/agsbx-run-garbled" "$tmp/other-dead" "$T/linked"
       "$tmp/agsbx-run-link" "$tmp/agsbx-run-root")
dirs_of() { jq -r '.[] | select(.kind == "directory") | .path' "$1" | sort; }

C --dry-run --work-dir "$work" --json >"$T/dry.json" || fail "cleanup --dry-run exited $?"
[[ $(dirs_of "$T/dry.json") == "$want_dead" ]] || fail "--dry-run listed: $(dirs_of "$T/dry.json"), want: $want_dead"
jq -e 'all(.[]; .removed == false)' "$T/dry.json" >/dev/null || fail "--dry-run claims a removal: $(cat "$T/dry.json")"
for d in $want_dead "${stays[@]}"; do [[ -e $d ]] || fail "--dry-run removed $d"; done
C --dry-run --work-dir "$work" >"$T/dry.txt" || fail "cleanup --dry-run (text) exited $?"
for d in $want_dead; do
  grep -qxF "would remove directory $d" "$T/dry.txt" || fail "text --dry-run lacks $d: $(cat "$T/dry.txt")"
done
pass "cleanup --dry-run lists exactly the dead runs' dirs (TMPDIR and --work-dir) and removes nothing"

# Without --work-dir only TMPDIR is swept.
C --dry-run --json >"$T/tmponly.json" || fail "cleanup --dry-run (TMPDIR only) exited $?"
[[ $(dirs_of "$T/tmponly.json") == "$(grep -v "^$work/" <<<"$want_dead")" ]] ||
  fail "without --work-dir: $(dirs_of "$T/tmponly.json")"
pass "cleanup without --work-dir sweeps TMPDIR only"

C --work-dir "$work" >"$T/clean.txt" || fail "cleanup exited $?: $(cat "$T/clean.txt")"
for d in $want_dead; do
  [[ ! -e $d ]] || fail "cleanup left $d"
  grep -qxF "removed directory $d" "$T/clean.txt" || fail "cleanup did not report $d: $(cat "$T/clean.txt")"
done
for d in "${stays[@]}"; do [[ -e $d || -L $d ]] || fail "cleanup removed $d, which is not a dead run's"; done
[[ -f $T/linked/.agsbx-owner ]] || fail "cleanup followed the symlink"
pass "cleanup removes the dead runs' dirs (read-only content too) and nothing else"

# Nothing left: no directory item, and the text says so when nothing at all is.
C --work-dir "$work" --json >"$T/again.json" || fail "second cleanup exited $?"
[[ -z $(dirs_of "$T/again.json") ]] || fail "second cleanup found dirs: $(dirs_of "$T/again.json")"
if [[ $(jq length "$T/again.json") == 0 ]]; then
  C --work-dir "$work" | grep -qx 'nothing left by dead runs' || fail "an empty sweep does not say so"
fi
pass "a second cleanup finds no directory"
