#!/usr/bin/env bash
# report, diff and matrix on variants of the stored bundle that the other
# view tests never feed them: a dirty subject, a context that says "not
# representative" or records nothing about it, a bundle without a subject,
# a created_at that is not "YYYY-MM-DDTHH:MM:SSZ" (JUnit must then leave
# timestamp out rather than print a malformed one), a blocked provider whose
# probe recorded neither detail nor hint; a diff where the host stopped a
# mechanism (its claims lost: a host change, not a regression) next to a
# real regression and a claim gained; a badge for no providers and for
# bundles no trust anchor vouches for. Each output line asserted is the
# words a reader relies on.
source "$(dirname "$0")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
w=$(t_tmpdir render-variants)
D=$AGSBX_SOURCE_DIR/tests/data/bundles
full=$D/full.json
B=$AGSBX_BIN

# ---- report ---------------------------------------------------------------
jq '.subject.dirty = true | .context.representative = false | .created_at = "2026-11-30t02:40:00Z"
  | .providers[2].probe |= del(.detail, .hint)' "$full" >"$w/a.json"
jq 'del(.context.representative) | del(.subject)' "$full" >"$w/b.json"
for v in a b; do
  for f in text markdown junit tap; do
    "$B" report "$w/$v.json" --format "$f" >"$w/$v.$f" 2>"$w/$v.$f.err" ||
      fail "report $v --format $f: exit $?: $(head -c 300 "$w/$v.$f.err")"
  done
done

grep -q '^subject: .*main@89abcdef0123\.\.\. (dirty)$' "$w/a.text" || fail "text: no (dirty) subject: $(sed -n 3p "$w/a.text")"
grep -q '; representative: no$' "$w/a.text" || fail "text: representative false is not 'no': $(sed -n 2p "$w/a.text")"
grep -q ' · \*\*not representative\*\* · ' "$w/a.markdown" || fail "markdown: not representative missing: $(sed -n 3p "$w/a.markdown")"
grep -q '; representative: ?$' "$w/b.text" || fail "text: unrecorded representative is not '?': $(sed -n 2p "$w/b.text")"
grep -q 'representative' "$w/b.markdown" && fail "markdown: says something about representativeness it does not know"
grep -q '^subject:' "$w/b.text" && fail "text: a subject line for a bundle without subject"
pass "report: dirty subject, not representative, unrecorded representative, no subject"

# blocked without detail or hint: the reason alone (text), empty cells (markdown)
sed -n '/^blocked providers:$/,$p' "$w/a.text" >"$w/a.blocked"
grep -qx '  gvisor: docker_unreachable' "$w/a.blocked" || fail "text: blocked line: $(cat "$w/a.blocked")"
grep -q 'detail:\|hint:' "$w/a.blocked" && fail "text: a detail or hint line the probe did not record: $(cat "$w/a.blocked")"
grep -qxF '| `gvisor` | `docker_unreachable` |  |  |' "$w/a.markdown" ||
  fail "markdown: blocked row: $(grep -F '`gvisor` | `docker' "$w/a.markdown")"
grep -qx '    detail: cannot connect to unix:///var/run/docker.sock: ECONNREFUSED' "$w/b.text" &&
  grep -qx '    hint:   start dockerd or set DOCKER_HOST' "$w/b.text" ||
  fail "text: the recorded detail or hint is gone: $(sed -n '/^blocked providers:$/,$p' "$w/b.text")"
pass "report: a blocked provider without detail or hint"

# JUnit: a malformed created_at gives no timestamp attribute; a good one does
"$PY" - "$w/a.junit" "$w/b.junit" <<'PY' || fail "junit timestamps (above)"
import sys, xml.etree.ElementTree as ET
a, b = (ET.parse(p).getroot() for p in sys.argv[1:])
sa, sb = list(a.iter("testsuite")), list(b.iter("testsuite"))
assert sa and sb, "no testsuite"
bad = [s.get("timestamp") for s in sa if s.get("timestamp") is not None]
assert not bad, f"malformed created_at still gave timestamp {bad}"
assert all(s.get("timestamp") == "2026-11-30T02:40:00" for s in sb), [s.get("timestamp") for s in sb]
assert all(s.get("hostname", "").startswith("Linux 6.18.0-ci") for s in sa + sb), "hostname"
PY
pass "junit: timestamp only for a created_at of the form YYYY-MM-DDTHH:MM:SSZ"

# ---- diff -----------------------------------------------------------------
# landlock stopped by the host (blocked, a claim lost, another gained);
# bubblewrap, already defective, fails one more check: a regression.
jq '.providers[0].verdict = "blocked" | .providers[0].reason = "landlock_disabled"
  | .providers[0].claims.host_filesystem_restricted = false | .providers[0].claims.process_contained = true
  | .providers[1].checks[0].verdict = "fail" | .providers[1].failing_checks += [.providers[1].checks[0].id]' \
  "$full" >"$w/n.json"
for f in text markdown json; do
  set +e
  "$B" diff "$full" "$w/n.json" --format "$f" >"$w/d.$f" 2>"$w/d.$f.err"
  rc=$?
  set -e
  [[ $rc == 1 ]] || fail "diff --format $f: exit $rc, want 1 (a regression): $(head -c 300 "$w/d.$f.err")"
done
head -1 "$w/d.text" | grep -qx '4 changes, 1 regression, 2 host changes' || fail "diff summary: $(head -1 "$w/d.text")"
grep -qx '  REGRESSION bubblewrap/fs.host_read_denied: pass -> fail' "$w/d.text" || fail "diff: regression line: $(cat "$w/d.text")"
grep -qx '  HOST-CHANGE landlock: conformant -> blocked; claim host_filesystem_restricted: true -> false; claim process_contained: false -> true' \
  "$w/d.text" || fail "diff: host change line: $(grep HOST-CHANGE "$w/d.text")"
grep -q 'REGRESSION landlock' "$w/d.text" && fail "diff: a claim the host took away counted as a regression"
grep -qxF '| `landlock` | conformant → blocked | claim `host_filesystem_restricted`: true → false; claim `process_contained`: false → true |' \
  "$w/d.markdown" || fail "diff markdown: host change row: $(grep -F '`landlock`' "$w/d.markdown")"
jq -e '[.claims[] | select(.provider == "landlock")] as $c
  | ($c | map(select(.axis == "host_filesystem_restricted"))[0] | .host_change == true and (.regression | not))
    and ($c | map(select(.axis == "process_contained"))[0] | (.regression | not) and (.host_change | not))' \
  "$w/d.json" >/dev/null || fail "diff json: claim classes: $(jq -c '.claims' "$w/d.json")"
pass "diff: a claim lost to a host change, a claim gained, a new failure of a defective provider"

# ---- matrix badge ---------------------------------------------------------
jq '.providers = []' "$full" >"$w/e.json"
"$B" matrix "$w/e.json" --format badge >"$w/badge.e" || fail "badge of no providers: exit $?"
jq -e '.message == "no providers" and .color == "lightgrey"' "$w/badge.e" >/dev/null || fail "badge: $(cat "$w/badge.e")"
# an unsigned bundle under a trust anchor: nothing counted, said so
"$B" matrix "$full" --format badge --key "$D/keys/fixture_ed25519.pub" >"$w/badge.u" || fail "badge with --key: exit $?"
jq -e '.message == "no trusted bundle; 1 bundle excluded (signature not verified or signer not trusted)"
  and .color == "lightgrey"' "$w/badge.u" >/dev/null || fail "badge of an unsigned bundle under --key: $(cat "$w/badge.u")"
"$B" matrix "$D/signed.json" "$full" --format badge --key "$D/keys/fixture_ed25519.pub" >"$w/badge.s" ||
  fail "badge signed+unsigned: exit $?"
jq -e '(.message | endswith("; 1 bundle excluded (signature not verified or signer not trusted)"))
  and (.message | startswith("no trusted") | not)' "$w/badge.s" >/dev/null || fail "badge signed+unsigned: $(cat "$w/badge.s")"
pass "matrix badge: no providers, only untrusted bundles, one trusted and one excluded"

# ---- provenance in diff and matrix -----------------------------------------
jq '.context.representative_reasons = ["root", "sudo"]' "$w/a.json" >"$w/r.json"
set +e
"$B" diff "$w/a.json" "$w/b.json" --format text >"$w/p.text" 2>"$w/p.err"
rc=$?
set -e
[[ $rc == 0 || $rc == 1 ]] || fail "diff a b: exit $rc: $(cat "$w/p.err")"
sed -n '/^provenance:$/,$p' "$w/p.text" >"$w/prov"
for want in '      not representative (no reason given)' '      subject: main@89abcdef0123... (dirty)' \
            '      representative ?' '      subject: none'; do
  grep -qxF "$want" "$w/prov" || fail "diff provenance lacks '$want': $(cat "$w/prov")"
done
"$B" matrix "$w/r.json" "$w/b.json" >"$w/m.md" || fail "matrix r b: exit $?"
grep -qF '; not representative (root, sudo); ' "$w/m.md" || fail "matrix: reasons: $(tail -4 "$w/m.md")"
grep -qF '; representative ?; ' "$w/m.md" || fail "matrix: unrecorded representative: $(tail -4 "$w/m.md")"
grep -qF '; subject: none; ' "$w/m.md" || fail "matrix: no subject: $(tail -4 "$w/m.md")"
pass "provenance: not representative with or without reasons, unrecorded, dirty subject, no subject"
