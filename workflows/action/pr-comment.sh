#!/usr/bin/env bash
# The PR-comment recipe's comment step (workflows/github/
# agsbx-evidence-pr-comment.yml), a script so that it is tested outside
# GitHub (tests/cli/workflows.sh). Renders every bundle in BUNDLES (the
# artifacts agsbx-evidence-<runner> that the template and the reusable
# workflow upload, one directory each) as one comment: the matrix, then per
# bundle its signature against the author's GitHub keys and its report.
# The comment starts with a marker; a later run edits that comment (the one
# COMMENT_LOGIN wrote) instead of adding another.
#   AGSBX_BIN   the agsbx-evidence binary (built from a pinned ref)
#   BUNDLES     directory of downloaded artifacts (default: bundles)
#   GITHUB_REPOSITORY, HEAD_SHA, AUTHOR   the run that collected
#   VERIFY_ARGS trust for verify (default: --keys-url https://github.com/AUTHOR.keys)
#   COMMENT_LOGIN  whose marked comment is updated (default: github-actions[bot])
set -euo pipefail
bin=${AGSBX_BIN:?AGSBX_BIN: the agsbx-evidence binary}
repo=${GITHUB_REPOSITORY:?} sha=${HEAD_SHA:?} author=${AUTHOR:?}
dir=${BUNDLES:-bundles}
login=${COMMENT_LOGIN:-github-actions[bot]}
marker='<!-- agsbx-evidence-comment -->'
read -ra trust <<<"${VERIFY_ARGS:---keys-url https://github.com/$author.keys}"
limit=65000   # GitHub refuses comment bodies over 65536 characters

# workflow_run.pull_requests is empty for fork PRs: find the PR by its head commit.
pr=$(gh pr list --repo "$repo" --state open --search "$sha" --json number --jq '.[0].number')
[[ -n $pr ]] || { echo "::notice::no open pull request for $sha"; exit 0; }

shopt -s nullglob
files=()
for f in "$dir"/*/*.json; do [[ $f == *.intoto.json || $f == *.predicate.json ]] || files+=("$f"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo "$marker"
  echo "## Sandbox evidence for $sha"
  if [[ ${#files[@]} == 0 ]]; then echo "No bundle was uploaded by this run."
  else "$bin" matrix "${files[@]}" --format markdown; fi
} >"$work/head.md"
: >"$work/reports.md"
for f in "${files[@]}"; do
  {
    echo
    echo "<details><summary>$(basename "$(dirname "$f")")/$(basename "$f")</summary>"
    echo
    "$bin" verify "$f" "${trust[@]}" --json 2>/dev/null \
      | jq -r '"signature: \(.status)\(if .fingerprint then " " + .fingerprint else "" end)\(if .reason then " (" + .reason + ")" else "" end)"' || true
    echo
    "$bin" report "$f" --format markdown
    echo "</details>"
  } >>"$work/reports.md"
done
cat "$work/head.md" "$work/reports.md" >"$work/comment.md"
if [[ $(wc -c <"$work/comment.md") -gt $limit ]]; then
  { cat "$work/head.md"; echo; echo "The per-bundle reports exceed GitHub's comment size; they are in the run's artifacts."; } >"$work/comment.md"
fi

id=$(gh api --paginate "repos/$repo/issues/$pr/comments" \
       --jq ".[] | select(.user.login == \"$login\" and (.body | startswith(\"$marker\"))) | .id" | tail -n 1)
if [[ -n $id ]]; then
  gh api -X PATCH "repos/$repo/issues/comments/$id" -F "body=@$work/comment.md" >/dev/null
  echo "updated comment $id on #$pr"
else
  gh api -X POST "repos/$repo/issues/$pr/comments" -F "body=@$work/comment.md" >/dev/null
  echo "created a comment on #$pr"
fi
