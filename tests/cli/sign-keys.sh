# Any OpenSSH key ssh-keygen makes without hardware signs a bundle: RSA
# (rsa-sha2-512) and ECDSA P-256/384/521 beside Ed25519, from a key file
# and from an ssh-agent. Each bundle is cross-checked with stock tools both
# ways (our verify and jq + ssh-keygen -Y verify agree on the signature and
# on its mutations), and a key that cannot sign fails before the matrix
# runs: exit 2, one line, no bundle, no sandbox started.
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

B=$AGSBX_BIN
T=$(t_tmpdir signkeys)
command -v jq >/dev/null || skip jq 1 "jq not installed"
command -v ssh-keygen >/dev/null || skip ssh-keygen 1 "openssh-client not installed"
command -v ssh-agent >/dev/null || skip ssh-agent 1 "openssh-client not installed"
command -v python3 >/dev/null || skip python3 1 "python3 not installed"

# stock_verify FILE PUB: jq + ssh-keygen -Y verify, the README's recipe
stock_verify() {
  printf 'signer@example.invalid %s\n' "$(cat "$2")" >"$T/allowed"
  jq -r '.signature.armored' "$1" >"$T/stock.sig"
  jq -cjS 'del(.signature)' "$1" |
    ssh-keygen -Y verify -f "$T/allowed" -I signer@example.invalid -n agsbx-evidence -s "$T/stock.sig" >/dev/null 2>&1
}

# mutate FILE HOW OUT: the bundle with its SSHSIG blob changed (see below)
mutate() {
  python3 - "$1" "$2" "$3" <<'EOF'
import base64, json, struct, sys
src, how, out = sys.argv[1:]
b = json.load(open(src))
arm = b["signature"]["armored"].splitlines()
blob = base64.b64decode("".join(arm[1:-1]))
def rd(buf, i):
    n = struct.unpack(">I", buf[i:i + 4])[0]
    return buf[i + 4:i + 4 + n], i + 4 + n
def st(x):
    return struct.pack(">I", len(x)) + x
i = 10  # "SSHSIG" + version
fields = []
for _ in range(5):
    f, i = rd(blob, i)
    fields.append(f)
sig = fields[4]
sigtype, j = rd(sig, 0)
inner, j = rd(sig, j)
if how == "sha1":          # RSA as "ssh-rsa" (SHA-1): sshsig refuses it
    sigtype = b"ssh-rsa"
elif how == "sha256":      # claims rsa-sha2-256 over a SHA-512 signature
    sigtype = b"rsa-sha2-256"
elif how == "trailing":    # a byte after the signature
    inner = inner + b"\0"
elif how == "flip":        # one bit of the signature itself
    inner = inner[:-1] + bytes([inner[-1] ^ 1])
fields[4] = st(sigtype) + st(inner)
blob = blob[:10] + b"".join(st(f) for f in fields)
b64 = base64.b64encode(blob).decode()
body = "\n".join(b64[k:k + 70] for k in range(0, len(b64), 70))
b["signature"]["armored"] = "-----BEGIN SSH SIGNATURE-----\n" + body + "\n-----END SSH SIGNATURE-----\n"
json.dump(b, open(out, "w"))
EOF
}

# agree FILE PUB WANT: our verify and the stock path both accept (0) or both
# refuse (1) the bundle
agree() {
  local ours=0 stock=0
  "$B" verify "$1" --key "$2" >/dev/null 2>&1 || ours=$?
  stock_verify "$1" "$2" || stock=1
  [[ $ours == "$3" && $stock == "$3" ]] ||
    fail "$(basename "$1"): agsbx verify exit $ours, stock ssh-keygen $( ((stock)) && echo refused || echo accepted), want both $3"
}

# collect_signed KEY OUT: a signed trusted_local bundle; exit 0 or 1 (a
# provider's defect is evidence too) with the bundle written and signed
collect_signed() {
  local rc=0
  "$B" collect --provider trusted_local --quiet --sign-key "$1" --output "$2" 2>"$T/err" || rc=$?
  [[ ($rc == 0 || $rc == 1) && -s $2 ]] && jq -e .signature.armored "$2" >/dev/null
}

n=0
for kind in "rsa 2048" "rsa 3072" "ecdsa 256" "ecdsa 384" "ecdsa 521" "ed25519 256"; do
  read -r type bits <<<"$kind"
  k=$T/$type-$bits
  ssh-keygen -q -t "$type" -b "$bits" -N '' -C signer@example.invalid -f "$k"
  # exit 1 is a provider's defect, not the signature's: the bundle counts
  collect_signed "$k" "$k.json" || fail "collect --sign-key ($kind): $(cat "$T/err")"
  [[ $(jq -r .signature.public_key "$k.json") == "$(cat "$k.pub")" ]] ||
    fail "$kind: public_key member is not the .pub line: $(jq -r .signature.public_key "$k.json")"
  [[ $(jq -r .signature.fingerprint "$k.json") == "$(ssh-keygen -l -E sha256 -f "$k.pub" | cut -d' ' -f2)" ]] ||
    fail "$kind: fingerprint differs from ssh-keygen -l"
  agree "$k.json" "$k.pub" 0
  printf 'signer@example.invalid %s\n' "$(cat "$k.pub")" >"$T/signers"
  expect_rc 0 "$B" verify "$k.json" --allowed-signers "$T/signers" --identity signer@example.invalid >/dev/null
  for how in flip trailing; do
    mutate "$k.json" "$how" "$k-$how.json"
    agree "$k-$how.json" "$k.pub" 1
  done
  if [[ $type == rsa ]]; then
    for how in sha1 sha256; do
      mutate "$k.json" "$how" "$k-$how.json"
      agree "$k-$how.json" "$k.pub" 1
    done
  fi
  # stock -> agsbx: a signature ssh-keygen made over the canonical bytes
  jq -cjS 'del(.signature)' "$k.json" >"$T/msg"
  rm -f "$T/msg.sig"
  ssh-keygen -q -Y sign -f "$k" -n agsbx-evidence "$T/msg"
  jq --rawfile a "$T/msg.sig" '.signature.armored = $a' "$k.json" >"$k-stock.json"
  agree "$k-stock.json" "$k.pub" 0
  n=$((n + 1))
done
pass "$n key types sign; agsbx verify and ssh-keygen -Y verify agree on each and on its mutations"

# ---- an ssh-agent's RSA key (a real agent, stopped by PID) -----------------------
eval "$(ssh-agent -s -a "$T/agent.sock")" >/dev/null
trap 'kill "$SSH_AGENT_PID" 2>/dev/null || true' EXIT
ssh-add -q "$T/rsa-2048" 2>/dev/null
collect_signed "$T/rsa-2048.pub" "$T/agent.json" || fail "collect with the agent's RSA key: $(cat "$T/err")"
agree "$T/agent.json" "$T/rsa-2048.pub" 0
pass "an ssh-agent's RSA key signs"

# ---- keys that cannot sign fail before any sandbox starts -------------------------
# The wrap provider's wrapper records that the matrix ran; it must never run.
cat >"$T/mark" <<EOF
#!/bin/sh
touch "$T/matrix-ran"
exec "\$@"
EOF
chmod +x "$T/mark"
refused() { # NAME KEY WANT-IN-MESSAGE
  rm -f "$T/out.json" "$T/matrix-ran"
  set +e
  "$B" collect --provider mark --wrap mark="$T/mark {argv}" --quiet --sign-key "$2" --output "$T/out.json" \
    >/dev/null 2>"$T/err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || fail "$1: exit $rc, want 2: $(cat "$T/err")"
  [[ $(wc -l <"$T/err") == 1 ]] || fail "$1: want one line: $(cat "$T/err")"
  grep -q -- "$3" "$T/err" || fail "$1: message lacks '$3': $(cat "$T/err")"
  [[ ! -e $T/out.json ]] || fail "$1: a bundle was written"
  [[ ! -e $T/matrix-ran ]] || fail "$1: the matrix ran before the key was refused"
}
# the wrapper itself works (else the checks below prove nothing)
"$B" collect --provider mark --wrap mark="$T/mark {argv}" --unsigned --quiet --output "$T/ok.json" 2>/dev/null || true
[[ -e $T/matrix-ran ]] || fail "the marking wrapper never ran: the refusals below would prove nothing"
ssh-keygen -q -t dsa -N '' -f "$T/dsa"
refused "a DSA key" "$T/dsa" "ssh-dss keys cannot sign"
printf 'not a key\n' >"$T/junk"
refused "a file that is no key" "$T/junk" "--sign-key"
# a public key whose private half the agent does not hold (and that has no
# private key beside it, which ssh-keygen would use instead)
mkdir "$T/lone"
cp "$T/rsa-3072.pub" "$T/lone/"
refused "an RSA key the agent lacks" "$T/lone/rsa-3072.pub" "--sign-key: ssh-keygen -Y sign failed"
pass "unusable keys are refused before the matrix runs"

# ---- verify --key given the private key: a hint, not just "malformed" -------------
set +e
"$B" verify "$T/rsa-2048.json" --key "$T/rsa-2048" >/dev/null 2>"$T/err"
rc=$?
set -e
[[ $rc == 2 ]] || fail "verify --key PRIVATE: exit $rc"
grep -q 'is a private key; --key takes the public key (.*\.pub' "$T/err" || fail "verify --key PRIVATE: $(cat "$T/err")"
pass "verify --key with a private key names it and points at the .pub file"
