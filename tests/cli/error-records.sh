#!/usr/bin/env bash
# One error record at the module boundaries: the headers below
# take `struct agsbx_error *` (base/error.h), never a `char *err, size_t`
# buffer pair. The check is a scan of the headers, like layering.sh, and a
# self-test proves it fails on a temp copy with one such pair added.
# evidence/internal.h is evidence/'s own (behind the boundary) and is not
# listed.
#
# Usage: error-records.sh               self-test, then this repository
#        error-records.sh SOURCE_ROOT   that tree only
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
headers='evidence/evidence.h evidence/bundle.h conformance/conformance.h cli/collect-workers.h'

# Prints one line per buffer pair in a boundary header below $1; 1 if any.
check_tree() {
  local src=$1 bad=0 h
  for h in $headers; do
    [[ -f $src/$h ]] || { echo "error-records: $h is missing"; bad=1; continue; }
    if grep -nE 'char[[:space:]]*\*[[:space:]]*[a-z_]*(err|why)[a-z_]*,[[:space:]]*(size_t|$)' "$src/$h" |
       sed "s|^|error-records: $h:|" | grep .; then
      bad=1
    fi
  done
  return $bad
}

if [[ $# -eq 0 ]]; then
  tmp=$(mktemp -d /tmp/agsbx-error-records.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
  for h in $headers; do mkdir -p "$tmp/$(dirname "$h")"; cp "$root/$h" "$tmp/$h"; done
  out=$(check_tree "$tmp") || { echo "$out"; echo "FAIL: the unchanged copy already fails" >&2; exit 1; }
  for h in evidence/evidence.h cli/collect-workers.h; do
    cp "$tmp/$h" "$tmp/$h.orig"
    printf 'int injected(const char *path, char *err, size_t err_size);\n' >>"$tmp/$h"
    if out=$(check_tree "$tmp"); then
      echo "FAIL: a char *err, size_t pair in $h was not caught" >&2
      exit 1
    fi
    grep -q "^error-records: $h:[0-9]*:" <<<"$out" || { echo "FAIL: wrong report: $out" >&2; exit 1; }
    mv "$tmp/$h.orig" "$tmp/$h"
  done
  echo "ok - a char-buffer error pair in a boundary header fails the check"
fi

if ! check_tree "${1:-$root}"; then
  echo "FAIL: boundary headers take struct agsbx_error * (base/error.h), not char *err, size_t" >&2
  exit 1
fi
echo "ok - evidence/, conformance/ and collect's worker pool report errors in struct agsbx_error"
