#!/usr/bin/env bash
# gcov-merge-user.sh BUILD_DIR USER_DIR: folds the coverage counters that
# runs as the unprivileged test user wrote under USER_DIR (GCOV_PREFIX, see
# as_user in common.sh; the user cannot write the root-owned counters in
# BUILD_DIR) into BUILD_DIR, then removes USER_DIR. Counters present in both
# are added (gcov-tool merge); counters only the user's runs produced are
# moved over. Run by the coverage target before gcovr.
set -euo pipefail
build=$1 user=$2
[[ -d $user ]] || exit 0
if [[ -L $user ]]; then echo "gcov-merge-user: $user is a symlink; not merged" >&2; exit 1; fi
n=$(find "$user" -name '*.gcda' -type f | wc -l)
while IFS= read -r -d '' f; do
  rel=${f#"$user"/}
  [[ -e $build/$rel ]] && continue
  [[ -e $build/${rel%.gcda}.gcno ]] || continue   # not one of ours
  mv -- "$f" "$build/$rel"
done < <(find "$user" -name '*.gcda' -type f -print0)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [[ -n $(find "$user" -name '*.gcda' -type f -print -quit) ]]; then
  gcov-tool merge -o "$out" "$build" "$user"
  while IFS= read -r -d '' f; do
    rel=${f#"$out"/}
    if [[ -e $build/$rel ]]; then cp -- "$f" "$build/$rel"; fi
  done < <(find "$out" -name '*.gcda' -type f -print0)
fi
rm -rf -- "$user"
echo "gcov-merge-user: folded $n counter files of the unprivileged runs into $build"
