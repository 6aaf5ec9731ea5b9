#!/usr/bin/env bash
# `agsbx-evidence checks --json` is the catalogue, and everything that lists
# checks by hand must agree with it: docs/checks.md's table (ids and axes),
# the bundle schema's check-id description, README's list and count, the
# bash completion's commands; every check names a negative control that a
# test really runs; ids are sorted and unique. Also the text form and the
# command's bad usage.
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
src=${CATALOGUE_SOURCE_DIR:-$AGSBX_SOURCE_DIR}
d=$(t_tmpdir cat)

"$AGSBX_BIN" checks --json >"$d/c.json" || fail "checks --json exited $?"
jq -r '.checks[].id' "$d/c.json" >"$d/ids"
[[ -s $d/ids ]] || fail "checks --json lists no check"
[[ $(jq '.count' "$d/c.json") == $(wc -l <"$d/ids") ]] || fail "count disagrees with the list"
sort -u "$d/ids" | cmp -s - "$d/ids" || fail "ids not sorted and unique: $(sort "$d/ids" | uniq -d)"
jq -e '.checks | all(.id and .axis and .title and .attacks and .why and .control and
       (.negative_control | length > 0) and (.exclusive | IN("never", "always", "orphans")))' "$d/c.json" >/dev/null ||
  fail "a row lacks a field: $(jq -c '.checks[] | select((.negative_control | length) == 0 or (.why | not)) | .id' "$d/c.json")"
jq -e '[.checks[] | select(.declared_only) | .id] == ["adapter.protocol"]' "$d/c.json" >/dev/null ||
  fail "the declared providers' adapter.protocol is not listed (declared only)"
pass "checks --json: $(wc -l <"$d/ids") checks, sorted, unique, every field"

# Every negative control names a test that exists and runs that provider.
while IFS=$'\t' read -r id test prov; do
  [[ -f $src/$test ]] || fail "$id: negative-control test $test does not exist"
  grep -qw -- "$prov" "$src/$test" || fail "$id: $test never names the provider $prov"
done < <(jq -r '.checks[] | .id as $i | .negative_control[] | [$i, .test, .provider] | @tsv' "$d/c.json")
pass "every negative control is a provider its test runs"

# docs/checks.md: the table's rows "| `id` | axis ... |" (the axis is the
# column's first word), in the catalogue's order.
sed -nE 's/^\| `([a-z0-9_.]+)` \| ([a-z_]+).*/\1 \2/p' "$src/docs/checks.md" >"$d/doc"
jq -r '.checks[] | "\(.id) \(.axis)"' "$d/c.json" >"$d/cat"
diff -u "$d/cat" "$d/doc" >"$d/doc.diff" || fail "docs/checks.md's table disagrees with checks --json (- catalogue, + docs):
$(tail -n +3 "$d/doc.diff")"
pass "docs/checks.md's table: the same ids and axes"

# The schema's check-id description lists every id.
jq -r '.definitions.check.properties.id.description // .["$defs"].check.properties.id.description' \
  "$src/schemas/evidence-bundle.schema.json" | sed -nE 's/^[^:]*: ([^;]*);.*/\1/p' | tr -d ' ' | tr , '\n' >"$d/schema"
diff -u "$d/ids" "$d/schema" >"$d/schema.diff" || fail "the schema's check-id description disagrees (- catalogue, + schema):
$(tail -n +3 "$d/schema.diff")"
pass "the schema's check ids: the same"

# README: the ids of its "Checks (ids are stable)" paragraph and its count.
awk '/^Checks \(ids are stable\)/,/in all\)/' "$src/README.md" >"$d/readme"
grep -oE '`[a-z0-9_]+\.[a-z0-9_]+`' "$d/readme" | tr -d '`' | sort -u >"$d/readme.ids"
diff -u "$d/ids" "$d/readme.ids" >"$d/readme.diff" || fail "README's check list disagrees (- catalogue, + README):
$(tail -n +3 "$d/readme.diff")"
# "(N in all)" counts the checks every provider gets (not the declared ones').
n=$(grep -oE '\(([0-9]+) in all\)' "$d/readme" | tr -dc 0-9)
all=$(jq '[.checks[] | select(.declared_only | not)] | length' "$d/c.json")
[[ $n == "$all" ]] || fail "README says $n checks, the catalogue has $all"
pass "README: the same ids, $n for every provider"

# The completion offers the command (its options come from --help).
words=$(sed -nE 's/^ *local commands="([^"]*)"/\1/p' "$src/completion/agsbx-evidence.bash")
[[ " $words " == *" checks "* ]] || fail "the completion does not offer checks: $words"
grep -q '^\.B checks\|^checks\|\\fBchecks\\fR\|^\.SS.*checks' "$src/docs/agsbx-evidence.1" || fail "the man page has no checks command"
pass "completion and man page know the checks command"

# The text form: every id once, and the count.
"$AGSBX_BIN" checks >"$d/c.txt"
while read -r id; do
  [[ $(grep -c "^$id " "$d/c.txt") == 1 ]] || fail "text: $id not listed once"
done <"$d/ids"
grep -qx "$(wc -l <"$d/ids") checks" "$d/c.txt" || fail "text: no count line"
pass "checks (text): every id and the count"

# Bad usage: exit 2, one line naming the problem, nothing on stdout.
for bad in "--bogus" "extra"; do
  set +e; "$AGSBX_BIN" checks $bad >"$d/bad.out" 2>"$d/bad.err"; rc=$?; set -e
  [[ $rc == 2 ]] || fail "checks $bad exited $rc, want 2"
  [[ ! -s $d/bad.out ]] || fail "checks $bad printed to stdout"
  head -1 "$d/bad.err" | grep -q '^agsbx-evidence: ' || fail "checks $bad: $(cat "$d/bad.err")"
done
pass "bad usage: exit 2 with an error, no output"
