#!/usr/bin/env bash
# Acceptance of the gVisor provider through collect: against a
# self-contained dockerd with runsc registered (no image prepared) gvisor is
# conformant and leaves no container (without the runtime, blocked with
# exit 0: tests/cli/gvisor-norunsc.sh, on its daemon without runsc). The host's
# device nodes (/dev/null first: runsc fchowns a container's stdio) keep
# their owner, mode and ctime.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/expect.sh"
source "$(dirname "$0")/../lib/dockerd.sh"
source "$(dirname "$0")/../lib/gvisor.sh"
command -v runsc >/dev/null || skip "runsc" 1 "runsc not installed"
d=$(t_tmpdir cg)

dockerd_start cgr with-runsc
# No image prepared: the provider imports its own from the payload (on the
# shared daemon, earlier tests' images are removed first).
for id in $(dockerd_api /images/json | jq -r '.[].Id'); do
  dockerd_api "/images/$id?force=1" -X DELETE >/dev/null || fail "cannot remove image $id"
done
[[ $(dockerd_api /images/json | jq length) == 0 ]] || fail "fresh daemon already has images"
devs=$(gv_host_devices)
expect_rc 0 "$AGSBX_BIN" collect --provider gvisor --unsigned --output "$d/gv.json" -q
gv_host_devices_unchanged "$devs" "collect --provider gvisor as root"
v=$(jq -r '.providers[0].verdict' "$d/gv.json")
[[ $v == conformant ]] || { jq '.providers[0] | {reason, failing_checks}' "$d/gv.json" >&2; fail "gvisor $v"; }
# The expected verdicts: set "gvisor" of tests/data/expected-verdicts.json.
expect_verdicts "$d/gv.json" gvisor gvisor
# io_uring is answered by gVisor's own kernel, never the host's; the
# confinement inside: no capability, NoNewPrivs.
jq -e '.providers[0].checks[] | select(.id=="syscalls.io_uring_denied") | .facts.served_by_sandbox_kernel != false' \
  "$d/gv.json" >/dev/null || fail "io_uring reached the host kernel"
# The kernel surface is gVisor's own; the container's limits end a fork
# loop and a balloon below their caps, so resources_bounded is claimed.
jq -e '.providers[0].checks[] | select(.id=="syscalls.kernel_surface_denied") | .facts.served_by_sandbox_kernel == true' \
  "$d/gv.json" >/dev/null || fail "the kernel surface reached the host kernel"
jq -e '.providers[0].claims.resources_bounded == true' "$d/gv.json" >/dev/null || fail "gvisor does not claim resources_bounded"
jq -e '.providers[0].confinement | .cap_eff == "0000000000000000" and .no_new_privs == 1' "$d/gv.json" >/dev/null \
  || fail "gvisor confinement $(jq -c .providers[0].confinement "$d/gv.json")"
jq -e '.providers[0].claims.mechanism == "gvisor_container" and .providers[0].claims.network == "isolated"' \
  "$d/gv.json" >/dev/null || fail "gvisor claims"
# Where each execution ran (meta.sandbox): the lifecycle checks in a
# container of their own, every other execution in a warm container, and
# warm containers really reused; every handle took the observation its
# collect's probe had just made (ensure_observation).
jq -e '[.providers[0].checks[] | .id as $c | .observations[] | select(.role == "sandbox" and .meta.sandbox)
        | {c: $c, s: .meta.sandbox}] as $o
       | ($o | map(select((.c | startswith("lifecycle.") and . != "lifecycle.consistent") or (.c | startswith("resources."))))
          | length > 0 and all(.s.warm == false))
         and ($o | map(select((.c | startswith("lifecycle.") or startswith("resources.")) | not)) | length > 0 and all(.s.warm == true))
         and ($o | map(select(.s.earlier_executions > 0)) | length > 0)
         and ($o | all(.s.ensure_observation.reused == true and .s.ensure_observation.age_ms >= 0))' "$d/gv.json" >/dev/null \
  || fail "gvisor meta.sandbox: $(jq -c '[.providers[0].checks[] | {id, s: [.observations[].meta.sandbox]}]' "$d/gv.json")"
# One shared container per handle: every execution of the run's own handle
# (all but bundle.integrity_enforced's and lifecycle.consistent's, which
# ensure handles of their own) ran in the same one, concurrently with
# others, each record naming it and why sharing is sound; the lifecycle
# and resource checks that ask for own_sandbox each got a fresh one.
jq -e '[.providers[0].checks[] | .id as $c | .observations[] | select(.role == "sandbox" and .meta.sandbox)
        | {c: $c, s: .meta.sandbox}] as $o
       | ($o | map(select(.c == "lifecycle.timeout_cleanup" or .c == "lifecycle.cancel_cleanup"
                          or (.c | startswith("resources."))))) as $own
       | ($o | map(select((.c | startswith("lifecycle.") or startswith("resources.") or . == "bundle.integrity_enforced")
                          | not))) as $main
       | ($main | map(.s.container) | unique | length == 1)
         and ($main | all(.s.shared == true and (.s.sharing | test("own_sandbox")) and (.s.container | length == 12)))
         and ($own | length >= 2 and all(.s.shared == false))
         and ($own | map(.s.container) | unique | length == ($own | length))
         and (($own | map(.s.container)) - ($main | map(.s.container)) | length == ($own | length))' \
  "$d/gv.json" >/dev/null \
  || fail "gvisor shared container: $(jq -c '[.providers[0].checks[] | {id, s: [.observations[].meta.sandbox | select(.) | {container, shared}]}]' "$d/gv.json")"
# Every shared execution went through its container's execution server
# (one per container: the same exec for every execution in it), and no
# own-sandbox one did.
jq -e '[.providers[0].checks[] | .observations[] | select(.role == "sandbox" and .meta.sandbox) | .meta.sandbox] as $o
       | ($o | map(select(.shared)) | length > 0
              and all((.started_by | test("execution server")) and (.server_exec | test("^[0-9a-f]{12}$"))))
         and ($o | map(select(.shared | not)) | all((.started_by | test("own process")) and (has("server_exec") | not)))
         and ($o | map(select(.shared)) | group_by(.container) | all(map(.server_exec) | unique | length == 1))' \
  "$d/gv.json" >/dev/null \
  || fail "gvisor execution server: $(jq -c '[.providers[0].checks[] | .observations[].meta.sandbox | select(.) | {container, started_by, server_exec}] | unique' "$d/gv.json")"
n=$(dockerd_api '/containers/json?all=1' | jq length)
[[ $n == 0 ]] || fail "$n container(s) left on the daemon"
pass "gvisor conformant through collect; lifecycle checks in containers of their own, the rest in one shared container per handle, each through its execution server; no container left; host device nodes unchanged"
dockerd_stop

