#!/usr/bin/env bash
# A --wrap bundle says what the wrapped tool did, no more, on real tools as
# the unprivileged test user:
# - the env canary reaches the wrapper: `env` and firejail pass the
#   caller's environment through and are not credited with
#   environment_scrubbed;
# - an attack without a payload result is "no observation" with the exit
#   status and stderr, never ALLOWED/denied/VISIBLE (negative control: a
#   wrapper that never runs the payload);
# - proot translates open(2) but not openat2 or io_uring: the canary it
#   hides from open() is read through them, so the filesystem reads fail;
#   its net namespace is read through readlink where stat is refused;
# - `unshare -r`: euid 0 before the exec is no setuid gain;
# - `unshare -r -m -p -f`: fs.remount_denied is attempted unclaimed in the
#   sandbox's own mount namespace (and not in proot's, the host's); its
#   PID-1 payload outliving its own signal reads as a timeout;
# - the collect summary and `report` show the axis view.
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"

stage=$(t_stage_for_user)
w=$(t_tmpdir wraphon)
chown "$AGSBX_TEST_USER:" "$w"

# wrap NAME TEMPLATE [ARGS...]: collects provider NAME as the test user into
# $w/NAME.json (stderr, with the summary, in $w/NAME.err).
wrap() {
  N=$1
  F="$w/$N.json"
  local t=$2; shift 2
  set +e
  as_user timeout -s KILL 600 "$stage/agsbx-evidence" collect --unsigned --work-dir "$w" --output "$F" \
    --provider "$N" --wrap "$N=$t" "$@" 2>"$w/$N.err"
  local rc=$?
  set -e
  [[ -s $F ]] || { cat "$w/$N.err" >&2; fail "$N: no bundle (collect exited $rc)"; }
}
p() { jq -r --arg n "$N" ".providers[] | select(.id == \$n) | $1" "$F"; }
chk() { p ".checks[] | select(.id == \"$1\") | $2"; }
# want CHECK JQ-EXPR: fails with the check's verdict and reason unless EXPR holds.
want() {
  [[ $(chk "$1" "$2") == true ]] || fail "$N $1: want $2; got $(chk "$1" '"\(.verdict): \(.reason)"')"
}

# 1. `env` passes the environment through: the canary is seen.
wrap env0 "env {argv}"
want env.scrubbed '.observed_pass == false and (.reason | test("VISIBLE"))'
[[ $(p '.underclaim | index("environment_scrubbed")') == null ]] || fail "env0: credited with environment_scrubbed"
# the reasons say what happened: a link made (no errno), a setuid exec that raised the euid
want fs.hardlink_alias_denied '.reason | test("output root: MADE; alias PRESENT")'
want priv.capabilities_dropped '.reason | test("the exec RAISED euid [1-9][0-9]* to 0 inside")'
grep -q "env0 axes: not observed: process_contained, host_filesystem_restricted" "$w/env0.err" \
  || { cat "$w/env0.err" >&2; fail "env0: no axis view in the collect summary"; }
grep -Eq "env0 .*checks: [0-9]+ pass, 0 fail, [1-9][0-9]* observed unclaimed, [0-9]+ skip" "$w/env0.err" \
  || fail "env0: observations not counted apart from skips"
"$AGSBX_BIN" report "$F" | grep -Eq '^env0 +- +- +- +- +- +-$' || fail "env0: report axis view"
pass "env as a wrapper: the canary is visible; the summary and report show the axis view"

if have firejail; then
  wrap fj "firejail --noprofile --quiet --net=none --whitelist={source} --whitelist={build} --whitelist={output}
           --whitelist={logs} {argv}"
  want env.scrubbed '.observed_pass == false and (.reason | test("VISIBLE"))'
  pass "firejail passes the caller's environment through: env.scrubbed not observed"
fi

# 2. the negative control: a wrapper that never runs the payload.
wrap norun "/bin/sh -c \"echo wrapper: payload not started >&2; exit 3\" {argv}"
iso=$(p '[.checks[] | select(.axis != "contract")] | length')
[[ $iso -ge 15 ]] || fail "norun: only $iso isolation checks"
# (ipc.host_daemons_denied attacks nothing where no daemon socket exists)
bad=$(p '[.checks[] | select(.axis != "contract" and .id != "fs.remount_denied")
  | select(.id != "ipc.host_daemons_denied" or (.reason | test("^no well-known daemon socket") | not))
  | select(.verdict != "skip" or (.reason | test("^no observation: .*exit status 3; stderr \"wrapper: payload not started\"") | not)
           or (.reason | test("ALLOWED|VISIBLE|REACHED|GAINED|denied"))) | "\(.id): \(.verdict): \(.reason)"] | join("; ")')
[[ -z $bad ]] || fail "norun: an attack without a payload result reads as an outcome: $bad"
want fs.remount_denied '.verdict == "skip" and (.reason | test("not observed \\(exit status 3"))'
want lifecycle.timeout_cleanup '.reason | test("NEVER STARTED \\(the run: exit status 3; stderr \"wrapper: payload not started\"\\)")'
pass "a wrapper that never runs the payload: every attack is no observation, with exit status and stderr"

# 3. proot: open(2) translated, openat2 and io_uring not.
if have proot; then
  root=$(t_tmpdir prootfs)
  chmod 755 "$root"
  wrap proot "proot -r $root -b /usr -b /usr/bin:/bin -b /usr/lib:/lib -b /usr/lib64:/lib64 -b /proc -b /dev
              -b {source} -b {build} -b {output} -b {logs} -w {cwd} {argv}"
  if [[ $(chk syscalls.io_uring_denied .observed_pass) == false ]]; then
    want fs.host_read_denied '.observed_pass == false and .facts.argv_variants[0].outcome == "denied"
      and .facts.alternate_reads.io_uring == "ALLOWED"'
    want secrets.home_denied '.observed_pass == false and .facts.alternate_reads.io_uring == "ALLOWED"'
  fi
  want fs.host_read_denied '.facts.alternate_reads.openat2 == "ALLOWED" and (.reason | test("ALLOWED inside \\(open ENOENT\\)"))'
  want net.namespace_distinct '.observed_pass == false and (.reason | test("inside [0-9]+ vs host"))'
  want fs.remount_denied '.verdict == "skip" and (.reason | test("shares the host.s mount namespace"))'
  [[ $(p '.underclaim | index("host_filesystem_restricted")') == null ]] || fail "proot credited with the filesystem"
  pass "proot: a canary hidden from open(2) but read through openat2/io_uring is no filesystem pass"
fi

# 4. util-linux unshare: root in a user namespace of its own.
if have unshare; then
  wrap unshare "unshare -r -n {argv}"
  want priv.capabilities_dropped '.facts.setuid_gains_inside == false and .facts.euid_before_exec_inside == 0
    and (.reason | test("no credential change inside \\(euid 0 before the exec\\)"))'
  want priv.capabilities_dropped '.observed_pass == false and (.reason | test("CapEff 0*1f"))'
  pass "unshare -r: euid 0 before the exec is no setuid gain (the full capability set still fails)"

  wrap unsharefull "unshare -r -n -m -p -f --mount-proc {argv}"
  want fs.remount_denied '.facts.attempted == true and .observations[-1].result.op == "remount"'
  want exec.status_fidelity '.reason | test("kill-self 15 -> 124 \\(timed out: still running after its own signal")'
  pass "unshare -r -m -p: remount attempted unclaimed in its own mount namespace; PID 1's ignored signal is a timeout"
fi

# 5. HOME: the build root by default; the sandbox user's real home with
#    --config ID.home=real (tools that keep state in $HOME); bad values refused.
hs="$w/home-seen"
: >"$hs"
chown "$AGSBX_TEST_USER:" "$hs"
t='/bin/sh -c "printf %s \"$HOME\" > '"$hs"'; exec \"$@\"" sh {argv}'
wrap homebuild "$t" -q
[[ $(cat "$hs") == "$w"/* ]] || fail "home: default HOME is $(cat "$hs"), want the build root under $w"
wrap homereal "$t" -q --config homereal.home=real
real=$(getent passwd "$AGSBX_TEST_USER" | cut -d: -f6)
[[ $(cat "$hs") == "$real" ]] || fail "home=real: HOME is $(cat "$hs"), want $real"
set +e
as_user "$stage/agsbx-evidence" collect -q --unsigned --work-dir "$w" --output "$w/bad.json" --provider hb \
  --wrap "hb=env {argv}" --config hb.home=elsewhere 2>"$w/bad.err"
rc=$?
set -e
[[ $rc == 2 && ! -e $w/bad.json ]] || fail "home=elsewhere: exit $rc, want 2 and no bundle"
grep -q "hb.home: expected 'build' or 'real'" "$w/bad.err" || fail "home=elsewhere: $(cat "$w/bad.err")"
pass "HOME: the build root by default, the real home with home=real, anything else refused"

# 6. resources the harness cannot see. Without an inventory the lifecycle
#    reasons say nothing was inventoried (never "0 left"); a declared
#    inventory command is compared before and after. The negative control:
#    a wrapper that leaves one file per execution in a directory it lists.
res="$w/resources"
mkdir "$res"
chown "$AGSBX_TEST_USER:" "$res"
leaky='/bin/sh -c "mktemp -p '"$res"' res-XXXXXX >/dev/null; exec \"$@\"" sh {argv}'
wrap leaky "$leaky" -q
want lifecycle.timeout_cleanup '.verdict == "pass" and (.reason | test("; provider resources not inventoried"))
  and .facts.provider_inventory == "none"'
wrap leakyinv "$leaky" -q --config "leakyinv.inventory=ls $res"
for c in lifecycle.timeout_cleanup lifecycle.cancel_cleanup; do
  want $c '.verdict == "fail" and (.reason | test("; [1-9][0-9]* provider resource\\(s\\) left"))
    and (.facts.provider_leftovers | length > 0) and .facts.provider_inventory == "taken"'
done
wrap envinv "env {argv}" -q --config "envinv.inventory=ls $res"
want lifecycle.timeout_cleanup '.verdict == "pass" and (.reason | test("; 0 provider resource\\(s\\) left"))'
set +e
as_user "$stage/agsbx-evidence" collect -q --unsigned --work-dir "$w" --output "$w/bad.json" --provider hb \
  --wrap "hb=env {argv}" --config "hb.inventory=/nonexistent/lister" 2>"$w/bad.err"
rc=$?
set -e
[[ $rc == 2 && ! -e $w/bad.json ]] || fail "inventory=/nonexistent: exit $rc, want 2 and no bundle"
pass "resources: not inventoried is said so; a declared inventory catches what a leaky wrapper leaves"
