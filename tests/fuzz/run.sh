#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz-*.c) in their own build
# directory and fuzzes each for DURATION, one after another (one core),
# seeded with the fixture bundles (fuzz-bundle) or tests/fuzz/seeds/<name>/
# plus whatever earlier runs learnt (<build>/fuzz-corpus/<name>).
#   tests/fuzz/run.sh DURATION [TARGET...]    (default: every target)
# DURATION: seconds (60, 60s) or minutes (10m: the issue's 10-minute table).
# Environment: AGSBX_FUZZ_BUILD_DIR (default <source>/build-fuzz),
#              AGSBX_FUZZ_JOBS (parallel build jobs, default 2).
# Exit 0 when no target found anything; 1 with the artifacts named; 2 when
# the build failed or DURATION is not one. Prints one "fuzz: NAME: N execs in Ss, ..." line each.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
duration=${1:-60}
shift || true
[[ $duration =~ ^0*[1-9][0-9]*[ms]?$ ]] || { echo "run.sh: bad duration '$duration' (N, Ns or Nm)" >&2; exit 2; }
seconds=$(( 10#${duration%[ms]} ))
[[ $duration == *m ]] && seconds=$(( seconds * 60 ))
build=${AGSBX_FUZZ_BUILD_DIR:-$src/build-fuzz}
export AGSBX_SOURCE_DIR=$src # fuzz-signers reads the signed fixture

mkdir -p "$build"
log=$build/fuzz-build.log
# -O1 with line tables only, as libFuzzer's and ASan's docs suggest: the
# smoke run in `make test` builds this from scratch on a fresh machine, and
# -O2 -g cost 15% more CPU for the same findings (reports keep file:line).
if ! { cmake -S "$src" -B "$build" -DAGSBX_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" &&
       cmake --build "$build" --target fuzz-all -j"${AGSBX_FUZZ_JOBS:-2}"; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "fuzz build failed (log: $log)" >&2
  exit 2
fi

targets=("$@")
if [[ ${#targets[@]} == 0 ]]; then
  for f in "$src"/tests/fuzz/fuzz-*.c; do targets+=("$(basename "$f" .c)"); done
fi
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
status=0
for t in "${targets[@]}"; do
  name=${t#fuzz-}
  # libFuzzer writes new inputs into the first corpus directory: the
  # learnt corpus, kept across runs; the seeds stay as they are.
  corpus=$build/fuzz-corpus/$name
  mkdir -p "$corpus"
  seeds=()
  if [[ $name == bundle ]]; then
    seeds=("$src/tests/data/bundles" "$src/tests/data/bundles/invalid")
  elif [[ -d $src/tests/fuzz/seeds/$name ]]; then
    seeds=("$src/tests/fuzz/seeds/$name")
  fi
  # the golden stderr corpus of real bwrap versions
  [[ $name == bwrap-classify && -d $src/tests/data/bwrap-stderr ]] && seeds+=("$src/tests/data/bwrap-stderr")
  dict=()
  [[ -f $src/tests/fuzz/$name.dict ]] && dict=(-dict="$src/tests/fuzz/$name.dict")
  out=$build/fuzz-$name.log
  set +e
  "$build/$t" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 \
    "${dict[@]}" -artifact_prefix="$artifacts/$name-" -print_final_stats=1 "$corpus" "${seeds[@]}" >"$out" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -1)
  newu=$(sed -n 's/^stat::new_units_added: *//p' "$out" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$out" | tail -1 || true)
  if [[ $rc != 0 ]]; then
    status=1
    echo "fuzz: $name: FOUND A PROBLEM after ${execs:-?} execs (log $out, artifacts $artifacts/$name-*)"
    grep -m1 -E 'ERROR|SUMMARY|==[0-9]+==' "$out" || tail -n 5 "$out"
  else
    echo "fuzz: $name: ${execs:-?} execs in ${seconds}s, ${cov:-cov ?}, ${newu:-0} new units"
  fi
done
exit "$status"
