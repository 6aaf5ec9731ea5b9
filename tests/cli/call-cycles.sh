#!/usr/bin/env bash
# No call cycle between the files of any production folder (base, probes,
# providers, evidence, conformance with the payload and the simulation
# helper, cli): for every program or library the build makes, every
# symbol an object uses (nm -u) points at the object that defines it, and
# tsort must order that file graph without a loop. Once cycles ran through
# providers/external (per-slot entry points), base/runner-common.c (it
# initialised the runner), evidence/errors.c (wrappers around verify.c),
# the payload (payload.c held both the op table and the emitter the ops
# use) and cli/cli.c (the dispatcher held the helpers the commands use).
#
# Usage: call-cycles.sh            self-test, then the build's objects
#        call-cycles.sh OBJ_DIR    that directory's *.o only
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

# One graph per target (CMakeFiles/<target>.dir): objects of different
# programs may define the same name (main, the payload's emitter).
b=$AGSBX_BUILD_DIR
[[ -d $b/CMakeFiles/agsbx_base.dir ]] || skip "build objects" 1 "none under $b (build first)"
# The folders that must be there, so a renamed target cannot drop out.
for t in CMakeFiles/agsbx_base.dir CMakeFiles/agsbx_probes.dir providers/CMakeFiles/agsbx_providers.dir \
	 evidence/CMakeFiles/agsbx_evidence.dir conformance/CMakeFiles/agsbx_conformance.dir \
	 conformance/CMakeFiles/agsbx-payload.dir cli/CMakeFiles/agsbx_cli.dir; do
  [[ -d $b/$t ]] || fail "no objects at $b/$t: the check would miss a production folder"
done
# Nested builds the suite makes (fuzz-build, portable-build) are other
# configurations of the same sources, built when their tests run: their
# objects may predate this build's sources.
checked=0
while IFS= read -r -d '' dir; do
  [[ -n $(find "$dir" -name '*.o' -print -quit) ]] || continue
  t=${dir#"$b"/}
  n=$(check_dir "$dir") || { printf '%s\n' "$n" >&2; fail "call cycle between files of $t"; }
  echo "# $t: $n cross-file references, no cycle"
  checked=$((checked + 1))
done < <(find "$b" \( -path "$b/tests" -o -path "$b/*-build" \) -prune -o -type d -path '*/CMakeFiles/*.dir' -print0 | sort -z)
[[ $checked -ge 7 ]] || fail "only $checked targets with objects under $b"
pass "no call cycle between the files of any of $checked production targets"
rc=0
