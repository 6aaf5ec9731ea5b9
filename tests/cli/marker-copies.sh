#!/usr/bin/env bash
# A lifecycle marker is visible in ps to every local user, who can copy it
# into a process of their own. Such copies (by another user, and by the
# harness's own user outside the harness's process tree) linger past the
# lifecycle checks of a collect run as the test user: they are neither
# counted as the provider's leftovers (a conformant provider stays
# conformant) nor killed by the harness. The lifecycle marker carries the
# run's nonce, as recorded in its work dir's owner record.
source "$(dirname "$0")/../lib/common.sh"
user_gcov_env

have_test_user || skip "marker-copies" 1 "needs root to run as $AGSBX_TEST_USER (make test creates it)"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
id -u nobody >/dev/null 2>&1 || skip "marker-copies" 1 "no user 'nobody' to stand for another local user"
stage=$(t_stage_for_user)
T=$(t_tmpdir markers)
chown "$AGSBX_TEST_USER" "$T"

# The copier: every marker it sees in ps becomes a sleeping process of its
# own user, named by it (argv[0]), for two minutes. Only this test's run's
# markers (their processes name $T): other tests' runs are not its target.
cat >"$T/copier.sh" <<'EOF'
#!/bin/bash
log=$1 scope=$2 seen=" "
echo "copier $$" >>"$log"
while :; do
  for m in $(ps -eo args= | grep -F -- "$scope/" | grep -o 'agsbx-marker-[0-9a-f]\{8\}[0-9a-f-]*' | sort -u); do
    [[ $seen == *" $m "* ]] && continue
    seen+="$m "
    # the copy logs itself before it becomes the sleeper: never unlogged
    bash -c 'echo "$0 $$" >>"$1"; exec -a "$0" sleep 120' "$m" "$log" </dev/null >/dev/null 2>&1 &
  done
  sleep 0.02
done
EOF
chmod 0755 "$T/copier.sh"
touch "$T/copied-other" "$T/copied-same"
chown nobody "$T/copied-other"; chown "$AGSBX_TEST_USER" "$T/copied-same"
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --reset-env -- /bin/bash "$T/copier.sh" "$T/copied-other" "$T" </dev/null >/dev/null 2>&1 &
disown
as_user /bin/bash "$T/copier.sh" "$T/copied-same" "$T" </dev/null >/dev/null 2>&1 &
disown
# The copier and each copy log their pids: all end by pid.
stop_copies() {
  local f m p
  for f in "$T/copied-other" "$T/copied-same"; do
    while read -r m p; do [[ $m == copier ]] && kill -KILL "$p" 2>/dev/null; done <"$f"
    while read -r m p; do kill -KILL "$p" 2>/dev/null || true; done <"$f"
  done
}
t_on_exit stop_copies

as_user env TMPDIR="$T" "$stage/agsbx-evidence" collect -q --unsigned --provider trusted_local \
  --output "$T/b.json" --work-dir "$T" 2>"$T/log" || true
[[ -s $T/b.json ]] || { cat "$T/log" >&2; fail "collect wrote no bundle"; }
check() { jq -r --arg c "$1" ".providers[0].checks[] | select(.id == \$c) | $2" "$T/b.json"; }
marker=$(check lifecycle.timeout_cleanup .facts.marker)
copy_of() { awk -v m="$marker" '$1 == m { print $2 }' "$T/$1"; }
# the copies were made (else nothing was tested)
for f in copied-other copied-same; do
  [[ -n $(copy_of $f) ]] || fail "the copier ($f) never saw $marker (nothing was tested): $(cat "$T/$f")"
done
for c in lifecycle.timeout_cleanup lifecycle.cancel_cleanup; do
  [[ $(check $c .verdict) == pass ]] || fail "$c: $(check $c .verdict): $(check $c .reason)"
  [[ $(check $c .facts.surviving_marker_processes) == 0 ]] || fail "$c counted a copy: $(check $c .reason)"
done
[[ $(jq -r '.providers[0].verdict' "$T/b.json") != defective ]] \
  || fail "trusted_local defective: $(jq -r '.providers[0].failing_checks | join(",")' "$T/b.json")"
for f in copied-other copied-same; do
  kill -0 "$(copy_of $f)" 2>/dev/null || fail "the copy of $marker ($f) was killed by the harness"
done
[[ $marker =~ ^agsbx-marker-[0-9a-f]{32}-[0-9a-f]{32}$ ]] || fail "marker $marker: not the run's nonce and the check's"
pass "copies of the lifecycle marker (another user's; the same user's outside the tree) count for nothing and stay alive"
