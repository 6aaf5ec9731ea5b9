#!/usr/bin/env bash
# The unprivileged user the tests switch to with setpriv (AGSBX_TEST_USER,
# default agsbx-test), so that a newcomer's `make test` as root runs every
# suite the host supports instead of skipping the unprivileged ones. As
# root: created when missing (a normal account with a home directory, no
# password, no sudo, no extra group). Not root: nothing to do; the suites
# that need it say so when they skip.
set -euo pipefail
user=${AGSBX_TEST_USER:-agsbx-test}
if [[ $(id -u) != 0 ]]; then
  echo "agsbx-evidence: not root: the test user '$user' is not created; suites that switch to it will skip" >&2
  exit 0
fi
if ! id -u "$user" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/bash "$user"
  echo "agsbx-evidence: created the unprivileged test user '$user'" >&2
fi
# Rootless podman (tests/cli/wrap-podman.sh) needs subordinate ids; useradd
# adds them only where /etc/subuid already existed when the user was made.
# A range of its own, above every range already given (two users sharing
# subordinate ids could reach each other's files).
if ! grep -q "^$user:" /etc/subuid 2>/dev/null || ! grep -q "^$user:" /etc/subgid 2>/dev/null; then
  start=$(cat /etc/subuid /etc/subgid 2>/dev/null | awk -F: 'NF == 3 && $2 + $3 > m { m = $2 + $3 } END { print (m > 100000 ? m : 100000) }')
  end=$((start + 65535))
  grep -q "^$user:" /etc/subuid 2>/dev/null || usermod --add-subuids "$start-$end" "$user"
  grep -q "^$user:" /etc/subgid 2>/dev/null || usermod --add-subgids "$start-$end" "$user"
  echo "agsbx-evidence: gave '$user' subordinate ids $start-$end" >&2
fi
