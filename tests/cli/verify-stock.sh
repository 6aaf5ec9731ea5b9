# Interop with stock tools, both ways, through the CLI:
#  - an agsbx-signed bundle verifies with jq + ssh-keygen -Y verify only
#    (the recipe in docs/evidence.md);
#  - a signature ssh-keygen -Y sign made over the canonical bytes, put into
#    the bundle with jq, verifies with agsbx-evidence verify.
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles
T=$(t_tmpdir vstock)
command -v jq >/dev/null || skip jq 1 "jq not installed"
command -v ssh-keygen >/dev/null || skip ssh-keygen 1 "openssh-client not installed"

# ---- agsbx -> stock ------------------------------------------------------------
# the recipe from docs/evidence.md, verbatim
(
  cd "$T"
  F=$D/signed.json
  jq -r '.signature.armored' "$F" > bundle.sig
  jq -cjS 'del(.signature)' "$F" |
    ssh-keygen -Y verify -f "$D/keys/allowed_signers" -I fixture@agsbx-evidence.invalid \
      -n agsbx-evidence -s bundle.sig
) >"$T/out" 2>&1 || fail "stock verify of an agsbx-signed bundle: $(cat "$T/out")"
grep -q 'Good "agsbx-evidence" signature for fixture@agsbx-evidence.invalid' "$T/out" || fail "$(cat "$T/out")"
# a fresh key made by agsbx keygen, the bundle signed by agsbx (the fixture
# was), tampered: stock ssh-keygen refuses
jq -cjS 'del(.signature) | .summary.exit_status = 0' "$D/signed.json" >"$T/tampered"
set +e
ssh-keygen -Y verify -f "$D/keys/allowed_signers" -I fixture@agsbx-evidence.invalid -n agsbx-evidence \
  -s "$T/bundle.sig" <"$T/tampered" >/dev/null 2>&1
rc=$?
set -e
[[ $rc != 0 ]] || fail "stock ssh-keygen accepted a tampered bundle"
# the canonical bytes jq makes are the ones agsbx signed, for every fixture
for f in full minimal signed minimal-signed; do
  jq -cjS 'del(.signature)' "$D/$f.json" | sha256sum >"$T/a"
  # the signature inside the fixture covers exactly these bytes
  if jq -e .signature "$D/$f.json" >/dev/null; then
    jq -r .signature.armored "$D/$f.json" >"$T/s.sig"
    jq -cjS 'del(.signature)' "$D/$f.json" | ssh-keygen -Y check-novalidate -n agsbx-evidence -s "$T/s.sig" >/dev/null 2>&1 \
      || fail "$f: signature does not cover jq's canonical bytes"
  fi
done
pass "agsbx-signed bundles verify with jq + ssh-keygen"

# ---- stock -> agsbx --------------------------------------------------------------
ssh-keygen -q -t ed25519 -N '' -C stock@example.invalid -f "$T/stock"
jq -cjS 'del(.signature)' "$D/full.json" >"$T/msg"
ssh-keygen -q -Y sign -f "$T/stock" -n agsbx-evidence "$T/msg"
fp=$(ssh-keygen -l -E sha256 -f "$T/stock.pub" | cut -d' ' -f2)
jq --rawfile armored "$T/msg.sig" --arg pub "$(cat "$T/stock.pub")" --arg fp "$fp" \
  '.signature = {format: "sshsig", namespace: "agsbx-evidence", hash: "sha512", armored: $armored,
                 public_key: $pub, fingerprint: $fp}' "$D/full.json" >"$T/stock-signed.json"
expect_rc 0 "$B" verify "$T/stock-signed.json" --key "$T/stock.pub" >/dev/null
printf 'stock@example.invalid %s\n' "$(cat "$T/stock.pub")" >"$T/allowed"
expect_rc 0 "$B" verify "$T/stock-signed.json" --allowed-signers "$T/allowed" --identity stock@example.invalid >/dev/null
# signed in another namespace: refused, by us as by ssh-keygen
rm "$T/msg.sig"
ssh-keygen -q -Y sign -f "$T/stock" -n git "$T/msg"
jq --rawfile armored "$T/msg.sig" '.signature.armored = $armored' "$T/stock-signed.json" >"$T/ns.json"
expect_rc 1 "$B" verify "$T/ns.json" --key "$T/stock.pub" >/dev/null 2>&1
pass "ssh-keygen-made signatures verify with agsbx-evidence"
