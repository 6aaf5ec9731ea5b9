#!/usr/bin/env bash
# `agsbx-evidence providers --json` lists the built-in providers from the
# registry (providers/registry.c); what names them by hand must agree with
# it: a doc per provider (docs/providers/ID.md), the bash completion's
# --provider words (the same set), the man page and README (each id named).
# A provider added to the registry and forgotten in one of them, or one of
# them naming a provider the registry does not have, fails here.
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
src=${REGISTRY_SOURCE_DIR:-$AGSBX_SOURCE_DIR}
d=$(t_tmpdir reg)

"$AGSBX_BIN" providers --json >"$d/p.json" || fail "providers --json exited $?"
jq -r '.[].id' "$d/p.json" | sort >"$d/ids"
[[ -s $d/ids ]] || fail "providers --json lists no provider"
sort -u "$d/ids" | cmp -s - "$d/ids" || fail "provider ids not unique: $(uniq -d "$d/ids")"

for id in $(cat "$d/ids"); do
  [[ -f $src/docs/providers/$id.md ]] || fail "$id: no docs/providers/$id.md"
  grep -qw -- "$id" "$src/docs/agsbx-evidence.1" || fail "$id: the man page does not name it"
  grep -qiw -- "$id" "$src/README.md" || fail "$id: README does not name it"
done
pass "every provider has its doc, and the man page and README name it"

words=$(sed -n '/--provider)/,/return/p' "$src/completion/agsbx-evidence.bash" |
  sed -n 's/.*compgen -W "\([^"]*\)".*/\1/p')
[[ -n $words ]] || fail "the completion has no --provider word list"
tr ' ' '\n' <<<"$words" | sed '/^$/d' | sort >"$d/words"
cmp -s "$d/ids" "$d/words" ||
  fail "the completion's --provider words differ from the registry: $(diff "$d/ids" "$d/words" | grep '^[<>]' | tr '\n' ' ')"
pass "the completion offers exactly the registry's providers"
