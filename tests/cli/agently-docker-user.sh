#!/usr/bin/env bash
# Agently's Docker provider on runc with the container user set to the
# workspace's owner (`'--default-args=--user UID:GID'` in the adapter command, the one
# change a contributor can make without touching upstream; outside upstream's
# denylist, so every claim stays). What upstream's default run hides
# (tests/cli/agently-docker.sh: the grant is not writable, the lifecycle
# checks' detached tree never starts) becomes observable: the grant is
# written, and on timeout and on cancel upstream's `docker rm -f` ends the
# detached tree with its container. What remains is the same on runc:
# health ready after release, PID-1 signals, the io_uring overclaim.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/dockerd.sh"
source "$(dirname "$0")/../lib/gvisor.sh"
source "$(dirname "$0")/../lib/agently.sh"
source "$(dirname "$0")/../lib/expect.sh"
agently_docker_prereqs

stage=$(agently_stage)
out=$(t_tmpdir out)
dockerd_start agu no-runsc
dockerd_grant_user "$AGSBX_TEST_USER"
P=docker
user="$(id -u "$AGSBX_TEST_USER"):$(id -g "$AGSBX_TEST_USER")"
agently_collect_docker "$stage" $P "$out/user.json" "'--default-args=--user $user'" --provider agently-docker
[[ $AG_RC == 1 && $(ag_jq "$out/user.json" $P .verdict) == defective ]] \
  || fail "exit $AG_RC, verdict $(ag_jq "$out/user.json" $P .verdict)"
# Every expected verdict, the failing checks exactly: set "agently-docker-user"
# of tests/data/expected-verdicts.json.
expect_verdicts "$out/user.json" agently-$P agently-docker-user
ag_expect "$out/user.json" $P lifecycle.consistent fail 'READY after; execute after release refused'
[[ $(ag_jq "$out/user.json" $P '.probe.facts.base_config.default_args | join(" ")') == "--user $user" ]] || fail "default_args not recorded"
[[ $(ag_jq "$out/user.json" $P '.probe.capabilities | [.process_contained, .host_filesystem_restricted, .privilege_escalation_blocked, .syscalls_restricted] | all') == true ]] \
  || fail "upstream dropped a claim for --user"
ag_no_containers "docker with --user"
ag_no_leftovers docker-user
pass "docker with --user $user: the grant is written, timeout and cancel end the detached tree; still defective (health, PID 1, io_uring)"
