#!/usr/bin/env bash
# Lists the functions production code defines but never calls: what the
# linker drops from agsbx-evidence built with one section per function
# (-ffunction-sections, --gc-sections; no inlining, so a function called
# only in its own file is kept) and that no helper program keeps
# either. Tests do not count as callers: a function only tests call is
# dead. Prints "function object" lines; exit 1 when there are any.
#
#   tests/tools/unused-functions.sh [BUILD_DIR]   (default build-unused)
#
# A separate build directory (a few minutes on two cores); nothing else
# in the tree is touched.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
b=${1:-$src/build-unused}
helpers=(agsbx-payload agsbx-landlock-exec agsbx-simulate)
# Called on another build only, and tested here: not dead.
#   agsbx_curl_set_protocols_mask: the path for libcurl before 7.85
keep=" agsbx_curl_set_protocols_mask "
cmake -S "$src" -B "$b" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="-ffunction-sections -fno-inline" \
  -DCMAKE_EXE_LINKER_FLAGS="-Wl,--gc-sections -Wl,--print-gc-sections" >/dev/null
cmake --build "$b" -j2 --target "${helpers[@]}" >/dev/null 2>&1
rm -f "$b/agsbx-evidence"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cmake --build "$b" -j2 --target agsbx-evidence >"$log" 2>&1 || { cat "$log"; exit 2; }
found=0
while read -r fn obj; do
  kept=0
  [[ $keep == *" $fn "* ]] && continue
  for h in "${helpers[@]}"; do
    nm "$b/$h" 2>/dev/null | grep -qw -- "$fn" && kept=1
  done
  (( kept )) && continue
  echo "$fn $obj"
  found=1
done < <(sed -nE "s/.*removing unused section '\.text\.([A-Za-z_][A-Za-z0-9_]*)' in file '[^']*\(([^)]*)\)'.*/\1 \2/p" "$log" |
         grep '^agsbx_' | sort -u)
exit $found
