#!/usr/bin/env bash
# Runs after every other test (ctest DEPENDS): nothing the suite started may
# still be running — no process of the unprivileged test user, no payload
# marker process, no test dockerd, no container shim of ours.
source "$(dirname "$0")/../lib/common.sh"

scan() {
  problems=()
  if id -u "$AGSBX_TEST_USER" >/dev/null 2>&1; then
    left=$(user_processes "$AGSBX_TEST_USER")
    [[ -z $left ]] || problems+=("processes of $AGSBX_TEST_USER: $left")
  fi
  local m p cmd pids
  for m in agsbx-marker- /tmp/agsbx-dk- agsbx-payload; do
    pids=$(marker_processes "$m" | grep -vx "$$" || true)
    for p in $pids; do
      [[ $p == "$BASHPID" ]] && continue
      cmd=$({ tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null || true)
      [[ -n $cmd && $cmd != *zz-no-leftovers* && $cmd != *marker_processes* ]] && problems+=("$m: $p $cmd")
    done
  done
  return 0
}

# A runtime's own clean-up (containerd's "shim delete", "runsc delete")
# may still be finishing when the last test returns: only what is still
# there after a few seconds is a leftover.
for attempt in 1 2 3 4 5 6 7 8 9 10; do
  scan
  [[ ${#problems[@]} -eq 0 ]] && break
  sleep 0.5
done
if [[ ${#problems[@]} -gt 0 ]]; then
  printf '%s\n' "${problems[@]}" >&2
  fail "leftover processes after the suite"
fi
pass "no leftover process after the suite"
