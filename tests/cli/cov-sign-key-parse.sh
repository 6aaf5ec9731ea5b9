#!/usr/bin/env bash
# collect --sign-key reads an OpenSSH private key before any provider runs:
# a key broken in one way (the PEM armour, the openssh-key-v1 container cut
# at each field, two keys, the private section's check bytes, type, key
# lengths, comment, padding, halves that differ, a public half of another
# key, a seed that is not the public key's, an RSA public half over an
# Ed25519 section) exits 2 with one error line naming that defect, writes no
# bundle and runs nothing. The variants are made from a fresh ssh-keygen key
# by tests/cli/lib-privkey-mutants.py; the unmodified key passes the check.
source "$(dirname "$0")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
command -v ssh-keygen >/dev/null || skip ssh-keygen 1 "ssh-keygen is not installed"
w=$(t_tmpdir sign-key-parse)
ssh-keygen -q -t ed25519 -N '' -C cov-key -f "$w/key"
"$PY" "$AGSBX_SOURCE_DIR/tests/cli/lib-privkey-mutants.py" "$w/key" "$w/mut" >"$w/cases"
[[ $(wc -l <"$w/cases") -ge 20 ]] || fail "the generator wrote $(wc -l <"$w/cases") cases"

n=0
while IFS=$'\t' read -r name want; do
  set +e
  # no provider runs: the key is checked first (stdin closed: nothing may ask for a passphrase)
  TMPDIR=$w timeout 60 "$AGSBX_BIN" collect -q --sign-key "$w/mut/$name.key" --provider trusted_local \
    --output "$w/b.json" </dev/null >"$w/out" 2>"$w/err"
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "$name: exit $rc, want 2: $(head -c 300 "$w/err")"
  [[ $(grep -vc '^hint:' "$w/err") == 1 ]] || fail "$name: want one error line: $(cat "$w/err")"
  [[ $(head -1 "$w/err") == "agsbx-evidence: error: --sign-key: "*"$want"* ]] ||
    fail "$name: '$(head -1 "$w/err")', want '$want'"
  [[ ! -e $w/b.json && -z $(find "$w" -maxdepth 1 -name 'agsbx-run-*') ]] || fail "$name: wrote a bundle or a run dir"
  n=$((n + 1))
done <"$w/cases"
pass "--sign-key: $n one-defect private keys exit 2 before anything runs, each with its own error"

# the key they came from passes the same check: collect goes on to the next
# one (--work-dir, checked after the key) and stops there
set +e
TMPDIR=$w "$AGSBX_BIN" collect -q --sign-key "$w/key" --provider trusted_local --work-dir "$w/none" </dev/null \
  >/dev/null 2>"$w/err"
rc=$?
set -e
[[ $rc == 2 && $(head -1 "$w/err") == *"--work-dir $w/none: No such file or directory"* ]] ||
  fail "the unmodified key: $(head -2 "$w/err")"
pass "the unmodified key passes the check"
