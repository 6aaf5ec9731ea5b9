#!/usr/bin/env bash
# Root never follows the sandbox user's links. As root with
# --run-as, a DELIBERATELY HOSTILE adapter and a hostile --wrap provider
# (NEGATIVE CONTROLS: tests/negative/adapters/neg-redirect.py) swap the files
# the harness touches in directories the user owns for a symlink, a hard link,
# or a link and a file of their own in a loop, each pointing at a root-owned
# 0600 victim: (a) bundle.integrity_enforced's source/data.txt, (b)
# fs.grant_write's output/gw-N, (c) the fixture's source/ro-canary.txt (the
# adapter only: it is written before any step a wrapper sees), (d) the $HOME
# canary's directory, (e) a directory in output while the grant is removed.
# Every victim keeps its content, mode and owner, and no victim's content
# reaches the bundle. A root-only work dir is required for all this.
source "$(dirname "$0")/../lib/common.sh"

have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
home=$(getent passwd "$AGSBX_TEST_USER" | cut -d: -f6)
[[ -d $home ]] || skip "test user home" 1 "$AGSBX_TEST_USER has no home directory ($home)"

stage=$(t_stage_for_user)
adapters=$(t_tmpdir adapters)
install -m 0644 "$AGSBX_SOURCE_DIR"/tests/negative/adapters/*.py "$adapters/"
w=$(t_tmpdir redirect)
# What the hostile runs leave in the user's home: the canary directories
# they moved aside (*.moved, *.own*), the links to this test's victims, and
# the directories of their own holding such a link.
home_clean() {
  find "$home" -maxdepth 2 -path "$home/.agsbx-canary-*/id_key" -lname "$T_ROOT/*" -printf '%h\0' |
    xargs -0r rm -rf --
  find "$home" -maxdepth 1 -name '.agsbx-canary-*' \( -name '*.moved' -o -name '*.own*' -o -lname "$T_ROOT/*" \) \
    -exec rm -rf {} +
}
t_on_exit home_clean

# victims DIR: root-owned 0600 files with known content, a b c, d/id_key, e/id_key.
victims() {
  local d=$1 v
  install -d -m 0755 "$d" "$d/d" "$d/e"
  for v in a b c d/id_key e/id_key; do
    head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$d/$v"
    chmod 0600 "$d/$v"
    cp -p "$d/$v" "$d/$v.want"
  done
}

# judge DIR BUNDLE LABEL: each victim unchanged and absent from the bundle.
BAD=()
judge() {
  local d=$1 bundle=$2 label=$3 v what
  declare -A name=([a]="(a) integrity data.txt" [b]="(b) grant_write gw-N" [c]="(c) fixture ro-canary"
                   [d/id_key]="(d) home canary" [e/id_key]="(e) grant removal")
  for v in a b c d/id_key e/id_key; do
    what="$label ${name[$v]}"
    if [[ ! -e $d/$v || -L $d/$v ]]; then BAD+=("$what: victim removed"); continue; fi
    cmp -s "$d/$v" "$d/$v.want" || BAD+=("$what: victim content changed")
    [[ $(stat -c '%a %u %g' "$d/$v") == "600 0 0" ]] || BAD+=("$what: victim now $(stat -c '%a %u %g' "$d/$v")")
    [[ ! -s $bundle ]] || ! grep -qF "$(cat "$d/$v.want")" "$bundle" || BAD+=("$what: victim content in the bundle")
  done
}

for mode in symlink hardlink race; do
  victims "$w/$mode-adapter"
  victims "$w/$mode-wrap"
  set +e
  # A generous hang guard, not a timing assertion: collect must end by itself.
  timeout -s KILL 600 "$stage/agsbx-evidence" collect -q --unsigned --work-dir "$w" --output "$w/$mode.json" \
    --run-as "$AGSBX_TEST_USER" --timeout-ms 3000 --jobs 2 \
    --provider evil-adapter --adapter "evil-adapter=python3 $adapters/neg-redirect.py adapter $w/$mode-adapter $w $mode" \
    --provider evil-wrap --wrap "evil-wrap=python3 $adapters/neg-redirect.py wrap $w/$mode-wrap $mode {argv}" \
    2>"$w/$mode.err"
  rc=$?
  set -e
  [[ $rc == 0 || $rc == 1 ]] || { cat "$w/$mode.err" >&2; fail "$mode: collect exited $rc"; }
  jq -e '.providers | length == 2' "$w/$mode.json" >/dev/null || fail "$mode: no bundle with both providers"
  # The attacks reached the steps they target (else nothing was tried).
  for id in evil-adapter evil-wrap; do
    for c in bundle.integrity_enforced fs.grant_write secrets.home_denied; do
      jq -e --arg i "$id" --arg c "$c" '.providers[] | select(.id == $i) | .checks[] | select(.id == $c)' \
        "$w/$mode.json" >/dev/null || fail "$mode: $id has no $c"
    done
  done
  # With plain symlinks the harness must have met the links (the attack
  # happened) and said so, instead of working through them.
  if [[ $mode == symlink ]]; then
    for id in evil-adapter evil-wrap; do
      declare -A R=()
      jq_fields R "$w/$mode.json" '.providers[] | select(.id == $i)' --arg i "$id" -- \
        integrity '.checks[] | select(.id == "bundle.integrity_enforced") | .reason' \
        gw '.checks[] | select(.id == "fs.grant_write") | .reason'
      [[ ${R[integrity]} == *"was replaced (never followed)"* ]] || BAD+=("$id: integrity reason: ${R[integrity]}")
      [[ ${R[gw]} == *"not a file of the sandbox user's with one link (Too many levels of symbolic links)"* ]] \
        || BAD+=("$id: grant_write reason: ${R[gw]}")
    done
  fi
  judge "$w/$mode-adapter" "$w/$mode.json" "$mode adapter"
  judge "$w/$mode-wrap" "$w/$mode.json" "$mode wrap"
  # The kernel's own guard stops a hard link to a root file before the
  # harness sees it.
  if [[ $mode == hardlink && $(cat /proc/sys/fs/protected_hardlinks 2>/dev/null) == 1 ]]; then
    echo "note: fs.protected_hardlinks=1 refuses the hard links; the harness's own one-link guard is tested by test-base-fsat"
  fi
done
if ((${#BAD[@]})); then
  printf 'FAIL: %s\n' "${BAD[@]}" >&2
  fail "${#BAD[@]} victim(s) touched through the sandbox user's links"
fi
pass "symlink, hard link and rename race on (a)-(e), adapter and wrap: every root-owned victim unchanged, none in the bundle"

# Above the grant roots root works by path: with --run-as a work dir another
# user can change is refused before anything is made in it.
own=$(t_tmpdir userdir)
chown "$AGSBX_TEST_USER:" "$own"
set +e
"$stage/agsbx-evidence" collect -q --unsigned --work-dir "$own" --output "$w/own.json" --run-as "$AGSBX_TEST_USER" \
  --provider evil-adapter --adapter "evil-adapter=python3 $adapters/neg-redirect.py adapter $w/x $own symlink" 2>"$w/own.err"
rc=$?
set -e
[[ $rc == 2 ]] || { cat "$w/own.err" >&2; fail "user-owned --work-dir: collect exited $rc, want 2"; }
grep -qF -- "--work-dir $own: $own can be changed by a user other than root; with --run-as use a directory only root can write" "$w/own.err" \
  || { cat "$w/own.err" >&2; fail "user-owned --work-dir: wrong message"; }
[[ ! -e $w/own.json && -z $(ls -A "$own") ]] || fail "user-owned --work-dir: something was written"
pass "root --run-as refuses a --work-dir the sandbox user can change (exit 2, nothing made)"
