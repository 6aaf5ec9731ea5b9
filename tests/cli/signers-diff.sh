# allowed_signers read as OpenSSH reads it: a corpus of
# generated lines (tests/cli/lib-signers-corpus.py: options, quoting,
# patterns, negations, long subpatterns, trailing commas, repeated options,
# valid-after/before, cert-authority, bad keys; the issue's six
# reproducers by name) goes through `agsbx-evidence verify
# --allowed-signers` and stock `ssh-keygen -Y verify`, one file per case,
# on a bundle signed for the test; every case must get the same
# accept/reject from both.
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles
T=$(t_tmpdir sdiff)
command -v jq >/dev/null || skip jq 1 "jq not installed"
command -v ssh-keygen >/dev/null || skip ssh-keygen 1 "openssh-client not installed"

# a bundle signed by ssh-keygen with a fresh key (as tests/cli/verify-stock.sh)
ssh-keygen -q -t ed25519 -N '' -C dev@example.org -f "$T/key"
ssh-keygen -q -t ed25519 -N '' -C other@example.org -f "$T/other"
jq -cjS 'del(.signature)' "$D/full.json" >"$T/canon"
ssh-keygen -q -Y sign -f "$T/key" -n agsbx-evidence "$T/canon"
fp=$(ssh-keygen -l -E sha256 -f "$T/key.pub" | cut -d' ' -f2)
jq --rawfile armored "$T/canon.sig" --arg pub "$(cat "$T/key.pub")" --arg fp "$fp" \
  '.signature = {format: "sshsig", namespace: "agsbx-evidence", hash: "sha512", armored: $armored,
                 public_key: $pub, fingerprint: $fp}' "$D/full.json" >"$T/bundle.json"
expect_rc 0 "$B" verify "$T/bundle.json" --key "$T/key.pub" >/dev/null

$PY "$AGSBX_SOURCE_DIR/tests/cli/lib-signers-corpus.py" "$T/key.pub" "$T/other.pub" "$T/corpus.jsonl"
$PY "$AGSBX_SOURCE_DIR/tests/cli/lib-signers-diff.py" "$B" "$T/bundle.json" "$T/canon" "$T/canon.sig" \
  "$T/corpus.jsonl" "$T" >"$T/summary" || fail "verify and ssh-keygen disagree: $(cat "$T/summary")"
pass "allowed_signers: $(cat "$T/summary")"
