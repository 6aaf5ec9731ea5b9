#!/usr/bin/env bash
# The git commit in the binary is read at build time (cmake/git-commit.cmake):
# --version names the commit the build read; the generated
# file follows a new commit, is left alone (no rebuild) when nothing
# changed, and says "unknown" for a tree that is not its own checkout (a
# tarball, even one unpacked inside another repository).
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir git-commit)
command -v git >/dev/null || fail "git missing (a build dependency)"
S=$AGSBX_SOURCE_DIR/cmake/git-commit.cmake
gen() { cmake -DSOURCE_DIR="$1" -DOUT="$2" -P "$S"; }
commit_in() { sed -n 's/.*return "\([^"]*\)".*/\1/p' "$1"; }

# The binary under test embeds what its build generated, and that is a
# commit of this tree (or "unknown" when the tree is not a checkout). Not
# compared with HEAD: a commit made after the build (during a long test
# run) would fail it for nothing.
v=$("$AGSBX_BIN" --version)
g=$AGSBX_BUILD_DIR/generated/git-commit.c
[[ -f $g ]] || fail "no generated $g"
want=$(commit_in "$g")
[[ $v == *"($want)" ]] || fail "--version: '$v', but the build generated $want"
if [[ $want != unknown ]]; then
  git -C "$AGSBX_SOURCE_DIR" cat-file -e "$want^{commit}" 2>/dev/null || fail "$want is not a commit of $AGSBX_SOURCE_DIR"
elif top=$(git -C "$AGSBX_SOURCE_DIR" rev-parse --show-toplevel 2>/dev/null) &&
     [[ $(realpath "$top") == $(realpath "$AGSBX_SOURCE_DIR") ]]; then
  fail "the source tree is a git checkout, yet the build says unknown"
fi
pass "--version names the commit the build read ($want)"

# A repository of its own: a commit, nothing new, another commit.
r=$d/repo
git init -q "$r"
git -C "$r" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
gen "$r" "$d/c.c"
[[ $(commit_in "$d/c.c") == $(git -C "$r" rev-parse HEAD) ]] || fail "first commit: $(cat "$d/c.c")"
touch -d '2000-01-01' "$d/c.c"
before=$(stat -c %Y "$d/c.c")
gen "$r" "$d/c.c"
[[ $(stat -c %Y "$d/c.c") == "$before" ]] || fail "rewritten although the commit did not change (a needless rebuild)"
git -C "$r" -c user.name=t -c user.email=t@t commit -q --allow-empty -m two
gen "$r" "$d/c.c"
[[ $(commit_in "$d/c.c") == $(git -C "$r" rev-parse HEAD) ]] || fail "not updated after a new commit: $(cat "$d/c.c")"
[[ $(stat -c %Y "$d/c.c") != "$before" ]] || fail "new commit, same file time"
pass "the generated file follows HEAD and is left alone when HEAD did not move"

# A tarball's tree: alone, and unpacked inside another repository.
mkdir -p "$d/tarball" "$r/sub/tree"
gen "$d/tarball" "$d/t.c"
[[ $(commit_in "$d/t.c") == unknown ]] || fail "outside any checkout: $(cat "$d/t.c")"
gen "$r/sub/tree" "$d/n.c"
[[ $(commit_in "$d/n.c") == unknown ]] || fail "inside another repository: took its commit: $(cat "$d/n.c")"
pass "a tree that is not its own checkout says unknown"
