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
for c in probe providers collect verify report diff matrix attest keygen bench schema cleanup; do
  usage_err "$c" --no-such-flag
  out=$("$AGSBX_BIN" "$c" --help) || fail "$c --help exited non-zero"
  [[ $out == *usage:* ]] || fail "$c --help prints no usage"
done
pass "unknown commands and flags: exit 2, stderr only; --help works for every command"

# One wording for every command (cli/options.c): the error line names the
# bad option exactly as typed (without any =VALUE), then one hint line.
one_msg() { # WANT ARGS...
  local want=$1; shift
  usage_err "$@"
  [[ $(head -n1 "$d/err") == "agsbx-evidence: error: $want" ]] ||
    fail "agsbx-evidence $*: first line '$(head -n1 "$d/err")', want 'agsbx-evidence: error: $want'"
  [[ $(wc -l <"$d/err") == 2 ]] || fail "agsbx-evidence $*: $(wc -l <"$d/err") lines on stderr, want error + hint"
  grep -qx "hint: see 'agsbx-evidence $1 --help'" "$d/err" || fail "agsbx-evidence $*: no hint naming $1"
}
all=(probe providers collect verify report diff matrix attest keygen bench schema cleanup)
for c in "${all[@]}"; do
  one_msg "unknown option '--no-such-flag'" "$c" --no-such-flag
  one_msg "unknown option '--no-such-flag'" "$c" --no-such-flag=value
  one_msg "unknown option '-Z'" "$c" -Z
done
# a flag given a value, and an option without its value
for c in probe providers collect verify bench cleanup; do
  one_msg "option '--json' takes no value" "$c" --json=yes
done
for c in report diff matrix attest collect; do
  one_msg "option '--output' needs a value" "$c" --output
  one_msg "option '-o' needs a value" "$c" -o
done
for c in report diff matrix; do one_msg "option '--format' needs a value" "$c" --format; done
for c in verify diff matrix; do one_msg "option '--keys-url' needs a value" "$c" --keys-url; done
one_msg "option '--run-as' needs a value" providers --run-as
one_msg "option '--runs' needs a value" bench --runs
one_msg "option '--work-dir' needs a value" cleanup --work-dir
one_msg "option '--url' needs a value" attest x.json --url
one_msg "option '-f' needs a value" keygen -f
one_msg "option '--provider' needs a value" collect --unsigned --provider
# a bad letter in a cluster is named by itself, whatever came before
one_msg "unknown option '-Z'" collect --output=x.json -qZ
one_msg "unknown option '-Z'" collect --output=x.json -Zq
one_msg "option '-o' needs a value" collect --json -qo
# a prefix of two options names neither; a prefix of one is that option
for c in verify diff matrix; do one_msg "ambiguous option '--allow'" "$c" --allow x.json; done
# operands where a command takes none
for c in probe providers collect keygen bench cleanup; do
  one_msg "unexpected argument 'extra'" "$c" extra
done
# the operand count and the format list (from evidence/)
one_msg "no bundle given" report
one_msg "one bundle at a time" verify a.json b.json
one_msg "two bundles: OLD NEW" diff a.json
one_msg "unknown format 'yaml' (known: text, markdown, junit, tap)" report --format=yaml a.json
one_msg "unknown format 'text' (known: markdown, json, badge)" matrix --format text a.json
# options after operands and "--" before an operand that looks like one
"$AGSBX_BIN" report "$AGSBX_SOURCE_DIR/tests/data/bundles/minimal.json" --format tap >"$d/tap" || fail "option after the operand"
grep -q '^TAP version' "$d/tap" || fail "report ... --format tap: not TAP"
cp "$AGSBX_SOURCE_DIR/tests/data/bundles/minimal.json" "$d/-x.json"
(cd "$d" && "$AGSBX_BIN" report --format tap -- -x.json >"$d/tap2") || fail "report -- -x.json"
cmp -s "$d/tap" "$d/tap2" || fail "report -- -x.json: a different report"
POSIXLY_CORRECT=1 "$AGSBX_BIN" report "$AGSBX_SOURCE_DIR/tests/data/bundles/minimal.json" --format tap >"$d/tap3" ||
  fail "POSIXLY_CORRECT: an option after the operand is refused"
cmp -s "$d/tap" "$d/tap3" || fail "POSIXLY_CORRECT: a different report"
pass "usage errors: one wording for all ${#all[@]} commands (unknown option, missing value, value to a flag, operands)"

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
