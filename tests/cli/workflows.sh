#!/usr/bin/env bash
# GitHub integration: action-validator (npm @action-validator/cli) passes on
# every workflow and the composite action, and rejects a broken one; the
# properties the issue asks for hold (PyYAML): the reusable workflow is
# workflow_call, checks out the caller, pins the tool by ref, writes the
# bundle outside the subject, uploads with overwrite/if-no-files-found; the
# template checks out the subject before recording it. The action's collect
# step (run.sh) runs for real: outputs, ::notice:: for a blocked provider,
# ::error:: for a defective NEGATIVE-CONTROL one, the step summary, the
# attestation predicate, and no subject without a git checkout.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir wf)
W=$AGSBX_SOURCE_DIR/workflows
have action-validator || exit 77
$PY -c 'import yaml' 2>/dev/null || fail "python3-yaml missing"

files=("$W"/github/*.yml "$W"/action/action.yml)
for f in "${files[@]}"; do
  action-validator "$f" >"$d/av.log" 2>&1 || { cat "$d/av.log" >&2; fail "action-validator: $f"; }
done
[[ ${#files[@]} -ge 4 ]] || fail "expected the template, the reusable workflow, the PR-comment recipe and the action"
# The validator is not vacuous.
sed 's/^    runs-on:/    runs-onn:/' "$W/github/agsbx-evidence-reusable.yml" >"$d/broken.yml"
action-validator "$d/broken.yml" >/dev/null 2>&1 && fail "action-validator accepted a broken workflow"
sed 's/^  using: composite/  using: compost/' "$W/action/action.yml" >"$d/action.yml"
action-validator "$d/action.yml" >/dev/null 2>&1 && fail "action-validator accepted a broken action"
pass "action-validator: ${#files[@]} files valid, broken variants rejected"

$PY - "$W" <<'PY' || fail "workflow properties"
import sys, yaml, glob, os
W = sys.argv[1]
def load(p):
    d = yaml.safe_load(open(p))
    d["on"] = d.get("on", d.get(True))   # YAML 1.1 reads `on:` as True
    return d
def steps(job): return job.get("steps", [])
def uses(s, what): return str(s.get("uses", "")).startswith(what)
errs = []
act = yaml.safe_load(open(f"{W}/action/action.yml"))
for i in ("providers", "challenge", "attach-command", "sign", "attest"):
    if i not in act["inputs"]: errs.append(f"action input {i} missing")
for o in ("bundle", "summary"):
    if o not in act["outputs"]: errs.append(f"action output {o} missing")
if act["runs"]["using"] != "composite": errs.append("action is not composite")
if not any(uses(s, "actions/attest@") for s in act["runs"]["steps"]): errs.append("action never attests")

r = load(f"{W}/github/agsbx-evidence-reusable.yml")
if "workflow_call" not in r["on"]: errs.append("reusable: not on workflow_call")
ins = r["on"]["workflow_call"]["inputs"]
if not ins.get("tool-ref", {}).get("required"): errs.append("reusable: tool-ref not required")
c = r["jobs"]["collect"]
co = [s for s in steps(c) if uses(s, "actions/checkout@")]
if not any("repository" not in s.get("with", {}) for s in co): errs.append("reusable: caller not checked out")
if not any(s.get("with", {}).get("ref") == "${{ inputs.tool-ref }}" for s in co): errs.append("reusable: tool not pinned by ref")
for wf in glob.glob(f"{W}/github/*.yml"):
    d = load(wf)
    for jn, j in d["jobs"].items():
        for s in steps(j):
            if uses(s, "actions/upload-artifact@"):
                w = s["with"]
                if w.get("overwrite") is not True: errs.append(f"{os.path.basename(wf)}:{jn}: upload without overwrite: true")
                if w.get("if-no-files-found") != "error": errs.append(f"{os.path.basename(wf)}:{jn}: upload without if-no-files-found: error")
                # legs of a matrix upload side by side: each needs its own name
                if "matrix" in j.get("strategy", {}) and "matrix" not in str(w.get("name")): errs.append(f"{os.path.basename(wf)}:{jn}: artifact name not per leg")
            text = str(s.get("with", {})) + str(s.get("run", ""))
            if "output-dir" in text and "runner.temp" not in text: errs.append(f"{wf}: bundle inside the workspace")
        # whoever records a subject checks it out first
        idx = [k for k, s in enumerate(steps(j)) if "subject-repo" in str(s)]
        chk = [k for k, s in enumerate(steps(j)) if uses(s, "actions/checkout@") and "repository" not in s.get("with", {})]
        if idx and (not chk or min(chk) > min(idx)): errs.append(f"{os.path.basename(wf)}:{jn}: subject recorded without a checkout")
t = load(f"{W}/github/agsbx-evidence.yml")
oses = t["jobs"]["collect"]["strategy"]["matrix"]["os"]
for want in ("ubuntu-22.04", "ubuntu-24.04"):
    if want not in oses: errs.append(f"template: no {want} leg")
if not any(o.startswith("macos") for o in oses): errs.append("template: no macOS leg")
print("\n".join(errs), file=sys.stderr)
sys.exit(1 if errs else 0)
PY
pass "workflow properties: workflow_call, caller checkout, pinned ref, uploads, checkout before subject"

# ---- the action's collect step, for real -------------------------------------
run_action() { # LABEL BIN env...
  local label=$1 bin=$2; shift 2
  : >"$d/$label.out"; : >"$d/$label.summary"
  env AGSBX_BIN="$bin" GITHUB_OUTPUT="$d/$label.out" GITHUB_STEP_SUMMARY="$d/$label.summary" \
    RUNNER_TEMP="$d" INPUT_OUTPUT_DIR="$d/out-$label" INPUT_NAME="Linux X64 $label" "$@" \
    bash "$W/action/run.sh" >"$d/$label.cmds" 2>"$d/$label.err" || { cat "$d/$label.err" >&2; fail "$label: run.sh failed"; }
}
out() { sed -n "s/^$2=//p" "$d/$1.out"; }

# landlock (conformant) + bubblewrap (blocked as root: bwrap_unsafe_as_root)
if [[ $(id -u) == 0 ]] && have bwrap; then
  run_action ok "$AGSBX_BIN" INPUT_PROVIDERS="landlock, bubblewrap" INPUT_SUBJECT_REPO="$AGSBX_SOURCE_DIR" \
    INPUT_ATTEST=true INPUT_CHALLENGE=nonce-123 INPUT_ATTACH_COMMAND=$'true\n\necho hello'
  [[ $(out ok status) == 0 ]] || fail "ok: status $(out ok status)"
  b=$(out ok bundle)
  [[ $b == "$d/out-ok/Linux_X64_ok.json" && -f $b ]] || fail "ok: bundle output '$b'"
  [[ $(out ok summary) == "conformant=1 blocked=1 defective=0 skipped=0" ]] || fail "ok: summary '$(out ok summary)'"
  grep -q '^::notice title=agsbx-evidence bubblewrap::bubblewrap is blocked by this host: bwrap_unsafe_as_root' "$d/ok.cmds" \
    || fail "ok: no ::notice:: for blocked bubblewrap: $(cat "$d/ok.cmds")"
  grep -q '^::error' "$d/ok.cmds" && fail "ok: an ::error:: without a defect"
  grep -q 'bubblewrap' "$d/ok.summary" || fail "ok: step summary lacks the report"
  jq -e '.challenge == "nonce-123" and (.subject.commit | test("^[0-9a-f]{40}$")) and (.attachments | length == 2)' "$b" >/dev/null \
    || fail "ok: challenge/subject/attachments not recorded: $(jq -c '{challenge, subject, n: (.attachments|length)}' "$b")"
  [[ $(jq -r .result "$(out ok predicate)") == WARNED ]] || fail "ok: predicate file $(out ok predicate)"
  [[ $(jq -r ._type "$(out ok attestation)") == https://in-toto.io/Statement/v1 ]] || fail "ok: statement file"
  pass "action step: outputs, ::notice:: for blocked, summary, challenge, subject, attachments, attestation"
fi

# a subject directory that is no git checkout: a notice, no failure
mkdir -p "$d/nogit"
run_action nogit "$AGSBX_BIN" INPUT_PROVIDERS=landlock INPUT_SUBJECT_REPO="$d/nogit" \
  INPUT_COLLECT_ARGS="--simulate  blocked-userns"
[[ $(out nogit status) == 0 ]] || fail "nogit: status $(out nogit status)"
grep -q '^::notice title=agsbx-evidence::subject-repo .* is not a git checkout' "$d/nogit.cmds" || fail "nogit: no notice"
jq -e 'has("subject") | not' "$(out nogit bundle)" >/dev/null || fail "nogit: subject recorded"
[[ $(jq -r '.context.simulations[0].name' "$(out nogit bundle)") == blocked-userns ]] || fail "collect-args not passed to collect"
pass "action step: no checkout -> notice, no --subject-repo; collect-args passed through"

# a defective NEGATIVE-CONTROL provider: ::error:: and status 1
run_action neg "$AGSBX_BUILD_DIR/agsbx-evidence-negctl" INPUT_PROVIDERS=neg_leaky INPUT_SUBJECT_REPO=
[[ $(out neg status) == 1 ]] || fail "neg: status $(out neg status)"
grep -q '^::error title=agsbx-evidence neg_leaky::neg_leaky is defective: .*(failing: .*lifecycle' "$d/neg.cmds" \
  || fail "neg: no ::error:: naming the failing checks: $(cat "$d/neg.cmds")"
pass "action step: ::error:: for a defect, status 1"
