#!/usr/bin/env bash
# Agently's gVisor provider (GVisorDockerExecutionResourceProvider, merged
# as #350: the tracker's phase 1) through collect, as the unprivileged user
# with access to this test's own dockerd socket, runsc registered (with
# --network=none, as a working setup needs here), via the Agently adapter
# and the adapter's own image. What it really does
# (docs/providers/agently.md): the runsc run holds every isolation claim
# the harness checks, but like the Docker provider it runs the container
# as root with --cap-drop ALL and no --user, so the user's workspace is not
# writable inside (fs.grant_write, and the lifecycle checks' detached tree
# never starts). Its `docker run` has no -i, so runsc fchowns the host's
# /dev/null (the container's stdin) away from root: a host change no check
# of the matrix sees, asserted and undone here. Its health re-verifies runsc each time and says unhealthy
# after release (lifecycle.consistent passes, unlike Docker's). Then,
# without the harness: a timed-out execute leaves no container behind.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/dockerd.sh"
source "$(dirname "$0")/../lib/gvisor.sh"
source "$(dirname "$0")/../lib/agently.sh"
source "$(dirname "$0")/../lib/expect.sh"
agently_docker_prereqs

stage=$(agently_stage)
install -m 0755 "$AGSBX_SOURCE_DIR/tests/cli/lib-agently-docker-drive.py" "$stage/src/tests/cli/"
install -m 0644 "$AGSBX_SOURCE_DIR/providers/external/agently/agently_pytest_loader.py" "$stage/src/providers/external/agently/"
out=$(t_tmpdir out)
dockerd_start agg with-runsc
dockerd_grant_user "$AGSBX_TEST_USER"
P=gvisor
ag_devnull_guard
# Upstream's own integration test, attached: Debian 12 has pytest and
# pytest-asyncio but not Agently's package dependencies, so it runs with the
# adapter's loader (docs/providers/agently.md).
/usr/bin/python3 -c 'import pytest, pytest_asyncio' 2>/dev/null \
  || skip pytest 1 "python3-pytest and python3-pytest-asyncio missing (workflows/install-deps.sh --test)"
A=../shared/thirdparty/agently
agently_collect_docker "$stage" $P "$out/gv.json" "" --provider agently-gvisor \
  --attach-command "env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=providers/external/agently AGENTLY_SRC=$A python3 -m pytest -p agently_pytest_loader -p no:cacheprovider -rs --rootdir $A $A/tests/test_gvisor_execution_provider_integration.py"
owner=$(ag_devnull_changed "Agently's gVisor provider")
pass "the host's /dev/null became $owner (was $AG_DEVNULL) through upstream's runsc runs; restored"
[[ $AG_RC == 1 && $(ag_jq "$out/gv.json" $P .verdict) == defective ]] \
  || fail "exit $AG_RC, verdict $(ag_jq "$out/gv.json" $P .verdict)"
# Every expected verdict, the failing checks exactly: set "agently-gvisor"
# of tests/data/expected-verdicts.json.
expect_verdicts "$out/gv.json" agently-$P agently-gvisor
ag_expect "$out/gv.json" $P fs.grant_write fail 'did not reach the host \(EACCES\)'
ag_expect "$out/gv.json" $P lifecycle.timeout_cleanup fail 'timed out \(124\); detached tree NEVER STARTED'
ag_expect "$out/gv.json" $P lifecycle.cancel_cleanup fail 'cancelled; detached tree NEVER STARTED'
[[ $(ag_jq "$out/gv.json" $P .probe.capabilities.mechanism) == gvisor_container ]] || fail "mechanism"
[[ $(ag_jq "$out/gv.json" $P .probe.facts.runtime_image.status) == imported ]] || fail "image not imported"
ag_no_containers "gvisor"
# The attachment: upstream's test collected with the loader's stand-ins and
# skipped on its own terms (it hard-codes the registry image alpine:3.20).
# (The bundle's summary is "none": the harness reads a pytest line only when
# it names passed, failed or errors, and this one says "1 skipped" alone.)
jq -e '.attachments | length == 1 and (.[0] | .exit_status == 0
       and (.stdout_tail | contains("= 1 skipped in"))
       and (.stdout_tail | contains("required local gVisor probe image is unavailable: alpine:3.20"))
       and (.stderr_tail | contains("stand-ins")))' "$out/gv.json" >/dev/null \
  || fail "attachment: $(jq -c .attachments "$out/gv.json")"
pass "upstream's test_gvisor_execution_provider_integration.py attached: collected through the loader, 1 skipped (alpine:3.20 not local)"
pass "gvisor with runsc: defective (the grant is not writable inside); claims otherwise hold; no container left"

w=$(t_tmpdir drive); chown "$AGSBX_TEST_USER" "$w"
as_user python3 "$stage/src/tests/cli/lib-agently-docker-drive.py" "$stage/src/providers/external/agently/agently-adapter.py" \
  "$stage/shared/thirdparty/agently" $P "$DOCKER_HOST" "$stage/agsbx-payload" "$w" > "$w/drive.json" \
  || fail "drive: $(cat "$w/drive.json")"
jq -e '.timed_out_execute.timed_out == true and .containers_after_timeout == [] and .containers_after_release == []' \
  "$w/drive.json" >/dev/null || fail "drive: $(cat "$w/drive.json")"
ag_no_containers "gvisor drive"
ag_no_leftovers gvisor
pass "a timed-out runsc run leaves no container (removed before the execute answers)"
