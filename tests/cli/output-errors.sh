#!/usr/bin/env bash
# A result that cannot be written is not a success: with stdout on a full
# device (/dev/full) every command that prints its result exits 3 with one
# error line naming the problem, and exits 0 when stdout works.
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
check keygen "$AGSBX_BIN" keygen -f "$d/k"
pass "$n commands exit 3 when their result cannot be written"
