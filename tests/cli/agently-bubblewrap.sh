#!/usr/bin/env bash
# Agently's Bubblewrap provider (the PR #352 reference) through collect, as
# the unprivileged user, via the Agently adapter. What it really does on a
# merged-/usr host like Debian 12 (docs/providers/agently.md): its probe
# resolves /lib64 and /lib to /usr/lib64 and /usr/lib and binds those, but
# never recreates the /lib64 and /lib symlinks, so the ELF interpreter of
# /usr/bin/true (/lib64/ld-linux-x86-64.so.2) is missing inside and bwrap's
# exec fails with ENOENT; the provider calls that bwrap_user_namespace_blocked and refuses.
# The harness's own probe of that host condition, as the same user, finds
# user namespaces working: probe.truthful fails, the provider is defective.
# This test also shows it independently with bwrap itself.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/agently.sh"
source "$(dirname "$0")/../lib/expect.sh"
agently_require_src
command -v bwrap >/dev/null || skip "bubblewrap" 1 "bwrap not installed"
[[ -L /lib64 ]] || skip "agently bubblewrap" 0 "/lib64 is not a symlink (not merged /usr): the worked example does not apply"

stage=$(agently_stage)
out=$(t_tmpdir out)
agently_collect "$stage" bubblewrap "$out/bw.json" --provider agently-bubblewrap
P=bubblewrap
[[ $AG_RC == 1 ]] || { tail -n 30 "$out/bw.json.log" >&2; fail "exit $AG_RC, want 1 (a false blocked reason is a defect)"; }
[[ $(ag_jq "$out/bw.json" $P .verdict) == defective ]] || fail "verdict $(ag_jq "$out/bw.json" $P .verdict)"
[[ $(ag_jq "$out/bw.json" $P .reason) == bwrap_user_namespace_blocked ]] || fail "reason"
# Every expected verdict, probe.truthful the only failing check: set
# "agently-bubblewrap" of tests/data/expected-verdicts.json.
expect_verdicts "$out/bw.json" agently-$P agently-bubblewrap
[[ $(ag_jq "$out/bw.json" $P .probe.detail) == *"bwrap: execvp /usr/bin/true: No such file or directory"* ]] \
  || fail "probe detail lacks what upstream's mechanism probe printed: $(ag_jq "$out/bw.json" $P .probe.detail)"
ag_expect "$out/bw.json" $P fail.closed pass 'ensure refused with bwrap_user_namespace_blocked; payload never executed'
ag_expect "$out/bw.json" $P probe.truthful fail 'the host does NOT have the condition the reason asserts'
[[ $(ag_jq "$out/bw.json" $P '.checks[] | select(.id=="probe.truthful") | .facts.host_condition |
      "\(.condition) \(.provider_says) \(.harness_observed) \(.how.as_uid)"') \
   == "userns_blocked true false $(id -u "$AGSBX_TEST_USER")" ]] || fail "probe.truthful host_condition facts"
pass "bubblewrap: refuses as 'bwrap_user_namespace_blocked' (fail.closed passes); the harness finds userns working (probe.truthful fails)"

# The reason is false: the same user creates user namespaces with the same
# bwrap, once /lib64 and /lib exist inside; only the missing symlinks differ.
w=$(t_tmpdir w)
(cd "$w" && as_user bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr --symlink usr/lib64 /lib64 \
  --symlink usr/lib /lib --proc /proc --dev /dev /usr/bin/true) || fail "bwrap with /lib64 and /lib fails too: the worked example is wrong here"
set +e
err=$(cd "$w" && as_user bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr \
  --proc /proc --dev /dev /usr/bin/true 2>&1)
rc=$?
set -e
[[ $rc != 0 && $err == *"execvp /usr/bin/true: No such file or directory"* ]] || fail "without /lib64: rc $rc, $err"
[[ $(jq -r '.host.userns.max_user_namespaces.value' "$out/bw.json") -gt 0 ]] || fail "host probe: userns max is 0"
pass "user namespaces work for $AGSBX_TEST_USER; upstream's failure is the missing /lib64 and /lib symlinks (the reason is false)"
ag_no_leftovers bubblewrap
