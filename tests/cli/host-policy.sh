#!/usr/bin/env bash
# collect --host-policy distro-bwrap-profile: the bundle records what the
# workflow changed (loading the distribution's bwrap AppArmor profile) and
# the userns sysctl before and now (read, never written); the run stays
# representative only while that sysctl is unchanged. Bad values are bad
# input (exit 2, no bundle).
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir hp)
now=$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null || echo absent)
other=$([[ $now == 1 ]] && echo 0 || echo 1)

expect_rc 0 "$AGSBX_BIN" collect --provider trusted_local --unsigned -q --output "$d/same.json" \
  --host-policy distro-bwrap-profile --userns-sysctl-before "$now"
jq -e --arg now "$now" '.context.host_policy | .change == "distro bwrap profile loaded by the workflow"
  and .sysctl_untouched == true and .restrict_unprivileged_userns_now == $now' "$d/same.json" >/dev/null \
  || fail "unchanged sysctl: $(jq -c .context.host_policy "$d/same.json")"
jq -e '.context.representative_reasons | index("host_policy:sysctl_changed") == null' "$d/same.json" >/dev/null \
  || fail "an untouched sysctl made the run non-representative"
pass "profile loaded, sysctl untouched: recorded, representativeness unaffected"

expect_rc 0 "$AGSBX_BIN" collect --provider trusted_local --unsigned -q --output "$d/changed.json" \
  --host-policy distro-bwrap-profile --userns-sysctl-before "$other"
jq -e '.context.representative == false and (.context.representative_reasons | index("host_policy:sysctl_changed") != null)
  and .context.host_policy.sysctl_untouched == false' "$d/changed.json" >/dev/null \
  || fail "changed sysctl not flagged: $(jq -c .context "$d/changed.json")"
pass "sysctl differs from before: non-representative, host_policy:sysctl_changed"

# Both bundles are valid against the shipped schema.
if $PY -c 'import jsonschema' 2>/dev/null; then
  for f in same changed; do
    $PY - "$AGSBX_SOURCE_DIR/schemas/evidence-bundle.schema.json" "$d/$f.json" <<'PY' || fail "$f.json invalid against the schema"
import json, sys
from jsonschema import Draft202012Validator
errs = list(Draft202012Validator(json.load(open(sys.argv[1]))).iter_errors(json.load(open(sys.argv[2]))))
if errs:
    print(errs[0].json_path, errs[0].message[:300]); sys.exit(1)
PY
  done
  pass "bundles with host_policy (and the v2 checks, confinement) valid against the schema"
else
  echo "# note: python3-jsonschema missing, schema validation not run" >&2
fi
expect_rc 2 "$AGSBX_BIN" collect --provider trusted_local --unsigned --output "$d/bad1.json" --host-policy disable-apparmor --userns-sysctl-before 0
expect_rc 2 "$AGSBX_BIN" collect --provider trusted_local --unsigned --output "$d/bad2.json" --host-policy distro-bwrap-profile
expect_rc 2 "$AGSBX_BIN" collect --provider trusted_local --unsigned --output "$d/bad3.json" --host-policy distro-bwrap-profile --userns-sysctl-before x
[[ ! -e $d/bad1.json && ! -e $d/bad2.json && ! -e $d/bad3.json ]] || fail "a bundle was written after bad input"
pass "unknown policy, missing or malformed before-value: exit 2, no bundle"
