#!/usr/bin/env bash
# verify's one pass (no tree) against the tree reader it replaced
# (AGSBX_VERIFY_TREE=1, the hidden switch the bench uses): on every stored
# bundle, valid and invalid, as stored and with every object's keys in
# reverse order, with and without a trust anchor and --json, and on a
# changed signed bundle, the same stdout, stderr and exit status.
source "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles
KEY=$D/keys/fixture_ed25519.pub
T=$(t_tmpdir verify-stream)

# same FILE ARGS...: both readers, byte for byte.
same() {
  local f=$1 rc1=0 rc2=0
  shift
  "$B" verify "$f" "$@" >"$T/s.out" 2>"$T/s.err" || rc1=$?
  AGSBX_VERIFY_TREE=1 "$B" verify "$f" "$@" >"$T/t.out" 2>"$T/t.err" || rc2=$?
  [[ $rc1 == "$rc2" ]] || fail "verify $f $*: exit $rc1 (one pass), $rc2 (tree): $(cat "$T/s.err" "$T/t.err")"
  cmp -s "$T/s.out" "$T/t.out" || fail "verify $f $*: stdout differs: $(diff "$T/s.out" "$T/t.out")"
  cmp -s "$T/s.err" "$T/t.err" || fail "verify $f $*: stderr differs: $(diff "$T/s.err" "$T/t.err")"
  echo "$rc1"
}

n=0 valid=0
for f in "$D"/*.json "$D"/invalid/*.json; do
  # as stored, and reversed at every level where it is JSON at all
  files=("$f")
  if jq -e 'type == "object"' "$f" >/dev/null 2>&1; then
    r=$T/$(basename "$f" .json)-reversed.json
    jq 'def rev: if type == "object" then to_entries | sort_by(.key) | reverse
          | map(.value |= rev) | from_entries elif type == "array" then map(rev) else . end; rev' "$f" >"$r"
    files+=("$r")
  fi
  for g in "${files[@]}"; do
    rc=$(same "$g" --key "$KEY")
    [[ $rc == 0 ]] && valid=$((valid + 1))
    same "$g" --key "$KEY" --json >/dev/null
    same "$g" --expect-challenge nonce >/dev/null
    n=$((n + 1))
  done
done
# signed.json and minimal-signed.json, as stored and reversed, verify
[[ $valid == 4 ]] || fail "$valid bundles valid and trusted, want 4"
pass "$n bundles: the same output and exit status through both readers"

# a changed signed byte: invalid through both
jq '.created_at = "2027-01-01T00:00:00Z"' "$D/signed.json" >"$T/changed.json"
[[ $(same "$T/changed.json" --key "$KEY") == 1 ]] || fail "a changed bundle is not invalid"
# an unreadable file and a directory: the loader's messages
[[ $(same "$T/absent.json" --key "$KEY") == 2 ]] || fail "an absent file is not exit 2"
[[ $(same "$T" --key "$KEY") == 2 ]] || fail "a directory is not exit 2"
pass "changed, absent and directory: the same through both readers"
