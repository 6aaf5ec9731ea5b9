#!/usr/bin/env bash
# diff classes: lost evidence is a regression (exit 1);
# pass -> blocked is a host change, exit 0 unless --fail-on host-change.
source "$(dirname "$0")/../lib/common.sh"
T=$(t_tmpdir diff)
B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles

jq '.providers[0].checks[1].verdict = "blocked"' "$D/full.json" > "$T/blocked.json"
expect_rc 0 "$B" diff "$D/full.json" "$T/blocked.json" >"$T/out"
grep -q 'HOST-CHANGE landlock: check net.connect_denied: pass -> blocked' "$T/out" || fail "host change not shown: $(cat "$T/out")"
expect_rc 1 "$B" diff "$D/full.json" "$T/blocked.json" --fail-on host-change >/dev/null
expect_rc 1 "$B" diff "$D/full.json" "$T/blocked.json" --fail-on=host-change >/dev/null
expect_rc 2 "$B" diff "$D/full.json" "$T/blocked.json" --fail-on everything 2>/dev/null
pass "pass -> blocked: a host change, exit 0; --fail-on host-change makes it exit 1"

jq '.providers[0].checks[0].verdict = "skip"' "$D/full.json" > "$T/skip.json"
expect_rc 1 "$B" diff "$D/full.json" "$T/skip.json" >"$T/out"
grep -q 'REGRESSION landlock/fs.host_read_denied: pass -> skip' "$T/out" || fail "lost evidence not a regression: $(cat "$T/out")"
jq 'del(.providers[3])' "$D/full.json" > "$T/gone.json"
expect_rc 1 "$B" diff "$D/full.json" "$T/gone.json" >/dev/null
jq '.providers[0].claims.host_filesystem_restricted = false' "$D/full.json" > "$T/claim.json"
expect_rc 1 "$B" diff "$D/full.json" "$T/claim.json" >/dev/null
pass "pass -> skip, a provider gone, a claim true -> false: regressions (exit 1)"

jq '.providers[1].id = "landlock"' "$D/full.json" > "$T/dup.json"
expect_rc 2 "$B" diff "$D/full.json" "$T/dup.json" 2>"$T/err"
grep -q 'providers\[1\]\.id: duplicate id "landlock"' "$T/err" || fail "duplicate id message: $(cat "$T/err")"
jq '.providers[0].checks[0].id = "fs/../x"' "$D/full.json" > "$T/badid.json"
expect_rc 2 "$B" report "$T/badid.json" 2>"$T/err"
grep -q 'providers\[0\]\.checks\[0\]\.id: not an id' "$T/err" || fail "bad id message: $(cat "$T/err")"
pass "the loader refuses duplicate and malformed provider/check ids (exit 2)"
