#!/usr/bin/env bash
# collect with the trusted_local control: conformant, isolation checks
# not_claimed with their observations recorded; bad input → exit 2 and no
# output file; the bundle's shape.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/expect.sh"
d=$(t_tmpdir collect)
F="$d/tl.json"

set +e
"$AGSBX_BIN" collect --provider trusted_local --unsigned --output "$F" 2>"$d/tl.log"
rc=$?
set -e
[[ $rc == 0 ]] || { tail -n 30 "$d/tl.log" >&2; fail "collect exited $rc"; }
jq -e '.schema == "agsbx-evidence/v1"' "$F" >/dev/null || fail "schema member"
[[ $(jq -r '.providers[0].verdict' "$F") == conformant ]] || fail "trusted_local not conformant"
# The expected verdicts: set "trusted_local" of tests/data/expected-verdicts.json.
expect_verdicts "$F" trusted_local trusted_local
# Every unclaimed axis was still observed, and the observation recorded.
unobserved=$(jq -r '.providers[0].checks[] | select(.verdict == "not_claimed" and (.observations | length) == 0) | .id' "$F")
[[ -z $unobserved ]] || fail "trusted_local: observation not recorded: ${unobserved//$'\n'/ }"
# The control's own observations show the unsandboxed reality.
jq -e '.providers[0].checks[] | select(.id=="fs.host_read_denied") | .observed_pass == false' "$F" >/dev/null \
  || fail "trusted_local read the canary?"
[[ $(jq -r '.providers[0].checks | map(.id) | join(",")' "$F") == \
   $(jq -r '.providers[0].checks | map(.id) | sort | join(",")' "$F") ]] || fail "check order not deterministic"
jq -e '[.. | numbers | select(. != floor)] | length == 0' "$F" >/dev/null || fail "non-integer number in bundle"
jq -e '.summary.exit_status == 0 and .summary.conformant == 1' "$F" >/dev/null || fail "summary"
pass "trusted_local conformant, isolation not_claimed with observations"

# --json summary on stdout, progress on stderr only.
set +e
out=$("$AGSBX_BIN" collect --provider trusted_local --unsigned --output "$d/j.json" --json 2>"$d/j.log")
rc=$?
set -e
[[ $rc == 0 ]] || { tail -n 30 "$d/j.log" >&2; fail "collect --json exited $rc"; }
echo "$out" | jq -e '.verdicts.trusted_local == "conformant"' >/dev/null || fail "--json summary"
pass "--json summary"

# Bad input: exit 2, one line on stderr, nothing on stdout, no output file.
bad() {
  local out="$d/bad.json"
  rm -f "$out"
  set +e
  so=$("$AGSBX_BIN" collect "$@" 2>"$d/stderr")
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "collect $*: exit $rc, want 2"
  [[ -z $so ]] || fail "collect $*: stdout not empty"
  [[ -s $d/stderr ]] || fail "collect $*: no error message"
  [[ ! -e $out ]] || fail "collect $*: partial output left"
  ls "$d" | grep -q '\.tmp-' && fail "collect $*: temporary file left"
  pass "bad input: $*"
}
bad --provider no_such_provider --unsigned --output "$d/bad.json"
bad --provider trusted_local --unsigned --output /nonexistent-dir/x.json
mkdir -p "$d/ro"; chmod 0555 "$d/ro"
if [[ $(id -u) != 0 ]]; then bad --provider trusted_local --unsigned --output "$d/ro/x.json"; fi
bad --provider trusted_local --unsigned --output "$d/bad.json" --no-such-flag
bad --provider trusted_local --unsigned --output "$d/bad.json" --timeout-ms abc
ln -s "$d" "$d/link"
bad --provider trusted_local --unsigned --output "$d/bad.json" --work-dir "$d/link"
bad --provider trusted_local --unsigned --output "$d/bad.json" --config trusted_local.nope=1 --config bogus
bad --provider trusted_local --unsigned --sign-key "$d/no-key" --output "$d/bad.json"
bad --provider trusted_local --unsigned --output "$d/bad.json" --simulate nonsense
bad --provider trusted_local --unsigned --output "$d/bad.json" --config trusted_local.nope=1
