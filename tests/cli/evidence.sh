# CLI: keygen, verify, report, diff, matrix, schema on the fixture bundles —
# exit codes, one-line errors, nothing on stdout for bad input.
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles
T=$(t_tmpdir evidence)
command -v jq >/dev/null || skip jq 1 "jq not installed"
command -v ssh-keygen >/dev/null || skip ssh-keygen 1 "openssh-client not installed"

# run_rc WANT OUT ERR CMD...: runs CMD with stdout/stderr to files, checks status
run_rc() {
  local want=$1 out=$2 err=$3; shift 3
  set +e; "$@" >"$out" 2>"$err"; local got=$?; set -e
  [[ $got == "$want" ]] || { cat "$err" >&2; fail "expected exit $want, got $got: $*"; }
}

# ---- keygen ----------------------------------------------------------------
run_rc 0 "$T/o" "$T/e" "$B" keygen -f "$T/key"
[[ $(stat -c %a "$T/key") == 600 ]] || fail "private key mode $(stat -c %a "$T/key")"
# commented USER@HOST as ssh-keygen does; stdout's third line is the
# fingerprint and comment as ssh-keygen -l prints them
grep -q "^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5[A-Za-z0-9+/=]* $(id -un)@$(hostname)\$" "$T/key.pub" || fail "bad .pub: $(cat "$T/key.pub")"
[[ $(sed -n 3p "$T/o") == "$(ssh-keygen -l -E sha256 -f "$T/key.pub" | cut -d' ' -f2,3)" ]] ||
  fail "keygen's fingerprint line: $(sed -n 3p "$T/o") vs $(ssh-keygen -l -E sha256 -f "$T/key.pub")"
[[ $(ssh-keygen -y -f "$T/key" | cut -d' ' -f2) == $(cut -d' ' -f2 "$T/key.pub") ]] || fail "ssh-keygen -y disagrees"
before=$(sha256sum "$T/key")
run_rc 2 "$T/o" "$T/e" "$B" keygen -f "$T/key"
[[ $(sha256sum "$T/key") == "$before" ]] || fail "keygen overwrote a key"
grep -q 'already exists' "$T/e" || fail "keygen refusal message: $(cat "$T/e")"
run_rc 2 "$T/o" "$T/e" "$B" keygen
run_rc 2 "$T/o" "$T/e" "$B" keygen -f "$T/no/such/dir/key"
pass "keygen"

# ---- verify: good, untrusted, unsigned, tampered, challenge ---------------
run_rc 0 "$T/o" "$T/e" "$B" verify "$D/signed.json" --key "$D/keys/fixture_ed25519.pub"
grep -q '^signature:  good (ssh-ed25519 SHA256:' "$T/o" || fail "summary: $(cat "$T/o")"
grep -q '^result:     valid and trusted' "$T/o" || fail "summary: $(cat "$T/o")"
[[ ! -s "$T/e" ]] || fail "stderr on success: $(cat "$T/e")"
run_rc 0 "$T/o" "$T/e" "$B" verify "$D/signed.json" --allowed-signers "$D/keys/allowed_signers" \
  --identity fixture@agsbx-evidence.invalid --expect-challenge maintainer-nonce-42
grep -q '^signer:     fixture@agsbx-evidence.invalid (allowed_signers)' "$T/o" || fail "identity: $(cat "$T/o")"
grep -q '^challenge:  ok' "$T/o" || fail "challenge line: $(cat "$T/o")"
run_rc 0 "$T/o" "$T/e" "$B" verify "$D/signed.json" --allowed-signers="$D/keys/allowed_signers"
run_rc 1 "$T/o" "$T/e" "$B" verify "$D/signed.json" --allowed-signers "$D/keys/allowed_signers" --identity someone@else
run_rc 1 "$T/o" "$T/e" "$B" verify "$D/signed.json" --key "$D/keys/fixture_ed25519.pub" --expect-challenge other
grep -q 'wrong challenge' "$T/e" || fail "challenge error: $(cat "$T/e")"
run_rc 1 "$T/o" "$T/e" "$B" verify "$D/signed.json" --key "$T/key.pub"
grep -q 'untrusted' "$T/e" || fail "untrusted error: $(cat "$T/e")"
run_rc 1 "$T/o" "$T/e" "$B" verify "$D/signed.json"
grep -q 'no trust anchor' "$T/e" || fail "anchor error: $(cat "$T/e")"
run_rc 1 "$T/o" "$T/e" "$B" verify "$D/full.json" --key "$D/keys/fixture_ed25519.pub"
grep -q '^signature:  none' "$T/o" && grep -q 'unsigned' "$T/e" || fail "unsigned: $(cat "$T/o" "$T/e")"
jq '.providers[1].verdict = "conformant"' "$D/signed.json" >"$T/tampered.json"
run_rc 1 "$T/o" "$T/e" "$B" verify "$T/tampered.json" --key "$D/keys/fixture_ed25519.pub"
grep -q '^signature:  BAD' "$T/o" || fail "tampered summary: $(cat "$T/o")"
# bundle strings cannot forge summary lines or reach the terminal raw: a
# signed bundle whose created_at "says" it is valid and trusted, and whose
# challenge (quoted in the error) carries escapes, checked for another nonce
jq 'del(.signature) | .created_at = "x\nsigner:     alice (allowed_signers)\nresult:     valid and trusted\u001b[8m"
    | .challenge = "n\u001b]0;t\u0007\nresult:     valid and trusted"' "$D/signed.json" >"$T/forged.json"
install -m 600 "$D/keys/fixture_ed25519" "$T/fixture"
jq -cjS 'del(.signature)' "$T/forged.json" >"$T/forged.msg"
ssh-keygen -q -Y sign -f "$T/fixture" -n agsbx-evidence "$T/forged.msg"
jq --rawfile a "$T/forged.msg.sig" --slurpfile s "$D/signed.json" '.signature = ($s[0].signature | .armored = $a)' \
  "$T/forged.json" >"$T/forged-signed.json"
run_rc 1 "$T/o" "$T/e" "$B" verify "$T/forged-signed.json" --key "$D/keys/fixture_ed25519.pub" --expect-challenge y
[[ $(grep -c '^result:' "$T/o") == 1 ]] && grep -q '^result:     wrong challenge$' "$T/o" || fail "forged lines: $(cat -v "$T/o")"
grep -qF 'created_at: x\nsigner:' "$T/o" || fail "created_at not escaped: $(cat -v "$T/o")"
grep -qF 'challenge is "n\x1b]0;t\x07\nresult:' "$T/e" || fail "challenge not escaped: $(cat -v "$T/e")"
[[ $(wc -l <"$T/e") == 1 ]] || fail "verify error is not one line: $(cat -v "$T/e")"
! grep -q $'\x1b' "$T/o" "$T/e" || fail "raw ESC in verify output: $(cat -v "$T/o" "$T/e")"
# a bad trust source is bad input
run_rc 2 "$T/o" "$T/e" "$B" verify "$D/signed.json" --key "$T/missing.pub"
[[ ! -s "$T/o" ]] || fail "stdout for a bad trust file"
printf 'x@y bogus="1" %s\n' "$(cat "$D/keys/fixture_ed25519.pub")" >"$T/bad_signers"
run_rc 2 "$T/o" "$T/e" "$B" verify "$D/signed.json" --allowed-signers "$T/bad_signers"
grep -q 'line 1: bad options: unknown key option' "$T/e" || fail "allowed_signers error: $(cat "$T/e")"
run_rc 2 "$T/o" "$T/e" "$B" verify "$D/signed.json" --key "$D/keys/fixture_ed25519.pub" --allowed-signers "$D/keys/allowed_signers"
run_rc 2 "$T/o" "$T/e" "$B" verify
run_rc 2 "$T/o" "$T/e" "$B" verify "$D/signed.json" --bogus
run_rc 2 "$T/o" "$T/e" "$B" verify "$D/signed.json" --key
run_rc 0 "$T/o" "$T/e" "$B" verify --help
pass "verify exit codes"

# ---- every command on every bad bundle: exit 2, one line, no stdout ------
for f in "$D"/invalid/*; do
  for cmd in "verify $f" "report $f" "report $f --format junit" "diff $f $D/full.json" "diff $D/full.json $f" "matrix $f"; do
    # shellcheck disable=SC2086
    run_rc 2 "$T/o" "$T/e" "$B" $cmd
    [[ ! -s "$T/o" ]] || fail "$cmd: stdout not empty"
    # matrix also names each file it skipped (a warning line) before its error
    n=$(grep -v '^hint:' "$T/e" | grep -vc ': warning: skipping ' || true)
    [[ $n == 1 ]] || fail "$cmd: expected one error line, got: $(cat "$T/e")"
  done
done
# huge (sparse, over 64 MiB), a directory, a missing file, an empty device
truncate -s $((64 * 1024 * 1024 + 1)) "$T/huge.json"
for f in "$T/huge.json" "$T" "$T/missing.json" /dev/null; do
  run_rc 2 "$T/o" "$T/e" "$B" verify "$f"
  [[ ! -s "$T/o" && $(wc -l <"$T/e") == 1 ]] || fail "verify $f: $(cat "$T/o" "$T/e")"
done
{ "$B" verify "$T/huge.json" 2>&1 || true; } | grep -q "larger than 64 MiB" || fail "size message"
pass "bad input: exit 2, one line, no partial output"

# ---- report ----------------------------------------------------------------
for fmt in text markdown junit tap; do
  run_rc 0 "$T/o" "$T/e" "$B" report "$D/signed.json" --format "$fmt"
  [[ -s "$T/o" ]] || fail "report $fmt empty"
done
run_rc 0 "$T/o" "$T/e" "$B" report "$D/signed.json" --format=junit
command -v xmllint >/dev/null || skip xmllint 1 "libxml2-utils not installed (make test installs it)"
xmllint --noout "$T/o" || fail "junit not well-formed"
run_rc 0 "$T/o" "$T/e" "$B" report "$D/signed.json" --format tap
[[ $(head -2 "$T/o" | tr '\n' ' ') == "TAP version 13 1..8 " ]] || fail "tap header: $(head -2 "$T/o")"
grep -q '^not ok 5 - bubblewrap proc.pid_hidden$' "$T/o" || fail "tap failure line"
run_rc 0 "$T/o" "$T/e" "$B" report "$D/signed.json" --format markdown
grep -qF '| `bubblewrap` | ❌ defective | ready | 1 / 1 / 0 / 1 |' "$T/o" || fail "markdown table: $(cat "$T/o")"
run_rc 2 "$T/o" "$T/e" "$B" report "$D/signed.json" --format html
[[ ! -s "$T/o" ]] || fail "report html wrote stdout"
run_rc 2 "$T/o" "$T/e" "$B" report
pass "report formats"

# ---- diff --------------------------------------------------------------------
run_rc 0 "$T/o" "$T/e" "$B" diff "$D/full.json" "$D/full.json"
[[ $(cat "$T/o") == "no differences" ]] || fail "self diff: $(cat "$T/o")"
run_rc 0 "$T/o" "$T/e" "$B" diff "$D/full.json" "$D/signed.json" --format json
[[ $(jq .changes "$T/o") == 0 ]] || fail "signature counted as a change"
jq '.providers[0].checks[0].verdict = "fail" | .host.kernel.release.value = "6.19"' "$D/full.json" >"$T/new.json"
run_rc 1 "$T/o" "$T/e" "$B" diff "$D/full.json" "$T/new.json"
head -4 "$T/o" | grep -q 'REGRESSION landlock/fs.host_read_denied: pass -> fail' || fail "regression not first: $(cat "$T/o")"
grep -q '^  kernel: release 6.18.0-ci -> 6.19$' "$T/o" || fail "host fact change"
run_rc 0 "$T/o" "$T/e" "$B" diff "$T/new.json" "$D/full.json" --format markdown
grep -qF '| `landlock/fs.host_read_denied` | fail | pass |' "$T/o" || fail "markdown diff: $(cat "$T/o")"
# provenance: a list (a table cell cannot wrap a fingerprint or a CI path)
grep -q '^- \*\*old .*new\.json\*\*: signature none; representative' "$T/o" || fail "markdown diff provenance: $(cat "$T/o")"
run_rc 2 "$T/o" "$T/e" "$B" diff "$D/full.json"
run_rc 2 "$T/o" "$T/e" "$B" diff "$D/full.json" "$D/full.json" --format xml
pass "diff"

# ---- matrix ------------------------------------------------------------------
run_rc 0 "$T/o" "$T/e" "$B" matrix "$D/full.json" "$D/minimal.json" "$T/new.json"
[[ $(grep -c '^| ' "$T/o") == 4 ]] || fail "matrix rows: $(cat "$T/o")"
run_rc 0 "$T/o" "$T/e" "$B" matrix "$D/full.json" "$T/missing.json" "$D/invalid/truncated.json" --format json
[[ $(jq '.rows | length' "$T/o") == 1 ]] || fail "matrix json rows"
[[ $(grep -c 'skipping' "$T/e") == 2 ]] || fail "unreadable files not reported: $(cat "$T/e")"
run_rc 2 "$T/o" "$T/e" "$B" matrix "$T/missing.json" "$D/invalid/empty.json"
[[ ! -s "$T/o" ]] || fail "matrix wrote stdout without any bundle"
# With a trust option the badge counts only bundles that verify and whose
# signer is trusted: a verdict edited after signing changes nothing.
jq '.providers[1].verdict = "conformant" | .providers[2].verdict = "conformant"' "$D/signed.json" >"$T/forged.json"
run_rc 0 "$T/o" "$T/e" "$B" matrix "$T/forged.json" --format badge --key "$D/keys/fixture_ed25519.pub"
jq -e '.color == "lightgrey" and (.message | startswith("no trusted bundle; 1 bundle excluded"))' "$T/o" >/dev/null \
  || fail "badge counted a forged bundle: $(cat "$T/o")"
run_rc 0 "$T/o" "$T/e" "$B" matrix "$D/signed.json" "$T/forged.json" --format badge --key "$D/keys/fixture_ed25519.pub"
jq -e '.color == "red" and .message == "1 conformant, 1 defective, 1 blocked, 1 skipped; 1 bundle excluded (signature not verified or signer not trusted)"' \
  "$T/o" >/dev/null || fail "badge with one trusted, one forged: $(cat "$T/o")"
pass "matrix"

# ---- schema ------------------------------------------------------------------
run_rc 0 "$T/o" "$T/e" "$B" schema evidence-bundle
cmp -s "$T/o" "$AGSBX_SOURCE_DIR/schemas/evidence-bundle.schema.json" || fail "embedded schema differs from the file"
run_rc 0 "$T/o" "$T/e" "$B" schema --list
grep -qx evidence-bundle "$T/o" || fail "schema --list"
run_rc 2 "$T/o" "$T/e" "$B" schema nope
run_rc 2 "$T/o" "$T/e" "$B" schema
# the binary does not need the source tree: run a copy from elsewhere
cp "$B" "$T/agsbx-copy"
(cd / && env -u AGSBX_SOURCE_DIR "$T/agsbx-copy" schema evidence-bundle) >"$T/o"
cmp -s "$T/o" "$AGSBX_SOURCE_DIR/schemas/evidence-bundle.schema.json" || fail "schema needs the source tree"
pass "schema"
