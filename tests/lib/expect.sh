# Per-provider expected verdicts, read from one data file (sourced after
# common.sh). tests/data/expected-verdicts.json holds them by set: a set
# names checks and the verdict each must have, and why where that is not
# obvious; a script names the sets that apply to its run (a base set, then
# the ones for its conditions: root, the kernel's Landlock ABI...), later
# sets overriding earlier ones check by check. Adding a check or changing
# what a provider is expected to do is then one line in that file, not a
# list in every provider script.
#
# An expectation is a verdict ("pass", "fail", "not_claimed", "skip",
# "blocked"), a list of verdicts (any of them; the script decides which
# with the facts), or "any" (the check is in the bundle, any verdict). A
# set with "only_listed_fail": true also says no other check fails: the
# provider's failing checks are exactly the ones the sets list as "fail".
EXPECTED_VERDICTS=${EXPECTED_VERDICTS:-$AGSBX_SOURCE_DIR/tests/data/expected-verdicts.json}

# The mismatches, one a line (none when the bundle meets the sets). Args:
# BUNDLE PROVIDER_ID SET...
_expect_mismatches() {
  local bundle=$1 prov=$2
  shift 2
  jq -rn --slurpfile exp "$EXPECTED_VERDICTS" --slurpfile b "$bundle" --arg p "$prov" \
    --args '
    $exp[0].sets as $sets | $ARGS.positional as $names
    | [$names[] | select($sets[.] == null)] as $unknown
    | if ($unknown | length) > 0 then $unknown[] | "no set \"\(.)\" in the expected-verdicts file"
      else
        (reduce $names[] as $n ({}; . + $sets[$n].checks)) as $want
        | ([$names[] | $sets[.].only_listed_fail // false] | any) as $exact
        | [$b[0].providers[] | select(.id == $p)] as $pp
        | if ($pp | length) != 1 then "provider \($p) is in the bundle \($pp | length) times, want once"
          else
            ($pp[0].checks | map({key: .id, value: .}) | from_entries) as $got
            | ($want | to_entries[]
               | .key as $c | (.value | if type == "object" then .verdict else . end) as $v
               | ([$v] | flatten) as $ok | $got[$c] as $g
               | select($g == null or ($ok != ["any"] and ($ok | any(.[]; . == $g.verdict) | not)))
               | if $g == null then "\($p) \($c) is missing, want \($ok | join(" or "))"
                 else "\($p) \($c) is \($g.verdict), want \($ok | join(" or ")): \($g.reason // "")" end),
              (select($exact) | $got[] | select(.verdict == "fail") | .id as $c
               | select($want[$c] == null)
               | "\($p) \($c) is fail, which no set lists: \(.reason // "")")
          end
      end' "$@"
}

# expect_verdicts BUNDLE PROVIDER_ID SET...: the checks of provider
# PROVIDER_ID in BUNDLE have the verdicts the SETs of the data file say;
# fails naming every mismatch (with the bundle's reason), not just the
# first. EXPECT_COUNT: how many checks the sets named.
expect_verdicts() {
  [[ -r $EXPECTED_VERDICTS ]] || fail "expect_verdicts: cannot read $EXPECTED_VERDICTS"
  local out
  out=$(_expect_mismatches "$@") || fail "expect_verdicts: jq failed on $1 with sets ${*:3}"
  [[ -z $out ]] || fail "$2 against sets ${*:3} of $(basename "$EXPECTED_VERDICTS"):"$'\n'"$out"
  EXPECT_COUNT=$(expect_ids "${@:3}" | wc -l)
}

# expect_ids SET...: the check ids the SETs name (merged), one a line.
expect_ids() {
  jq -rn --slurpfile e "$EXPECTED_VERDICTS" --args \
    '$e[0].sets as $s | $ARGS.positional | map($s[.].checks // {} | keys[]) | unique[]' "$@"
}
