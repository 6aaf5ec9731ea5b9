#!/usr/bin/env bash
# A result that cannot be written is not a success: with stdout on a full
# device (/dev/full) every command that prints its result exits 3 with one
# error line naming the problem (ENOSPC, as the write said, not a generic
# EIO), and exits 0 when stdout works.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "not built: $AGSBX_BIN"
[[ -w /dev/full ]] || skip "/dev/full" 1 "no writable /dev/full on this host"
d=$(t_tmpdir output-errors)
B=$AGSBX_SOURCE_DIR/tests/data/bundles/minimal.json

n=0
check() {
  local name=$1; shift
  set +e
  "$@" >/dev/full 2>"$d/err"
  rc=$?
  set -e
  [[ $rc == 3 ]] || fail "$name > /dev/full: exit $rc, want 3: $(head -c 300 "$d/err")"
  [[ $(grep -c 'agsbx-evidence: error: .*\(write\|stdout\)' "$d/err") -ge 1 ]] ||
    fail "$name > /dev/full: no error line about the write: $(head -c 300 "$d/err")"
  grep -q 'agsbx-evidence: error: .*No space left on device' "$d/err" ||
    fail "$name > /dev/full: the error is not ENOSPC: $(head -c 300 "$d/err")"
  "$@" >/dev/null 2>&1 || [[ $name == keygen* ]] || fail "$name fails with a working stdout"
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
pass "$n commands exit 3 when their result cannot be written"

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
