#!/usr/bin/env bash
# The architecture is the top-level folders, and dependencies flow one way:
#   base <- probes / providers / evidence <- conformance <- cli
# Every `#include "DIR/..."` of a project header in a production source
# (base probes providers evidence conformance cli, *.c and *.h) must name a
# folder its own folder may depend on. Like jansson's check-exports, the
# rule is a table here and the check is a plain scan of the sources, so a
# violation fails `make test` with the file, the line and the include.
#
# Usage: layering.sh               self-test, then this repository
#        layering.sh SOURCE_ROOT   that tree only
# The self-test proves the check fails on a temp copy with one forbidden
# include (a check that cannot fail proves nothing).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# folder -> the project folders its sources may include (itself included).
# probes, providers and evidence are siblings: none includes another.
declare -A allowed=(
  [base]="base"
  [probes]="base probes"
  [providers]="base providers"
  [evidence]="base evidence"
  [conformance]="base probes providers evidence conformance"
  [cli]="base probes providers evidence conformance cli"
)

# Prints one line per forbidden include below $1; returns 1 if any.
check_tree() {
  local src=$1 bad=0 folder file line inc target
  for folder in "${!allowed[@]}"; do
    [[ -d $src/$folder ]] || continue
    while IFS=: read -r file line inc; do
      target=${inc#*\"}
      target=${target%%/*}
      # Only project folders are layered; "foo.h" beside the file is local.
      [[ -n ${allowed[$target]+x} ]] || continue
      if [[ " ${allowed[$folder]} " != *" $target "* ]]; then
        echo "layering: ${file#"$src"/}:$line: $folder may not include $target/ ($inc)"
        bad=1
      fi
    done < <(grep -rnE --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+/' \
               "$src/$folder" | sed -E 's/^([^:]*):([0-9]+):[[:space:]]*(.*)$/\1:\2:\3/')
  done
  return $bad
}

if [[ $# -eq 0 ]]; then
  tmp=$(mktemp -d /tmp/agsbx-layering.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
  for d in "${!allowed[@]}"; do cp -r "$root/$d" "$tmp/"; done
  check_tree "$tmp" >/dev/null || { echo "FAIL: the unchanged copy already fails" >&2; exit 1; }
  # One forbidden include per direction that matters: upward (base ->
  # cli) and sideways between siblings (probes -> providers).
  for bad in 'base/util.c:cli/commands.h' 'probes/docker.c:providers/provider.h'; do
    f=${bad%%:*} h=${bad#*:}
    cp "$root/$f" "$tmp/$f.orig"
    sed -i "0,/^#include/s||#include \"$h\"\n#include|" "$tmp/$f"
    if out=$(check_tree "$tmp"); then
      echo "FAIL: '#include \"$h\"' in $f was not caught" >&2
      exit 1
    fi
    grep -q "^layering: $f:[0-9]*: .*$h" <<<"$out" || { echo "FAIL: wrong report: $out" >&2; exit 1; }
    mv "$tmp/$f.orig" "$tmp/$f"
  done
  echo "ok - a forbidden include (upward and sideways) fails the check"
fi

src=${1:-$root}
if ! check_tree "$src"; then
  echo "FAIL: includes against the layering base <- probes/providers/evidence <- conformance <- cli" >&2
  exit 1
fi
echo "ok - every project include follows base <- probes/providers/evidence <- conformance <- cli"
