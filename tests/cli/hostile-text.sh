#!/usr/bin/env bash
# Hostile text, end to end: the NEGATIVE-CONTROL provider neg_hostile_text
# answers writes with an errno string holding an @mention, links, bidi
# overrides and terminal escapes. collect's progress lines, summary and
# error messages show it escaped; $GITHUB_STEP_SUMMARY and every report
# format keep it inert (no mention, no link, no control character).
source "$(dirname "$0")/../lib/common.sh"
NEG="$AGSBX_BUILD_DIR/agsbx-evidence-negctl"
[[ -x $NEG ]] || fail "negative-control CLI $NEG not built"
T=$(t_tmpdir hostile)
cd "$T"

# no_raw FILE: no ESC/C0 (but newline), DEL, C1, bidi control bytes
no_raw() {
  $PY - "$1" <<'PY' || fail "$1 carries raw control or bidi characters"
import re, sys
t = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
bad = re.search('[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]', t)
if bad:
    print(repr(t[max(0, bad.start() - 40):bad.start() + 20]), file=sys.stderr)
    sys.exit(1)
PY
}
set +e
GITHUB_STEP_SUMMARY=$T/summary.md "$NEG" collect --provider neg_hostile_text --unsigned --output b.json --jobs 1 2>err
rc=$?
set -e
[[ $rc == 1 ]] || { cat err >&2; fail "collect exited $rc, want 1 (fs.grant_write fails)"; }
[[ $(jq -r '.providers[0].checks[] | select(.id=="fs.grant_write") | .verdict' b.json) == fail ]] \
  || fail "fs.grant_write did not fail"
jq -e '.providers[0].checks[] | select(.id=="fs.grant_write") | .reason | contains("@octocat") and contains("\u202e")' \
  b.json >/dev/null || fail "the bundle does not keep the text as it was"
no_raw err
grep -q 'FAIL neg_hostile_text fs.grant_write: .*\\u202e\\u2066reversed\\u2069 \\x1b\[2J\\x1b\]0;pwned\\x07 \\x9b31mred' err \
  || fail "terminal summary does not show the text escaped: $(grep -a FAIL err)"
grep -q '^agsbx-evidence: neg_hostile_text *fs.grant_write .*\\u202e' err || fail "progress line not escaped"
pass "terminal: progress lines and summary show the hostile errno escaped"

no_raw summary.md
grep -q '@octocat' summary.md && fail "step summary: @mention not neutralised"
grep -q 'https://' summary.md && fail "step summary: link not neutralised"
grep -q 'www\.evil' summary.md && fail "step summary: www link not neutralised"
grep -q $'@\u200boctocat' summary.md || fail "step summary: the text is gone rather than neutralised"
grep -q '\\u202e' summary.md || fail "step summary: bidi override not shown"
pass "step summary: @mention and links neutralised, bidi shown escaped"

for f in text markdown junit tap; do
  "$AGSBX_BIN" report b.json --format "$f" > "r.$f" || fail "report --format $f"
  no_raw "r.$f"
done
grep -q '@octocat\|https://' r.markdown && fail "report markdown: mention or link live"
if have xmllint; then xmllint --noout r.junit || fail "junit is not well-formed"; fi
pass "report text/markdown/junit/tap: no raw control or bidi character"

# error messages: a hostile file name in a one-line error
bad=$'evil\e[2J\u202e.json'
printf 'not json' > "$bad"
set +e; "$AGSBX_BIN" report "$bad" 2>err2; rc=$?; set -e
[[ $rc == 2 ]] || fail "report of a non-bundle: exit $rc"
no_raw err2
[[ $(wc -l < err2) -ge 1 ]] && grep -q 'evil\\x1b\[2J\\u202e.json' err2 || fail "file name not escaped: $(cat -A err2)"
pass "error messages escape hostile file names"
