#!/usr/bin/env bash
# report, diff and matrix: bad input is exit 2 with one error line and
# nothing on stdout; --format VALUE and --format=VALUE are the same; matrix
# skips an unreadable bundle with a warning but fails when none is readable.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "not built: $AGSBX_BIN"
d=$(t_tmpdir command-input)
B=$AGSBX_SOURCE_DIR/tests/data/bundles/minimal.json
echo '{not json' >"$d/broken.json"

# usage MESSAGE_PART ARGS...
usage() {
  local msg=$1; shift
  set +e
  so=$("$AGSBX_BIN" "$@" 2>"$d/err")
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "$*: exit $rc, want 2"
  [[ -z $so ]] || fail "$*: stdout not empty"
  grep -qF -- "$msg" "$d/err" || fail "$*: stderr lacks '$msg': $(head -c 300 "$d/err")"
  pass "exit 2 ($msg): $*"
}
usage "one bundle at a time" report "$B" "$B"
usage "no bundle given" report
usage "unknown format 'yaml'" report --format=yaml "$B"
usage "two bundles" diff "$B"
usage "two bundles" diff "$B" "$B" "$B"
usage "unknown option '--bogus'" diff --bogus "$B" "$B"
usage "unknown format 'yaml'" diff --format=yaml "$B" "$B"
usage "no bundle given" matrix
usage "unknown option '--bogus'" matrix --bogus "$B"
usage "unknown format 'text'" matrix --format=text "$B"
usage "no readable bundle" matrix "$d/broken.json" "$d/missing.json"

# --format=VALUE is --format VALUE
for c in "report tap" "diff json" "matrix json"; do
  set -- $c
  args=("$B"); [[ $1 == diff ]] && args=("$B" "$B")
  "$AGSBX_BIN" "$1" --format "$2" "${args[@]}" >"$d/$1.sep" || fail "$1 --format $2 failed"
  "$AGSBX_BIN" "$1" --format="$2" "${args[@]}" >"$d/$1.eq" || fail "$1 --format=$2 failed"
  [[ -s $d/$1.eq ]] || fail "$1 --format=$2 printed nothing"
  cmp -s "$d/$1.sep" "$d/$1.eq" || fail "$1: --format=$2 differs from --format $2"
done
pass "--format=VALUE is --format VALUE (report, diff, matrix)"

# An unreadable bundle among readable ones: skipped with a warning naming it.
"$AGSBX_BIN" matrix --format json "$B" "$d/broken.json" >"$d/m.json" 2>"$d/m.err" ||
  fail "matrix with one unreadable bundle failed: $(cat "$d/m.err")"
grep -q "warning: skipping .*broken.json" "$d/m.err" || fail "no warning for the skipped bundle: $(cat "$d/m.err")"
jq -e . "$d/m.json" >/dev/null || fail "matrix output is not JSON"
if grep -q broken.json "$d/m.json"; then fail "the skipped bundle appears in the matrix"; fi
pass "matrix skips an unreadable bundle with a warning"
