#!/usr/bin/env bash
# GitHub integration: action-validator (npm @action-validator/cli) passes on
# every workflow and the composite action, and rejects a broken one; the
# properties the issue asks for hold (PyYAML): the reusable workflow is
# tracked in .github/workflows/ (the only place GitHub runs one from) and is
# workflow_call only, checks out the caller, pins the tool by ref, writes the
# bundle outside the subject, uploads with overwrite/if-no-files-found; only
# a job that runs actions/attest gets id-token/attestations write, and no
# top-level block lowers them; one artifact name scheme (agsbx-evidence-*)
# for every upload and download; the template checks out the subject before
# recording it. The templates copied into a scratch repository layout
# reference only paths and `uses:` that exist there. The action's collect
# step (run.sh), its mechanism installer and the PR-comment step run for
# real: outputs, ::notice:: for a blocked provider, ::error:: for a
# defective NEGATIVE-CONTROL one, the step summary, the attestation
# predicate, no subject without a git checkout, one comment updated in place.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir wf)
S=$AGSBX_SOURCE_DIR
W=$S/workflows
have action-validator || exit 77
$PY -c 'import yaml' 2>/dev/null || fail "python3-yaml missing"

REUSABLE=$S/.github/workflows/agsbx-evidence-reusable.yml
[[ -f $REUSABLE ]] || fail "the reusable workflow is not at .github/workflows/agsbx-evidence-reusable.yml (docs/github.md)"
files=("$S"/.github/workflows/*.yml "$W"/github/*.yml "$W"/action/action.yml)
for f in "${files[@]}"; do
  # action-validator 0.6.0's schema predates the `attestations` permission
  # (GitHub's, needed by actions/attest): validated without that one line,
  # which the properties below check instead.
  mkdir -p "$d/v"   # the validator tells an action from a workflow by the file name
  grep -v '^ *attestations: write' "$f" >"$d/v/${f##*/}"
  action-validator "$d/v/${f##*/}" >"$d/av.log" 2>&1 || { cat "$d/av.log" >&2; fail "action-validator: $f"; }
done
[[ ${#files[@]} -ge 5 ]] || fail "expected the template, the reusable workflow, the PR-comment recipe, the CI template and the action"
# The validator is not vacuous.
sed 's/^    runs-on:/    runs-onn:/' "$REUSABLE" | grep -v '^ *attestations: write' >"$d/broken.yml"
action-validator "$d/broken.yml" >/dev/null 2>&1 && fail "action-validator accepted a broken workflow"
sed 's/^  using: composite/  using: compost/' "$W/action/action.yml" >"$d/action.yml"
action-validator "$d/action.yml" >/dev/null 2>&1 && fail "action-validator accepted a broken action"
pass "action-validator: ${#files[@]} files valid, broken variants rejected"

$PY - "$S" <<'PY' || fail "workflow properties"
import sys, yaml, glob, os
S = sys.argv[1]; W = f"{S}/workflows"
def load(p):
    d = yaml.safe_load(open(p))
    d["on"] = d.get("on", d.get(True))   # YAML 1.1 reads `on:` as True
    return d
def steps(job): return job.get("steps", [])
def uses(s, what): return str(s.get("uses", "")).startswith(what)
errs = []
act = yaml.safe_load(open(f"{W}/action/action.yml"))
for i in ("providers", "challenge", "attach-command", "sign", "attest", "install-mechanisms"):
    if i not in act["inputs"]: errs.append(f"action input {i} missing")
for o in ("bundle", "summary", "not-installed", "predicate"):
    if o not in act["outputs"]: errs.append(f"action output {o} missing")
if act["runs"]["using"] != "composite": errs.append("action is not composite")
att = [s for s in act["runs"]["steps"] if uses(s, "actions/attest@")]
if not att: errs.append("action never attests")
# 'statement' writes the files only: actions/attest runs for 'true' alone
if any("inputs.attest == 'true'" not in s.get("if", "") for s in att): errs.append("action attests for other values than 'true'")
inst = [s for s in act["runs"]["steps"] if "install-mechanisms.sh" in str(s.get("run", ""))]
if not inst or "inputs.install-mechanisms == 'true'" not in inst[0].get("if", ""): errs.append("action: no mechanism install step gated by install-mechanisms")

tracked = glob.glob(f"{S}/.github/workflows/*.yml")
for wf in tracked:
    d = load(wf)
    # the tool's own .github/workflows must not run the templates on push/PR
    if set(d["on"]) != {"workflow_call"}: errs.append(f"{os.path.basename(wf)}: tracked in .github/workflows but triggers on {sorted(d['on'])}")
r = load(f"{S}/.github/workflows/agsbx-evidence-reusable.yml")
if "workflow_call" not in r["on"]: errs.append("reusable: not on workflow_call")
ins = r["on"]["workflow_call"]["inputs"]
if not ins.get("tool-ref", {}).get("required"): errs.append("reusable: tool-ref not required")
c = r["jobs"]["collect"]
co = [s for s in steps(c) if uses(s, "actions/checkout@")]
if not any("repository" not in s.get("with", {}) for s in co): errs.append("reusable: caller not checked out")
if not any(s.get("with", {}).get("ref") == "${{ inputs.tool-ref }}" for s in co): errs.append("reusable: tool not pinned by ref")
if not any(uses(s, "actions/attest@") for j in r["jobs"].values() for s in steps(j)): errs.append("reusable: attest: 'true' attests nowhere")

def attests(j):
    for s in steps(j):
        if uses(s, "actions/attest@"): return True
        a = str(s.get("with", {}).get("attest", "false"))
        if "workflows/action" in str(s.get("uses", "")) and a not in ("false", "${{ inputs.attest == 'true' && 'statement' || 'false' }}"):
            return True
    return False
ATT = {"id-token", "attestations"}
everything = tracked + glob.glob(f"{W}/github/*.yml")
for wf in everything:
    d = load(wf); b = os.path.basename(wf)
    top = d.get("permissions")
    for jn, j in d["jobs"].items():
        perms = j.get("permissions", top)
        granted = {k for k, v in (perms or {}).items() if v == "write"} if isinstance(perms, dict) else set()
        if attests(j):
            if not ATT <= granted: errs.append(f"{b}:{jn}: runs actions/attest without id-token/attestations write ({perms})")
        elif granted & ATT: errs.append(f"{b}:{jn}: {sorted(granted & ATT)} write without actions/attest")
    if isinstance(top, dict) and ATT & {k for k, v in top.items() if v == "write"}:
        errs.append(f"{b}: id-token/attestations granted at the top level (per job only)")
    if wf in tracked and "workflow_call" in d["on"] and isinstance(top, dict) and any(attests(j) for j in d["jobs"].values()):
        errs.append(f"{b}: a top-level permissions block in a called workflow caps its attest job")
    for jn, j in d["jobs"].items():
        for s in steps(j):
            w = s.get("with", {})
            if uses(s, "actions/upload-artifact@") and b != "agsbx-evidence-ci.yml":
                if w.get("overwrite") is not True: errs.append(f"{b}:{jn}: upload without overwrite: true")
                if w.get("if-no-files-found") != "error": errs.append(f"{b}:{jn}: upload without if-no-files-found: error")
                if w.get("name") != "agsbx-evidence-${{ matrix.os }}": errs.append(f"{b}:{jn}: artifact name {w.get('name')!r}, not agsbx-evidence-${{{{ matrix.os }}}}")
            if uses(s, "actions/download-artifact@"):
                if w.get("pattern") not in ("agsbx-evidence-*", "agsbx-evidence-${{ matrix.os }}"): errs.append(f"{b}:{jn}: downloads {w.get('pattern')!r}, not what is uploaded")
            text = str(w) + str(s.get("run", ""))
            if "output-dir" in text and "runner.temp" not in text: errs.append(f"{wf}: bundle inside the workspace")
        # whoever records a subject checks it out first
        idx = [k for k, s in enumerate(steps(j)) if "subject-repo" in str(s)]
        chk = [k for k, s in enumerate(steps(j)) if uses(s, "actions/checkout@") and "repository" not in s.get("with", {})]
        if idx and (not chk or min(chk) > min(idx)): errs.append(f"{b}:{jn}: subject recorded without a checkout")
t = load(f"{W}/github/agsbx-evidence.yml")
oses = t["jobs"]["collect"]["strategy"]["matrix"]["os"]
for want in ("ubuntu-22.04", "ubuntu-24.04"):
    if want not in oses: errs.append(f"template: no {want} leg")
if not any(o.startswith("macos") for o in oses): errs.append("template: no macOS leg")
pc = load(f"{W}/github/agsbx-evidence-pr-comment.yml")
if t["name"] not in pc["on"]["workflow_run"]["workflows"]: errs.append("pr-comment: workflow_run does not follow the template's name")
print("\n".join(errs), file=sys.stderr)
sys.exit(1 if errs else 0)
PY
pass "workflow properties: .github/workflows, workflow_call, caller checkout, pinned ref, per-job attest permissions, one artifact name"

# ---- the templates copied into a scratch repository layout ------------------
# tool/: the tracked tree of agsbx-evidence; ws/: a caller's workspace after
# its checkouts (subject/ = the caller with the templates in .github/
# workflows, agsbx-evidence/ = the tool at the pinned ref, as the reusable
# workflow and the template check them out). Every `uses:` and every path a
# step runs must exist there.
mkdir -p "$d/tool"
git -C "$S" ls-files -co --exclude-standard -z | tar -C "$S" --null -T - -cf - | tar -C "$d/tool" -xf - \
  || fail "cannot copy the tracked tree"
mkdir -p "$d/ws/subject/.github/workflows"
cp "$W"/github/agsbx-evidence.yml "$W"/github/agsbx-evidence-pr-comment.yml "$d/ws/subject/.github/workflows/"
cp -a "$d/tool" "$d/ws/agsbx-evidence"
$PY - "$d" "$S" <<'PY' || fail "a template references a path or uses: that does not exist"
import sys, yaml, glob, os, re
D, S = sys.argv[1], sys.argv[2]
tool, ws = f"{D}/tool", f"{D}/ws"
known = {"actions/checkout@v4", "actions/upload-artifact@v4", "actions/download-artifact@v4", "actions/attest@v2"}
errs, seen = [], 0
def check_action_dir(p, where):
    if not (os.path.isfile(f"{p}/action.yml") or os.path.isfile(f"{p}/action.yaml")): errs.append(f"{where}: no action.yml in {p}")
def check_uses(u, where, action_dir=None):
    global seen; seen += 1
    m = re.fullmatch(r"OWNER/agsbx-evidence/(.+)@v0\.1\.0", u)
    if m:
        p = f"{tool}/{m.group(1)}"
        if p.endswith((".yml", ".yaml")):
            if not os.path.isfile(p): errs.append(f"{where}: {u}: {m.group(1)} not in the tool's repository")
            elif "workflow_call" not in str(yaml.safe_load(open(p)).get(True, yaml.safe_load(open(p)).get("on"))): errs.append(f"{where}: {u} is not a reusable workflow")
        else: check_action_dir(p, where)
    elif u.startswith("./"): check_action_dir(f"{ws}/{u[2:]}", where)
    elif u not in known: errs.append(f"{where}: unexpected external action {u}")
def check_run(run, where, action_dir=None):
    # paths a step runs: ./agsbx-evidence/..., $GITHUB_ACTION_PATH/..., $root/...
    for rel in re.findall(r"\./agsbx-evidence/([\w./-]+)", run):
        if rel.startswith(("build/", "build-action/")): continue   # made by make build
        if not os.path.exists(f"{ws}/agsbx-evidence/{rel}"): errs.append(f"{where}: runs ./agsbx-evidence/{rel}: missing")
    if action_dir:
        for rel in re.findall(r"\$GITHUB_ACTION_PATH/([\w.-]+)", run):
            if rel != ".." and not os.access(f"{action_dir}/{rel}", os.X_OK): errs.append(f"{where}: $GITHUB_ACTION_PATH/{rel} missing or not executable")
        for rel in re.findall(r"\$root/([\w./-]+)", run):
            if not os.path.exists(f"{action_dir}/../../{rel}"): errs.append(f"{where}: $root/{rel} missing")
    for m in re.finditer(r"make -C (\S+) (\w+)", run):
        mk = open(f"{tool}/Makefile").read()
        if not re.search(rf"^{m.group(2)}:", mk, re.M): errs.append(f"{where}: make target {m.group(2)} missing")
wfs = glob.glob(f"{ws}/subject/.github/workflows/*.yml") + glob.glob(f"{tool}/.github/workflows/*.yml") + glob.glob(f"{tool}/workflows/github/*.yml")
for wf in wfs:
    d = yaml.safe_load(open(wf))
    for jn, j in d["jobs"].items():
        if "uses" in j: check_uses(j["uses"], f"{wf}:{jn}")
        for s in j.get("steps", []):
            if "uses" in s: check_uses(s["uses"], f"{wf}:{jn}")
            check_run(str(s.get("run", "")), f"{wf}:{jn}")
a = f"{tool}/workflows/action"
act = yaml.safe_load(open(f"{a}/action.yml"))
for s in act["runs"]["steps"]:
    if "uses" in s: check_uses(s["uses"], "action.yml")
    check_run(str(s.get("run", "")), f"action.yml:{s.get('name')}", a)
    for v in s.get("env", {}).values():
        m = re.search(r"github\.action_path }}/\.\./\.\./(build-action)/", str(v))
        if m and "BUILD=build-action" not in str(act["runs"]["steps"]): errs.append("action: AGSBX_BIN not where the build step builds")
# the documented `uses:` lines (docs/github.md, README.md) resolve too
for doc in ("docs/github.md", "README.md"):
    for u in re.findall(r"uses: (OWNER/agsbx-evidence/\S+@v0\.1\.0)", open(f"{S}/{doc}").read()):
        check_uses(u, doc)
print("\n".join(errs), file=sys.stderr)
if seen < 15: print(f"only {seen} uses: checked", file=sys.stderr); sys.exit(1)
sys.exit(1 if errs else 0)
PY
pass "scratch repository layout: every uses: and every path the templates and the action run exist"

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

# ---- the PR-comment step: one comment, created then edited in place -----------
# gh is a stand-in for GitHub's REST API here (comments kept in a JSON file),
# not for a mechanism: the script's logic runs for real against it.
mkdir -p "$d/fakegh" "$d/bundles/agsbx-evidence-ubuntu-24.04" "$d/bundles/agsbx-evidence-ubuntu-22.04"
cat >"$d/fakegh/gh" <<'GH'
#!/usr/bin/env bash
# STAND-IN for GitHub's API: `pr list` -> PR 7; issue comments in $GH_STATE.
set -euo pipefail
echo "gh $*" >>"$GH_LOG"
if [[ $1 == pr && $2 == list ]]; then echo 7; exit 0; fi
[[ $1 == api ]] || { echo "fake gh: unsupported $*" >&2; exit 1; }
shift; method=GET jqx= body=
while [[ $# -gt 0 ]]; do
  case $1 in
    -X) method=$2; shift 2 ;; --paginate) shift ;; --jq) jqx=$2; shift 2 ;;
    -F) body=$(cat "${2#body=@}"); shift 2 ;; *) path=$1; shift ;;
  esac
done
case $method:$path in
  GET:repos/o/r/issues/7/comments) jq -r "$jqx" "$GH_STATE" ;;
  POST:repos/o/r/issues/7/comments)
    jq --arg b "$body" '. + [{id: (100 + length), user: {login: "github-actions[bot]"}, body: $b}]' "$GH_STATE" >"$GH_STATE.n"
    mv "$GH_STATE.n" "$GH_STATE" ;;
  PATCH:repos/o/r/issues/comments/*)
    jq --arg b "$body" --argjson id "${path##*/}" 'map(if .id == $id then .body = $b else . end)' "$GH_STATE" >"$GH_STATE.n"
    mv "$GH_STATE.n" "$GH_STATE" ;;
  *) echo "fake gh: unsupported $method $path" >&2; exit 1 ;;
esac
GH
chmod +x "$d/fakegh/gh"
# someone else's comment carrying the marker is never edited
echo '[{"id": 1, "user": {"login": "mallory"}, "body": "<!-- agsbx-evidence-comment -->\nfake"}]' >"$d/gh.json"
"$AGSBX_BIN" keygen -f "$d/k" >/dev/null 2>&1
"$AGSBX_BIN" collect --provider trusted_local --sign-key "$d/k" -q -o "$d/bundles/agsbx-evidence-ubuntu-24.04/Linux-X64-collect.json" 2>/dev/null
"$AGSBX_BIN" attest "$d/bundles/agsbx-evidence-ubuntu-24.04/Linux-X64-collect.json" \
  -o "$d/bundles/agsbx-evidence-ubuntu-24.04/Linux-X64-collect.json.intoto.json"
"$AGSBX_BIN" collect --provider trusted_local --unsigned -q -o "$d/bundles/agsbx-evidence-ubuntu-22.04/Linux-X64-collect.json" 2>/dev/null
comment() {
  env PATH="$d/fakegh:$PATH" GH_STATE="$d/gh.json" GH_LOG="$d/gh.log" AGSBX_BIN="$AGSBX_BIN" BUNDLES="$d/bundles" \
    GITHUB_REPOSITORY=o/r HEAD_SHA=0123abc AUTHOR=alice VERIFY_ARGS="--key $d/k.pub" \
    bash "$W/action/pr-comment.sh" >"$d/pc.out" 2>"$d/pc.err" || { cat "$d/pc.err" >&2; fail "pr-comment.sh failed"; }
}
comment
grep -q '^created a comment on #7' "$d/pc.out" || fail "pr-comment: first run did not create: $(cat "$d/pc.out")"
jq -e 'length == 2 and .[1].user.login == "github-actions[bot]"' "$d/gh.json" >/dev/null || fail "pr-comment: comments after run 1: $(cat "$d/gh.json")"
body=$(jq -r '.[1].body' "$d/gh.json")
[[ $body == '<!-- agsbx-evidence-comment -->'* ]] || fail "pr-comment: no marker first"
grep -q 'signature: valid SHA256:' <<<"$body" || fail "pr-comment: signed bundle not verified: $body"
grep -q 'signature: unsigned' <<<"$body" || fail "pr-comment: unsigned bundle not said"
[[ $(grep -c '<details><summary>agsbx-evidence-ubuntu-2[24].04/Linux-X64-collect.json</summary>' <<<"$body") == 2 ]] \
  || fail "pr-comment: not one report per bundle (statement files must not count): $body"
grep -q 'intoto' <<<"$body" && fail "pr-comment: the in-toto statement was rendered as a bundle"
rm "$d/bundles/agsbx-evidence-ubuntu-22.04/Linux-X64-collect.json"
comment
grep -q '^updated comment 101 on #7' "$d/pc.out" || fail "pr-comment: second run did not update 101: $(cat "$d/pc.out")"
jq -e 'length == 2 and .[0].body == "<!-- agsbx-evidence-comment -->\nfake"' "$d/gh.json" >/dev/null \
  || fail "pr-comment: a new comment, or mallory's edited: $(cat "$d/gh.json")"
# one report now (the matrix has a <details> of its own for provenance)
[[ $(jq -r '.[1].body' "$d/gh.json" | grep -c '<details><summary>agsbx-evidence-ubuntu-') == 1 ]] ||
  fail "pr-comment: comment 101 not replaced by run 2's"
# a run that uploaded nothing (only macOS legs): said so, in the same comment
rm -rf "$d/bundles"
comment
jq -r '.[1].body' "$d/gh.json" | grep -q '^No bundle was uploaded by this run.$' || fail "pr-comment: no-bundle run: $(jq -r '.[1].body' "$d/gh.json")"
jq -e 'length == 2' "$d/gh.json" >/dev/null || fail "pr-comment: the no-bundle run added a comment"
pass "pr-comment: artifacts agsbx-evidence-*, one comment by marker created then updated, others' untouched"

# ---- the mechanism installer -------------------------------------------------
mech() { : >"$d/mech.out"; env GITHUB_OUTPUT="$d/mech.out" "$@" bash "$W/action/install-mechanisms.sh" >"$d/mech.cmds" 2>"$d/mech.err"; }
mech INPUT_PROVIDERS=landlock || fail "installer: landlock only: $(cat "$d/mech.err")"
[[ $(sed -n 's/^installed=//p' "$d/mech.out") == "" && -z $(sed -n 's/^missing=//p' "$d/mech.out") ]] \
  || fail "installer: landlock needs nothing installed: $(cat "$d/mech.out")"
if have bwrap; then
  mech INPUT_PROVIDERS="landlock, bubblewrap" || fail "installer failed: $(cat "$d/mech.err")"
  grep -qx 'installed=bubblewrap' "$d/mech.out" && grep -qx 'missing=' "$d/mech.out" \
    || fail "installer: bubblewrap present but $(cat "$d/mech.out")"
  grep -q '::notice' "$d/mech.cmds" && fail "installer: a notice with nothing missing"
fi
# gVisor's release download: checked against its sha512, refused on a
# mismatch, an unreachable source named as the reason (loopback only).
arch=$(uname -m)
mkdir -p "$d/rel/good/$arch" "$d/rel/bad/$arch"
printf '#!/bin/sh\necho runsc\n' >"$d/rel/good/$arch/runsc"
(cd "$d/rel/good/$arch" && sha512sum runsc >runsc.sha512)
cp "$d/rel/good/$arch/runsc" "$d/rel/bad/$arch/runsc"; echo tampered >>"$d/rel/bad/$arch/runsc"
cp "$d/rel/good/$arch/runsc.sha512" "$d/rel/bad/$arch/"
port=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$d/rel" && exec $PY -m http.server --bind 127.0.0.1 "$port") >"$d/http.log" 2>&1 &
server=$!
t_on_exit "kill $server 2>/dev/null; wait $server 2>/dev/null"
for _ in $(seq 100); do curl -fso /dev/null "http://127.0.0.1:$port/good/$arch/runsc" && break; sleep 0.1; done
fetch() { AGSBX_MECH_LIB=1 bash -c 'source "$1"; fetch_runsc "$2" "$3"' sh "$W/action/install-mechanisms.sh" "$@"; }
fetch "http://127.0.0.1:$port/good" "$d/runsc-good" >"$d/why" || fail "fetch_runsc refused a matching download: $(cat "$d/why")"
[[ -x $d/runsc-good ]] && cmp -s "$d/runsc-good" "$d/rel/good/$arch/runsc" || fail "fetch_runsc: not installed as downloaded"
fetch "http://127.0.0.1:$port/bad" "$d/runsc-bad" >"$d/why" && fail "fetch_runsc accepted a download that fails its sha512"
grep -q 'does not match its sha512' "$d/why" && [[ ! -e $d/runsc-bad ]] || fail "fetch_runsc mismatch: $(cat "$d/why")"
kill "$server"; wait "$server" 2>/dev/null || true
fetch "http://127.0.0.1:$port/good" "$d/runsc-none" >"$d/why" && fail "fetch_runsc succeeded with no server"
grep -q "gVisor's release at http://127.0.0.1:$port/good is not reachable" "$d/why" || fail "fetch_runsc unreachable: $(cat "$d/why")"
pass "installer: only what the providers need; bubblewrap present; runsc download sha512-checked; unreachable named"
