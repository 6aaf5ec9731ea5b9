#!/usr/bin/env bash
# tests/data/expected-verdicts.json, the per-provider expected verdicts the
# provider scripts read (tests/lib/expect.sh): well formed, every check id
# in it is one the catalogue has, every set is read by a script, and
# expect_verdicts fails, naming the check, when an expectation is wrong.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/expect.sh"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
abi=$(/usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None,use_errno=True); print(l.syscall(444,None,0,1))')
[[ $abi -ge 1 ]] || skip "landlock" 1 "the kernel reports no Landlock ABI ($abi)"
d=$(t_tmpdir ev)
E=$EXPECTED_VERDICTS

# 1. Well formed: sets of checks, each a verdict, a list of verdicts or
#    "any", in object form with a note; nothing else.
bad=$(jq -r '.sets | to_entries[] | .key as $s | .value |
  (select(type != "object" or (.checks | type) != "object") | "\($s): no checks object"),
  (keys - ["note", "checks", "only_listed_fail"] | .[] | "\($s): unknown member \(.)"),
  (select(has("only_listed_fail") and (.only_listed_fail | type) != "boolean") | "\($s): only_listed_fail not a boolean"),
  (.checks // {} | to_entries[] | .key as $c | .value
   | (if type == "object" then (keys - ["verdict", "note"] | .[] | "\($s) \($c): unknown member \(.)") else empty end),
     ((if type == "object" then .verdict else . end) | [.] | flatten
      | select(length == 0 or any(.[]; IN("pass", "fail", "not_claimed", "skip", "blocked", "any") | not))
      | "\($s) \($c): verdict \(tostring) not pass/fail/not_claimed/skip/blocked/any"))' "$E")
[[ -z $bad ]] || fail "$(basename "$E") malformed:"$'\n'"$bad"
nsets=$(jq '.sets | length' "$E")
pass "$(basename "$E"): $nsets sets, well formed"

# 2. Every check id is in the catalogue (`checks --json`). The real
#    landlock bundle is for step 4.
"$AGSBX_BIN" collect --provider landlock --unsigned -q --output "$d/ll.json" 2>"$d/ll.log" \
  || { tail -n 20 "$d/ll.log" >&2; fail "collect --provider landlock failed"; }
# Every check a bundle can contain, adapter.protocol included.
catalogue_ids() {
  "$AGSBX_BIN" checks --json | jq -r '.checks[].id' | sort -u
}
catalogue_ids >"$d/catalogue"
[[ $(wc -l <"$d/catalogue") -ge 30 ]] || fail "the catalogue has only $(wc -l <"$d/catalogue") checks"
jq -r '.sets[].checks | keys[]' "$E" | sort -u >"$d/named"
unknown=$(comm -23 "$d/named" "$d/catalogue")
[[ -z $unknown ]] || fail "check ids in $(basename "$E") that the catalogue lacks: ${unknown//$'\n'/ }"
pass "every one of $(wc -l <"$d/named") check ids named is in the catalogue ($(wc -l <"$d/catalogue") ids)"

# 3. Every set is read by a provider script (a set nobody reads asserts nothing).
for s in $(jq -r '.sets | keys[]' "$E"); do
  grep -lF -- "$s" "$AGSBX_SOURCE_DIR"/tests/cli/*.sh | grep -qv '/expected-verdicts\.sh$' \
    || fail "set $s is read by no script in tests/cli"
done
pass "every set is read by a script in tests/cli"

# 4. expect_verdicts against the real bundle: the sets of this run pass;
#    one verdict changed in a copy of the file, an unknown set, or a check
#    the provider does not have each fail, naming what is wrong.
sets=(landlock)
[[ $(id -u) == 0 ]] && sets+=(landlock+root)
[[ $abi -ge 4 ]] && sets+=(landlock+abi4)
[[ $abi -lt 9 ]] && sets+=(landlock+abi-below-9)
expect_verdicts "$d/ll.json" landlock "${sets[@]}"
pass "landlock as $(id -un) meets sets ${sets[*]} ($EXPECT_COUNT checks)"
must_fail() { # WANT-IN-MESSAGE DATA-FILE SETS...
  local want=$1 file=$2 msg
  shift 2
  if msg=$(EXPECTED_VERDICTS=$file expect_verdicts "$d/ll.json" landlock "$@" 2>&1); then
    fail "expect_verdicts accepted $* from $file"
  fi
  [[ $msg == *"$want"* ]] || fail "expect_verdicts' message lacks '$want': $msg"
}
jq '.sets.landlock.checks["fs.grant_write"] = "fail"' "$E" >"$d/flipped.json"
must_fail "landlock fs.grant_write is pass, want fail" "$d/flipped.json" "${sets[@]}"
jq '.sets.landlock.checks["fs.grant_write"] = "fail" | .sets.landlock.checks["fail.closed"] = ["skip", "blocked"]' "$E" >"$d/two.json"
msg=$(EXPECTED_VERDICTS=$d/two.json expect_verdicts "$d/ll.json" landlock "${sets[@]}" 2>&1) && fail "two wrong verdicts accepted"
[[ $msg == *"fs.grant_write is pass, want fail"*"fail.closed is pass, want skip or blocked"* ]] \
  || fail "not every mismatch named: $msg"
must_fail 'no set "landlock+nosuch"' "$E" landlock landlock+nosuch
jq '.sets.landlock.checks["fs.no_such_check"] = "any"' "$E" >"$d/missing.json"
must_fail "landlock fs.no_such_check is missing" "$d/missing.json" "${sets[@]}"
jq '.sets.landlock.only_listed_fail = true | .sets.landlock.checks |= with_entries(select(.value != "pass"))' "$E" \
  >"$d/exact.json"
jq '(.providers[] | select(.id == "landlock") | .checks[] | select(.id == "fs.grant_write")) |= (.verdict = "fail")' \
  "$d/ll.json" >"$d/ll-fail.json"
msg=$(EXPECTED_VERDICTS=$d/exact.json expect_verdicts "$d/ll-fail.json" landlock "${sets[@]}" 2>&1) \
  && fail "only_listed_fail accepted an unlisted failing check"
[[ $msg == *"fs.grant_write is fail, which no set lists"* ]] || fail "only_listed_fail message: $msg"
pass "expect_verdicts names every wrong verdict, an unknown set, a missing check and an unlisted failure"
