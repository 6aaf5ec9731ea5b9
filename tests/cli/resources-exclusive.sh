#!/usr/bin/env bash
# resources.pids_bounded and resources.memory_bounded never run two at a
# time on the machine: two collects at once (each with two providers, so
# four worker processes) hold the machine lock in windows that do not
# overlap. Each balloon stops exactly at its cap when nothing bounds it,
# and no child of the fork loop outlives the run.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir rex)
# Each collect's work dir is its own, so the fork loops of this test (and
# only those: other tests run resource checks too) can be found after it.
run() { mkdir -p "$d/wd-$1"; "$AGSBX_BIN" collect --provider trusted_local --provider landlock --unsigned \
  --work-dir "$d/wd-$1" --output "$d/$1.json" -q 2>"$d/$1.err"; }
run a & pa=$!
run b & pb=$!
wait $pa || fail "collect a exited $?: $(tail -3 "$d/a.err")"
wait $pb || fail "collect b exited $?: $(tail -3 "$d/b.err")"
windows=$(jq -s '[.[].providers[] | select(.verdict != "blocked") | .checks[] | select(.id | startswith("resources."))
                  | .facts.machine_lock | select(.) | [.held_from_unix_us, .held_until_unix_us]] | sort_by(.[0])' \
  "$d/a.json" "$d/b.json")
n=$(jq length <<<"$windows")
[[ $n -ge 4 ]] || fail "only $n resource-check windows recorded: $windows"
jq -e '. as $w | [range(1; length) | $w[.][0] >= $w[. - 1][1]] | all' <<<"$windows" >/dev/null \
  || fail "resource checks overlapped: $windows"
pass "$n resource checks in two concurrent collects, one at a time"
jq -e -s '[.[].providers[] | select(.verdict != "blocked") | .checks[] | select(.id | startswith("resources.")) | .facts.inside
           | select(.) | (.forked // .reached_mib) <= (.cap // .cap_mib) and (.forked // .reached_mib) > 0] | length >= 4 and all' \
  "$d/a.json" "$d/b.json" >/dev/null || fail "a balloon went past its cap"
! pgrep -f "$d/wd-.*agsbx-payload fork-bound" >/dev/null || fail "fork-loop children outlived the run"
pass "balloons stay within their caps; no fork-loop child left"
