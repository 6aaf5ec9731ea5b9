#!/usr/bin/env bash
# The renderers' output stays well-formed whatever text a bundle carries (a
# sandbox's output, an adapter's reason, a host string): a failing check's
# reason and the host's OS name set to text with markdown and XML
# metacharacters, a forged TAP line after a newline, CR, TAB, an ANSI
# escape, a C1 control, a bidi override and a noncharacter. report in every
# format, diff and matrix must keep: no raw ESC, C1, bidi override or CR in
# any output; TAP: every line a TAP line (the forged "ok 99" never one of
# its own); JUnit: XML that parses, with the reason in the failure; markdown:
# every table row with its header's column count, no line starting with the
# forged text. (The fuzz targets check that rendering never fails, not this.)
source "$(dirname "$0")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
w=$(t_tmpdir render-wellformed)
full=$AGSBX_SOURCE_DIR/tests/data/bundles/full.json
H=$'pipe| star* under_ back` [link](http://x.invalid) <tag> &amp; #hash \\ bs\nok 99 - forged\n\r\tTAB \x1b[31mred\x1b[0m \xc2\x9b c1 \xe2\x80\xae rtl \xef\xbf\xbe nonchar https://evil.invalid/x ]]> end'
jq --arg h "$H" '.providers[0].checks[0].verdict = "fail" | .providers[0].checks[0].reason = $h
  | .providers[0].failing_checks += [.providers[0].checks[0].id] | .providers[0].verdict = "defective"
  | .providers[0].reason = "fail_open" | .host.os.pretty_name.value = $h' "$full" >"$w/hostile.json"

outs=()
render() { # NAME CMD...: stdout into $w/NAME, exit 0 or 1 (diff: a regression)
  local name=$1 rc
  shift
  set +e
  "$@" >"$w/$name" 2>"$w/$name.err"
  rc=$?
  set -e
  [[ $rc == 0 || $rc == 1 ]] || fail "$name: exit $rc: $(head -c 300 "$w/$name.err")"
  [[ -s $w/$name ]] || fail "$name: no output"
  outs+=("$name")
}
for f in text markdown junit tap; do render "report.$f" "$AGSBX_BIN" report "$w/hostile.json" --format "$f"; done
for f in text markdown json; do render "diff.$f" "$AGSBX_BIN" diff "$full" "$w/hostile.json" --format "$f"; done
for f in markdown json badge; do render "matrix.$f" "$AGSBX_BIN" matrix "$w/hostile.json" "$full" --format "$f"; done

"$PY" - "$w" "${outs[@]}" <<'PY' || fail "a renderer's output is not well-formed (above)"
import json, re, sys, xml.etree.ElementTree as ET
d, names = sys.argv[1], sys.argv[2:]
bad = []
raw = {n: open(f"{d}/{n}", "rb").read() for n in names}
for n, b in raw.items():
    t = b.decode("utf-8")  # every output is UTF-8
    for what, pat in (("ESC", "\x1b"), ("C1", "[\x80-\x9f]"), ("bidi override", "\u202e"), ("CR", "\r")):
        if re.search(pat, t):
            bad.append(f"{n}: raw {what}")
    if any(l.startswith("ok 99") for l in t.split("\n")):
        bad.append(f"{n}: the forged 'ok 99' line stands on its own")
tap = raw["report.tap"].decode().rstrip("\n").split("\n")
legal = re.compile(r"^(TAP version 1[34]|1\.\.\d+|(not )?ok \d+( |$)|#|  |$)")
bad += [f"report.tap: not a TAP line: {l[:80]!r}" for l in tap if not legal.match(l)]
plan = [l for l in tap if re.match(r"^1\.\.\d+$", l)]
tests = [l for l in tap if re.match(r"^(not )?ok \d+", l)]
if len(plan) != 1 or int(plan[0][3:]) != len(tests):
    bad.append(f"report.tap: plan {plan} for {len(tests)} test lines")
root = ET.fromstring(raw["report.junit"])
fails = [f.get("message") for f in root.iter("failure")]
if not any(m and "ok 99 - forged" in m and "]]>" in m and "<tag>" in m for m in fails):
    bad.append("report.junit: the reason is not in a failure message, unescaped back")
for n in ("report.markdown", "diff.markdown", "matrix.markdown"):
    lines = raw[n].decode().split("\n")
    cols = None
    for l in lines:
        if not l.startswith("|"):
            cols = None
            continue
        c = len(re.findall(r"(?<!\\)\|", l))
        cols = c if cols is None else cols
        if c != cols:
            bad.append(f"{n}: a table row with {c} columns, its header {cols}: {l[:100]!r}")
for n in ("diff.json", "matrix.json"):
    json.loads(raw[n])
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
pass "${#outs[@]} renderings of a bundle with hostile text: no raw controls, TAP/JUnit/markdown/JSON well-formed"
