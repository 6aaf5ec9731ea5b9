#!/usr/bin/env bash
# The long fuzzing run (not part of `make test`, whose cli-fuzz smoke gives
# every target a second or two): each libFuzzer target for
# AGSBX_FUZZ_NIGHTLY_SECONDS (default 600, i.e. 10 minutes; or a duration
# run.sh takes, e.g. 10m), one after
# another, keeping the corpus each run learns in <build>/fuzz-corpus for the
# next. Exit 1 when any target finds a crash, a sanitizer report or a broken
# property (artifacts in <build>/fuzz-artifacts); 2 when the build fails.
#   tests/fuzz/nightly.sh [TARGET...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec bash "$here/run.sh" "${AGSBX_FUZZ_NIGHTLY_SECONDS:-600}" "$@"
