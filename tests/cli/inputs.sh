#!/usr/bin/env bash
# Hostile inputs: a FIFO, socket or device given as any
# input file is refused at once (exit 2, never waits for a writer); every
# command whose stdout cannot be written (/dev/full) exits 3.
source "$(dirname "$0")/../lib/common.sh"
T=$(t_tmpdir inputs)
B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles
command -v ssh-keygen >/dev/null || skip ssh-keygen 1 "openssh-client not installed"

mkfifo "$T/fifo"
# rc WANT CMD...: within 10 s (a blocking open of the FIFO would hang until
# the timeout: status 124), with a one-line error and no stdout.
rc() {
  local want=$1; shift
  set +e; timeout 10 "$@" >"$T/out" 2>"$T/err"; local got=$?; set -e
  [[ $got == "$want" ]] || fail "expected exit $want, got $got: $* ($(head -c 300 "$T/err"))"
}
not_regular() {
  rc 2 "$@"
  grep -q 'not a regular file' "$T/err" || fail "$*: message does not say why: $(cat "$T/err")"
  [[ ! -s $T/out ]] || fail "$*: wrote to stdout"
}
"$B" keygen -f "$T/key" >/dev/null
not_regular "$B" verify "$T/fifo"
not_regular "$B" report "$T/fifo"
not_regular "$B" diff "$D/full.json" "$T/fifo"
not_regular "$B" diff "$T/fifo" "$D/full.json"
not_regular "$B" verify "$D/signed.json" --key "$T/fifo"
not_regular "$B" verify "$D/signed.json" --allowed-signers "$T/fifo" --identity x
not_regular "$B" verify /dev/zero
not_regular "$B" collect --provider trusted_local --sign-key "$T/fifo" --output "$T/b.json"
not_regular "$B" collect --provider trusted_local --unsigned --output "$T/fifo"
[[ -p $T/fifo ]] || fail "collect replaced the FIFO"
[[ ! -e $T/b.json ]] || fail "collect wrote a bundle after refusing its input"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/sock"
not_regular "$B" report "$T/sock"
not_regular "$B" verify "$D/signed.json" --key "$T/sock"
pass "FIFO, socket and device inputs: exit 2 at once, one line saying why"

# ---- stdout write errors -------------------------------------------------
full() {
  set +e; "$@" >/dev/full 2>"$T/err"; local got=$?; set -e
  [[ $got == 3 ]] || fail "stdout on /dev/full: expected exit 3, got $got: $*"
  grep -q '^agsbx-evidence: error: .*\(write\|No space\)' "$T/err" || fail "$*: no write error reported: $(cat "$T/err")"
}
full "$B" --version
full "$B" --help
full "$B" providers
full "$B" providers --json
full "$B" probe
full "$B" probe --json
full "$B" schema --list
full "$B" schema evidence-bundle
full "$B" report "$D/full.json"
full "$B" report "$D/full.json" --format markdown
full "$B" verify "$D/signed.json"
full "$B" diff "$D/minimal.json" "$D/full.json"
full "$B" diff "$D/minimal.json" "$D/full.json" --format json
full "$B" matrix "$D/minimal.json" "$D/full.json"
full "$B" keygen -f "$T/key2"
for c in collect verify report diff matrix keygen bench schema probe providers; do
  full "$B" "$c" --help
done
full "$B" collect --provider trusted_local --unsigned --output "$T/c.json" --json -q
pass "every command exits 3 when its stdout cannot be written"
