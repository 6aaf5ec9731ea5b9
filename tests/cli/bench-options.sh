#!/usr/bin/env bash
# bench's remaining options (bench.sh has the output and the raw
# baselines): a bad --adapter, --wrap or --run-as and more --provider
# options than bench takes are exit 2 with one line and nothing on stdout;
# --run-as USER really runs the providers as USER: as root bubblewrap is
# unavailable (bwrap_unsafe_as_root) and with --run-as it is timed.
source "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
B=$AGSBX_BIN
T=$(t_tmpdir bench-options)

bad() {
  local rc=0
  "$B" bench "$@" >"$T/out" 2>"$T/err" || rc=$?
  [[ $rc == 2 ]] || fail "bench $*: exit $rc, want 2"
  [[ ! -s $T/out ]] || fail "bench $*: wrote to stdout"
  [[ $(grep -c '^agsbx-evidence: error: ' "$T/err") == 1 ]] || fail "bench $*: want one error line, got: $(cat "$T/err")"
}
bad --adapter bad
grep -q -- '--adapter' "$T/err" || fail "the --adapter error does not name the option: $(cat "$T/err")"
bad --wrap ''
bad --adapter
bad --run-as no-such-user-agsbx
grep -q 'no-such-user-agsbx' "$T/err" || fail "the --run-as error does not name the user: $(cat "$T/err")"
many=()
for i in $(seq 17); do many+=(--provider "p$i"); done
bad "${many[@]}"
pass "bench: bad --adapter/--wrap/--run-as and too many --provider are exit 2, one line"

have_test_user || skip "bench --run-as" 0 "needs root and the user $AGSBX_TEST_USER"
command -v bwrap >/dev/null || skip bubblewrap 1 "bwrap is not installed"
st=$(t_stage_for_user)
"$st/agsbx-evidence" bench --provider bubblewrap --runs 2 --warmup 0 --json >"$T/root.json"
jq -e '.providers[0] | .id == "bubblewrap" and .unavailable == "bwrap_unsafe_as_root"' "$T/root.json" >/dev/null ||
  fail "as root bubblewrap should be unavailable: $(jq -c '.providers[0]' "$T/root.json")"
"$st/agsbx-evidence" bench --run-as "$AGSBX_TEST_USER" --provider bubblewrap --runs 2 --warmup 0 --json >"$T/user.json"
row=$(jq -c '.providers[0]' "$T/user.json")
if jq -e 'has("unavailable")' <<<"$row" >/dev/null && [[ $(jq -r .unavailable <<<"$row") != bwrap_unsafe_as_root ]]; then
  skip bubblewrap 1 "unavailable for $AGSBX_TEST_USER on this host: $(jq -r .unavailable <<<"$row")"
fi
jq -e '(has("unavailable") | not) and .provider.p50_us > 0 and .raw.p50_us > 0' <<<"$row" >/dev/null ||
  fail "bench --run-as $AGSBX_TEST_USER did not time bubblewrap: $row"
pass "bench --run-as: bubblewrap, unavailable as root, is timed as $AGSBX_TEST_USER"
