#!/usr/bin/env bash
# Agently's own Landlock provider through collect, as the unprivileged user,
# via the Agently adapter (the acceptance command). What it really does
# (docs/providers/agently.md, worked example): the filesystem rules hold for
# the payload itself, but they are derived from argv[0] (read access to
# which(argv[0])/../..), so with /bin/sh as argv[0] all of / is readable;
# and its cleanup is process-group based, so a detached grandchild that
# keeps the output pipes makes a cancelled (or timed-out) call never return:
# the adapter cannot answer, the harness's deadline fires (adapter_timeout).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/agently.sh"
source "$(dirname "$0")/../lib/expect.sh"
agently_require_src
abi=$(/usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None,use_errno=True); print(l.syscall(444,None,0,1))')
[[ $abi -ge 1 ]] || skip "landlock" 1 "the kernel reports no Landlock ABI ($abi)"

stage=$(agently_stage)
out=$(t_tmpdir out)
# The acceptance command as given (every default provider plus the declared one).
agently_collect "$stage" landlock "$out/ll.json"
ag_waits_blocking landlock
P=landlock
[[ $AG_RC == 1 ]] || { tail -n 30 "$out/ll.json.log" >&2; fail "exit $AG_RC, want 1 (a provider defect)"; }
[[ $(ag_jq "$out/ll.json" $P .kind) == external ]] || fail "kind"
[[ $(ag_jq "$out/ll.json" $P .verdict) == defective ]] || fail "verdict $(ag_jq "$out/ll.json" $P .verdict)"
[[ $(ag_jq "$out/ll.json" $P .reason) == adapter_timeout ]] || fail "reason $(ag_jq "$out/ll.json" $P .reason)"
# Every expected verdict, the failing checks exactly: set "agently-landlock"
# of tests/data/expected-verdicts.json.
expect_verdicts "$out/ll.json" agently-$P agently-landlock
failing=$(ag_jq "$out/ll.json" $P '.failing_checks | sort | join(",")')
pass "landlock: defective, failing exactly $failing; $EXPECT_COUNT checks as expected"

# Why: the cancelled spawn-detached run never came back (the grandchild
# holds stdout/stderr); timeout_cleanup then found the adapter broken.
ag_expect "$out/ll.json" $P adapter.protocol fail '^adapter_timeout: execute \(id [0-9]+\) not answered'
ag_expect "$out/ll.json" $P lifecycle.cancel_cleanup fail 'provider refused to execute'
[[ $(ag_jq "$out/ll.json" $P '.checks[] | select(.id=="lifecycle.cancel_cleanup") | .observations[0] | "\(.refused) \(.argv[1])"') \
   == "adapter_timeout spawn-detached" ]] || fail "cancel_cleanup observation"
[[ $(ag_jq "$out/ll.json" $P '.declared.adapter.violation.reason') == adapter_timeout ]] || fail "adapter record"
pass "landlock: the cancelled run with a detached grandchild never returned (adapter_timeout)"

# Why the reads fail: denied for the payload and through /usr/bin/env, but
# through /bin/sh the rules include read access to / (which(/bin/sh)/../..).
for c in fs.host_read_denied fs.symlink_escape_denied; do
  ag_expect "$out/ll.json" $P $c fail '\((open )?EACCES\) \[via /bin/sh: ALLOWED, via /usr/bin/env: denied\]'
  [[ $(ag_jq "$out/ll.json" $P ".checks[] | select(.id==\"$c\") | .facts.argv_variants | map(\"\(.argv0 | sub(\".*/\"; \"\")):\(.outcome)\") | join(\" \")") \
     == "agsbx-payload:denied sh:ALLOWED env:denied" ]] || fail "$c argv variants"
done
ag_expect "$out/ll.json" $P capabilities.truthful fail 'OVERCLAIM \["host_filesystem_restricted","privilege_escalation_blocked"\]'
pass "landlock: the canary is readable with /bin/sh as argv[0] (policy from argv[0]); host_filesystem_restricted overclaimed"

# Upstream's rules leave /proc unreadable (only /proc/self/exe), so the
# payload cannot show CapPrm/CapBnd; what cannot be observed is not counted
# as dropped. NoNewPrivs is set (and priv.no_escalation passes).
ag_expect "$out/ll.json" $P priv.capabilities_dropped fail 'CapPrm \? .*CapBnd \? NoNewPrivs 1'
[[ $(ag_jq "$out/ll.json" $P '.confinement | "\(.cap_eff) \(.cap_prm) \(.cap_bnd) \(.no_new_privs)"') == "0000000000000000 null null 1" ]] \
  || fail "confinement seen inside"
pass "landlock: capability sets unobservable under its own rules (priv.capabilities_dropped fails closed)"

# What it does enforce (writes, no_new_privs, output bounds) and the axes
# it does not claim: their verdicts are in the set above.
ag_expect "$out/ll.json" $P output.bounded pass 'captured 65536/65536 bytes \(limit 65536\), truncation flags set/set'
ag_expect "$out/ll.json" $P proc.contained not_claimed 'VISIBLE inside'
[[ $(ag_jq "$out/ll.json" $P .probe.facts.system_abi) == "$abi" ]] || fail "system_abi is not the kernel's $abi"
[[ $(ag_jq "$out/ll.json" $P '.claims | "\(.host_filesystem_restricted) \(.process_contained) \(.network)"') \
   == "true false inherited" ]] || fail "claims"
pass "landlock: writes denied, unclaimed axes observed and recorded, ABI $abi matches the host"

# The built-in providers ran beside it, untouched by the declaration.
[[ $(jq -r '.providers[] | select(.id=="landlock") | .verdict' "$out/ll.json") == conformant ]] \
  || fail "the built-in landlock provider is not conformant next to the adapter"
ag_no_leftovers landlock
pass "landlock: nothing of the run remains"
