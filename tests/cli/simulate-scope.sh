#!/usr/bin/env bash
# --simulate applies only to the provider whose fail-closed path it tests
# (blocked-userns: bubblewrap); every other provider runs on the real host,
# and the bundle names only the simulated one. A simulation that applies to
# no selected provider is bad usage. agsbx-simulate refuses an architecture
# it has no system call numbers for instead of filtering nothing.
source "$(dirname "$0")/../lib/common.sh"

SIM=$AGSBX_BUILD_DIR/agsbx-simulate
[[ -x $SIM ]] || fail "agsbx-simulate not built: $SIM"

# ---- the helper and unknown architectures --------------------------------
native=$(/usr/bin/python3 -c 'import platform; print({"x86_64":"0xc000003e","aarch64":"0xc00000b7"}.get(platform.machine(),""))')
[[ -n $native ]] || skip "simulate scope" 0 "no known audit arch for $(uname -m)"
AGSBX_SIMULATE_ARCH=$native "$SIM" --blocked-userns -- true || fail "native arch $native refused"
set +e
AGSBX_SIMULATE_ARCH=0x40000028 "$SIM" --blocked-userns -- touch "$T_ROOT/ran" 2>"$T_ROOT/arch.err"
rc=$?
set -e
[[ $rc == 125 ]] || fail "unknown architecture: exit $rc, want 125 (refused)"
[[ ! -e $T_ROOT/ran ]] || fail "unknown architecture: the program ran unfiltered"
grep -q "unsupported architecture" "$T_ROOT/arch.err" || fail "no reason given: $(cat "$T_ROOT/arch.err")"
pass "agsbx-simulate refuses an unknown architecture (exit 125, nothing ran)"

# ---- scope in collect -------------------------------------------------------
have_test_user || skip "simulate scope" 1 "needs root to run as $AGSBX_TEST_USER"
command -v bwrap >/dev/null || skip bubblewrap 1 "bwrap is not installed"
stage=$(t_stage_for_user)
w=$(t_tmpdir scope); chown "$AGSBX_TEST_USER" "$w"

as_user "$stage/agsbx-evidence" collect --provider trusted_local --simulate blocked-userns --unsigned \
  --work-dir "$w" --output "$w/none.json" 2>"$w/none.err" || fail "collect with an inapplicable --simulate exited $?"
grep -q "applies to none of the selected providers" "$w/none.err" || fail "no warning for an inapplicable --simulate"
jq -e '.context.simulations[0].name == "blocked-userns" and .context.simulations[0].providers == [] and
       ((.context.representative_reasons | map(select(startswith("simulated"))) | length) == 0)' \
  "$w/none.json" >/dev/null || fail "an inapplicable --simulate was recorded as a simulation"
pass "--simulate that applies to no selected provider: a warning, recorded with no provider, run not labelled simulated"

as_user "$stage/agsbx-evidence" collect -q --provider bubblewrap --provider landlock --simulate blocked-userns \
  --unsigned --work-dir "$w" --output "$w/sim.json" || fail "collect --simulate exited $?"
F=$w/sim.json
jq -e '.context.simulations | length == 1 and .[0].providers == ["bubblewrap"]' "$F" >/dev/null \
  || { jq .context.simulations "$F" >&2; fail "simulation not scoped to bubblewrap in the bundle"; }
[[ $(jq -r '.providers[] | select(.id=="bubblewrap") | .verdict' "$F") == blocked ]] || fail "bubblewrap not blocked under the simulation"
ll() { jq -r ".providers[] | select(.id==\"landlock\") | $1" "$F"; }
[[ $(ll .verdict) == conformant ]] || fail "landlock not conformant beside the simulation: $(ll .verdict)"
# Landlock's helper installs its own seccomp filter, so "seccomp mode 0
# inside" no longer tells the simulation's filter apart: the scope rests on
# the simulations record above and on landlock staying conformant with its
# own filter seen by the probe's self-test and nothing underclaimed.
[[ $(ll '.probe.facts.self_test.seccomp_denied') == true ]] \
  || fail "landlock's own seccomp filter not seen: $(ll '.probe.facts.self_test|tostring')"
[[ $(ll '.underclaim | length') == 0 ]] || fail "landlock underclaims under another provider's simulation: $(ll .underclaim)"
pass "--simulate blocked-userns reaches bubblewrap only; landlock ran unsimulated"
