#!/usr/bin/env bash
# The portability floor: every translation unit of the tree compiles with
# tests/portability/floor.h force-included, i.e. against the API surface of
# jansson 2.13 and libcurl 7.81 (newer calls poisoned, version macros
# lowered). A direct newer call makes this fail (checked on a probe file).
# CMake states the floor in pkg_check_modules (jansson>=2.13, libcurl>=7.81).
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir floor)
cd "$AGSBX_SOURCE_DIR"
CC=${CC:-cc}
flags=(-std=gnu11 -fsyntax-only -D_GNU_SOURCE -Wall -Werror=implicit-function-declaration
       -I. -I"$AGSBX_BUILD_DIR" -include tests/portability/floor.h
       $(pkg-config --cflags jansson libcurl libsodium check))

# The probe: the floor header really refuses the newer API.
cat >"$d/probe.c" <<'C'
#include <jansson.h>
int probe(json_t *o);
int probe(json_t *o) { return json_object_getn(o, "a", 1) != NULL; }
C
"$CC" "${flags[@]}" "$d/probe.c" 2>"$d/probe.err" && fail "floor.h does not poison json_object_getn"
grep -q poisoned "$d/probe.err" || fail "probe failed for another reason: $(head -3 "$d/probe.err")"
cat >"$d/probe2.c" <<'C'
#include <curl/curl.h>
void probe(CURL *c);
void probe(CURL *c) { curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http"); }
C
"$CC" "${flags[@]}" "$d/probe2.c" 2>/dev/null && fail "floor.h does not poison CURLOPT_PROTOCOLS_STR"

n=0
while IFS= read -r f; do
  "$CC" "${flags[@]}" "$f" 2>"$d/err" || { head -20 "$d/err" >&2; fail "$f does not compile against the floor"; }
  n=$((n + 1))
done < <(git ls-files --cached --others --exclude-standard '*.c' 2>/dev/null || find base probes providers evidence conformance cli tests -name '*.c')
[[ $n -gt 50 ]] || fail "only $n translation units found"
pass "$n translation units compile against jansson 2.13 / libcurl 7.81"

grep -q 'jansson>=2.13' CMakeLists.txt && grep -q 'libcurl>=7.81' CMakeLists.txt \
  || fail "CMakeLists.txt does not state the floor versions"
pass "CMake checks the floor versions"
