#!/usr/bin/env bash
# Agently's Docker provider (DockerExecutionResourceProvider, the base of
# the tracker's gVisor #350) through collect, as the unprivileged user with
# access to this test's own dockerd socket (docker-group semantics), via
# the Agently adapter: once on runc (upstream's default) and once on runsc
# (default_args --runtime runsc). The image is the adapter's own, built
# from the host's python3 with docker import (no registry), once per daemon.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/dockerd.sh"
source "$(dirname "$0")/../lib/gvisor.sh"
source "$(dirname "$0")/../lib/agently.sh"
agently_require_src
gv_prereqs runsc
command -v docker >/dev/null || skip docker 1 "the docker CLI is not installed (docker.io)"

stage=$(agently_stage)
out=$(t_tmpdir out)
dockerd_start agd with-runsc
dockerd_grant_user "$AGSBX_TEST_USER"

agently_collect_docker "$stage" docker "$out/runc.json" "" --provider agently-docker
echo "runc: exit $AG_RC in $AG_WALL s" >&2
jq -c '.providers[] | {id, verdict, reason, failing_checks}' "$out/runc.json" >&2
jq -c '.providers[].checks[] | select(.verdict!="pass") | {id, verdict, reason}' "$out/runc.json" >&2
cp "$out/runc.json" /tmp/ag-runc.json
ag_no_containers "docker on runc"
