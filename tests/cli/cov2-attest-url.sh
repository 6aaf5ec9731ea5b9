#!/usr/bin/env bash
# attest's predicate.url from the GitHub Actions environment in the cases
# cli-attest leaves out: without GITHUB_RUN_ATTEMPT (or with it empty) the
# run's URL has no /attempts/ part; a run id or attempt that is not a
# number, or a missing or empty server, repository or run id, gives no url
# at all (never a URL built from a half or forged environment). --url must
# be http(s) without a blank or control character: exit 2, nothing written.
# An output that is a directory or a device: exit 2, one error line.
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
d=$(t_tmpdir attest-url)
full=$AGSBX_SOURCE_DIR/tests/data/bundles/full.json
gh=(GITHUB_SERVER_URL GITHUB_REPOSITORY GITHUB_RUN_ID GITHUB_RUN_ATTEMPT)
clean=(env -u GITHUB_SERVER_URL -u GITHUB_REPOSITORY -u GITHUB_RUN_ID -u GITHUB_RUN_ATTEMPT)

url_of() { # ENV-ASSIGNMENTS... -> predicate.url or "none"
  "${clean[@]}" "$@" "$AGSBX_BIN" attest "$full" -o "$d/st.json" 2>"$d/err" || fail "attest with $*: exit $?: $(cat "$d/err")"
  jq -r '.predicate.url // "none"' "$d/st.json"
}
base=(GITHUB_SERVER_URL=https://github.com GITHUB_REPOSITORY=o/r)
[[ $(url_of "${base[@]}" GITHUB_RUN_ID=42) == https://github.com/o/r/actions/runs/42 ]] ||
  fail "no attempt: $(url_of "${base[@]}" GITHUB_RUN_ID=42)"
[[ $(url_of "${base[@]}" GITHUB_RUN_ID=42 GITHUB_RUN_ATTEMPT=) == https://github.com/o/r/actions/runs/42 ]] ||
  fail "empty attempt: $(url_of "${base[@]}" GITHUB_RUN_ID=42 GITHUB_RUN_ATTEMPT=)"
pass "a run without an attempt number: .../actions/runs/ID"

for e in "GITHUB_RUN_ID=42x" "GITHUB_RUN_ID=42 GITHUB_RUN_ATTEMPT=2/../../evil" "GITHUB_RUN_ID=" \
         "GITHUB_RUN_ID=42 GITHUB_REPOSITORY=" "GITHUB_RUN_ID=42 GITHUB_SERVER_URL="; do
  read -r -a extra <<<"$e"
  u=$(url_of "${base[@]}" "${extra[@]}")
  [[ $u == none ]] || fail "GITHUB_* with $e gave url $u"
done
u=$(url_of GITHUB_REPOSITORY=o/r GITHUB_RUN_ID=42)
[[ $u == none ]] || fail "no GITHUB_SERVER_URL gave url $u"
u=$(url_of GITHUB_SERVER_URL=https://github.com GITHUB_RUN_ID=42)
[[ $u == none ]] || fail "no GITHUB_REPOSITORY gave url $u"
pass "a non-numeric run id or attempt, or a missing or empty server, repository or run id: no url"

# --url: http:// is accepted, blanks and control characters are not
"${clean[@]}" "$AGSBX_BIN" attest "$full" --url http://ci.invalid/run/7 -o "$d/h.json" || fail "--url http://: exit $?"
[[ $(jq -r .predicate.url "$d/h.json") == http://ci.invalid/run/7 ]] || fail "--url http:// not taken"
for u in 'https://ci.invalid/a b' $'https://ci.invalid/a\tb' $'https://ci.invalid/\x7f' 'ftp://ci.invalid/x' 'https:/x'; do
  rm -f "$d/bad.json"
  expect_rc 2 "$AGSBX_BIN" attest "$full" --url "$u" -o "$d/bad.json" 2>"$d/err"
  [[ $(wc -l <"$d/err") -le 2 ]] && grep -q '^agsbx-evidence: error: --url: expected an http(s) URL without blanks$' "$d/err" ||
    fail "--url $(printf %q "$u"): $(cat "$d/err")"
  [[ ! -e $d/bad.json ]] || fail "--url $(printf %q "$u"): an output file was written"
done
pass "--url: http(s) only, no blank, TAB or DEL: exit 2, nothing written"

expect_rc 2 "$AGSBX_BIN" attest "$full" -o "$d" 2>"$d/err"
grep -qx "agsbx-evidence: error: cannot write $d: Is a directory" "$d/err" || fail "-o DIR: $(cat "$d/err")"
expect_rc 2 "$AGSBX_BIN" attest "$full" -o /dev/full 2>"$d/err"
grep -q '^agsbx-evidence: error: cannot write /dev/full: not a regular file' "$d/err" || fail "-o /dev/full: $(cat "$d/err")"
pass "-o a directory or a device: exit 2, one error line"
