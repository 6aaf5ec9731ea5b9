#!/usr/bin/env bash
# Soak (a script, not a ctest; minutes to hours). As root, it drives the
# unprivileged test user (the contributor's case):
#  1. N timeout+cancel cycles each through trusted_local, landlock and
#     bubblewrap (N/10 through gvisor, on a self-contained dockerd+runsc
#     whose socket only this script's temp dir exposes to the test user):
#     after every cycle no marker process and no provider resource, and the
#     harness's RSS stays flat (last vs after warm-up);
#  2. collect SIGKILLed at K random moments: `cleanup` afterwards leaves no
#     process, no agsbx-* directory and no labelled container.
#
#   tests/soak/soak.sh [--cycles N] [--kills K] [--build DIR] [--rss-slack-kib S]
# Defaults: 1000 cycles, 20 kills. Prints one line per part and a JSON
# summary on the last line; exits 1 on any leftover, wrong outcome or RSS
# growth beyond the slack (default 512 KiB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cycles=1000 kills=20 slack=512
build=${AGSBX_BUILD_DIR:-$here/../../build}
while [[ $# -gt 0 ]]; do
  case $1 in
    --cycles) cycles=$2; shift 2 ;;
    --kills) kills=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --rss-slack-kib) slack=$2; shift 2 ;;
    *) echo "usage: $0 [--cycles N] [--kills K] [--build DIR] [--rss-slack-kib S]" >&2; exit 2 ;;
  esac
done
export AGSBX_BUILD_DIR=$build AGSBX_BIN=$build/agsbx-evidence
source "$here/../lib/common.sh"
source "$here/../lib/dockerd.sh"

[[ $(id -u) == 0 ]] || fail "run as root (it starts dockerd and switches to $AGSBX_TEST_USER)"
id -u "$AGSBX_TEST_USER" >/dev/null 2>&1 || "$here/../../workflows/test-user.sh"
[[ -x $build/agsbx-soak ]] || fail "$build/agsbx-soak not built (cmake --build $build)"

stage=$(t_tmpdir stage)
for f in agsbx-evidence agsbx-soak $(AGSBX_BUILD_DIR=$build t_helpers); do
  install -m 0755 "$build/$f" "$stage/$f"
done
w=$(t_tmpdir soak); chown "$AGSBX_TEST_USER" "$w"
uid=$(id -u "$AGSBX_TEST_USER"); gid=$(id -g "$AGSBX_TEST_USER")
U() {
  exec setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env -- \
    env HOME=/tmp PATH=/usr/bin:/bin TMPDIR="$w" ${DOCKER_HOST:+DOCKER_HOST=$DOCKER_HOST} \
    ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} "$stage/$1" "${@:2}"
}
Uf() { ( U "$@" ); }

user_left() { pgrep -a -u "$uid" -f -- "$w/" || true; }
dirs_left() { find "$w" -mindepth 1 -maxdepth 1 -name 'agsbx-*' | sort; }
containers_left() {
  [[ -n ${DOCKERD_DIR:-} ]] || { echo 0; return; }
  dockerd_api '/containers/json?all=1' | jq '[.[] | select(.Labels["agsbx-evidence.owner"])] | length'
}

if dockerd_available && command -v runsc >/dev/null; then
  dockerd_start soak with-runsc
  chmod 0711 "$DOCKERD_DIR"
  chown "$AGSBX_TEST_USER" "$DOCKERD_DIR/docker.sock"
else
  echo "note: no dockerd/runsc: gvisor is not soaked" >&2
fi

summary=()
status=0
# ---- 1. timeout+cancel cycles ---------------------------------------------
for p in trusted_local landlock bubblewrap gvisor; do
  n=$cycles
  [[ $p == gvisor ]] && { [[ -n ${DOCKERD_DIR:-} ]] || continue; n=$(( cycles / 10 > 0 ? cycles / 10 : 1 )); }
  timeout=300
  [[ $p == gvisor ]] && timeout=3000
  set +e
  line=$(Uf agsbx-soak "$p" "$n" "$timeout")
  rc=$?
  set -e
  echo "$line"
  [[ $rc == 0 ]] || { echo "FAIL: $p: soak exited $rc" >&2; status=1; }
  grow=$(jq -r '.rss_kib_last - .rss_kib_after_warmup' <<<"$line" 2>/dev/null || echo 999999)
  [[ $grow -le $slack ]] || { echo "FAIL: $p: RSS grew by $grow KiB (slack $slack)" >&2; status=1; }
  summary+=("$line")
  [[ -z $(user_left) ]] || { echo "FAIL: $p: processes left: $(user_left)" >&2; status=1; }
  [[ -z $(dirs_left) ]] || { echo "FAIL: $p: dirs left: $(dirs_left)" >&2; status=1; }
  [[ $(containers_left) == 0 ]] || { echo "FAIL: $p: containers left" >&2; status=1; }
done

# ---- 2. SIGKILL of collect at random moments, then cleanup ------------------
killed_with_leftovers=0 kill_failures=0
for ((k = 1; k <= kills; k++)); do
  delay=$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.2f", 0.1 + rand() * 4 }')
  U agsbx-evidence collect --unsigned -q --work-dir "$w" --output "$w/k.json" >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -KILL "$pid" 2>/dev/null || true
  set +e; wait "$pid"; set -e
  rm -f "$w/k.json"
  [[ -n $(user_left)$(dirs_left) || $(containers_left) != 0 ]] && killed_with_leftovers=$((killed_with_leftovers + 1))
  Uf agsbx-evidence cleanup --work-dir "$w" >/dev/null || { echo "FAIL: cleanup exited $? after kill $k" >&2; status=1; }
  for i in $(seq 40); do [[ -z $(user_left) ]] && break; sleep 0.05; done
  if [[ -n $(user_left) || -n $(dirs_left) || $(containers_left) != 0 ]]; then
    echo "FAIL: kill $k at ${delay}s: left after cleanup: $(user_left) $(dirs_left) containers=$(containers_left)" >&2
    status=1 kill_failures=$((kill_failures + 1))
  fi
done
line="{\"sigkill_moments\":$kills,\"moments_with_leftovers_before_cleanup\":$killed_with_leftovers,\"moments_with_leftovers_after_cleanup\":$kill_failures}"
echo "$line"
summary+=("$line")
printf '%s\n' "${summary[@]}" | jq -sc '{soak: ., ok: '"$([[ $status == 0 ]] && echo true || echo false)"'}'
exit $status
