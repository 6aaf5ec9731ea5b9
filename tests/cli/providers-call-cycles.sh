#!/usr/bin/env bash
# No call cycle between the files of providers/: every symbol a provider
# object uses (nm -u) points at the object that defines it, and tsort must
# order that file graph without a loop. The declared providers' files
# used to call each other (external.c's per-slot entry points into
# session.c and wrap.c, and back for the instance); every op receives
# self now, so none has to.
#
# Usage: providers-call-cycles.sh            self-test, then the build's objects
#        providers-call-cycles.sh OBJ_DIR    that directory's *.o only
# The self-test proves the check fails on two objects calling each other.
. "$(dirname "$0")/../lib/common.sh"

have nm || skip nm 1 "binutils is not installed"
have tsort || skip tsort 1 "coreutils is not installed"

# Prints "caller callee" for each cross-file reference under $1, then any
# loop tsort finds; returns 1 on a loop.
check_dir() {
  local dir=$1 defs edges loops
  defs=$(find "$dir" -name '*.o' -print0 | sort -z | while IFS= read -r -d '' o; do
    nm -g --defined-only "$o" | awk -v f="${o#"$dir"/}" 'NF == 3 { print $3, f }'
  done)
  edges=$(find "$dir" -name '*.o' -print0 | sort -z | while IFS= read -r -d '' o; do
    nm -u "$o" | awk -v f="${o#"$dir"/}" '{ print $NF, f }'
  done | awk 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2, def[$1] }' \
      <(printf '%s\n' "$defs") - | sort -u)
  loops=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null | grep -v '^tsort: -: input contains a loop:$' || true)
  if [[ -n $loops ]]; then
    printf 'call cycle between:\n%s\n' "$loops"
    return 1
  fi
  printf '%s\n' "$edges" | grep -c . || true
}

if [[ $# -ge 1 ]]; then
  check_dir "$1"
  exit
fi

# Self-test: a.c and b.c call each other.
t=$(t_tmpdir cycles)
have cc || skip cc 1 "no C compiler for the self-test"
printf 'int b(void);\nint a(void) { return b(); }\n' >"$t/a.c"
printf 'int a(void);\nint b(void) { return a(); }\n' >"$t/b.c"
printf 'int a(void);\nint c(void) { return a(); }\n' >"$t/c.c"
mkdir "$t/obj"
for f in a b c; do cc -c -o "$t/obj/$f.o" "$t/$f.c"; done
out=$(check_dir "$t/obj") && fail "a cycle a.o <-> b.o went unnoticed"
grep -q 'a.o' <<<"$out" && grep -q 'b.o' <<<"$out" || fail "the cycle report does not name a.o and b.o: $out"
rm "$t/obj/b.o"
check_dir "$t/obj" >/dev/null || fail "no cycle without b.o, yet one was reported"
pass "a call cycle between two objects fails the check"

objs="$AGSBX_BUILD_DIR/providers/CMakeFiles/agsbx_providers.dir"
[[ -d $objs ]] || skip "provider objects" 1 "none at $objs (build first)"
n=$(check_dir "$objs") || { printf '%s\n' "$n" >&2; fail "call cycle between files of providers/"; }
pass "no call cycle between the files of providers/ ($n cross-file references)"
