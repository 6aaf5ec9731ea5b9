#!/usr/bin/env bash
# Maintainer views with provenance, on real bundles: a bubblewrap run and
# its --simulate blocked-userns twin (as the test user), a signed one, a
# NEGATIVE-CONTROL defect. diff names the simulation and shows both
# provenances (signature, trusted signer with a trust option, representative
# and why not, challenge, subject commit) and the blocked reason; matrix
# shows the verdicts per row and lists each row's provenance and blocked
# reasons under them; --format badge is a shields.io endpoint JSON; report shows a blocked provider's detail and
# hint; -o writes the file only when complete.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir views)
B=$AGSBX_BIN
K=$AGSBX_SOURCE_DIR/tests/data/bundles/keys
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
command -v bwrap >/dev/null || skip bubblewrap 1 "bwrap is not installed"

# The twin: the same run with and without the labelled simulation.
"$B" collect --provider bubblewrap --run-as "$AGSBX_TEST_USER" --unsigned -q -o "$d/a.json" \
  --challenge c-1 --subject-repo "$AGSBX_SOURCE_DIR"
[[ $(jq -r '.providers[0].verdict' "$d/a.json") == conformant ]] || fail "bubblewrap not conformant as $AGSBX_TEST_USER here"
"$B" collect --provider bubblewrap --run-as "$AGSBX_TEST_USER" --unsigned -q -o "$d/b.json" --simulate blocked-userns
[[ $(jq -r '.providers[0].verdict' "$d/b.json") == blocked ]] || fail "simulated twin not blocked"

set +e; "$B" diff "$d/a.json" "$d/b.json" >"$d/diff.txt" 2>"$d/diff.err"; rc=$?; set -e
head -1 "$d/diff.txt" | grep -q "^note: new .*b.json is a labelled simulation (blocked-userns)" \
  || fail "diff does not name the simulation first: $(head -3 "$d/diff.txt")"
grep -q "SIMULATED: blocked-userns" "$d/diff.txt" || fail "provenance lacks the simulation"
grep -q "bubblewrap blocked: bwrap_user_namespace_blocked" "$d/diff.txt" || fail "diff lacks the blocked reason"
grep -q "challenge: c-1" "$d/diff.txt" || fail "diff lacks the challenge"
commit=$(git -C "$AGSBX_SOURCE_DIR" rev-parse HEAD)
grep -q "subject: .*@${commit:0:12}" "$d/diff.txt" || fail "diff lacks the subject commit"
grep -q "not representative (.*simulated:blocked-userns)" "$d/diff.txt" || fail "diff lacks why not representative"
# pass -> blocked is the host's doing, not a regression, once diff has the
# host-change class (branch h/hardb); until then only the naming is checked.
if "$B" diff --help | grep -qi "host change"; then
  [[ $rc == 0 ]] || fail "diff against the simulated twin exits $rc, want 0"
else
  echo "note: diff has no host-change class yet; exit status $rc not checked" >&2
fi
"$B" diff "$d/a.json" "$d/b.json" --format markdown >"$d/diff.md" || true
grep -q '^> \*\*Note:\*\* new .*is a labelled simulation (blocked-userns)' "$d/diff.md" || fail "markdown: no simulation note"
grep -q '^#### Provenance' "$d/diff.md" || fail "markdown: no provenance"
"$B" diff "$d/a.json" "$d/b.json" --format json >"$d/diff.json" || true
jq -e '.provenance.new.simulations == ["blocked-userns"] and .provenance.old.simulations == [] and
  .provenance.old.challenge == "c-1" and .provenance.new.blocked[0].reason == "bwrap_user_namespace_blocked" and
  (.provenance.new.blocked[0].hint | length > 0) and .provenance.old.signature == "none"' "$d/diff.json" >/dev/null \
  || fail "json provenance: $(jq -c .provenance "$d/diff.json")"
pass "diff names the simulation, shows provenance and the blocked reason"

# Signed, and the signer trusted or not per the trust option.
cp "$K/fixture_ed25519" "$d/key" && chmod 600 "$d/key"
"$B" collect --provider bubblewrap --run-as "$AGSBX_TEST_USER" --sign-key "$d/key" -q -o "$d/s.json"
"$B" diff "$d/a.json" "$d/s.json" --key "$K/fixture_ed25519.pub" --format json >"$d/t.json" || true
jq -e '.provenance.new.signature == "good" and .provenance.new.trusted == true and
  (.provenance.new.fingerprint | startswith("SHA256:"))' "$d/t.json" >/dev/null || fail "trusted signer: $(jq -c .provenance.new "$d/t.json")"
ssh-keygen -q -t ed25519 -N '' -f "$d/other" >/dev/null
"$B" diff "$d/a.json" "$d/s.json" --key "$d/other.pub" >"$d/u.txt" || true
grep -q "signature good SHA256:.*signer NOT trusted" "$d/u.txt" || fail "untrusted signer not shown: $(grep signature "$d/u.txt")"
"$B" diff "$d/a.json" "$d/s.json" >"$d/n.txt" || true
grep -q "signer not checked" "$d/n.txt" || fail "no trust option: trust must read as not checked"
pass "diff: signature good + trusted / NOT trusted / not checked"

# matrix: verdicts in the table, provenance and blocked reasons in the list under it, badge.
"$B" matrix "$d/a.json" "$d/b.json" "$d/s.json" --key "$K/fixture_ed25519.pub" >"$d/m.md"
grep -q '^<details><summary>Provenance' "$d/m.md" || fail "matrix: no provenance list"
grep -q '| ⛔ blocked |' "$d/m.md" || fail "matrix: no blocked cell: $(cat "$d/m.md")"
grep -q 'SIMULATED: blocked-userns' "$d/m.md" || fail "matrix: simulation not shown"
grep -q 'bubblewrap blocked: bwrap\\_user\\_namespace\\_blocked' "$d/m.md" || fail "matrix: blocked reason not listed: $(cat "$d/m.md")"
grep -q 'trusted signer' "$d/m.md" || fail "matrix: trusted signer not shown"
"$B" matrix "$d/a.json" "$d/b.json" --format json | jq -e '.rows[1].provenance.simulations == ["blocked-userns"]' >/dev/null \
  || fail "matrix json: provenance"
"$B" matrix "$d/a.json" "$d/b.json" --format badge -o "$d/badge.json"
jq -e '.schemaVersion == 1 and .label == "sandbox evidence" and .message == "1 conformant, 1 blocked" and .color == "yellow"' \
  "$d/badge.json" >/dev/null || fail "badge: $(cat "$d/badge.json")"
[[ $("$B" matrix "$d/a.json" --format badge | jq -r .color) == brightgreen ]] || fail "badge: all conformant is not green"
set +e; "$AGSBX_BUILD_DIR/agsbx-evidence-negctl" collect --provider neg_leaky --unsigned -q --jobs 1 -o "$d/neg.json"; set -e
[[ $("$B" matrix "$d/a.json" "$d/neg.json" --format badge | jq -r '.color + " " + .message') == "red 1 conformant, 1 defective" ]] \
  || fail "badge: a defect is not red"
pass "matrix: provenance, blocked reasons, badge (green/yellow/red)"

# report: the blocked provider's detail and hint.
"$B" report "$d/b.json" >"$d/r.txt"
grep -q '^blocked providers:' "$d/r.txt" || fail "report: no blocked section"
grep -q '^    detail: bwrap could not start a sandbox' "$d/r.txt" || fail "report: no detail: $(cat "$d/r.txt")"
grep -q '^    hint:   ' "$d/r.txt" || fail "report: no hint"
"$B" report "$d/b.json" --format markdown -o "$d/r.md"
grep -q '^#### Blocked providers' "$d/r.md" || fail "report markdown: no blocked section"
pass "report: blocked detail and hint"

# -o: nothing is written when the input is bad; '-' is stdout.
echo '{' >"$d/bad.json"
expect_rc 2 "$B" report "$d/bad.json" -o "$d/none.md" 2>/dev/null
expect_rc 2 "$B" matrix "$d/bad.json" -o "$d/none.md" 2>/dev/null
[[ ! -e $d/none.md ]] || fail "-o left a file for bad input"
[[ -z $(ls "$d" | grep '\.tmp-') ]] || fail "temporary output files left behind"
"$B" report "$d/b.json" -o - | grep -q '^blocked providers:' || fail "-o - is not stdout"
pass "-o writes only complete output; '-' is stdout"
