#!/usr/bin/env bash
# The action's collect step (action.yml), a script so that it is tested
# outside GitHub (tests/cli/workflows.sh). Inputs arrive as INPUT_*; writes
# bundle/summary/status/attestation/predicate to $GITHUB_OUTPUT (collect
# writes the markdown report to $GITHUB_STEP_SUMMARY), workflow commands on stdout:
# ::error:: per defective provider, ::notice:: per blocked one.
set -euo pipefail

bin=${AGSBX_BIN:?AGSBX_BIN: the agsbx-evidence binary}
out_dir=${INPUT_OUTPUT_DIR:-${RUNNER_TEMP:-/tmp}/agsbx-evidence}
name=${INPUT_NAME:-evidence}
name=${name//[^A-Za-z0-9._-]/_}
mkdir -p "$out_dir"
bundle="$out_dir/$name.json"
: "${GITHUB_OUTPUT:=/dev/null}" "${GITHUB_STEP_SUMMARY:=/dev/null}"

# A workflow-command message: %, CR and LF escaped so a hostile string in a
# bundle cannot start a command of its own.
esc() { local s=${1//'%'/%25}; s=${s//$'\r'/%0D}; printf '%s' "${s//$'\n'/%0A}"; }

# The portable build (macOS) has no collect yet: record the host facts,
# say so, and leave the bundle output empty (nothing to upload, no
# Seatbelt evidence).
if ! "$bin" help collect >/dev/null 2>&1; then
  echo "::notice title=agsbx-evidence::$(esc "collect is not in this platform's build yet (portable subset: probe, verify, report, diff, matrix, attest, keygen, schema); host facts in the step summary, no bundle, no Seatbelt evidence")"
  { echo '### agsbx-evidence: host facts (portable build, no collect)'; echo; echo '```json';
    "$bin" probe --json; echo '```'; } >>"$GITHUB_STEP_SUMMARY"
  echo "status=0" >>"$GITHUB_OUTPUT"
  exit 0
fi

args=(collect -o "$bundle")
for p in ${INPUT_PROVIDERS//,/ }; do args+=(--provider "$p"); done
[[ -n ${INPUT_CHALLENGE:-} ]] && args+=(--challenge "$INPUT_CHALLENGE")
read -ra extra <<<"${INPUT_COLLECT_ARGS:-}"   # split on blanks, no globbing
args+=("${extra[@]}")
while IFS= read -r line; do
  [[ -n ${line//[[:space:]]/} ]] && args+=(--attach-command "$line")
done <<<"${INPUT_ATTACH_COMMAND:-}"
if [[ -n ${INPUT_SUBJECT_REPO:-} ]]; then
  if git -C "$INPUT_SUBJECT_REPO" rev-parse --git-dir >/dev/null 2>&1; then
    args+=(--subject-repo "$INPUT_SUBJECT_REPO")
  else
    echo "::notice title=agsbx-evidence::$(esc "subject-repo $INPUT_SUBJECT_REPO is not a git checkout (add actions/checkout first); no subject recorded")"
  fi
fi
key_file=""
if [[ -n ${INPUT_SIGN:-} ]]; then
  if [[ $INPUT_SIGN == *"PRIVATE KEY"* ]]; then
    key_file=$(mktemp "${RUNNER_TEMP:-/tmp}/agsbx-key-XXXXXX")
    trap 'rm -f "$key_file"' EXIT
    printf '%s\n' "$INPUT_SIGN" >"$key_file"
    args+=(--sign-key "$key_file")
  else
    args+=(--sign-key "$INPUT_SIGN")
  fi
else
  args+=(--unsigned)
fi

set +e
"$bin" "${args[@]}"
status=$?
set -e
echo "status=$status" >>"$GITHUB_OUTPUT"
if [[ ! -f $bundle ]]; then
  echo "::error title=agsbx-evidence::$(esc "collect exited $status without a bundle")"
  exit 0
fi
echo "bundle=$bundle" >>"$GITHUB_OUTPUT"
summary=$(jq -r '.summary | "conformant=\(.conformant) blocked=\(.blocked) defective=\(.defective) skipped=\(.skipped)"' "$bundle")
echo "summary=$summary" >>"$GITHUB_OUTPUT"

while IFS=$'\t' read -r verdict id reason detail; do
  case $verdict in
    defective) echo "::error title=agsbx-evidence $(esc "$id")::$(esc "$id is defective: $reason$detail")" ;;
    blocked) echo "::notice title=agsbx-evidence $(esc "$id")::$(esc "$id is blocked by this host: $reason$detail")" ;;
  esac
done < <(jq -r '.providers[] | [.verdict, .id, .reason,
           (if .verdict == "defective" then " (failing: " + (.failing_checks | join(", ")) + ")"
            elif (.probe.detail // "") != "" then " - " + .probe.detail else "" end)]
         | map(gsub("[\t]"; " ")) | @tsv' "$bundle")

# collect itself appends the markdown report to $GITHUB_STEP_SUMMARY.

if [[ ${INPUT_ATTEST:-false} == true || ${INPUT_ATTEST:-false} == statement ]]; then
  "$bin" attest "$bundle" -o "$bundle.intoto.json"
  jq '.predicate' "$bundle.intoto.json" >"$bundle.predicate.json"
  echo "attestation=$bundle.intoto.json" >>"$GITHUB_OUTPUT"
  echo "predicate=$bundle.predicate.json" >>"$GITHUB_OUTPUT"
fi
