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
