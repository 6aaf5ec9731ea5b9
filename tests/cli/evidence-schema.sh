# schemas/evidence-bundle.schema.json (JSON Schema 2020-12) accepts the
# fixture bundles and rejects hand-made invalid ones; agrees with the loader.
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

D=$AGSBX_SOURCE_DIR/tests/data/bundles
S=$AGSBX_SOURCE_DIR/schemas/evidence-bundle.schema.json
T=$(t_tmpdir evschema)
$PY -c 'import jsonschema' 2>/dev/null || skip python3-jsonschema 1 "/usr/bin/python3 has no jsonschema"
command -v jq >/dev/null || skip jq 1 "jq not installed"

# validate SCHEMA FILE...: prints "OK FILE" or "INVALID FILE: reason" per file
cat >"$T/validate.py" <<'PY'
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
v = Draft202012Validator(schema)
for f in sys.argv[2:]:
    try:
        doc = json.load(open(f, encoding="utf-8"))
    except Exception as e:
        print("UNPARSABLE", f, str(e)[:100]); continue
    errs = list(v.iter_errors(doc))
    print(("INVALID " + f + ": " + errs[0].message[:120]) if errs else ("OK " + f))
PY
validate() { $PY "$T/validate.py" "$S" "$@"; }

# the shipped fixtures are valid (one python start for all: a line per file, in order)
fixtures=("$D"/{full,minimal,signed,minimal-signed}.json)
mapfile -t outs < <(validate "${fixtures[@]}")
[[ ${#outs[@]} == "${#fixtures[@]}" ]] || fail "validate printed ${#outs[@]} lines for ${#fixtures[@]} fixtures"
for ((k = 0; k < ${#fixtures[@]}; k++)); do
  [[ ${outs[k]} == "OK ${fixtures[k]}" ]] || fail "${outs[k]}"
done
pass "fixtures valid"

# invalid fixtures: the schema rejects each one python can parse, except the
# few only a byte-level parser can see (python reads -0 as 0, 1.0 and 1e2 as
# integral numbers, and keeps the last of duplicate keys; JSON Schema cannot say
# "ids unique within an array of objects")
loader_only="duplicate-nested.json exponent.json negative-zero.json real-zero-fraction.json"
loader_only+=" duplicate-provider-id.json duplicate-check-id.json"
invalid=("$D"/invalid/*.json)
mapfile -t outs < <(validate "${invalid[@]}")
[[ ${#outs[@]} == "${#invalid[@]}" ]] || fail "validate printed ${#outs[@]} lines for ${#invalid[@]} invalid fixtures"
for ((k = 0; k < ${#invalid[@]}; k++)); do
  case " $loader_only " in
    *" $(basename "${invalid[k]}") "*) continue ;;
  esac
  [[ ${outs[k]} == OK* ]] && fail "schema accepted $(basename "${invalid[k]}")"
  true
done
pass "invalid fixtures rejected"

# hand-made variants of a valid bundle, each must be rejected
variants=(
  'del(.tool)'
  'del(.providers)'
  'del(.summary)'
  'del(.attachments)'
  '.extra = 1'
  '.schema = "agsbx-evidence/v2"'
  '.created_at = "yesterday"'
  '.tool.binary_sha256 = "abc"'
  '.tool.git_commit = "HEAD"'
  '.providers[0].verdict = "ok"'
  '.providers[0].checks[0].verdict = "passed"'
  '.providers[0].checks[0].duration_us = 1.5'
  '.providers[0].checks[0].duration_us = "12"'
  '.providers[0].checks[0].duration_us = -1'
  '.providers[0].checks[0].observations[0].role = "host"'
  '.providers[0].checks[0].observations[0].errno = "eacces"'
  '.providers[0].checks[0].observations[0].stdout_bytes = 18014398509481984'
  'del(.providers[0].checks[0].observations[0].stdout_truncated)'
  '.providers[0].checks[0].observations[0].surprise = true'
  '.providers[0].claims.network = "open"'
  'del(.providers[0].id)'
  '.attachments[0].summary.format = "junit"'
  '.attachments[0].argv = []'
  '.summary.exit_status = 256'
  '.context.representative_reasons = ["because"]'
  '.context.privilege.uid = -1'
  '.subject.commit = "xyz"'
  '.signature = {"format": "gpg"}'
  '.signature.format = "x"'
  '.signature.fingerprint = "MD5:aa"'
  '.signature.armored = "-----BEGIN PGP SIGNATURE-----"'
  '.host = []'
)
# One python start for all of them (validate prints a line per file, in order).
i=0
files=()
for v in "${variants[@]}"; do
  jq "$v" "$D/signed.json" >"$T/v$i.json"
  files+=("$T/v$i.json")
  i=$((i + 1))
done
mapfile -t outs < <(validate "${files[@]}")
[[ ${#outs[@]} == "$i" ]] || fail "validate printed ${#outs[@]} lines for $i variants"
for ((k = 0; k < i; k++)); do
  [[ ${outs[k]} == "INVALID $T/v$k.json"* ]] || fail "schema accepted variant: ${variants[k]} (${outs[k]})"
done
pass "$i hand-made invalid variants rejected"

# open members stay open: host, probe facts, check facts, observation result
opens=('.host.newfamily = {"x": {"value": 1}}' '.providers[0].probe.facts.anything = [1, "x"]'
       '.providers[0].checks[0].facts.new = {"a": null}' '.providers[0].checks[0].observations[0].result = {"op": "new"}')
files=()
for ((k = 0; k < ${#opens[@]}; k++)); do
  jq "${opens[k]}" "$D/full.json" >"$T/open$k.json"
  files+=("$T/open$k.json")
done
mapfile -t outs < <(validate "${files[@]}")
[[ ${#outs[@]} == "${#opens[@]}" ]] || fail "validate printed ${#outs[@]} lines for ${#opens[@]} files"
for ((k = 0; k < ${#opens[@]}; k++)); do
  [[ ${outs[k]} == "OK $T/open$k.json" ]] || fail "schema rejected an open member: ${opens[k]} (${outs[k]})"
done
pass "open members accepted"
