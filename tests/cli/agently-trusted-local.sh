#!/usr/bin/env bash
# Agently's trusted_local provider through collect, as the unprivileged user,
# via the Agently adapter. What it really does (docs/providers/agently.md):
# runs argv on the host (every isolation check not_claimed, observed
# ALLOWED), answers "ready" to a health check after release, and like
# landlock cannot clean up a detached grandchild that holds its pipes.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/agently.sh"
source "$(dirname "$0")/../lib/expect.sh"
agently_require_src
# Upstream's probe is available only with one of these on PATH (it looks for
# `python`, not `python3`); CI has c++ (clang). Without one the expectations
# below (established with one) do not apply.
tools=$(as_user sh -c 'for t in python node go c++; do command -v $t; done' || true)
[[ -n $tools ]] || skip "agently trusted_local" 1 "none of python/node/go/c++ on PATH: upstream's probe would report no_host_toolchains_found"

stage=$(agently_stage)
out=$(t_tmpdir out)
agently_collect "$stage" trusted_local "$out/tl.json" --provider agently-trusted_local
ag_waits_blocking trusted_local
P=trusted_local
[[ $AG_RC == 1 ]] || { tail -n 30 "$out/tl.json.log" >&2; fail "exit $AG_RC, want 1"; }
[[ $(ag_jq "$out/tl.json" $P .verdict) == defective ]] || fail "verdict"
# Every expected verdict, the failing checks exactly: set
# "agently-trusted_local" of tests/data/expected-verdicts.json.
expect_verdicts "$out/tl.json" agently-$P agently-trusted_local
failing=$(ag_jq "$out/tl.json" $P '.failing_checks | sort | join(",")')
pass "trusted_local: defective, failing exactly $failing"

# Health is "ready" after release: upstream only checks the resource's type.
ag_expect "$out/tl.json" $P lifecycle.consistent fail 'health ready before release, READY after; execute after release refused'
ag_expect "$out/tl.json" $P adapter.protocol fail '^adapter_timeout: execute'
pass "trusted_local: READY after release; the cancelled detached run never returned"

# Its upstream reason, declared as its ready reason, recorded verbatim.
[[ $(ag_jq "$out/tl.json" $P '"\(.probe.facts.adapter_reason)|\(.probe.facts.upstream_reason)"') \
   == "unsafe_host_toolchains_available|unsafe host toolchains available" ]] || fail "probe reason facts"
# No isolation, and none claimed: observed and recorded.
ag_expect "$out/tl.json" $P fs.host_read_denied not_claimed 'ALLOWED inside'
ag_expect "$out/tl.json" $P fs.host_write_denied not_claimed 'ALLOWED'
ag_expect "$out/tl.json" $P proc.contained not_claimed 'VISIBLE inside'
ag_expect "$out/tl.json" $P output.bounded pass 'truncation flags set/set'
[[ $(ag_jq "$out/tl.json" $P '.claims | [.process_contained, .host_filesystem_restricted, .privilege_escalation_blocked, .syscalls_restricted] | any') \
   == false ]] || fail "trusted_local claims an axis"
# The opt-in upstream demands was supplied by the adapter, and says so.
ag_jq "$out/tl.json" $P '.checks[] | select(.id=="fs.grant_write") | .observations[0].meta.adapter.meta.adapter | keys[]' >/dev/null \
  || fail "result meta lacks the adapter's labels"
ag_no_leftovers trusted_local
pass "trusted_local: nothing isolated or claimed, contract checks as observed, nothing remains"
