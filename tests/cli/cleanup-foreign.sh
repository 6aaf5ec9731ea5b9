#!/usr/bin/env bash
# Root's cleanup (and the sweep every root collect runs first) touches only
# what a dead run's owner record confines it to: a look-alike agsbx-run-*
# dir another user made in a shared /tmp, with a forged dead owner record,
# costs neither that user's nor root's processes naming it; another user's
# live run under a different TMPDIR whose path merely contains the swept
# one is untouched; a record in a directory others can write, or owned by
# someone else than its directory, is not acted on. A real dead --run-as
# run's processes (the run-as user's) still go. A collect SIGKILLed while
# the home canary exists leaves it, and cleanup (or the next collect)
# removes it.
source "$(dirname "$0")/../lib/common.sh"
user_gcov_env

have_test_user || skip "cleanup-foreign" 1 "needs root to run as $AGSBX_TEST_USER (make test creates it)"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
stage=$(t_stage_for_user)
uid=$(id -u "$AGSBX_TEST_USER") gid=$(id -g "$AGSBX_TEST_USER")
T=$(t_tmpdir foreign)
pidns=$(stat -L -c %i /proc/self/ns/pid)
start=$(sed 's/.*) //' "/proc/$$/stat" | awk '{print $20}')
dead="$$ $((start + 1)) $pidns"    # our pid with another start time: a dead owner

# bg_named VAR NAME user|root: starts a sleeping process whose argv[0] is
# NAME and sets VAR to its pid (it writes its own: as_user is a function).
pids=$T/pids
mkdir "$pids"; chown "$AGSBX_TEST_USER" "$pids"
bg_named() {
  local var=$1 name=$2 who=$3 pidf pid
  pidf=$(mktemp -u "$pids/p-XXXXXX")
  local body='echo $$ >"$1.tmp" && mv "$1.tmp" "$1"; exec -a "$0" sleep 120'
  if [[ $who == root ]]; then
    bash -c "$body" "$name" "$pidf" </dev/null >/dev/null 2>&1 &
  else
    as_user bash -c "$body" "$name" "$pidf" </dev/null >/dev/null 2>&1 &
  fi
  disown
  for _ in $(seq 250); do [[ -s $pidf ]] && break; sleep 0.02; done
  pid=$(cat "$pidf") || fail "$name did not start"
  t_on_exit "kill -KILL $pid 2>/dev/null"
  for _ in $(seq 100); do [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == "$name "* ]] && break; sleep 0.02; done
  printf -v "$var" %s "$pid"
}
alive() { kill -0 "$1" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$1/stat") != Z ]]; }
root_cleanup() { TMPDIR=$1 "$AGSBX_BIN" cleanup --json "${@:2}"; }

# ---- a look-alike in a shared /tmp ------------------------------------------
tmp=$T/tmp
mkdir "$tmp"; chmod 1777 "$tmp"
fake=$tmp/agsbx-run-lookalike
as_user mkdir "$fake"
as_user sh -c "umask 022; echo '$dead' >'$fake/.agsbx-owner'"
bg_named v_user "$fake/area/agsbx-payload" user
bg_named v_root "$fake/area/agsbx-payload" root
# the same, in a directory anyone can write (its record cannot say whose it is)
open=$tmp/agsbx-run-open
mkdir "$open"; echo "$dead" >"$open/.agsbx-owner"; chmod 0777 "$open"
bg_named v_open "$open/x" root
# a record owned by another user than its directory
mixed=$tmp/agsbx-run-mixed
as_user mkdir "$mixed"; echo "$dead" >"$mixed/.agsbx-owner"
root_cleanup "$tmp" >"$T/lookalike.json" || fail "root cleanup exited $?: $(cat "$T/lookalike.json")"
alive "$v_user" || fail "root cleanup killed the test user's process naming a look-alike dir: $(cat "$T/lookalike.json")"
alive "$v_root" || fail "root cleanup killed root's process naming a look-alike dir the test user made"
alive "$v_open" || fail "root cleanup killed a process naming a world-writable look-alike"
jq -e 'map(select(.kind == "process")) | length == 0' "$T/lookalike.json" >/dev/null \
  || fail "root cleanup listed processes: $(cat "$T/lookalike.json")"
[[ -d $open && -d $mixed ]] || fail "root cleanup acted on a record it cannot trust: $(cat "$T/lookalike.json")"
pass "a look-alike run dir with a forged owner record: no process killed; untrusted records left alone"

# ---- another user's live run under a different TMPDIR ------------------------
# The swept TMPDIR's path is a suffix of the live run's TMPDIR path, as
# /tmp is of /home/u/tmp: a substring match of one hit the other.
A=$T/a
B=$T/user$A
mkdir -p "$A" "$B"; chown "$AGSBX_TEST_USER" "$B"
live=$B/agsbx-run-same
as_user mkdir "$live"
bg_named stand_in "$live/area/agsbx-payload" user
s_start=$(sed 's/.*) //' "/proc/$stand_in/stat" | awk '{print $20}')
as_user sh -c "umask 022; echo '$stand_in $s_start $pidns' >'$live/.agsbx-owner'"
mkdir "$A/agsbx-run-same"; echo "$dead" >"$A/agsbx-run-same/.agsbx-owner"   # root's own dead run
root_cleanup "$A" >"$T/suffix.json" || fail "root cleanup exited $?"
alive "$stand_in" || fail "root cleanup killed another user's live run under $B: $(cat "$T/suffix.json")"
[[ -f $live/.agsbx-owner ]] || fail "root cleanup touched the live run's dir"
[[ ! -e $A/agsbx-run-same ]] || fail "root cleanup left root's own dead run dir"
pass "another user's live run under a TMPDIR containing the swept path: untouched (root's dead dir removed)"

# ---- a real dead --run-as run: its run-as user's processes still go ----------
t=$(t_tmpdir runas)
chmod 0755 "$t"
for attempt in 1 2 3 4 5; do
  TMPDIR=$t "$AGSBX_BIN" collect --unsigned --run-as "$AGSBX_TEST_USER" --provider trusted_local \
    --output "$t/b.json" --work-dir "$t" >/dev/null 2>"$t/log" &
  pid=$!
  for _ in $(seq 3000); do
    pgrep -u "$uid" -f -- "$t/.* linger " >/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  kill -KILL "$pid" $(pgrep -P "$pid" || true) 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$t/b.json"
  [[ -n $(pgrep -u "$uid" -f -- "$t/") ]] && break
  root_cleanup "$t" --work-dir "$t" >/dev/null || true
  (( attempt < 5 )) || fail "--run-as SIGKILL: no detached process left in 5 attempts"
done
left=$(pgrep -u "$uid" -f -- "$t/" | tr '\n' ' ')
t_on_exit "kill -KILL $left 2>/dev/null"
root_cleanup "$t" --work-dir "$t" >"$T/runas.json" || fail "root cleanup of a dead --run-as run exited $?"
for _ in $(seq 40); do [[ -z $(pgrep -u "$uid" -f -- "$t/") ]] && break; sleep 0.05; done
[[ -z $(pgrep -u "$uid" -f -- "$t/") ]] || fail "root cleanup left the dead --run-as run's processes: $(pgrep -a -u "$uid" -f -- "$t/")"
jq -e 'map(select(.kind == "process" and .removed)) | length >= 1' "$T/runas.json" >/dev/null \
  || fail "no process reported removed: $(cat "$T/runas.json")"
[[ -z $(find "$t" -mindepth 1 -maxdepth 1 -name 'agsbx-*') ]] \
  || fail "root cleanup left dirs: $(ls "$t")"
pass "a SIGKILLed root --run-as collect: cleanup killed its $(wc -w <<<"$left") run-as process(es) and removed its dirs"

# ---- the home canary of a SIGKILLed collect ----------------------------------
# A command-prefix "sandbox" that isolates nothing (named as such: a
# stand-in so the kill lands at the right moment): for the run that reads
# the home canary it tells the test and waits; every other run it executes.
mkfifo "$T/never"; chmod 0666 "$T/never"
flagdir=$T/flags; mkdir "$flagdir"; chown "$AGSBX_TEST_USER" "$flagdir"
cat >"$T/hold-canary.sh" <<EOF
#!/bin/bash
for a in "\$@"; do
  if [[ \$a == */.agsbx-canary-*/id_key ]]; then
    printf '%s\n' "\${a%/id_key}" >"$flagdir/seen.tmp" && mv "$flagdir/seen.tmp" "$flagdir/canary-seen"
    read -r -t 60 <>"$T/never" || true
  fi
done
exec "\$@"
EOF
chmod 0755 "$T/hold-canary.sh"
home=$(getent passwd "$AGSBX_TEST_USER" | cut -d: -f6)
[[ -d $home ]] || skip "cleanup-foreign" 1 "$AGSBX_TEST_USER has no home directory $home"

# kill_at_canary TMP: a collect as the test user, SIGKILLed (its whole
# process group, workers included) while its home canary exists.
kill_at_canary() {
  local w=$1 pid
  rm -f "$flagdir/canary-seen"
  ( exec setsid setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env -- \
      env HOME=/tmp PATH=/usr/local/bin:/usr/bin:/bin TMPDIR="$w" ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} \
      "${USER_GCOV_ENV[@]}" "$stage/agsbx-evidence" collect --unsigned --output "$w/b.json" --work-dir "$w" \
      --wrap "hold=$T/hold-canary.sh {argv}" --provider hold ) >/dev/null 2>"$w/log" &
  pid=$!
  for _ in $(seq 3000); do [[ -e $flagdir/canary-seen ]] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
  [[ -e $flagdir/canary-seen ]] || { cat "$w/log" >&2; fail "the collect never reached the home canary"; }
  kill -KILL -- "-$pid" 2>/dev/null || fail "the held collect (process group $pid) was gone before the kill: $(cat "$w/log")"
  wait "$pid" 2>/dev/null || true
}
# the canary the held run was given (other tests' runs may have their own)
held_canary() { cat "$flagdir/canary-seen"; }

w=$(t_tmpdir canary); chown "$AGSBX_TEST_USER" "$w"
kill_at_canary "$w"
c=$(held_canary)
[[ $c == "$home"/.agsbx-canary-* && -f $c/id_key ]] || fail "the SIGKILLed collect left no canary (nothing to test): $c"
t_on_exit "rm -rf '$c'"
as_user env TMPDIR="$w" "$stage/agsbx-evidence" cleanup --dry-run --work-dir "$w" >"$T/canary-dry.txt" 2>&1 \
  || fail "cleanup --dry-run exited $?: $(cat "$T/canary-dry.txt")"
grep -qxF "would remove canary $c" "$T/canary-dry.txt" || fail "cleanup --dry-run does not list the canary: $(cat "$T/canary-dry.txt")"
[[ -f $c/id_key ]] || fail "--dry-run removed the canary"
as_user env TMPDIR="$w" "$stage/agsbx-evidence" cleanup --work-dir "$w" >"$T/canary.txt" 2>&1 \
  || fail "cleanup exited $?: $(cat "$T/canary.txt")"
grep -qxF "removed canary $c" "$T/canary.txt" || fail "cleanup did not report the canary: $(cat "$T/canary.txt")"
[[ ! -e $c ]] || fail "cleanup left the canary $c"
pass "a collect SIGKILLed during secrets.home_denied: cleanup removed its home canary"

w=$(t_tmpdir canary2); chown "$AGSBX_TEST_USER" "$w"
kill_at_canary "$w"
c=$(held_canary)
[[ $c == "$home"/.agsbx-canary-* && -f $c/id_key ]] || fail "the second SIGKILLed collect left no canary: $c"
t_on_exit "rm -rf '$c'"
as_user env TMPDIR="$w" "$stage/agsbx-evidence" collect -q --unsigned --provider trusted_local \
  --output "$w/next.json" --work-dir "$w" 2>"$w/next.log" || { cat "$w/next.log" >&2; fail "the next collect failed"; }
[[ ! -e $c ]] || fail "the next collect left the killed run's canary $c"
pass "the next collect removed a killed run's home canary"

# A dead root harness's cgroup leaf is root's: a user's cleanup leaves it
# (it could not remove it: no "COULD NOT REMOVE", exit 0), root's removes it.
# (Any root harness starting meanwhile sweeps it too: whether it is still
# there after the user's cleanup is not the user's doing.)
cg=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
if [[ -n $cg && -w $cg ]]; then
  true & gone=$!; wait "$gone"
  leaf=$cg/agsbx-run-$gone-1-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
  mkdir "$leaf" || fail "cannot make the test leaf $leaf"
  t_on_exit "rmdir '$leaf' 2>/dev/null"
  set +e
  out=$(as_user env TMPDIR="$T" "$stage/agsbx-evidence" cleanup 2>&1); rc=$?
  set -e
  [[ $rc == 0 && $out != *"$leaf"* ]] || fail "a user's cleanup with root's dead leaf $leaf: exit $rc: $out"
  env TMPDIR="$T" "$AGSBX_BIN" cleanup >/dev/null || fail "root's cleanup failed"
  [[ ! -e $leaf ]] || fail "root's cleanup left its dead leaf $leaf"
  pass "a dead root harness's cgroup leaf: a user's cleanup leaves it alone (exit 0), root's removes it"
elif [[ ${AGSBX_REQUIRE_MECHANISMS:-0} == 1 ]]; then
  fail "no writable cgroup2 mount, which CI has: the foreign-leaf case cannot run"
else
  echo "note: no writable cgroup2 mount: the foreign-leaf case is not run" >&2
fi
