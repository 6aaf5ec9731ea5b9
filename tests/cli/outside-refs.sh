#!/usr/bin/env bash
# Comments and docs never point at documents outside the repository (the
# project's private specs and notes, or its issue tracker by number): they
# say what is meant, or point at docs/design.md. The control: the same
# search finds a planted reference.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir outside-refs)
S=$AGSBX_SOURCE_DIR
# built from parts so this file does not match itself
pat="PRODUCT""\.md|EXTERNAL""\.md|ci-host""-mechanisms|upstream""-contract|house""-style\.md|[Ii]ssue"" #?[0-9]+"
scan() {
  grep -rInE "$pat" "$@" --include='*.c' --include='*.h' --include='*.m' --include='*.py' --include='*.sh' \
    --include='*.cmake' --include='CMakeLists.txt' --include='*.md' --include='*.1' --include='*.yml' \
    --include='Makefile' --include='run' --exclude='CHANGELOG.md' 2>/dev/null || true
}
dirs=()
for x in base probes providers evidence conformance cli tests docs workflows cmake completion .ci README.md \
         CMakeLists.txt Makefile; do
  [[ -e $S/$x ]] && dirs+=("$S/$x")
done
hits=$(scan "${dirs[@]}")
[[ -z $hits ]] || fail "references to documents outside the repository:
$hits"
mkdir -p "$d/c"
printf '/* see %s */\n' "PRODUCT"".md" >"$d/c/x.c"
[[ -n $(scan "$d/c") ]] || fail "control: a planted reference is not found"
pass "no comment or doc points outside the repository (${#dirs[@]} places searched)"
