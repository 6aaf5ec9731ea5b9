#!/usr/bin/env bash
# The commands and formats output-errors.sh leaves out, with stdout on a
# full device (/dev/full): exit 3 and exactly one error line naming ENOSPC,
# never a silent exit 3 (cleanup said nothing before: it returned 3 after its
# own failed flush, and main's final flush stays quiet after a 3). With a
# working stdout each exits 0 (verify: a trusted signature; diff 1, the
# regressions it shows).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "not built: $AGSBX_BIN"
[[ -w /dev/full ]] || skip "/dev/full" 1 "no writable /dev/full on this host"
d=$(t_tmpdir cov-cli-errors)
data=$AGSBX_SOURCE_DIR/tests/data/bundles
M=$data/minimal.json F=$data/full.json S=$data/signed.json K=$data/keys/fixture_ed25519.pub
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
  grep -q '^agsbx-evidence: error: .*No space left on device$' "$d/err" ||
    fail "$name > /dev/full: not one ENOSPC error line: $(head -c 300 "$d/err")"
  set +e
  "$@" >/dev/null 2>"$d/err"
  rc=$?
  set -e
  # diff's 1 is "a regression", the result itself
  [[ $rc == 0 || ($rc == 1 && $name == diff*) ]] || fail "$name exits $rc with a working stdout: $(head -c 300 "$d/err")"
  n=$((n + 1))
}
check "cleanup --dry-run" "$AGSBX_BIN" cleanup --dry-run --work-dir "$empty"
check "cleanup --dry-run --json" "$AGSBX_BIN" cleanup --dry-run --json --work-dir "$empty"
check "cleanup" "$AGSBX_BIN" cleanup --work-dir "$empty"
check "verify --key" "$AGSBX_BIN" verify "$S" --key "$K"
check "verify --key --json" "$AGSBX_BIN" verify "$S" --key "$K" --json
check "report --format markdown" "$AGSBX_BIN" report "$F" --format markdown
check "report --format tap" "$AGSBX_BIN" report "$F" --format tap
check "diff (text)" "$AGSBX_BIN" diff "$M" "$F"
check "diff --format markdown" "$AGSBX_BIN" diff --format markdown "$M" "$F"
check "matrix --format json" "$AGSBX_BIN" matrix --format json "$F" "$M"
check "matrix --format badge" "$AGSBX_BIN" matrix --format badge "$F" "$M"
check "help report" "$AGSBX_BIN" help report
check "schema external-protocol" "$AGSBX_BIN" schema external-protocol
pass "$n more commands and formats: exit 3 and one ENOSPC line when stdout is full"
