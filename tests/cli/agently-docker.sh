#!/usr/bin/env bash
# Agently's Docker provider (DockerExecutionResourceProvider, the base of
# the tracker's gVisor #350) on runc, upstream's default, through collect,
# as the unprivileged user with access to this test's own dockerd socket
# (docker-group semantics: root-equivalent, said in the bundle), via the
# Agently adapter. The image is the adapter's own, built from the host's
# python3 with docker import (no registry), once per daemon: imported by the
# collect, reused by the adapter run after it. Expected verdicts are what the
# provider really does (docs/providers/agently.md):
#  * fs.grant_write: upstream runs the container as root with --cap-drop ALL
#    and no --user, so the workspace the user owns is not writable inside
#    (EACCES); the lifecycle checks' detached tree cannot write its ready
#    file there either and never starts (both lifecycle checks fail).
#  * lifecycle.consistent: health only asks whether the daemon answers, so
#    it says ready after release (execute after release is refused).
#  * the program is PID 1 (no --init), which ignores its own SIGTERM/SIGKILL,
#    so kill-self runs into the timeout (124) -- exec.status_fidelity; and
#    Docker 20.10's default seccomp profile lets io_uring_setup through to
#    the host kernel, so syscalls_restricted is an overclaim
#    (capabilities.truthful, syscalls.io_uring_denied).
# Then, without the harness: a timed-out execute leaves no container
# (upstream's `docker rm -f` on the name it chose), before release too.
# On runsc: tests/cli/agently-docker-runsc.sh (a test of its own: it changes
# the host's /dev/null and holds both dockerd locks; this one needs one).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/dockerd.sh"
source "$(dirname "$0")/../lib/gvisor.sh"
source "$(dirname "$0")/../lib/agently.sh"
source "$(dirname "$0")/../lib/expect.sh"
agently_docker_prereqs

stage=$(agently_stage)
install -m 0755 "$AGSBX_SOURCE_DIR/tests/cli/lib-agently-docker-drive.py" "$stage/src/tests/cli/"
out=$(t_tmpdir out)
dockerd_start agd no-runsc
dockerd_grant_user "$AGSBX_TEST_USER"
P=docker

agently_collect_docker "$stage" $P "$out/runc.json" "" --provider agently-docker
[[ $AG_RC == 1 && $(ag_jq "$out/runc.json" $P .verdict) == defective ]] \
  || fail "runc: exit $AG_RC, verdict $(ag_jq "$out/runc.json" $P .verdict)"
# Every expected verdict, the failing checks exactly: set "agently-docker-runc"
# of tests/data/expected-verdicts.json.
expect_verdicts "$out/runc.json" agently-$P agently-docker-runc
ag_expect "$out/runc.json" $P fs.grant_write fail 'did not reach the host \(EACCES\)'
ag_expect "$out/runc.json" $P lifecycle.timeout_cleanup fail 'timed out \(124\); detached tree NEVER STARTED'
ag_expect "$out/runc.json" $P lifecycle.cancel_cleanup fail 'cancelled; detached tree NEVER STARTED'
ag_expect "$out/runc.json" $P lifecycle.consistent fail 'health ready before release, READY after; execute after release refused'
ag_expect "$out/runc.json" $P exec.status_fidelity fail 'kill-self 15 -> 124 \(timed out: still running after its own signal[^)]*\) WRONG, kill-self 9 -> 124 \(timed out: still running after its own signal[^)]*\) WRONG'
ag_expect "$out/runc.json" $P syscalls.io_uring_denied fail 'ALLOWED by the HOST kernel'
ag_expect "$out/runc.json" $P capabilities.truthful fail 'OVERCLAIM \["syscalls_restricted"\]'
ag_no_containers "docker on runc"
pass "docker on runc: defective (grant not writable, health ready after release, PID-1 signals, io_uring overclaim); no container left"

# The image: imported by the collect, reused by the adapter's next run on
# this daemon (the drive below), the daemon's own id.
id1=$(ag_jq "$out/runc.json" $P '.probe.facts.runtime_image | "\(.status) \(.image) \(.image_id)"')
[[ $id1 == "imported "* ]] || fail "image: $id1"
img=$(echo "$id1" | cut -d' ' -f2)
[[ $(dockerd_api /images/json | jq -r --arg t "$img" '.[] | select(.RepoTags | index($t)) | .Id') == "${id1##* }" ]] \
  || fail "image id in the bundle is not the daemon's"
srcs=$(ag_jq "$out/runc.json" $P '.probe.facts.runtime_image.sources[]')
grep -qx "$(readlink -f /usr/bin/python3)" <<<"$srcs" || fail "image sources lack the host's python3"
[[ $(ag_jq "$out/runc.json" $P .probe.facts.docker_socket_access) == *root-equivalent* ]] || fail "no root-equivalence note"
[[ $(ag_jq "$out/runc.json" $P .probe.facts.upstream_probe.meta.runtime_image.exists) == true ]] || fail "upstream did not see the image"

# A timed-out execute, without the harness: the container is gone as soon
# as the execute has answered (upstream's docker rm -f), before release.
w=$(t_tmpdir drive); chown "$AGSBX_TEST_USER" "$w"
as_user python3 "$stage/src/tests/cli/lib-agently-docker-drive.py" "$stage/src/providers/external/agently/agently-adapter.py" \
  "$stage/shared/thirdparty/agently" $P "$DOCKER_HOST" "$stage/agsbx-payload" "$w" > "$w/drive.json" \
  || fail "drive: $(cat "$w/drive.json")"
jq -e '.timed_out_execute.timed_out == true and .timed_out_execute.upstream == "timed_out"
       and .containers_after_timeout == [] and .containers_after_release == []
       and .marker_processes_after_timeout == []' "$w/drive.json" >/dev/null || fail "drive: $(cat "$w/drive.json")"
[[ $(jq -r '.probe.runtime_image | "\(.status) \(.image) \(.image_id)"' "$w/drive.json") == "reused ${id1#imported }" ]] \
  || fail "image not reused by the next run: $(jq -c .probe.runtime_image "$w/drive.json")"
pass "image $img imported once, reused, recorded with its id and sources; socket access said to be root-equivalent"
ag_no_containers "docker drive"
ag_no_leftovers docker
pass "a timed-out docker run leaves no container (removed before the execute answers)"
