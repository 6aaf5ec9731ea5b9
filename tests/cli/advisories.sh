# Advisories: the host's kernel and runtime versions against the table of
# known-vulnerable upstream ranges (probes/advisories.json), and exposed
# hardening knobs. They are recorded in the bundle's host object, shown by
# report and diff as a readable line each, and never change a verdict.
# (That probing them writes nothing is cli-probe-landlock's strace run.)
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

B=$AGSBX_BIN
T=$(t_tmpdir adv)
command -v jq >/dev/null || skip jq 1 "jq not installed"

"$B" collect --provider trusted_local --unsigned --quiet --output "$T/b.json" 2>/dev/null || true
[[ -s $T/b.json ]] || fail "collect wrote no bundle"
table=$AGSBX_SOURCE_DIR/probes/advisories.json
# every advisory of the table is judged, each with its sources
[[ $(jq '.host.advisories.upstream_ranges.value | length' "$T/b.json") == $(jq '.advisories | length' "$table") ]] ||
  fail "not every advisory of the table is in the bundle"
jq -e '.host.advisories.upstream_ranges.value | all(.status and (.sources | length > 0))' "$T/b.json" >/dev/null ||
  fail "an advisory without a status or sources"
jq -e '.host.advisories.upstream_ranges.detail | test("distributions backport fixes")' "$T/b.json" >/dev/null ||
  fail "the upstream-range caveat is not recorded"
# the knobs are what /proc/sys says
want=$(cat /proc/sys/kernel/kptr_restrict)
[[ $(jq '.host.hardening.kptr_restrict.value' "$T/b.json") == "$want" ]] || fail "kptr_restrict differs from /proc/sys"
pass "the bundle records every advisory and knob, with sources"

# Two hosts that differ only in runc's version: 1.1.5 (inside the ranges
# of Leaky Vessels and the 2025 trio) and 1.4.0 (fixed). The advisories are
# recomputed here as the probe would (the table's rules), by hand in jq:
# the point is what report and diff make of them.
set_runc() { # IN VERSION STATUS21626 OUT
  jq --arg v "$2" --arg s "$3" '.host.runtimes.runc_version = {value: $v, source: "t"}
    | .host.advisories.upstream_ranges.value |= map(if .component == "runc" then .observed = $v
        | .status = (if .id == "CVE-2024-21626" then $s elif .id == "CVE-2026-41579" then "in_range" else "fixed" end)
      else . end)
    | .host.advisories.hardening.value |= map(.status = "restricted")' "$1" >"$4"
}
set_runc "$T/b.json" 1.1.5 in_range "$T/old.json"
set_runc "$T/b.json" 1.4.0 fixed "$T/new.json"
"$B" report "$T/old.json" >"$T/r" 2>/dev/null || true
grep -q '^advisories (not verdicts; distributions backport fixes):' "$T/r" || fail "report shows no advisories: $(tail -5 "$T/r")"
grep -q 'CVE-2024-21626 (Leaky Vessels): runc 1.1.5 is inside the upstream range' "$T/r" || fail "report: $(tail -5 "$T/r")"
"$B" report --format markdown "$T/old.json" | grep -q '^#### Advisories' || fail "markdown report shows no advisories"
"$B" report "$T/new.json" >"$T/r2" 2>/dev/null || true
grep -q 'CVE-2024-21626' "$T/r2" && fail "a fixed version is reported as an advisory"
# the verdicts and their counts are the same whatever the advisories say
[[ $(grep -A3 '^PROVIDER' "$T/r") == $(grep -A3 '^PROVIDER' "$T/r2") ]] || fail "advisories changed the verdict table"
pass "report shows versions inside upstream ranges and never counts them as verdicts"

"$B" diff "$T/old.json" "$T/new.json" >"$T/d" 2>/dev/null || true
grep -q 'advisories: upstream_ranges CVE-2024-21626 in_range, CVE-2026-41579 in_range -> CVE-2026-41579 in_range' "$T/d" ||
  fail "diff does not show the advisory change as one line: $(grep advisories "$T/d")"
grep -q 'runtimes: runc_version 1.1.5 -> 1.4.0' "$T/d" || fail "diff: no runc version change: $(cat "$T/d")"
grep -q ', 0 regressions' "$T/d" || fail "an advisory change counted as a regression: $(head -1 "$T/d")"
pass "diff shows an advisory change as its flagged findings, not as a regression"
