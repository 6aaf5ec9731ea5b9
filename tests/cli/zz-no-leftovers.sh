#!/usr/bin/env bash
# Runs after every other test (ctest DEPENDS): nothing the suite started may
# still be running — no process of the unprivileged test user, no payload
# marker process, no test dockerd, no container shim of ours.
source "$(dirname "$0")/../lib/common.sh"

problems=()
if id -u "$AGSBX_TEST_USER" >/dev/null 2>&1; then
  left=$(user_processes "$AGSBX_TEST_USER")
  [[ -z $left ]] || problems+=("processes of $AGSBX_TEST_USER: $left")
fi
for m in agsbx-marker- /tmp/agsbx-dk- agsbx-payload; do
  pids=$(marker_processes "$m" | grep -vx "$$" || true)
  for p in $pids; do
    # Ignore ourselves and our own pipeline.
    [[ $p == "$BASHPID" ]] && continue
    cmd=$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null || true)
    [[ -n $cmd && $cmd != *zz-no-leftovers* && $cmd != *marker_processes* ]] && problems+=("$m: $p $cmd")
  done
done
if [[ ${#problems[@]} -gt 0 ]]; then
  printf '%s\n' "${problems[@]}" >&2
  fail "leftover processes after the suite"
fi
pass "no leftover process after the suite"
