#!/usr/bin/env bash
# valgrind memcheck over the Check suites (tests/test-*.c): builds them
# without sanitizers (ASan and valgrind exclude each other) in their own
# build directory and runs each under memcheck. Reports, per suite, the
# memcheck errors (invalid reads/writes, uninitialised values, definite and
# indirect leaks) and, apart, whether the suite's own tests passed (Check's
# timeouts are stretched 20x; a timing-sensitive test may still fail).
#   tests/valgrind.sh [SUITE...]          (default: every suite)
# Environment: AGSBX_VALGRIND_BUILD_DIR (default <source>/build-valgrind),
#              AGSBX_VALGRIND_JOBS (build jobs, default 2).
# Exit 0 when memcheck found nothing, 1 when it did, 2 when the build failed.
# Known limit of memcheck, not of the code: it runs the runner's
# clone(CLONE_VM | CLONE_VFORK) child as a fork (as it does glibc's
# posix_spawn), so an exec failure the child records in the shared plan
# never reaches the parent. The tests that assert a spawn errno
# (test-evidence-render test_attachment_run, test-evidence
# test_sign_through_ssh_keygen_fails_closed, test-bubblewrap
# test_probe_spawn_error) fail under it, and what their failed assertion
# left allocated is reported as lost. test-bubblewrap test_probe_timeout (a
# 1 ms deadline) also fails under memcheck; not looked into.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${AGSBX_VALGRIND_BUILD_DIR:-$src/build-valgrind}
command -v valgrind >/dev/null || { echo "valgrind not installed (apt-get install valgrind)" >&2; exit 2; }

suites=("$@")
if [[ ${#suites[@]} == 0 ]]; then
  for f in "$src"/tests/test-*.c; do suites+=("$(basename "$f" .c)"); done
fi
mkdir -p "$build"
if ! { cmake -S "$src" -B "$build" -DAGSBX_SANITIZE=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build "$build" -j"${AGSBX_VALGRIND_JOBS:-2}"; } >"$build/valgrind-build.log" 2>&1; then
  tail -n 30 "$build/valgrind-build.log" >&2
  exit 2
fi

export AGSBX_BIN=$build/agsbx-evidence AGSBX_BUILD_DIR=$build AGSBX_SOURCE_DIR=$src
# Check's per-test timeouts, stretched for valgrind's slowdown
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-20}
bad=0
for s in "${suites[@]}"; do
  log=$build/valgrind-$s.log
  rm -f "$log".* # one log per process: only this run's count
  set +e
  # Check forks a child per test: memcheck follows forks by itself; programs
  # the tests exec (payload, bwrap, dockerd, ssh-keygen) are not ours to check.
  (cd "$build" && valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
     --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
     --trace-children=no --child-silent-after-fork=no --log-file="$log.%p" --num-callers=30 \
     "./$s" >"$log.out" 2>&1)
  rc=$?
  set -e
  errors=0
  for f in "$log".[0-9]*; do
    n=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$f" | tail -1)
    errors=$(( errors + ${n:-0} ))
  done
  procs=$(ls "$log".[0-9]* 2>/dev/null | wc -l)
  tests=$(grep -E '^[0-9]+%: Checks' "$log.out" | tail -1 || true)
  if (( errors > 0 )); then
    bad=1
    echo "valgrind: $s: $errors memcheck errors in $procs processes (logs $log.*) ; ${tests:-no summary}"
    grep -l 'ERROR SUMMARY: [1-9]' "$log".[0-9]* | head -3 | while read -r f; do
      grep -m 8 -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall|[0-9,]+ bytes in)|^==[0-9]+==    (at|by) ' "$f"
    done
  else
    echo "valgrind: $s: clean ($procs processes) ; ${tests:-no summary} (exit $rc)"
  fi
done
exit "$bad"
