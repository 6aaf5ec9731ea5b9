#!/usr/bin/env bash
# A result that cannot be written is not a success: with stdout on a full
# device (/dev/full) every command and format that prints its result exits 3
# with exactly one error line naming the write and ENOSPC (as the write
# said, not a generic EIO), never a silent exit 3 (cleanup said nothing
# before: it returned 3 after its own failed flush, and main's final flush
# stays quiet after a 3); and exits 0 when stdout works (diff: 1, the
# regressions it shows; keygen: its file exists by then).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "not built: $AGSBX_BIN"
[[ -w /dev/full ]] || skip "/dev/full" 1 "no writable /dev/full on this host"
d=$(t_tmpdir output-errors)
data=$AGSBX_SOURCE_DIR/tests/data/bundles
B=$data/minimal.json F=$data/full.json S=$data/signed.json K=$data/keys/fixture_ed25519.pub
empty=$(t_tmpdir no-runs) # cleanup looks here only: no other test's runs

n=0
check() {
  local name=$1; shift
  set +e
  "$@" >/dev/full 2>"$d/err"
  rc=$?
  set -e
  [[ $rc == 3 ]] || fail "$name > /dev/full: exit $rc, want 3: $(head -c 300 "$d/err")"
  [[ $(wc -l <"$d/err") == 1 ]] || fail "$name > /dev/full: want exactly one line on stderr: $(head -c 300 "$d/err")"
  grep -q 'agsbx-evidence: error: .*\(write\|stdout\)' "$d/err" ||
    fail "$name > /dev/full: no error line about the write: $(head -c 300 "$d/err")"
  grep -q '^agsbx-evidence: error: .*No space left on device$' "$d/err" ||
    fail "$name > /dev/full: the error is not ENOSPC: $(head -c 300 "$d/err")"
  set +e
  "$@" >/dev/null 2>"$d/err"
  rc=$?
  set -e
  [[ $rc == 0 || ($rc == 1 && $name == diff*) || $name == keygen* ]] ||
    fail "$name exits $rc with a working stdout: $(head -c 300 "$d/err")"
  n=$((n + 1))
}
check --help "$AGSBX_BIN" --help
check --version "$AGSBX_BIN" --version
check "collect --help" "$AGSBX_BIN" collect --help
check providers "$AGSBX_BIN" providers
check "providers --json" "$AGSBX_BIN" providers --json
check "probe --json" "$AGSBX_BIN" probe --json
check report "$AGSBX_BIN" report "$B"
check "matrix --format markdown" "$AGSBX_BIN" matrix --format markdown "$B"
check "diff --format json" "$AGSBX_BIN" diff --format json "$B" "$B"
check "schema evidence-bundle" "$AGSBX_BIN" schema evidence-bundle
check "report --format junit" "$AGSBX_BIN" report --format junit "$B"
check "report -o -" "$AGSBX_BIN" report "$B" -o -
check "attest" "$AGSBX_BIN" attest "$B"
check "probe" "$AGSBX_BIN" probe
check "help" "$AGSBX_BIN" help
check keygen "$AGSBX_BIN" keygen -f "$d/k"
check "cleanup --dry-run" "$AGSBX_BIN" cleanup --dry-run --work-dir "$empty"
check "cleanup --dry-run --json" "$AGSBX_BIN" cleanup --dry-run --json --work-dir "$empty"
check "cleanup" "$AGSBX_BIN" cleanup --work-dir "$empty"
check "verify --key" "$AGSBX_BIN" verify "$S" --key "$K"
check "verify --key --json" "$AGSBX_BIN" verify "$S" --key "$K" --json
check "report --format markdown" "$AGSBX_BIN" report "$F" --format markdown
check "report --format tap" "$AGSBX_BIN" report "$F" --format tap
check "diff (text)" "$AGSBX_BIN" diff "$B" "$F"
check "diff --format markdown" "$AGSBX_BIN" diff --format markdown "$B" "$F"
check "matrix --format json" "$AGSBX_BIN" matrix --format json "$F" "$B"
check "matrix --format badge" "$AGSBX_BIN" matrix --format badge "$F" "$B"
check "help report" "$AGSBX_BIN" help report
check "schema external-protocol" "$AGSBX_BIN" schema external-protocol
pass "$n commands and formats exit 3 with one ENOSPC line when their result cannot be written"

# --output on something that is not a regular file (a device node, a FIFO):
# refused with exit 2 and one line, and the node is left as it was. The
# output is written to a temporary name and renamed into place, which would
# replace the node itself (as root: --output /dev/null turning the host's
# /dev/null into a regular file). The device here is our own node of
# /dev/null's kind in our temp dir, never the host's.
mkfifo "$d/fifo"
nodes=("$d/fifo")
if [[ $(id -u) == 0 ]] && mknod "$d/null" c 1 3 2>/dev/null; then
  nodes+=("$d/null")
else
  echo "note: not root or no mknod: the device node case is covered by the FIFO only" >&2
fi
m=0
for node in "${nodes[@]}"; do
  before=$(stat -c '%F %i' "$node")
  for cmd in "report $B" "matrix $B" "diff $B $B" "attest $B" "collect --provider trusted_local --unsigned -q"; do
    set +e
    # shellcheck disable=SC2086
    "$AGSBX_BIN" $cmd --output "$node" >"$d/o" 2>"$d/e"
    rc=$?
    set -e
    [[ $rc == 2 ]] || fail "$cmd --output $node: exit $rc, want 2: $(cat "$d/e")"
    [[ $(grep -vc "^hint:" "$d/e") == 1 ]] || fail "$cmd --output $node: want one error line: $(cat "$d/e")"
    [[ $(stat -c '%F %i' "$node") == "$before" ]] || fail "$cmd --output $node replaced the node"
    [[ -z $(find "$d" -name '*.tmp-*') ]] || fail "$cmd --output $node left a temporary file"
    m=$((m + 1))
  done
done
pass "$m outputs on a FIFO or device node: exit 2, one line, the node untouched"
