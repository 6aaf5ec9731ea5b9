#!/usr/bin/env bash
# Per-execute latency of Agently's landlock and trusted_local providers,
# direct (in-process upstream call) vs through the Agently adapter, against
# raw fork+exec, in the same run (tests/bench/agently-bench.py).
#
#   tests/bench/agently.sh [BUILD_DIR] [RUNS]      (RUNS default 100)
#
# As root it runs everything as $AGSBX_TEST_USER (default agsbx-test), the
# way a contributor runs it. AGENTLY_SRC defaults to ../shared/thirdparty/agently.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
runs=${2:-100}
user=${AGSBX_TEST_USER:-agsbx-test}
agently=${AGENTLY_SRC:-$src/../shared/thirdparty/agently}
[[ -f $agently/agently/types/data/code_execution.py ]] || { echo "no Agently checkout at $agently" >&2; exit 2; }
[[ -x $build/agsbx-payload ]] || { echo "missing $build/agsbx-payload: build first" >&2; exit 2; }

work=$(mktemp -d /tmp/agsbx-bench-agently-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bench" "$work/cli" "$work/agently" "$work/w"
cp "$src/tests/bench/agently-bench.py" "$work/bench/"
cp "$src/tests/cli/lib-agently-drive.py" "$work/cli/"
cp "$src/providers/external/agently/agently-adapter.py" "$work/"
cp "$build/agsbx-payload" "$work/"
cp -r "$agently/." "$work/agently/"
chmod -R a+rX "$work"
run=()
if [[ $(id -u) == 0 ]]; then
  chown "$user" "$work/w"
  run=(setpriv --reuid "$user" --regid "$user" --init-groups --reset-env env HOME=/tmp PATH=/usr/local/bin:/usr/bin:/bin)
fi
for p in landlock trusted_local; do
  (cd "$work/w" && "${run[@]}" /usr/bin/python3 -B "$work/bench/agently-bench.py" "$p" "$work/agently-adapter.py" \
    "$work/agently" "$work/agsbx-payload" "$work/w" "$runs")
done
