#!/usr/bin/env bash
# Agently's gVisor provider against a daemon with no runsc runtime (#350's
# first fail-closed case), as the unprivileged user with access to the
# socket: blocked with upstream's own reason runsc_runtime_unregistered,
# which the adapter declares as the host condition runtime_unregistered;
# probe.truthful's cross-check (the harness's own Docker runtimes list, as
# the same user) agrees, so the verdict is blocked, exit 0; nothing runs.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/dockerd.sh"
source "$(dirname "$0")/../lib/gvisor.sh"
source "$(dirname "$0")/../lib/agently.sh"
agently_docker_prereqs

stage=$(agently_stage)
out=$(t_tmpdir out)
dockerd_start agn no-runsc
dockerd_grant_user "$AGSBX_TEST_USER"
P=gvisor
agently_collect_docker "$stage" $P "$out/gv.json" "" --provider agently-gvisor
[[ $AG_RC == 0 ]] || { tail -n 20 "$out/gv.json.log" >&2; fail "exit $AG_RC, want 0"; }
[[ $(ag_jq "$out/gv.json" $P '"\(.verdict) \(.reason) \(.failing_checks | length)"') == "blocked runsc_runtime_unregistered 0" ]] \
  || fail "$(ag_jq "$out/gv.json" $P '"\(.verdict) \(.reason) \(.failing_checks)"')"
ag_expect "$out/gv.json" $P probe.truthful pass "reason 'runsc_runtime_unregistered' is in the closed set"
[[ $(ag_jq "$out/gv.json" $P '.checks[] | select(.id=="probe.truthful") | .facts.host_condition |
      "\(.condition) \(.provider_says) \(.harness_observed) \(.how.host_probe)"') \
   == "runtime_unregistered true true docker.runtimes" ]] || fail "probe.truthful host_condition"
ag_expect "$out/gv.json" $P fs.host_read_denied blocked 'mechanism unavailable: runsc_runtime_unregistered'
[[ $(ag_jq "$out/gv.json" $P '.probe.facts.upstream_probe.meta.availability.registered_runtimes | join(",")') == *runc* ]] \
  || fail "upstream's registered_runtimes fact"
ag_no_containers "gvisor without runsc"
ag_no_leftovers gvisor-norunsc
pass "gvisor without runsc: blocked runsc_runtime_unregistered, and the harness observes the runtime unregistered too"

# No daemon at all (a socket path nothing listens on): both providers say
# daemon_unavailable, declared as docker_unreachable, and the harness's own
# /_ping on the same DOCKER_HOST agrees; the image cannot be imported.
DOCKER_HOST=unix://$T_ROOT/no-daemon.sock
for P in docker gvisor; do
  agently_collect_docker "$stage" $P "$out/none-$P.json" "" --provider agently-$P
  [[ $AG_RC == 0 ]] || { tail -n 20 "$out/none-$P.json.log" >&2; fail "$P without a daemon: exit $AG_RC, want 0"; }
  [[ $(ag_jq "$out/none-$P.json" $P '"\(.verdict) \(.reason)"') == "blocked daemon_unavailable" ]] \
    || fail "$P without a daemon: $(ag_jq "$out/none-$P.json" $P '"\(.verdict) \(.reason)"')"
  [[ $(ag_jq "$out/none-$P.json" $P '.checks[] | select(.id=="probe.truthful") | "\(.verdict) " + (.facts.host_condition |
        "\(.condition) \(.provider_says) \(.harness_observed)")') == "pass docker_unreachable true true" ]] \
    || fail "$P probe.truthful: $(ag_jq "$out/none-$P.json" $P '.checks[] | select(.id=="probe.truthful")')"
  [[ $(ag_jq "$out/none-$P.json" $P .probe.facts.runtime_image.status) == failed ]] || fail "$P image status"
done
pass "no daemon: docker and gvisor blocked daemon_unavailable, the harness observes the daemon unreachable too"
