#!/usr/bin/env bash
# Builds the libFuzzer target in its own build directory and fuzzes the
# bundle loader (and what runs on loaded bundles) for N seconds, seeded with
# the fixture bundles.
#   tests/fuzz/run.sh [SECONDS]          (default 60)
# Environment: AGSBX_FUZZ_BUILD_DIR (default <source>/build-fuzz),
#              AGSBX_FUZZ_JOBS (parallel build jobs, default 2).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
seconds=${1:-60}
build=${AGSBX_FUZZ_BUILD_DIR:-$src/build-fuzz}

mkdir -p "$build"
log=$build/fuzz-build.log
if ! { cmake -S "$src" -B "$build" -DAGSBX_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build "$build" --target fuzz-bundle -j"${AGSBX_FUZZ_JOBS:-2}"; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "fuzz build failed (log: $log)" >&2
  exit 2
fi

# libFuzzer writes new inputs into the first corpus directory: use a copy
# so the fixtures stay as they are.
corpus=$(mktemp -d /tmp/agsbx-fuzz-corpus-XXXXXX)
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
trap 'rm -rf "$corpus"' EXIT
find "$src/tests/data/bundles" -type f -name '*.json' -exec cp {} "$corpus/" \;
# a bigger corpus of earlier runs, when there is one
extra=$build/fuzz-corpus
mkdir -p "$extra"

echo "fuzzing for ${seconds}s (artifacts in $artifacts)" >&2
"$build/fuzz-bundle" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 \
  -dict="$src/tests/fuzz/bundle.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
  "$corpus" "$extra" 2>&1 | tail -n 30
status=${PIPESTATUS[0]}
# keep what was learnt for next time
cp -n "$corpus"/* "$extra/" 2>/dev/null || true
exit "$status"
