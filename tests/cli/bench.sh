#!/usr/bin/env bash
# bench: option handling (exit 2, one line, nothing on stdout), the text
# and --json output, a raw-mechanism baseline per provider (the program
# itself, the landlock helper, bwrap), and a raw command that fails is
# reported as unavailable (negative control neg_raw_fails), never timed.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir bench)
B=$AGSBX_BIN
NEG=$AGSBX_BUILD_DIR/agsbx-evidence-negctl

bad() {
  set +e
  "$B" bench "$@" >"$d/out" 2>"$d/err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || fail "bench $*: exit $rc, want 2"
  [[ ! -s $d/out ]] || fail "bench $*: wrote to stdout"
  [[ $(wc -l <"$d/err") -le 2 ]] && grep -q '^agsbx-evidence: error: ' "$d/err" ||
    fail "bench $*: want a one-line error, got: $(cat "$d/err")"
}
bad --runs 1
bad --runs 100001
bad --runs x
bad --runs ''
bad --warmup -1
bad --warmup 1001
bad --provider no_such_provider
bad --provider trusted_local --provider trusted_local
bad --runs
bad --no-such-option
bad stray-argument
grep -q "runs" <("$B" bench --runs 0 2>&1 || true) || fail "the --runs error does not name the option"
"$B" bench --help | grep -q -- '--warmup' || fail "bench --help lacks --warmup"
pass "bad usage: exit 2, one line, nothing on stdout"

# --json: the provider's stats, the raw baseline's, the ratio.
"$B" bench --provider trusted_local --runs 5 --warmup 1 --json >"$d/tl.json"
jq -e '.runs == 5 and .warmup == 1 and (.method | test("interleaved"))' "$d/tl.json" >/dev/null ||
  fail "bench --json header: $(cat "$d/tl.json")"
jq -e '.providers | length == 1' "$d/tl.json" >/dev/null || fail "one provider asked, not one reported"
jq -e '.providers[0] | .id == "trusted_local"
  and .provider.p50_us > 0 and .provider.p90_us >= .provider.p50_us
  and .provider.min_us <= .provider.p50_us and .provider.p50_us <= .provider.max_us
  and .raw.p50_us > 0 and .raw.p90_us >= .raw.p50_us
  and (.raw.argv[0] | endswith("/agsbx-payload")) and .raw.argv[1] == "true"
  and .ratio_p50 > 0' "$d/tl.json" >/dev/null || fail "trusted_local row: $(jq -c .providers[0] "$d/tl.json")"
pass "bench --json: provider and raw p50/p90 and the ratio"

# Text: a header and one row with a ratio.
"$B" bench --provider trusted_local --runs 3 --warmup 0 >"$d/tl.txt"
head -1 "$d/tl.txt" | grep -q 'raw p50' || fail "text header: $(head -1 "$d/tl.txt")"
grep -Eq '^trusted_local +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]{2} ' "$d/tl.txt" ||
  fail "text row: $(cat "$d/tl.txt")"
pass "bench text output"

# The raw mechanisms of landlock and bubblewrap, when this host has them.
# bwrap refuses to run as root: as root, bench runs as the test user.
if have_test_user; then
  st=$(t_stage_for_user)
  as_user "$st/agsbx-evidence" bench --provider landlock --provider bubblewrap --runs 3 --warmup 0 --json >"$d/mech.json"
else
  "$B" bench --provider landlock --provider bubblewrap --runs 3 --warmup 0 --json >"$d/mech.json"
fi
for id in landlock bubblewrap; do
  row=$(jq -c --arg id "$id" '.providers[] | select(.id == $id)' "$d/mech.json")
  [[ -n $row ]] || fail "$id: no row"
  if jq -e 'has("unavailable")' <<<"$row" >/dev/null; then
    skip "$id" 1 "unavailable on this host: $(jq -r .unavailable <<<"$row")"
  fi
  case $id in
    landlock) want='agsbx-landlock-exec$' ;;
    bubblewrap) want='/bwrap$' ;;
  esac
  jq -e --arg w "$want" '(.raw.argv[0] | test($w)) and .raw.p50_us > 0 and .ratio_p50 > 0
    and (.raw.argv | index("--") != null)' <<<"$row" >/dev/null || fail "$id raw baseline: $row"
done
jq -e '.providers[] | select(.id == "landlock") | .raw.argv | index("--manifest") != null' "$d/mech.json" >/dev/null ||
  fail "landlock's raw command does not use the provider's manifest"
pass "landlock and bubblewrap are timed against their raw mechanism command"

# Negative control: a raw command that fails is reported, not timed.
if [[ -x $NEG ]]; then
  "$NEG" bench --provider neg_raw_fails --provider neg_noop --runs 2 --warmup 0 --json >"$d/neg.json"
  jq -e '.providers[0] | .id == "neg_raw_fails" and (.raw.unavailable | test("false exited with status 1"))
    and (has("ratio_p50") | not) and .provider.p50_us > 0' "$d/neg.json" >/dev/null ||
    fail "a failing raw command must be reported unavailable: $(jq -c .providers[0] "$d/neg.json")"
  jq -e '.providers[1] | .raw.unavailable == "the provider names no raw mechanism command"' "$d/neg.json" >/dev/null ||
    fail "a provider without raw_command: $(jq -c .providers[1] "$d/neg.json")"
  pass "negative controls: failing or missing raw command reported as unavailable"
else
  fail "missing $NEG"
fi
