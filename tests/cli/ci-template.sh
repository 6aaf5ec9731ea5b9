#!/usr/bin/env bash
# workflows/github/agsbx-evidence-ci.yml (the project's own CI): valid YAML,
# runs .ci/run, and uploads exactly the reports the coverage target writes;
# .ci/run's second step is make coverage and its status reaches the exit.
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
grep -Eq '^step "make coverage[^"]*" make coverage( |$)' "$R" || fail ".ci/run has no make coverage step"
grep -q 'cov_rc=\$step_rc' "$R" || fail ".ci/run does not keep make coverage's status"
grep -q 'make coverage exited \$cov_rc' "$R" || fail ".ci/run does not report make coverage's status"
grep -q 'exit "\$test_rc"' "$R" || fail ".ci/run does not exit with make test's status"
pass ".ci/run: make coverage is a reported step; make test gates"
