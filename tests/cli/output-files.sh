#!/usr/bin/env bash
# --output FILE of report, matrix and diff: the file holds exactly what
# stdout would (and '-' is stdout), mode 0644, an existing file is replaced
# whole, and no temporary file is left; a FILE that cannot be created is a
# failure naming it, with no file and no temporary file left behind.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
[[ -x $AGSBX_BIN ]] || fail "not built: $AGSBX_BIN"
B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles
T=$(t_tmpdir output-files)

cmds=("report $D/full.json" "matrix --format markdown $D/full.json $D/minimal.json"
      "matrix --format badge $D/full.json" "diff --format json $D/minimal.json $D/full.json")
i=0
for c in "${cmds[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086 # the words of the command
  set -- $c
  rc=0; "$B" "$@" >"$T/$i.stdout" 2>/dev/null || rc=$?
  [[ $1 == diff ]] || [[ $rc == 0 ]] || fail "$c: exit $rc"
  printf 'old content that is longer than any result would be %.0s' $(seq 2000) >"$T/$i.out"
  rc2=0; "$B" "$@" --output "$T/$i.out" >"$T/$i.none" 2>"$T/$i.err" || rc2=$?
  [[ $rc2 == "$rc" ]] || fail "$c --output: exit $rc2, stdout form exited $rc"
  cmp -s "$T/$i.stdout" "$T/$i.out" || fail "$c --output differs from its stdout: $(diff "$T/$i.stdout" "$T/$i.out" | head -5)"
  [[ ! -s $T/$i.none ]] || fail "$c --output also wrote to stdout"
  [[ $(stat -c %a "$T/$i.out") == 644 ]] || fail "$c --output: mode $(stat -c %a "$T/$i.out")"
  "$B" "$@" --output - >"$T/$i.dash" 2>/dev/null || [[ $1 == diff ]] || fail "$c --output -: failed"
  cmp -s "$T/$i.stdout" "$T/$i.dash" || fail "$c --output - is not stdout"
done
[[ -z $(find "$T" -name '*.tmp-*') ]] || fail "temporary files left: $(find "$T" -name '*.tmp-*')"
pass "--output FILE holds exactly the stdout result, replaces an old file whole, mode 0644, no temp file"

for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086
  set -- $c
  rc=0; "$B" "$@" --output "$T/missing-dir/x" >"$T/o" 2>"$T/e" || rc=$?
  # (report and diff exit 2, matrix 3: the path is bad input or an I/O error)
  [[ $rc == 2 || $rc == 3 ]] || fail "$c --output into a missing dir: exit $rc, want 2 or 3"
  head -1 "$T/e" | grep -q "^agsbx-evidence: error: .*$T/missing-dir/x" || fail "$c: the error does not name the file: $(cat "$T/e")"
  [[ ! -s $T/o ]] || fail "$c: wrote to stdout on failure"
  [[ ! -e $T/missing-dir ]] || fail "$c: created the directory"
done
pass "--output into a missing directory: exit 2/3 naming the file, nothing written"
