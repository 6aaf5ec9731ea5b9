#!/usr/bin/env bash
# Installs the Debian packages agsbx-evidence needs, and only those missing.
#   install-deps.sh            build dependencies
#   install-deps.sh --test     build + test dependencies (mechanisms, checkers)
# apt-get as root, through sudo otherwise; other distributions get a clear
# message with the package list. Never changes host security settings.
set -euo pipefail

build_pkgs=(cmake make gcc libc6-dev pkg-config check libjansson-dev libcurl4-openssl-dev
            libsodium-dev libssl-dev gcovr git)
test_pkgs=(bubblewrap runsc docker.io jq openssh-client python3 python3-jsonschema util-linux
           curl hyperfine clang libclang-rt-14-dev procps strace iproute2
           libxml2-utils python3-yaml file tar valgrind dpkg-dev firejail python3-typing-extensions
           cmark-gfm time lintian python3-pytest python3-pytest-asyncio proot dbus podman uidmap)
# action-validator (tests/cli/workflows.sh) comes from the npm registry; npm
# itself from Debian unless a node installation already provides it.
npm_pkgs=(@action-validator/cli@0.6.0 @action-validator/core@0.6.0)

want=("${build_pkgs[@]}")
if [[ "${1:-}" == "--test" ]]; then
  want+=("${test_pkgs[@]}")
  command -v npm >/dev/null 2>&1 || want+=(npm)
fi

# npm packages, after apt: global install, only when the tool is missing.
install_npm() {
  [[ "${1:-}" == "--test" ]] || return 0
  command -v action-validator >/dev/null 2>&1 && return 0
  echo "agsbx-evidence: installing ${npm_pkgs[*]} (npm)" >&2
  "${sudo[@]}" npm install --global --no-fund --no-audit "${npm_pkgs[@]}" >&2
}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "agsbx-evidence: error: this script installs Debian/Ubuntu packages; apt-get not found" >&2
  echo "hint: install the equivalents of: ${want[*]}" >&2
  exit 1
fi

missing=()
for p in "${want[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
elif [[ ${#missing[@]} -gt 0 ]]; then
  echo "agsbx-evidence: error: missing packages and not root (no sudo): ${missing[*]}" >&2
  exit 1
fi
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "agsbx-evidence: all ${#want[@]} packages present" >&2
  install_npm "${1:-}"
  exit 0
fi

echo "agsbx-evidence: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q >&2
# docker.io's postinst cannot start a daemon without an init system; that is
# expected (the tests start their own dockerd) and harmless.
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
install_npm "${1:-}"
