# Fuzz smoke: builds every libFuzzer target (tests/fuzz/fuzz-*.c) with clang
# in its own build directory and runs them for AGSBX_FUZZ_SECONDS in total
# (default 10, shared between the targets, at least 1 s each) from their
# seeds. The long runs are tests/fuzz/nightly.sh (10 minutes per target).
# Any crash, sanitizer report or broken property fails the test.
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

command -v clang >/dev/null || skip clang 1 "clang not installed (apt-get install clang)"
T=$(t_tmpdir fuzz)
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$T/probe.c"
clang -fsanitize=fuzzer "$T/probe.c" -o "$T/probe" 2>"$T/err" ||
  skip libFuzzer 1 "clang cannot link -fsanitize=fuzzer (apt-get install libclang-rt-14-dev): $(head -1 "$T/err")"

total=${AGSBX_FUZZ_SECONDS:-10}
n=$(find "$AGSBX_SOURCE_DIR/tests/fuzz" -maxdepth 1 -name 'fuzz-*.c' | wc -l)
per=$(( total / n ))
(( per >= 1 )) || per=1
export AGSBX_FUZZ_BUILD_DIR=$AGSBX_BUILD_DIR/fuzz-build
# A duration is N, Ns or Nm (the 10-minute table: run.sh 10m); anything
# else is refused before building.
for bad in 0 0m x 2h 1xm -5; do
  rc=0
  err=$(bash "$AGSBX_SOURCE_DIR/tests/fuzz/run.sh" "$bad" 2>&1) || rc=$?
  [[ $rc == 2 && $err == *"bad duration '$bad'"* ]] || fail "run.sh $bad: status $rc, '$err' (want 2, bad duration)"
done
# the seconds-suffix form, as the minutes one is parsed
if ! out=$(bash "$AGSBX_SOURCE_DIR/tests/fuzz/run.sh" "${per}s" 2>&1); then
  echo "$out" | tail -n 60 >&2
  fail "fuzzing found a problem (artifacts in $AGSBX_FUZZ_BUILD_DIR/fuzz-artifacts)"
fi
echo "$out"
[[ $(grep -c '^fuzz: .* execs in ' <<<"$out") == "$n" ]] || fail "not every one of the $n targets ran"
pass "$n fuzz targets ran ${per}s each without a finding"
