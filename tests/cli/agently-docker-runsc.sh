#!/usr/bin/env bash
# Agently's Docker provider with default_args --runtime=runsc, through
# collect as the unprivileged user with access to this test's own dockerd
# (as tests/cli/agently-docker.sh does on runc). gVisor answers the
# signals and io_uring; what stays (docs/providers/agently.md):
#  * fs.grant_write: root in the container, --cap-drop ALL, no --user: the
#    user's workspace is not writable inside (EACCES);
#  * lifecycle.consistent: health says ready after release;
#  * `docker run` without -i hands runsc the host's /dev/null as stdin, and
#    runsc fchowns it: the host's /dev/null changes owner (asserted and
#    undone here; no check of the matrix sees it). So this test holds both
#    dockerd locks (tests/CMakeLists.txt): no test that checks the host's
#    device nodes runs meanwhile.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/dockerd.sh"
source "$(dirname "$0")/../lib/gvisor.sh"
source "$(dirname "$0")/../lib/agently.sh"
source "$(dirname "$0")/../lib/expect.sh"
agently_docker_prereqs

stage=$(agently_stage)
out=$(t_tmpdir out)
dockerd_start ags with-runsc
dockerd_grant_user "$AGSBX_TEST_USER"
P=docker

ag_devnull_guard
agently_collect_docker "$stage" $P "$out/runsc.json" "--default-args=--runtime=runsc" --provider agently-docker
owner=$(ag_devnull_changed "docker on runsc")
pass "docker on runsc: the host's /dev/null became $owner (was $AG_DEVNULL); restored"
[[ $AG_RC == 1 && $(ag_jq "$out/runsc.json" $P .verdict) == defective ]] \
  || fail "runsc: exit $AG_RC, verdict $(ag_jq "$out/runsc.json" $P .verdict)"
expect_verdicts "$out/runsc.json" agently-$P agently-docker-runsc
ag_expect "$out/runsc.json" $P fs.grant_write fail 'EACCES'
ag_no_containers "docker on runsc"
# Upstream labels the runtime from its own code, not from default_args.
[[ $(ag_jq "$out/runsc.json" $P '.probe.facts.upstream_probe.capabilities.container_runtime') == runc ]] \
  || fail "upstream's container_runtime claim changed"
pass "docker on runsc: defective (grant not writable, health ready after release); no container left"

[[ $(ag_jq "$out/runsc.json" $P '.probe.facts.runtime_image.status') == imported ]] \
  || fail "image: $(ag_jq "$out/runsc.json" $P '.probe.facts.runtime_image | tojson')"
ag_no_leftovers docker-runsc
