#!/usr/bin/env bash
# bench through declared providers, as the unprivileged test user: a
# working adapter and a wrapper get numbers; each way a provider can fail
# gets no numbers and its own reason instead (a broken hello, ensure or
# execute answer; the payload failing through the provider, which bench
# timed as a success before: it read the exit status after clearing the
# result; output after shutdown, found only when the adapter is finished);
# the text table shows the same; bad options exit 2 with one error line.
# The adapters are NEGATIVE CONTROLS (tests/negative/adapters/neg-shapes.py).
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"

stage=$(t_stage_for_user)
adapters=$(t_tmpdir adapters)
install -m 0644 "$AGSBX_SOURCE_DIR"/tests/negative/adapters/{negbase,neg-shapes}.py "$adapters/"
w=$(t_tmpdir bench)
chown "$AGSBX_TEST_USER:" "$w"
A="python3 $adapters/neg-shapes.py"

declare -A WANT=(
  [fine]=""
  [wrap]=""
  [hello]="adapter_protocol_error"
  [ensure]="ensure refused: adapter_protocol_error"
  [execute]="execute refused: adapter_protocol_error"
  [payload]="payload exited 1 through the provider"
  [chatter]="adapter_protocol_error: output after shutdown"
)
args=(--adapter "fine=$A fine" --adapter "hello=$A hello-protocol2" --adapter "ensure=$A ensure-handle-long"
  --adapter "execute=$A exec-b64-bad" --adapter "payload=$A exec-exit-1" --adapter "chatter=$A shutdown-chatter"
  --wrap "wrap=env")
for id in "${!WANT[@]}"; do args+=(--provider "$id"); done
set +e
as_user env TMPDIR="$w" "$stage/agsbx-evidence" bench --runs 3 --warmup 1 --json "${args[@]}" >"$w/b.json" 2>"$w/b.err"
rc=$?
set -e
[[ $rc == 0 ]] || { cat "$w/b.err" >&2; fail "bench --json exited $rc"; }
[[ $(jq '.runs' "$w/b.json") == 3 && $(jq '.providers | length' "$w/b.json") == "${#WANT[@]}" ]] ||
  fail "bench --json: runs or rows: $(head -c 400 "$w/b.json")"
for id in "${!WANT[@]}"; do
  declare -A R=()
  jq_fields R "$w/b.json" '.providers[] | select(.id == $n)' --arg n "$id" -- \
    unavailable '.unavailable // ""' p50 '.provider.p50_us // ""' min '.provider.min_us // ""' \
    max '.provider.max_us // ""' raw '.raw.unavailable // ""'
  if [[ -z ${WANT[$id]} ]]; then
    [[ -z ${R[unavailable]} && ${R[p50]} =~ ^[0-9]+$ && ${R[p50]} -gt 0 && ${R[min]} -le ${R[p50]} && ${R[p50]} -le ${R[max]} ]] ||
      fail "$id: want numbers, got unavailable '${R[unavailable]}' p50 '${R[p50]}' min '${R[min]}' max '${R[max]}'"
    [[ ${R[raw]} == "the provider names no raw mechanism command" ]] || fail "$id: raw '${R[raw]}'"
  else
    [[ ${R[unavailable]} == "${WANT[$id]}" && -z ${R[p50]} ]] ||
      fail "$id: want unavailable '${WANT[$id]}' and no numbers, got '${R[unavailable]}' p50 '${R[p50]}'"
  fi
done
pass "bench --json: numbers for the working adapter and wrapper; ${#WANT[@]} rows, each failure its own reason"

# the table: a row of dashes and the reason for each failed one
set +e
as_user env TMPDIR="$w" "$stage/agsbx-evidence" bench --runs 2 --warmup 0 "${args[@]}" >"$w/t.txt" 2>"$w/t.err"
rc=$?
set -e
[[ $rc == 0 ]] || { cat "$w/t.err" >&2; fail "bench (text) exited $rc"; }
for id in "${!WANT[@]}"; do
  line=$(grep "^$id " "$w/t.txt") || fail "text: no row for $id: $(cat "$w/t.txt")"
  if [[ -n ${WANT[$id]} ]]; then
    [[ $line == *"(${WANT[$id]})" && $line =~ ^$id\ +-\ +- ]] || fail "text: row for $id: '$line'"
  else
    [[ $line =~ ^$id\ +[0-9]+\ +[0-9]+ ]] || fail "text: row for $id has no numbers: '$line'"
  fi
done
[[ -z $(pgrep -u "$AGSBX_TEST_USER" -f "$adapters/neg-shapes.py" || true) ]] || fail "adapters left running"
pass "bench (text): the same rows, a reason in place of each failed provider's numbers; nothing left running"

n=0
for bad in "--runs 1" "--runs abc" "--warmup 1001" "--provider nosuch" "--adapter bad" "--wrap w=" "extra"; do
  set +e
  # shellcheck disable=SC2086
  "$AGSBX_BIN" bench $bad >"$w/o" 2>"$w/e"
  rc=$?
  set -e
  [[ $rc == 2 && ! -s $w/o ]] || fail "bench $bad: exit $rc (want 2), stdout '$(head -c 200 "$w/o")'"
  [[ $(grep -c '^agsbx-evidence: error: ' "$w/e") == 1 ]] || fail "bench $bad: want one error line: $(cat "$w/e")"
  n=$((n + 1))
done
pass "bench: $n bad options exit 2 with one error line, nothing on stdout"
