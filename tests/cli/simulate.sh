#!/usr/bin/env bash
# agsbx-simulate: the labelled seccomp simulations give the real refusals a
# restrictive host gives (docs/design.md, "Simulating a host that blocks
# user namespaces"), each paired with
# the same command without the simulation as control; the filter is
# inherited by the whole tree; the host itself is untouched. Run as root and
# as the unprivileged test user.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SIM=$AGSBX_BUILD_DIR/agsbx-simulate
LLX=$AGSBX_BUILD_DIR/agsbx-landlock-exec
[[ -x $SIM ]] || fail "agsbx-simulate not built: $SIM"
[[ -x $LLX ]] || fail "agsbx-landlock-exec not built: $LLX"
command -v bwrap >/dev/null || skip bubblewrap 1 "bwrap is not installed"
command -v unshare >/dev/null || skip unshare 1 "util-linux unshare is missing"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER (useradd -m $AGSBX_TEST_USER)"
$PY -c 'import jsonschema' 2>/dev/null || skip python3-jsonschema 1 "/usr/bin/python3 has no jsonschema"
command -v jq >/dev/null || skip jq 1 "jq not installed"

T=$(t_tmpdir simulate)
S=$(t_stage_for_user)
BW=(bwrap --unshare-all --ro-bind /usr /usr --symlink usr/lib64 /lib64 --symlink usr/lib /lib
    --symlink usr/bin /bin --proc /proc --dev /dev /usr/bin/true)
MSG_EPERM="bwrap: No permissions to create new namespace"
MSG_ENOSPC="nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)"
MSG_EINVAL="likely because the kernel does not support user namespaces"

cat > "$T/m.json" <<'EOF'
{"version":1,"target_abi":7,"rules":[{"path":"/usr","access":"read"}]}
EOF
chmod 0644 "$T/m.json"

# run_case WHO: "root" or "user"; sets OUT/RC.
run() {
  local who=$1; shift
  set +e
  if [[ $who == user ]]; then OUT=$(as_user "$@" 2>&1); else OUT=$("$@" 2>&1); fi
  RC=$?
  set -e
}
want_fail_with() { # DESC TEXT
  [[ $RC != 0 ]] || fail "$1: expected a failure, got exit 0: $OUT"
  [[ $OUT == *"$2"* ]] || fail "$1: expected '$2' in: $OUT"
  pass "$1"
}
want_ok() { # DESC
  [[ $RC == 0 ]] || fail "$1: expected exit 0, got $RC: $OUT"
  pass "$1"
}

host_seccomp_before=$(awk '/^Seccomp:/ {print $2}' /proc/self/status)

for who in root user; do
  if [[ $who == user ]]; then sim=$S/agsbx-simulate; llx=$S/agsbx-landlock-exec; else sim=$SIM; llx=$LLX; fi

  # unshare -U: control works, simulation refuses with EPERM.
  run "$who" unshare -U true
  want_ok "$who: unshare -U without simulation (control)"
  run "$who" "$sim" --blocked-userns -- unshare -U true
  want_fail_with "$who: --blocked-userns: unshare -U" "Operation not permitted"
  # Inherited by the whole tree, through a shell.
  run "$who" "$sim" --blocked-userns -- sh -c 'unshare -U true'
  want_fail_with "$who: --blocked-userns inherited by a grandchild" "Operation not permitted"
  # Other namespaces are not the simulation's business (root may make them).
  if [[ $who == root ]]; then
    run root "$sim" --blocked-userns -- unshare -m true
    want_ok "root: --blocked-userns leaves a mount namespace alone"
  fi

  # bwrap: control works; then the messages of a real restrictive host.
  run "$who" "${BW[@]}"
  want_ok "$who: bwrap without simulation (control)"
  run "$who" "$sim" --blocked-userns -- "${BW[@]}"
  want_fail_with "$who: --blocked-userns: bwrap" "$MSG_EPERM"
  run "$who" "$sim" --blocked-userns --errno=ENOSPC -- "${BW[@]}"
  want_fail_with "$who: --blocked-userns --errno=ENOSPC: bwrap" "$MSG_ENOSPC"
  run "$who" "$sim" --blocked-userns --errno=EINVAL -- "${BW[@]}"
  want_fail_with "$who: --blocked-userns --errno=EINVAL: bwrap" "$MSG_EINVAL"

  # Landlock: control applies; --no-landlock gives the ENOSYS refusal and
  # the helper runs nothing; --blocked-userns leaves Landlock working.
  run "$who" "$llx" --manifest "$T/m.json" -- /usr/bin/true
  want_ok "$who: agsbx-landlock-exec without simulation (control)"
  run "$who" "$sim" --no-landlock -- "$llx" --manifest "$T/m.json" -- /usr/bin/true
  [[ $RC == 120 ]] || fail "$who: --no-landlock: helper exit $RC, want 120: $OUT"
  want_fail_with "$who: --no-landlock: agsbx-landlock-exec" \
    "agsbx-landlock-exec: kernel_does_not_support_landlock: "
  run "$who" "$sim" --blocked-userns -- "$llx" --manifest "$T/m.json" -- /usr/bin/true
  want_ok "$who: --blocked-userns keeps Landlock available"
  run "$who" "$sim" --no-landlock -- unshare -U true
  want_ok "$who: --no-landlock keeps user namespaces available"

  # The filter is really there (a kernel fact, not our say-so).
  run "$who" "$sim" --no-landlock -- grep '^Seccomp:' /proc/self/status
  [[ $OUT == *"Seccomp:"*2* ]] || fail "$who: no seccomp filter in the child: $OUT"
  pass "$who: the child runs under a seccomp filter"
done

# A real labelled-simulation bundle, collected as the unprivileged user,
# is valid against the shipped schema (context.simulations[] carries the
# "effect" collect writes) and loads.
B=$(t_tmpdir simbundle); chown "$AGSBX_TEST_USER" "$B"
run user "$S/agsbx-evidence" collect --provider bubblewrap --simulate blocked-userns --unsigned -q \
  --work-dir "$B" --output "$B/sim.json"
want_ok "user: collect --simulate blocked-userns"
jq -e '.context.simulations == [.context.simulations[0]] and .context.simulations[0].name == "blocked-userns"
       and (.context.simulations[0].effect | type == "string" and length > 0)' "$B/sim.json" >/dev/null ||
  fail "simulations entry not as collect writes it: $(jq -c .context.simulations "$B/sim.json")"
$PY - "$AGSBX_SOURCE_DIR/schemas/evidence-bundle.schema.json" "$B/sim.json" <<'PY' || fail "schema rejects the --simulate blocked-userns bundle"
import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
errs = list(v.iter_errors(json.load(open(sys.argv[2], encoding="utf-8"))))
for e in errs[:3]:
    print("schema:", e.message[:160], list(e.absolute_path), file=sys.stderr)
sys.exit(1 if errs else 0)
PY
expect_rc 0 "$AGSBX_BIN" report "$B/sim.json" >/dev/null
pass "user: --simulate blocked-userns bundle valid against the schema and loadable"

# Usage errors.
run root "$SIM" -- true
[[ $RC == 125 && $OUT == *usage* ]] || fail "no simulation named: exit $RC: $OUT"
run root "$SIM" --blocked-userns --errno=EBOGUS -- true
[[ $RC == 125 && $OUT == *"unknown errno"* ]] || fail "bad errno: exit $RC: $OUT"
run root "$SIM" --blocked-userns
[[ $RC == 125 ]] || fail "no program: exit $RC: $OUT"
run root "$SIM" --blocked-userns -- /nonexistent/prog
[[ $RC == 125 && $OUT == *"No such file"* ]] || fail "missing program: exit $RC: $OUT"
pass "usage errors exit 125 with a message"

# The host was not changed: this shell has no filter, userns still work.
[[ $(awk '/^Seccomp:/ {print $2}' /proc/self/status) == "$host_seccomp_before" ]] || fail "host seccomp changed"
unshare -U true || fail "host user namespaces broken after the test"
pass "host untouched"
