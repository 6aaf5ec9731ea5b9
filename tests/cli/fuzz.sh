# Fuzzes the bundle loader (tests/fuzz/fuzz-bundle.c) for a short while:
# builds it with clang + libFuzzer in its own build directory and runs it
# for AGSBX_FUZZ_SECONDS (default 60) from the fixture bundles. Any crash,
# sanitizer report or broken property fails the test.
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

command -v clang >/dev/null || skip clang 1 "clang not installed (apt-get install clang)"
T=$(t_tmpdir fuzz)
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$T/probe.c"
clang -fsanitize=fuzzer "$T/probe.c" -o "$T/probe" 2>"$T/err" ||
  skip libFuzzer 1 "clang cannot link -fsanitize=fuzzer (apt-get install libclang-rt-14-dev): $(head -1 "$T/err")"

export AGSBX_FUZZ_BUILD_DIR=$AGSBX_BUILD_DIR/fuzz-build
if ! out=$(bash "$AGSBX_SOURCE_DIR/tests/fuzz/run.sh" "${AGSBX_FUZZ_SECONDS:-60}" 2>&1); then
  echo "$out" | tail -n 60 >&2
  fail "fuzzing found a problem (artifacts in $AGSBX_FUZZ_BUILD_DIR/fuzz-artifacts)"
fi
echo "$out" | grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' || true
pass "fuzz-bundle ran ${AGSBX_FUZZ_SECONDS:-60}s without a finding"
