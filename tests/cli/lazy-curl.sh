#!/usr/bin/env bash
# libcurl is loaded only by commands that speak HTTP: the binary has no
# NEEDED entry for it, verify/report/diff/matrix/schema never map it, and
# verify --keys-url (the paired control) does.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir lazy-curl)
B=$AGSBX_BIN
F=$AGSBX_SOURCE_DIR/tests/data/bundles/full.json

if have readelf; then
  readelf -d "$B" >"$d/dyn"
  grep -q NEEDED "$d/dyn" || fail "readelf shows no NEEDED entries at all (wrong file?)"
  ! grep -q 'NEEDED.*libcurl' "$d/dyn" || fail "agsbx-evidence links libcurl at start-up: $(grep libcurl "$d/dyn")"
  pass "no NEEDED libcurl in the binary"
fi

# loaded CMD...: true when the dynamic loader initialised libcurl in CMD.
loaded() {
  set +e
  LD_DEBUG=libs LD_DEBUG_OUTPUT="$d/ld" "$B" "$@" >/dev/null 2>&1
  set -e
  local hit=1
  cat "$d"/ld.* >"$d/ld-all" 2>/dev/null || true
  grep -q 'calling init: .*libcurl\.so' "$d/ld-all" && hit=0
  grep -q 'calling init: .*libc\.so' "$d/ld-all" || fail "LD_DEBUG produced no trace for $*"
  rm -f "$d"/ld.*
  return $hit
}

! loaded verify "$F" || fail "verify loaded libcurl"
! loaded report "$F" || fail "report loaded libcurl"
! loaded diff "$F" "$F" || fail "diff loaded libcurl"
! loaded matrix "$F" || fail "matrix loaded libcurl"
! loaded schema evidence-bundle || fail "schema loaded libcurl"
pass "verify, report, diff, matrix and schema start without libcurl"

# The control: a command that needs HTTP does load it (port 1 on loopback
# refuses the connection, so nothing leaves the machine).
loaded verify "$F" --keys-url http://127.0.0.1:1/keys --allow-insecure-keys-url || fail "verify --keys-url did not load libcurl"
pass "verify --keys-url loads libcurl on demand"
