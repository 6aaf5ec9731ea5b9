#!/usr/bin/env bash
# workflows/github/agsbx-evidence-ci.yml (the project's own CI): valid YAML,
# runs .ci/run, and uploads exactly the reports the coverage target writes;
# .ci/run's three steps (sanitizer suite, coverage suite, reports) each
# reach the exit status.
source "$(dirname "$0")/../lib/common.sh"
W=$AGSBX_SOURCE_DIR/workflows/github/agsbx-evidence-ci.yml
$PY -c 'import yaml' 2>/dev/null || fail "python3-yaml missing (workflows/install-deps.sh installs it)"

$PY - "$W" "$AGSBX_SOURCE_DIR/CMakeLists.txt" <<'PY' || fail "CI workflow template checks"
import re, sys, yaml
w = yaml.safe_load(open(sys.argv[1]))
cmake = open(sys.argv[2]).read()
job = w["jobs"]["test-and-coverage"]
assert job["timeout-minutes"] <= 90, job["timeout-minutes"]
steps = job["steps"]
assert any(s.get("run", "").strip() == "./.ci/run" for s in steps), "no .ci/run step"
up = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@"))
paths = [p.strip() for p in up["with"]["path"].split("\n") if p.strip()]
want = ["build-coverage/coverage.xml", "build-coverage/coverage-summary.json",
        "build-coverage/coverage.txt", "build-coverage/coverage-html/"]
assert sorted(paths) == sorted(want), paths
# every uploaded report is one the coverage target writes
for name in ("coverage.xml", "coverage-summary.json", "coverage.txt", "coverage-html/index.html"):
    assert "${cov}/" + name in cmake, name
PY
pass "the CI template runs .ci/run and uploads the four coverage reports the build writes"

R=$AGSBX_SOURCE_DIR/.ci/run
# Three steps, each gating: the sanitizer suite (no retries), the suite in
# the instrumented build, the reports.
grep -Eq '^step "make test \(sanitizers, -Werror\)" *\\?$' "$R" || fail ".ci/run has no sanitizer make test step"
grep -Eq '^  make test BUILD=build-ci CMAKE_FLAGS="-DAGSBX_SANITIZE=ON -DAGSBX_WERROR=ON"' "$R" ||
  fail ".ci/run's make test does not run in the sanitizer build with -Werror"
grep -Eq '^step "make coverage-tests[^"]*" make coverage-tests( |$)' "$R" || fail ".ci/run has no make coverage-tests step"
grep -Eq '^step "make coverage-report" make coverage-report$' "$R" || fail ".ci/run has no report step"
for v in test_rc covtest_rc cov_rc; do
  grep -q "^$v=\$step_rc" "$R" || fail ".ci/run does not keep \$$v"
  grep -q "exit \"\$$v\"" "$R" || fail ".ci/run does not exit with \$$v"
done
grep -Eq '^coverage-tests:' "$AGSBX_SOURCE_DIR/Makefile" || fail "Makefile has no coverage-tests target"
pass ".ci/run: the sanitizer suite, the coverage suite and its reports each gate"

# The instrumented build's hang guards: Check's tcase timeouts doubled there
# (its hot loops cost several times the CPU), through ctest's environment.
if grep -q '^AGSBX_COVERAGE:BOOL=ON$' "$AGSBX_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
  [[ ${CK_TIMEOUT_MULTIPLIER:-1} -ge 2 ]] || fail "coverage build: CK_TIMEOUT_MULTIPLIER is ${CK_TIMEOUT_MULTIPLIER:-unset}, want >= 2"
  pass "coverage build: the Check suites' timeouts are doubled (CK_TIMEOUT_MULTIPLIER=$CK_TIMEOUT_MULTIPLIER)"
fi
