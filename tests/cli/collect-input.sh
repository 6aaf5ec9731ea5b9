#!/usr/bin/env bash
# collect's input handling and harness set-up: every bad input is exit 2
# with one line on stderr, nothing on stdout and no output file; a broken
# installation or an unusable TMPDIR is exit 3; --run-as accepts a numeric
# uid; on a terminal the progress is one live line per provider, coloured
# unless NO_COLOR is set.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "not built: $AGSBX_BIN"
d=$(t_tmpdir collect-input)
out="$d/out.json"

# expect WANT_RC MESSAGE_PART ARGS...: collect exits WANT_RC, says
# MESSAGE_PART on stderr, prints nothing on stdout, writes no output file.
expect() {
  local want=$1 msg=$2; shift 2
  rm -f "$out"
  set +e
  so=$("$@" 2>"$d/stderr")
  rc=$?
  set -e
  [[ $rc == "$want" ]] || fail "$*: exit $rc, want $want: $(head -c 300 "$d/stderr")"
  [[ -z $so ]] || fail "$*: stdout not empty"
  grep -qF -- "$msg" "$d/stderr" || fail "$*: stderr lacks '$msg': $(head -c 300 "$d/stderr")"
  [[ ! -e $out ]] || fail "$*: output file left"
  ls "$d" | grep -q '\.tmp-' && fail "$*: temporary file left"
  pass "exit $want ($msg): ${*:2}"
}

C=("$AGSBX_BIN" collect --unsigned --output "$out")
expect 2 "given twice" "${C[@]}" --provider trusted_local --provider trusted_local
expect 2 "1 to 256 characters" "${C[@]}" --provider trusted_local --challenge ""
expect 2 "1 to 256 characters" "${C[@]}" --provider trusted_local --challenge "$(printf 'n%.0s' {1..257})"
expect 2 "exclude each other" "${C[@]}" --provider trusted_local --sign-key "$d/k"
expect 2 "unexpected argument 'extra'" "${C[@]}" --provider trusted_local extra
expect 2 "needs a value" "$AGSBX_BIN" collect --unsigned --provider
expect 2 "--jobs" "${C[@]}" --provider trusted_local --jobs 0
expect 2 "--max-output-bytes" "${C[@]}" --provider trusted_local --max-output-bytes 0
expect 2 "provider 'bubblewrap' is not selected" "${C[@]}" --provider trusted_local --config bubblewrap.x=1
expect 2 "--work-dir $d/no-such-dir" "${C[@]}" --provider trusted_local --work-dir "$d/no-such-dir"
mkdir "$d/adir"
expect 2 "is a directory" "$AGSBX_BIN" collect --unsigned --provider trusted_local --output "$d/adir"

# Without --output: agsbx-evidence-HOST-TIMESTAMP.json in the working directory.
mkdir "$d/cwd"
(cd "$d/cwd" && "$AGSBX_BIN" collect --unsigned --provider trusted_local -q 2>"$d/cwd.err") ||
  fail "collect without --output failed: $(tail -n 5 "$d/cwd.err")"
made=$(ls -A "$d/cwd")
[[ $made =~ ^agsbx-evidence-[A-Za-z0-9._-]+-[0-9]{8}T[0-9]{6}Z\.json$ ]] || fail "default output name: '$made'"
jq -e .providers "$d/cwd/$made" >/dev/null || fail "default output is not a bundle"
pass "default output name: $made"

if [[ $(id -u) == 0 ]]; then
  expect 2 "no such user 'agsbx-no-such-user'" "${C[@]}" --provider trusted_local --run-as agsbx-no-such-user
  expect 2 "is root" "${C[@]}" --provider trusted_local --run-as root
  expect 2 "is root" "${C[@]}" --provider trusted_local --run-as 0
  expect 2 "no such user '-5'" "${C[@]}" --provider trusted_local --run-as -5
fi

# A copy of the binary without its helpers: an incomplete installation.
mkdir "$d/lonely"
install -m 0755 "$AGSBX_BIN" "$d/lonely/agsbx-evidence"
expect 3 "installation is incomplete" "$d/lonely/agsbx-evidence" collect --unsigned --provider trusted_local --output "$out"

if have_test_user; then
  uid=$(id -u "$AGSBX_TEST_USER")
  # Staging the helpers for the user needs a usable TMPDIR.
  expect 3 "cannot stage the helper programs" env TMPDIR="$d/no-such-tmp" \
    "${C[@]}" --provider trusted_local --run-as "$AGSBX_TEST_USER"
  # A numeric uid names the same user.
  "${C[@]}" --provider trusted_local --run-as "$uid" -q 2>"$d/num.err" ||
    fail "collect --run-as $uid failed: $(tail -n 5 "$d/num.err")"
  [[ -s $out ]] || fail "collect --run-as $uid wrote no bundle"
  pass "--run-as accepts a numeric uid ($uid)"
  # Unprivileged, --run-as is a usage error (it can only drop privileges).
  S=$(t_stage_for_user)
  set +e
  as_user "$S/agsbx-evidence" collect --unsigned --provider trusted_local --output /tmp/agsbx-never-written.json \
    --run-as "$AGSBX_TEST_USER" >/dev/null 2>"$d/user.err"
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "unprivileged --run-as: exit $rc, want 2"
  grep -q "needs root" "$d/user.err" || fail "unprivileged --run-as: $(cat "$d/user.err")"
  [[ ! -e /tmp/agsbx-never-written.json ]] || fail "unprivileged --run-as wrote a bundle"
  pass "--run-as needs root"
else
  skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
fi

# On a terminal (script(1) gives collect a pty on stderr): one live line per
# provider with a running count, coloured verdicts; NO_COLOR turns colour off.
if have script; then
  rm -f "$out"
  script -qec "$(printf '%q ' "${C[@]}" --provider trusted_local)" "$d/tty.log" >/dev/null ||
    fail "collect on a terminal failed: $(tail -c 500 "$d/tty.log")"
  [[ -s $out ]] || fail "collect on a terminal wrote no bundle"
  grep -aq $'\r\033\[K' "$d/tty.log" || fail "no live progress line on a terminal"
  grep -aEq 'trusted_local [0-9]+/[0-9]+ ' "$d/tty.log" || fail "no running count on a terminal"
  grep -aq $'\033\[3[123]m' "$d/tty.log" || fail "no coloured verdict on a terminal"
  pass "terminal: live progress line with a count, coloured"
  rm -f "$out"
  NO_COLOR=1 script -qec "$(printf '%q ' "${C[@]}" --provider trusted_local)" "$d/nc.log" >/dev/null ||
    fail "collect on a terminal with NO_COLOR failed"
  grep -aEq 'trusted_local [0-9]+/[0-9]+ ' "$d/nc.log" || fail "no running count with NO_COLOR"
  if grep -aq $'\033\[3[123]m' "$d/nc.log"; then fail "colour despite NO_COLOR"; fi
  pass "terminal with NO_COLOR: progress without colour"
fi
