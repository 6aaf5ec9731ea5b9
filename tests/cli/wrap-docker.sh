#!/usr/bin/env bash
# Docker with runc as a --wrap subject, against a self-contained dockerd
# (no registry: the image is a minimal rootfs imported from a tarball, the
# host's /usr bound read-only), as the unprivileged test user holding the
# daemon's socket in this test's own temp dir. What it isolates by default
# is recorded; and the container a timed-out `docker run` leaves behind
# (the docker CLI dies, the container does not) is invisible to the harness
# unless the wrapper declares an inventory: with
# --config ID.inventory="docker ps -aq --filter label=..." the lifecycle
# checks count it and fail.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/dockerd.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
command -v docker >/dev/null || skip docker 1 "the docker CLI is not installed (docker.io)"
have_test_user || skip "docker as a user" 1 "needs root to start dockerd and the user $AGSBX_TEST_USER"
dockerd_start wrapdk no-runsc
chmod 0711 "$DOCKERD_DIR"
chown "$AGSBX_TEST_USER" "$DOCKERD_DIR/docker.sock"
sock=$DOCKERD_DIR/docker.sock

# The image: empty mount points and the /usr symlinks; /usr comes from the host.
rootfs=$(t_tmpdir dkroot)
mkdir -p "$rootfs"/{proc,dev,sys,tmp,etc,usr}
ln -s usr/bin "$rootfs/bin"; ln -s usr/lib "$rootfs/lib"; ln -s usr/lib64 "$rootfs/lib64"
tar -C "$rootfs" -c . | docker -H "unix://$sock" import - agsbx-wrap-min:1 >/dev/null

stage=$(t_stage_for_user)
w=$(t_tmpdir wrapdk)
chown "$AGSBX_TEST_USER:" "$w"
uid=$(id -u "$AGSBX_TEST_USER"); gid=$(id -g "$AGSBX_TEST_USER")
label=agsbx-wrap-test-$$
tmpl="docker -H unix://$sock run --rm --label $label --network=none --user $uid:$gid
      -v /usr:/usr:ro -v {source}:{source}:ro -v {build}:{build} -v {output}:{output} -v {logs}:{logs}
      -w {cwd} agsbx-wrap-min:1 {argv}"

wrap() {
  N=$1
  F="$w/$N.json"
  shift
  set +e
  as_user timeout -s KILL 900 "$stage/agsbx-evidence" collect -q --unsigned --work-dir "$w" --output "$F" \
    --provider "$N" --wrap "$N=$tmpl" "$@" 2>"$w/$N.err"
  local rc=$?
  set -e
  [[ -s $F ]] || { cat "$w/$N.err" >&2; fail "$N: no bundle (collect exited $rc)"; }
}
p() { jq -r --arg n "$N" ".providers[] | select(.id == \$n) | $1" "$F"; }
chk() { p ".checks[] | select(.id == \"$1\") | $2"; }
want() {
  [[ $(chk "$1" "$2") == true ]] || fail "$N $1: want $2; got $(chk "$1" '"\(.verdict): \(.reason)"')"
}
left() { docker -H "unix://$sock" ps -aq --filter "label=$label" | wc -l; }

wrap dk
want lifecycle.timeout_cleanup '.reason | test("provider resources not inventoried")'
echo "note: docker (runc) by default: $(p .verdict); observed $(p '.underclaim | join(",")'); left $(left) container(s)" >&2
docker -H "unix://$sock" rm -f $(docker -H "unix://$sock" ps -aq --filter "label=$label") >/dev/null 2>&1 || true
pass "docker run (runc), no inventory: the lifecycle reasons say nothing was inventoried"

wrap dkinv --config "dkinv.inventory=docker -H unix://$sock ps -aq --filter label=$label"
want lifecycle.timeout_cleanup '.verdict == "fail" and (.reason | test("; [1-9][0-9]* provider resource\\(s\\) left"))
  and .facts.provider_inventory == "taken"'
docker -H "unix://$sock" rm -f $(docker -H "unix://$sock" ps -aq --filter "label=$label") >/dev/null 2>&1 || true
pass "docker run (runc) with an inventory: the container a timed-out run leaves is counted"
