#!/usr/bin/env bash
# The action's "install mechanisms" step (action.yml): installs what the
# providers it is asked to test need, and says which it could not install
# and why. Nothing here weakens the runner: no sysctl, no AppArmor change,
# no setuid bwrap. A mechanism that cannot be installed is not a failure:
# collect then reports that provider `blocked` with the reason.
#   INPUT_PROVIDERS   provider ids (blanks or commas); empty: every provider
#   AGSBX_GVISOR_URL  gVisor's release directory (default: gvisor.dev's)
# Writes installed=/missing= to $GITHUB_OUTPUT and a ::notice:: per missing
# mechanism. Sourcing it (AGSBX_MECH_LIB=1) only defines the functions.
set -euo pipefail

gvisor_url=${AGSBX_GVISOR_URL:-https://storage.googleapis.com/gvisor/releases/release/latest}
: "${GITHUB_OUTPUT:=/dev/null}"

as_root() {
  if [[ $(id -u) == 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo -n "$@"
  else echo "not root and no password-less sudo" >&2; return 1
  fi
}

# apt_install PKG: installs PKG from the distribution; prints why not.
apt_install() {
  local cand
  command -v apt-get >/dev/null 2>&1 || { echo "no apt-get on this runner"; return 1; }
  # a runner image's package lists are older than its mirror: refresh first
  if [[ -z ${apt_updated:-} ]]; then
    as_root apt-get update -q >/dev/null 2>&1 || true
    apt_updated=1
  fi
  cand=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
  [[ -n $cand && $cand != "(none)" ]] || { echo "the distribution has no $1 package"; return 1; }
  local log; log=$(mktemp)
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$1" >"$log" 2>&1 \
    || { echo "apt-get install $1 failed: $(tail -n 1 "$log")"; rm -f "$log"; return 1; }
  rm -f "$log"
}

# fetch_runsc URL DEST: gVisor's release binary and its .sha512 from URL,
# checked, to DEST. The checksum comes from the same place, so it catches a
# truncated or corrupted download, not a compromised release host.
fetch_runsc() {
  local url=$1 dest=$2 arch tmp
  arch=$(uname -m)
  tmp=$(mktemp -d)
  if ! curl -fsSL --proto '=https,http' --max-time 60 -o "$tmp/runsc" "$url/$arch/runsc" 2>"$tmp/err" \
     || ! curl -fsSL --proto '=https,http' --max-time 60 -o "$tmp/runsc.sha512" "$url/$arch/runsc.sha512" 2>>"$tmp/err"; then
    echo "gVisor's release at $url is not reachable: $(tail -n 1 "$tmp/err")"; rm -rf "$tmp"; return 1
  fi
  if ! (cd "$tmp" && sha512sum -c runsc.sha512 >/dev/null 2>&1); then
    echo "runsc from $url does not match its sha512"; rm -rf "$tmp"; return 1
  fi
  install -m 0755 "$tmp/runsc" "$dest" || { echo "cannot install runsc to $dest"; rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
}

# install_gvisor: runsc (the distribution's package, else gVisor's release)
# and a runsc runtime with --network=none registered in the runner's dockerd.
install_gvisor() {
  local why
  command -v docker >/dev/null 2>&1 || { echo "no Docker Engine on this runner"; return 1; }
  if ! command -v runsc >/dev/null 2>&1; then
    why=$(apt_install runsc) || {
      local tmp; tmp=$(mktemp)
      fetch_runsc "$gvisor_url" "$tmp" >"$tmp.why" || { echo "$why; $(cat "$tmp.why")"; rm -f "$tmp" "$tmp.why"; return 1; }
      as_root install -m 0755 "$tmp" /usr/local/bin/runsc || { rm -f "$tmp" "$tmp.why"; echo "cannot write /usr/local/bin/runsc"; return 1; }
      rm -f "$tmp" "$tmp.why"
    }
  fi
  docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"' && return 0
  as_root runsc install -- --network=none >/dev/null 2>&1 || { echo "runsc install (docker runtime entry) failed"; return 1; }
  as_root systemctl restart docker >/dev/null 2>&1 || { echo "cannot restart dockerd to register runsc"; return 1; }
}

# A workflow-command message: %, CR and LF escaped.
esc() { local s=${1//'%'/%25}; s=${s//$'\r'/%0D}; printf '%s' "${s//$'\n'/%0A}"; }

want() { [[ -z $providers || " $providers " == *" $1 "* ]]; }

main() {
  providers=$(echo ${INPUT_PROVIDERS//,/ })
  local installed=() missing=() why
  [[ $(uname -s) == Linux ]] || { echo "missing=" >>"$GITHUB_OUTPUT"; return 0; }
  if want bubblewrap; then
    if command -v bwrap >/dev/null 2>&1 || why=$(apt_install bubblewrap); then installed+=(bubblewrap)
    else missing+=(bubblewrap); echo "::notice title=agsbx-evidence bubblewrap::$(esc "bubblewrap not installed: $why; collect reports it blocked")"; fi
  fi
  if want gvisor; then
    if why=$(install_gvisor); then installed+=(gvisor)
    else missing+=(gvisor); echo "::notice title=agsbx-evidence gvisor::$(esc "gvisor not installed: $why; collect reports it blocked")"; fi
  fi
  echo "installed=${installed[*]}" >>"$GITHUB_OUTPUT"
  echo "missing=${missing[*]}" >>"$GITHUB_OUTPUT"
}

[[ -n ${AGSBX_MECH_LIB:-} ]] || main
