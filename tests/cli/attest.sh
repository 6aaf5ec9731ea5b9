#!/usr/bin/env bash
# attest: an in-toto Statement v1 with the test-result v0.1 predicate, valid
# against schemas/in-toto-test-result-v0.1.schema.json (written from the
# in-toto spec) and schemas/in-toto-statement-v1.schema.json, for real
# bundles: a conformant landlock run (PASSED), a bubblewrap run under the
# labelled blocked-userns simulation (WARNED), a NEGATIVE-CONTROL provider
# (FAILED). Subject = the file's sha256; url from GITHUB_* when set; the
# schemas reject broken statements; bad input exits 2 with nothing written.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir attest)
$PY -c 'import jsonschema' 2>/dev/null || skip python3-jsonschema 1 "/usr/bin/python3 has no jsonschema"
NEG="$AGSBX_BUILD_DIR/agsbx-evidence-negctl"
S=$AGSBX_SOURCE_DIR/schemas

validate() { # SCHEMA FILE -> prints OK or INVALID: ...
  $PY - "$1" "$2" <<'PY'
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
errs = sorted(Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))), key=str)
print("OK" if not errs else "INVALID: " + errs[0].message)
PY
}
valid_both() { # FILE LABEL
  local v
  for s in in-toto-statement-v1 in-toto-test-result-v0.1; do
    v=$(validate "$S/$s.schema.json" "$1")
    [[ $v == OK ]] || fail "$2: $s: $v"
  done
}

# PASSED: a real conformant landlock run.
"$AGSBX_BIN" collect --provider landlock --unsigned -q -o "$d/ll.json"
[[ $(jq -r '.providers[0].verdict' "$d/ll.json") == conformant ]] || fail "landlock not conformant here"
env -u GITHUB_RUN_ID "$AGSBX_BIN" attest "$d/ll.json" -o "$d/ll.st.json"
valid_both "$d/ll.st.json" landlock
# PASSED unless a check could not run here (skip/blocked: WARNED, listed)
want_result=$(jq -r 'if [.providers[].checks[] | select(.verdict == "skip" or .verdict == "blocked")] | length > 0
                     then "WARNED" else "PASSED" end' "$d/ll.json")
jq -e --arg h "$(sha256sum "$d/ll.json" | cut -d' ' -f1)" --arg want "$want_result" '
  .subject == [{name: "ll.json", digest: {sha256: $h}}] and
  .predicateType == "https://in-toto.io/attestation/test-result/v0.1" and
  .predicate.result == $want and (.predicate.failedTests == []) and
  (.predicate.passedTests | index("landlock/fs.host_read_denied")) and
  (.predicate.passedTests | index("landlock/proc.contained") | not) and
  (.predicate | has("url") | not)' "$d/ll.st.json" >/dev/null || fail "landlock statement: $(jq -c .predicate "$d/ll.st.json")"
want=$(jq -r '.providers[0].checks[] | select(.verdict=="pass") | "landlock/" + .id' "$d/ll.json" | sort)
[[ $(jq -r '.predicate.passedTests[]' "$d/ll.st.json" | sort) == "$want" ]] || fail "passedTests differ from the bundle's passing checks"
# configuration: the collecting tool and the catalogue digest
jq -e --slurpfile b "$d/ll.json" '.predicate.configuration |
  (.[0].digest.sha256 == $b[0].tool.binary_sha256) and (.[0].annotations.version == $b[0].tool.version) and
  (.[1].name == "check-catalogue") and (.[1].digest.sha256 | test("^[0-9a-f]{64}$"))' "$d/ll.st.json" >/dev/null \
  || fail "configuration: $(jq -c .predicate.configuration "$d/ll.st.json")"
want_cat=$(jq -j '[.providers[].checks[] | "\(.id) \(.axis)\n"] | unique | add' "$d/ll.json" | sha256sum | cut -d' ' -f1)
[[ $(jq -r '.predicate.configuration[1].digest.sha256' "$d/ll.st.json") == "$want_cat" ]] || fail "catalogue digest is not the sha256 of the sorted id/axis lines"
want_warned=$(jq -r '.providers[].checks[] | select(.verdict == "skip" or .verdict == "blocked") | "landlock/" + .id' "$d/ll.json" | sort)
[[ $(jq -r '.predicate.warnedTests[]' "$d/ll.st.json" | sort) == "$want_warned" ]] || fail "warnedTests differ from the skipped checks"
pass "$want_result statement for a conformant landlock bundle validates"

# The statement goes to stdout by default and with -o -; the GitHub run URL.
GITHUB_SERVER_URL=https://github.com GITHUB_REPOSITORY=o/r GITHUB_RUN_ID=42 GITHUB_RUN_ATTEMPT=2 \
  "$AGSBX_BIN" attest "$d/ll.json" >"$d/url.json"
[[ $(jq -r .predicate.url "$d/url.json") == https://github.com/o/r/actions/runs/42/attempts/2 ]] || fail "url from GITHUB_*"
"$AGSBX_BIN" attest "$d/ll.json" -o - --url https://ci.example/run/7 >"$d/url2.json"
[[ $(jq -r .predicate.url "$d/url2.json") == https://ci.example/run/7 ]] || fail "--url"
valid_both "$d/url.json" url
pass "url from GITHUB_* or --url; stdout output"

# WARNED: bubblewrap under the blocked-userns simulation, as the test user.
if have_test_user && have bwrap; then
  "$AGSBX_BIN" collect --provider bubblewrap --run-as "$AGSBX_TEST_USER" --simulate blocked-userns --unsigned -q -o "$d/bw.json"
  [[ $(jq -r '.providers[0].verdict' "$d/bw.json") == blocked ]] || fail "simulated bubblewrap not blocked"
  "$AGSBX_BIN" attest "$d/bw.json" -o "$d/bw.st.json"
  valid_both "$d/bw.st.json" blocked
  jq -e '.predicate.result == "WARNED" and (.predicate.failedTests == []) and
    (.predicate.warnedTests | index("bubblewrap/fs.host_read_denied"))' "$d/bw.st.json" >/dev/null \
    || fail "blocked statement: $(jq -c .predicate "$d/bw.st.json")"
  pass "WARNED statement for a blocked provider"
fi

# FAILED: a NEGATIVE-CONTROL provider that leaks processes.
set +e; "$NEG" collect --provider neg_leaky --unsigned -q --jobs 1 -o "$d/neg.json"; rc=$?; set -e
[[ $rc == 1 ]] || fail "negative control: collect exit $rc, want 1"
"$AGSBX_BIN" attest "$d/neg.json" -o "$d/neg.st.json"
valid_both "$d/neg.st.json" defective
jq -e --slurpfile b "$d/neg.json" '.predicate.result == "FAILED" and
  (.predicate.failedTests | sort) == ($b[0].providers[0].failing_checks | map("neg_leaky/" + .) | sort)' "$d/neg.st.json" >/dev/null \
  || fail "defective statement: $(jq -c .predicate "$d/neg.st.json")"
pass "FAILED statement lists the failing checks"

# The schemas are not vacuous: each broken variant is rejected.
for mut in '.predicate.result = "OK"' 'del(.predicate.configuration)' '.subject = []' \
           '.subject[0].digest.sha256 = "XYZ"' '._type = "https://in-toto.io/Statement/v0.1"' \
           '.predicate.passedTests = [1]' 'del(.subject[0].digest)' '.predicateType = "https://slsa.dev/provenance/v1"'; do
  jq "$mut" "$d/ll.st.json" >"$d/mut.json"
  [[ $(validate "$S/in-toto-test-result-v0.1.schema.json" "$d/mut.json") == INVALID* ]] || fail "schema accepted: $mut"
done
pass "the test-result schema rejects 8 broken statements"

# Bad input: exit 2, one line, nothing written.
echo '{"schema":"agsbx-evidence/v1"' >"$d/bad.json"
expect_rc 2 "$AGSBX_BIN" attest "$d/bad.json" -o "$d/none.json" 2>"$d/err"
[[ ! -e $d/none.json ]] || fail "output written for bad input"
[[ $(wc -l <"$d/err") -le 2 ]] || fail "more than a line of error: $(cat "$d/err")"
expect_rc 2 "$AGSBX_BIN" attest 2>/dev/null
expect_rc 2 "$AGSBX_BIN" attest "$d/ll.json" --url 'javascript:x' 2>/dev/null
expect_rc 2 "$AGSBX_BIN" attest "$d/missing.json" 2>/dev/null
expect_rc 2 "$AGSBX_BIN" attest "$d/ll.json" -o "$d/no/such/dir/x.json" 2>/dev/null
"$AGSBX_BIN" attest --help | grep -q '^example:' || fail "attest --help lacks an example"
pass "bad input exits 2 without output"
