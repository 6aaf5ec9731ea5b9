#!/usr/bin/env bash
# Bad usage everywhere: exit 2, a message on stderr, nothing on stdout.
# --help everywhere: exit 0 on stdout. providers and schema answer.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir usage)

usage_err() {
  set +e
  out=$("$AGSBX_BIN" "$@" 2>"$d/err")
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "agsbx-evidence $*: exit $rc, want 2"
  [[ -z $out ]] || fail "agsbx-evidence $*: wrote to stdout: $out"
  [[ -s $d/err ]] || fail "agsbx-evidence $*: no message on stderr"
  grep -q '^agsbx-evidence: ' "$d/err" || fail "agsbx-evidence $*: message lacks the prefix"
}

usage_err
usage_err no-such-command
usage_err --no-such-global-flag
for c in probe providers collect verify report diff matrix keygen bench schema; do
  usage_err "$c" --no-such-flag
  out=$("$AGSBX_BIN" "$c" --help) || fail "$c --help exited non-zero"
  [[ $out == *usage:* ]] || fail "$c --help prints no usage"
done
pass "unknown commands and flags: exit 2, stderr only; --help works for every command"

v=$("$AGSBX_BIN" --version)
[[ $v == "agsbx-evidence "* ]] || fail "--version: $v"

"$AGSBX_BIN" providers --json > "$d/p.json"
jq -e 'map(.id) == ["bubblewrap","gvisor","landlock","seatbelt","trusted_local"]' "$d/p.json" >/dev/null \
  || fail "providers: not the sorted built-in list: $(jq -c 'map(.id)' "$d/p.json")"
jq -e '.[] | select(.id=="seatbelt") | .applies == false' "$d/p.json" >/dev/null || fail "seatbelt applies on Linux?"
jq -e '.[] | select(.id=="trusted_local") | .probe.available == true and .probe.reason == "ready"' "$d/p.json" >/dev/null \
  || fail "trusted_local not ready"
jq -e '.[] | select(.id=="landlock") | .reasons | index("kernel_does_not_support_landlock") != null' "$d/p.json" >/dev/null \
  || fail "closed reason set not listed"
"$AGSBX_BIN" providers | grep -q '^trusted_local ' || fail "providers table"
pass "providers lists the sorted registry with probes and reason sets"

for s in evidence-bundle host-probe; do
  "$AGSBX_BIN" schema "$s" | jq -e '."$schema" | test("2020-12")' >/dev/null || fail "schema $s"
done
usage_err schema no-such-schema
pass "schema prints the shipped schemas"

# The test-only negative controls are absent from the shipped registry.
if "$AGSBX_BIN" providers --json | jq -e 'map(.id) | any(startswith("neg_"))' >/dev/null; then
  fail "a negative control is registered in the shipped binary"
fi
