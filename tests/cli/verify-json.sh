#!/usr/bin/env bash
# verify --json: one object per outcome (valid and trusted, untrusted key,
# tampered content, wrong and right challenge, unsigned), each with the
# exit status of the text form; and verify's usage errors (exit 2, one
# line, nothing on stdout).
source "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
command -v ssh-keygen >/dev/null || skip ssh-keygen 1 "openssh-client is not installed"
B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles
KEY=$D/keys/fixture_ed25519.pub
T=$(t_tmpdir verify-json)

# vj WANT_RC OUT ARGS...: verify --json, its exit status checked, stdout JSON.
vj() {
  local want=$1 out=$2 rc=0
  shift 2
  "$B" verify "$@" --json >"$out" 2>"$out.err" || rc=$?
  [[ $rc == "$want" ]] || fail "verify $* --json: exit $rc, want $want: $(cat "$out.err")"
  jq -e 'type == "object"' "$out" >/dev/null || fail "verify $* --json: not one JSON object: $(cat "$out")"
}
is() { jq -e "$2" "$1" >/dev/null || fail "$3: $(jq -c . "$1")"; }

vj 0 "$T/ok.json" "$D/signed.json" --key "$KEY"
is "$T/ok.json" '.status == "valid" and .signature_valid and .trusted and .reason == null
  and .key_type == "ssh-ed25519" and (.fingerprint | startswith("SHA256:"))
  and .identity == "fixture@agsbx-evidence.invalid" and .trust_source == "key file"
  and .challenge_checked == false and .challenge_ok == null and .created_at == "2026-11-30T02:40:00Z"
  and (.file | endswith("/signed.json"))' "valid and trusted"

vj 0 "$T/ch.json" "$D/signed.json" --key "$KEY" --expect-challenge maintainer-nonce-42
is "$T/ch.json" '.status == "valid" and .challenge_checked and .challenge_ok' "the right challenge"

vj 1 "$T/wrongch.json" "$D/signed.json" --key "$KEY" --expect-challenge nope
is "$T/wrongch.json" '.status == "wrong challenge" and .challenge_checked and .challenge_ok == false
  and .signature_valid and .trusted and (.reason | test("maintainer-nonce-42"))' "a wrong challenge"

ssh-keygen -q -t ed25519 -N '' -C other@example.invalid -f "$T/other"
vj 1 "$T/untrusted.json" "$D/signed.json" --key "$T/other.pub"
is "$T/untrusted.json" '.status == "untrusted" and .signature_valid and (.trusted | not) and .identity == null
  and (.reason | test("not found"))' "a key that did not sign"

jq '.created_at = "2020-01-01T00:00:00Z"' "$D/signed.json" >"$T/tampered.json"
vj 1 "$T/tampered.out" "$T/tampered.json" --key "$KEY"
is "$T/tampered.out" '.status == "invalid" and (.signature_valid | not) and (.trusted | not)
  and .created_at == "2020-01-01T00:00:00Z" and (.reason | test("does not match"))' "tampered content"

vj 1 "$T/unsigned.json" "$D/minimal.json" --key "$KEY"
is "$T/unsigned.json" '.status == "unsigned" and (.signature_valid | not) and .key_type == null
  and .fingerprint == null and (.reason | length > 0)' "an unsigned bundle"
pass "verify --json: valid, right/wrong challenge, untrusted, tampered, unsigned; exit status as the text form"

# The text form agrees on the outcome.
"$B" verify "$D/signed.json" --key "$T/other.pub" >"$T/untrusted.txt" 2>/dev/null && fail "untrusted: exit 0"
grep -q '^signer: *not trusted' "$T/untrusted.txt" || fail "text: no 'not trusted' signer line: $(cat "$T/untrusted.txt")"
"$B" verify "$D/signed.json" --key "$KEY" --expect-challenge nope >"$T/wrongch.txt" 2>/dev/null && fail "wrong challenge: exit 0"
grep -q '^challenge: *MISMATCH' "$T/wrongch.txt" || fail "text: no challenge MISMATCH line: $(cat "$T/wrongch.txt")"
pass "verify text: untrusted signer and challenge mismatch lines"

bad() {
  local rc=0
  "$B" verify "$@" >"$T/out" 2>"$T/err" || rc=$?
  [[ $rc == 2 ]] || fail "verify $*: exit $rc, want 2"
  [[ ! -s $T/out ]] || fail "verify $*: wrote to stdout: $(cat "$T/out")"
  [[ $(grep -c '^agsbx-evidence: error: ' "$T/err") == 1 ]] || fail "verify $*: want one error line, got: $(cat "$T/err")"
}
bad
bad "$D/signed.json" "$D/minimal.json"
bad "$D/signed.json" --expect-challenge ''
bad "$D/signed.json" --expect-challenge
bad "$D/signed.json" --no-such-option
bad "$T/nonexistent.json"
pass "verify: bad usage is exit 2, one line, nothing on stdout"
