#!/usr/bin/env bash
# Renders the maintainer views (matrix and diff, --format markdown) as
# GitHub would show them in a pull-request comment, so a person can look at
# them at the comment column's width (760 px) before changing a renderer.
#
#   tests/tools/render-views.sh [BUILD_DIR] [OUT_DIR]
#
# BUILD_DIR defaults to ./build; OUT_DIR to a new directory under $TMPDIR
# (screenshots never go into the repository). For each view it writes
# VIEW.md, VIEW.html (cmark-gfm, GitHub's GFM renderer, with GitHub's
# table/code layout rules), VIEW.png (headless Chromium, 760 px wide), and
# prints for every table whether it fits the column or scrolls sideways
# (scrollWidth > clientWidth), as measured by Chromium itself.
#
# The bundles: the fixtures in tests/data/bundles, and two real runs of
# this host's default providers (collect, < 2 s each): as the calling user
# and, when run as root with the test user present, with --run-as that
# user — the user-versus-root diff a maintainer reads (one provider blocked for
# root, its 31 checks and claims with it).
#
# The reviewed byte-for-byte renders of the fixtures are tests/data/views/
# (test-evidence-render compares them; AGSBX_UPDATE_GOLDENS=1 rewrites
# them after a deliberate change: review their git diff, and look at this
# script's screenshots).
#
# Needs: cmark-gfm and chromium (Debian packages; neither is needed by the
# test suite, which asserts the layout structurally in
# tests/test-evidence-render.c). Exit status: 0 every table fits, 1 one
# scrolls, 2 a tool is missing.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
out=${2:-$(mktemp -d "${TMPDIR:-/tmp}/agsbx-views.XXXXXX")}
B=$build/agsbx-evidence
D=$src/tests/data/bundles
for t in cmark-gfm chromium jq; do
  command -v "$t" >/dev/null || { echo "render-views: $t not installed (apt-get install $t)" >&2; exit 2; }
done
[[ -x $B ]] || { echo "render-views: $B not built" >&2; exit 2; }
mkdir -p "$out"
chmod 755 "$out"

# ---- bundles ---------------------------------------------------------------
"$B" collect -q --unsigned -o "$out/this-user.json" || true
second=$out/this-user.json
if [[ $(id -u) == 0 ]] && id "${AGSBX_TEST_USER:-agsbx-test}" >/dev/null 2>&1; then
  "$B" collect -q --unsigned --run-as "${AGSBX_TEST_USER:-agsbx-test}" -o "$out/test-user.json" || true
  second=$out/test-user.json
fi
# A forged twin of the signed fixture: a verdict edited after signing.
jq '.providers[1].verdict = "conformant"' "$D/signed.json" >"$out/forged.json"

# ---- views -------------------------------------------------------------------
"$B" matrix "$D/full.json" "$D/signed.json" "$out/forged.json" "$D/minimal.json" "$second" \
  "$out/this-user.json" --key "$D/keys/fixture_ed25519.pub" >"$out/matrix.md"
"$B" diff "$second" "$out/this-user.json" --format markdown >"$out/diff.md" || true
jq '.providers[0].checks[0].verdict = "fail" | .providers[0].checks[1].verdict = "blocked"
    | del(.providers[3]) | .host.kernel.release.value = "6.19.0"
    | .host.docker.reachable.value = true | .host.docker.version = {value: "24.0.7", source: "GET /version"}' \
  "$D/full.json" >"$out/changed.json"
"$B" diff "$D/full.json" "$out/changed.json" --format markdown >"$out/diff-fixture.md" || true
# Signed, under the long paths a CI artifact download gives them.
ci=$out/bundles/agsbx-evidence-ubuntu-24.04-root
mkdir -p "$ci"
cp "$D/full.json" "$ci/agsbx-evidence-runner-20261129T024000Z.json"
cp "$D/signed.json" "$ci/agsbx-evidence-runner-20261130T024000Z.json"
"$B" diff "$ci/agsbx-evidence-runner-20261129T024000Z.json" "$ci/agsbx-evidence-runner-20261130T024000Z.json" \
  --format markdown --key "$D/keys/fixture_ed25519.pub" >"$out/diff-signed.md" || true

# ---- render --------------------------------------------------------------------
# The layout rules of GitHub's markdown stylesheet that decide widths
# (github-markdown-css 5.x, MIT, github.com/sindresorhus/github-markdown-css:
# .markdown-body, table, td/th, code); the comment body's 16 px padding.
css='body{margin:0;background:#fff}
.markdown-body{box-sizing:border-box;width:760px;padding:16px;color:#1f2328;
 font-family:-apple-system,BlinkMacSystemFont,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif,"Apple Color Emoji","Segoe UI Emoji";
 font-size:14px;line-height:1.5;word-wrap:break-word}
.markdown-body table{border-spacing:0;border-collapse:collapse;display:block;width:max-content;max-width:100%;overflow:auto;margin:0 0 16px}
.markdown-body td,.markdown-body th{padding:6px 13px;border:1px solid #d1d9e0}
.markdown-body th{font-weight:600}
.markdown-body tr:nth-child(2n){background:#f6f8fa}
.markdown-body code{padding:.2em .4em;margin:0;font-size:85%;white-space:break-spaces;background:rgba(129,139,152,.12);border-radius:6px;
 font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace}
.markdown-body h3{font-size:1.25em;margin:0 0 16px}.markdown-body h4{font-size:1em;margin:24px 0 16px}
.markdown-body blockquote{margin:0 0 16px;padding:0 1em;color:#59636e;border-left:.25em solid #d1d9e0}'
# Chromium reports each table's widths into the DOM it dumps.
measure='<script>addEventListener("load",()=>{let r=[];document.querySelectorAll("table").forEach((t,i)=>{
r.push("table "+(i+1)+": "+t.scrollWidth+" of "+t.clientWidth+" px"+(t.scrollWidth>t.clientWidth?" SCROLLS":" fits"))});
const m=document.querySelector(".markdown-body");r.push("page: "+m.scrollWidth+" of "+m.clientWidth+" px"+(m.scrollWidth>m.clientWidth?" SCROLLS":" fits"));
const p=document.createElement("pre");p.id="measure";p.textContent=r.join("\n");document.body.append(p)})</script>'
chrome=(chromium --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run
        --disable-component-update --disable-sync)
rc=0
for v in matrix diff diff-fixture diff-signed; do
  # <details> opened, so the screenshot shows the provenance list too
  body=$(cmark-gfm --unsafe -e table -e strikethrough -e autolink -e tagfilter "$out/$v.md" \
         | sed 's/<details>/<details open>/')
  printf '<!doctype html><meta charset="utf-8"><style>%s</style><div class="markdown-body">%s</div>%s\n' \
    "$css" "$body" "$measure" >"$out/$v.html"
  profile=$(mktemp -d)
  "${chrome[@]}" --user-data-dir="$profile" --window-size=760,2000 --screenshot="$out/$v.png" \
    "file://$out/$v.html" >/dev/null 2>&1
  "${chrome[@]}" --user-data-dir="$profile" --window-size=760,2000 --dump-dom "file://$out/$v.html" 2>/dev/null \
    | sed -n '/<pre id="measure">/,/<\/pre>/p' | sed 's/<[^>]*>//g' | sed "s/^/$v: /" | tee "$out/$v.measure"
  rm -rf "$profile"
  ! grep -q SCROLLS "$out/$v.measure" || rc=1
done
echo "render-views: $out/{matrix,diff,diff-fixture,diff-signed}.{md,html,png}" >&2
exit $rc
