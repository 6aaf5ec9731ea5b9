# A real bundle end to end: collect (trusted_local, signed with a key from
# keygen, a challenge, a subject repository, an attached command), then the
# schema, verify (ours and stock ssh-keygen), report, diff, matrix on it.
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles
T=$(t_tmpdir evreal)
command -v jq >/dev/null || skip jq 1 "jq not installed"
command -v git >/dev/null || skip git 1 "git not installed"
$PY -c 'import jsonschema' 2>/dev/null || skip python3-jsonschema 1 "/usr/bin/python3 has no jsonschema"

"$B" keygen -f "$T/key" -C real@example.invalid >/dev/null
git -C "$T" init -q -b topic repo
git -C "$T/repo" -c user.name=t -c user.email=t@x commit -q --allow-empty -m init
nonce=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')

expect_rc 0 "$B" collect --provider trusted_local --sign-key "$T/key" --challenge "$nonce" \
  --subject-repo "$T/repo" --attach-command "sh -c 'echo \"== 2 passed, 1 skipped in 0.01s ==\"'" \
  --output "$T/real.json" -q
[[ -s $T/real.json ]] || fail "no bundle written"

# the schema accepts it
$PY - "$AGSBX_SOURCE_DIR/schemas/evidence-bundle.schema.json" "$T/real.json" <<'PY' || fail "schema rejects a real bundle"
import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
errs = list(v.iter_errors(json.load(open(sys.argv[2]))))
for e in errs[:10]:
    print(list(e.absolute_path), e.message[:200], file=sys.stderr)
sys.exit(1 if errs else 0)
PY
[[ $(jq -r .subject.branch "$T/real.json") == topic ]] || fail "subject branch"
[[ $(jq -r '.attachments[0].summary | "\(.format) \(.passed) \(.skipped)"' "$T/real.json") == "pytest 2 1" ]] ||
  fail "attachment summary: $(jq -c .attachments "$T/real.json")"
pass "collect wrote a schema-valid signed bundle"

# verify: ours, with a challenge; and stock ssh-keygen
printf 'real@example.invalid namespaces="agsbx-evidence" %s\n' "$(cut -d' ' -f1,2 "$T/key.pub")" >"$T/allowed"
expect_rc 0 "$B" verify "$T/real.json" --allowed-signers "$T/allowed" --identity real@example.invalid \
  --expect-challenge "$nonce" >/dev/null
expect_rc 1 "$B" verify "$T/real.json" --allowed-signers "$T/allowed" --expect-challenge "x$nonce" >/dev/null 2>&1
jq -rj .signature.armored "$T/real.json" >"$T/real.sig"
jq -cjS 'del(.signature)' "$T/real.json" |
  ssh-keygen -Y verify -f "$T/allowed" -I real@example.invalid -n agsbx-evidence -s "$T/real.sig" >/dev/null 2>&1 ||
  fail "stock ssh-keygen rejects a collect-signed bundle"
# the canonical bytes we sign are jq's: re-signing them with ssh-keygen gives the same signature
cp "$T/key" "$T/key2" && chmod 600 "$T/key2"
jq -cjS 'del(.signature)' "$T/real.json" >"$T/msg"
ssh-keygen -q -Y sign -f "$T/key2" -n agsbx-evidence "$T/msg"
cmp -s "$T/msg.sig" "$T/real.sig" || fail "ssh-keygen's signature over jq's canonical bytes differs from ours"
pass "verify: agsbx and stock ssh-keygen agree"

# report, diff, matrix
for fmt in text markdown junit tap; do
  expect_rc 0 "$B" report "$T/real.json" --format "$fmt" >"$T/report.$fmt"
done
grep -qF '| `trusted_local` |' "$T/report.markdown" || fail "markdown report"
command -v xmllint >/dev/null || skip xmllint 1 "libxml2-utils not installed (make test installs it)"
xmllint --noout "$T/report.junit" || fail "junit not well-formed"
expect_rc 0 "$B" diff "$T/real.json" "$T/real.json" >"$T/diff"
[[ $(cat "$T/diff") == "no differences" ]] || fail "self diff: $(cat "$T/diff")"
set +e; "$B" diff "$D/full.json" "$T/real.json" --format json >"$T/diff.json"; rc=$?; set -e
[[ $rc == 0 || $rc == 1 ]] || fail "diff against a fixture: exit $rc"
[[ $(jq '.changes > 0' "$T/diff.json") == true ]] || fail "diff against a fixture found nothing"
expect_rc 0 "$B" matrix "$T/real.json" "$D/full.json" "$D/minimal.json" >"$T/matrix"
[[ $(grep -c '^| ' "$T/matrix") == 4 ]] || fail "matrix: $(cat "$T/matrix")"
pass "report, diff, matrix on a real bundle"
