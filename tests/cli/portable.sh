#!/usr/bin/env bash
# The portable subset (cmake -DAGSBX_PORTABLE=ON, the default off Linux):
# configured and built here with tests/portability/posix.h force-included,
# so the code sees a platform that is neither Linux nor macOS and every
# Linux-only call or header is a compile error. The result is then used for
# real: probe (through the POSIX runner, base/runner-posix.c), verify,
# report, diff, matrix, attest, keygen, schema; collect is not part of it.
# (The macOS job of the workflow template is where the Apple branches build.)
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir portable)
S=$AGSBX_SOURCE_DIR
H=$S/tests/portability/posix.h
B=$AGSBX_BIN

# The boundary check itself refuses Linux-only code.
printf '#include <sys/eventfd.h>\nint f(void);\nint f(void) { return eventfd(0, 0); }\n' >"$d/probe.c"
cc -fsyntax-only -D_GNU_SOURCE -include "$H" "$d/probe.c" 2>/dev/null && fail "posix.h lets eventfd through"
printf 'int f(void);\nint f(void) {\n#ifdef __linux__\nreturn 1;\n#endif\nreturn 0; }\n' >"$d/probe2.c"
cc -E -D_GNU_SOURCE -include "$H" "$d/probe2.c" 2>/dev/null >"$d/probe2.i"
grep -q 'return 1' "$d/probe2.i" && fail "posix.h leaves __linux__ defined"

# Its own build directory in the build tree, kept between runs as the fuzz
# build's is: a rerun rebuilds what changed (a fresh clone builds it all).
b=$AGSBX_BUILD_DIR/portable-build
cmake -S "$S" -B "$b" -DAGSBX_PORTABLE=ON -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_C_FLAGS=-include $H -Werror=implicit-function-declaration -Wno-error" >"$d/cfg.log" 2>&1 \
  || { tail "$d/cfg.log" >&2; fail "portable configure failed"; }
cmake --build "$b" -j2 --target agsbx-evidence >"$d/build.log" 2>&1 \
  || { grep -E 'error|poisoned' "$d/build.log" | head -20 >&2; fail "the portable subset does not build without Linux-only API"; }
P=$b/agsbx-evidence
pass "portable subset builds with Linux-only API poisoned and __linux__ undefined"

# The POSIX runner itself, linked from the portable build's base library.
cc -std=gnu11 -D_GNU_SOURCE -I"$S" -o "$d/runner-check" "$S/tests/portability/runner-posix-check.c" \
  "$b/libagsbx_base.a" $(pkg-config --libs jansson libsodium libcurl) -lpthread 2>"$d/cc.log" \
  || { cat "$d/cc.log" >&2; fail "runner check does not build"; }
nm "$b/libagsbx_base.a" >"$d/nm.txt"
grep -q '^runner-posix.c.o:' "$d/nm.txt" || fail "the portable build does not use runner-posix.c"
grep -q '^runner.c.o:' "$d/nm.txt" && fail "the portable build links the Linux runner"
"$d/runner-check" || fail "POSIX runner"
pass "POSIX runner: status, streams, cap, PATH, exec failure, timeout, cancel, group cleanup"

"$P" --help >"$d/help"
for c in probe verify report diff matrix attest keygen schema; do
  grep -q "^  $c " "$d/help" || fail "portable build lacks $c"
done
grep -q "^  collect " "$d/help" && fail "portable build lists collect, which needs the conformance core"
expect_rc 2 "$P" collect 2>/dev/null

# probe through the POSIX runner: tool versions are read by running them.
"$P" probe --json >"$d/probe.json"
jq -e '.schema and .kernel and .privilege' "$d/probe.json" >/dev/null || fail "portable probe: $(head -c 300 "$d/probe.json")"
if have bwrap; then
  [[ $(jq -r '.bubblewrap.version.value' "$d/probe.json") == "$(bwrap --version | awk '{print $2}')" ]] \
    || fail "POSIX runner: bwrap --version not captured: $(jq -c .bubblewrap.version "$d/probe.json")"
fi
pass "probe runs through the POSIX runner"

# The maintainer commands on real bundles (made by the Linux build).
K=$S/tests/data/bundles/keys
"$P" verify "$S/tests/data/bundles/signed.json" --key "$K/fixture_ed25519.pub" >/dev/null || fail "portable verify"
"$B" collect --provider landlock --unsigned -q -o "$d/ll.json"
"$P" report "$d/ll.json" --format markdown | grep -q 'landlock' || fail "portable report"
"$P" attest "$d/ll.json" -o "$d/p.st.json" || fail "portable attest exited $?"
"$B" attest "$d/ll.json" -o "$d/l.st.json"
cmp -s "$d/p.st.json" "$d/l.st.json" || fail "portable attest differs from the Linux build's: $(diff "$d/p.st.json" "$d/l.st.json" | head -5)"
"$P" diff "$d/ll.json" "$d/ll.json" | grep -q '^no differences$' || fail "portable diff"
[[ $("$P" matrix "$d/ll.json" --format badge | jq -r .color) == brightgreen ]] || fail "portable matrix"
"$P" keygen -f "$d/key" >/dev/null 2>&1 && [[ -s $d/key.pub ]] || fail "portable keygen"
"$P" schema evidence-bundle | jq -e '."$schema"' >/dev/null || fail "portable schema"
pass "verify, report, attest, diff, matrix, keygen, schema from the portable build"

# What the workflows' macOS leg does today (docs/portability.md): the
# action's collect step with the portable build records the host facts in
# the step summary, says so in a ::notice::, and outputs no bundle.
: >"$d/gh.out"; : >"$d/gh.summary"
env AGSBX_BIN="$P" GITHUB_OUTPUT="$d/gh.out" GITHUB_STEP_SUMMARY="$d/gh.summary" RUNNER_TEMP="$d" \
  INPUT_OUTPUT_DIR="$d/out-mac" INPUT_PROVIDERS=seatbelt bash "$S/workflows/action/run.sh" >"$d/gh.cmds" 2>"$d/gh.err" \
  || { cat "$d/gh.err" >&2; fail "run.sh with the portable build failed"; }
grep -q '^::notice title=agsbx-evidence::collect is not in this platform.s build yet .*no bundle, no Seatbelt evidence' "$d/gh.cmds" \
  || fail "portable run.sh: no notice: $(cat "$d/gh.cmds")"
grep -q '^### agsbx-evidence: host facts (portable build, no collect)' "$d/gh.summary" || fail "portable run.sh: no host facts in the summary"
sed -n '/^```json$/,/^```$/p' "$d/gh.summary" | sed '1d;$d' | jq -e 'type == "object"' >/dev/null || fail "portable run.sh: the host facts are not JSON"
grep -qx 'status=0' "$d/gh.out" && ! grep -q '^bundle=' "$d/gh.out" || fail "portable run.sh outputs: $(cat "$d/gh.out")"
[[ -z $(ls -A "$d/out-mac" 2>/dev/null) ]] || fail "portable run.sh wrote a bundle"
pass "the macOS leg's action step: host facts in the summary, a notice, no bundle"
