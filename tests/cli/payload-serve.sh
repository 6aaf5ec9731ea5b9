#!/usr/bin/env bash
# `agsbx-payload serve`, the execution server of the gvisor provider's shared
# containers (conformance/payload/serve.c, docs/payload.md), driven on the
# host: its greeting, exit codes and signals, the environment overlay, the
# directory, no descriptor beyond 0-2, F for what cannot start, whole
# output on both streams, stdin at EOF, a session per program, executions
# side by side, "held" output, EOF ending it, malformed requests ending it.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

P=$AGSBX_BUILD_DIR/agsbx-payload
[[ -x $P ]] || fail "payload not built: $P"
command -v python3 >/dev/null || skip python3 1 "python3 is not installed"
T=$(t_tmpdir payload-serve)
t_on_exit "rm -rf '$T'"
python3 "$AGSBX_SOURCE_DIR/tests/cli/lib-payload-serve.py" "$P" "$T" || fail "payload serve: see above"
pass "payload serve"
