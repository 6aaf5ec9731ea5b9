#!/usr/bin/env bash
# CLI conventions: `help CMD` is `CMD --help`; every command's help lists
# its options, the version flag and one example; -o and '-' for outputs;
# TERM=dumb (and NO_COLOR) means no cursor movement and no colour on a
# terminal (a pty from script(1)), while a capable TERM gets both (the
# control); the next-steps block after collect; bash completion; `make
# collect SIGN_KEY=...` signs.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir conv)
B=$AGSBX_BIN
cmds=(probe providers collect verify report diff matrix attest keygen bench schema)

for c in "${cmds[@]}"; do
  "$B" help "$c" >"$d/h1" || fail "help $c exited non-zero"
  "$B" "$c" --help >"$d/h2"
  cmp -s "$d/h1" "$d/h2" || fail "help $c differs from $c --help"
  grep -q "^usage: agsbx-evidence $c" "$d/h1" || fail "$c: no usage line"
  grep -q -- '--version' "$d/h1" || fail "$c --help does not mention --version"
  grep -q '^example: agsbx-evidence ' "$d/h1" || fail "$c --help has no example"
  [[ $(grep -c '^  -' "$d/h1") -ge 1 ]] || fail "$c --help lists no options"
done
expect_rc 2 "$B" no-such-command 2>/dev/null
expect_rc 2 "$B" help no-such-command 2>/dev/null
"$B" --version | grep -q '^agsbx-evidence [0-9]' || fail "--version"
pass "help CMD == CMD --help; options, --version and an example in each of ${#cmds[@]} commands"

# -o and '-'
"$B" collect --provider landlock --unsigned -q -o - >"$d/stdout.json" 2>"$d/err"
jq -e '.schema == "agsbx-evidence/v1"' "$d/stdout.json" >/dev/null || fail "collect -o - did not write the bundle to stdout"
expect_rc 2 "$B" collect --provider landlock --unsigned -o - --json 2>/dev/null
"$B" collect --provider landlock --unsigned -o "$d/o.json" 2>"$d/err"
[[ -s $d/o.json ]] || fail "collect -o"
# next steps on stderr: sign (unsigned), verify with --keys-url, attach
grep -q '^next steps:' "$d/err" || fail "no next-steps block"
grep -q 'sign: .*--sign-key' "$d/err" || fail "next steps: no sign step"
grep -q "verify: .*verify $d/o.json --keys-url https://github.com/USER.keys" "$d/err" || fail "next steps: no verify step"
grep -q 'gh pr comment --body-file' "$d/err" || fail "next steps: no attach step"
"$B" collect --provider landlock --unsigned -q -o "$d/q.json" 2>"$d/qerr"
grep -q 'next steps' "$d/qerr" && fail "-q must silence the next-steps block"
pass "-o, '-' for stdout, the next-steps block"

# TERM=dumb on a real terminal: no escape sequence at all; the control
# with TERM=xterm shows the progress line being rewritten in place.
command -v script >/dev/null || fail "script(1) missing (bsdutils)"
tty_run() { script -qefc "env -u NO_COLOR TERM=$1 $B collect --provider landlock --unsigned -o $d/t.json" /dev/null >"$d/tty.$1" 2>&1 || true; }
tty_run xterm
grep -q $'\x1b\\[K' "$d/tty.xterm" || fail "control: no cursor control on TERM=xterm (the test cannot see it)"
tty_run dumb
grep -q $'\x1b' "$d/tty.dumb" && fail "TERM=dumb: escape sequences written: $(grep -c $'\x1b' "$d/tty.dumb")"
grep -q 'landlock .*conformant' "$d/tty.dumb" || fail "TERM=dumb: summary missing"
script -qefc "env NO_COLOR=1 TERM=xterm $B collect --provider landlock --unsigned -o $d/t.json" /dev/null >"$d/tty.nc" 2>&1 || true
grep -q $'\x1b\\[3[0-9]m' "$d/tty.nc" && fail "NO_COLOR: colour written"
pass "TERM=dumb: no cursor movement or colour; NO_COLOR: no colour"

# bash completion: commands, per-command options from --help, formats.
bash -c "source '$AGSBX_SOURCE_DIR/completion/agsbx-evidence.bash'
  COMP_WORDS=(agsbx-evidence at); COMP_CWORD=1; _agsbx_evidence; echo \"\${COMPREPLY[*]}\"
  COMP_WORDS=('$B' matrix --format b); COMP_CWORD=3; _agsbx_evidence; echo \"\${COMPREPLY[*]}\"
  COMP_WORDS=('$B' verify --all); COMP_CWORD=2; _agsbx_evidence; echo \"\${COMPREPLY[*]}\"" >"$d/comp"
[[ $(sed -n 1p "$d/comp") == attest ]] || fail "completion of commands: $(sed -n 1p "$d/comp")"
[[ $(sed -n 2p "$d/comp") == badge ]] || fail "completion of --format: $(sed -n 2p "$d/comp")"
[[ $(sed -n 3p "$d/comp") == "--allow-insecure-keys-url --allowed-signers" ]] || fail "completion of options: $(sed -n 3p "$d/comp")"
pass "bash completion: commands, formats, options"

# make collect SIGN_KEY=... passes the key; without it, --unsigned.
make -n -C "$AGSBX_SOURCE_DIR" collect SIGN_KEY=/k/id_ed25519 BUILD=b >"$d/make1" 2>&1
grep -q -- 'collect --sign-key /k/id_ed25519' "$d/make1" || fail "make collect SIGN_KEY: $(cat "$d/make1")"
make -n -C "$AGSBX_SOURCE_DIR" collect BUILD=b >"$d/make2" 2>&1
grep -q -- 'collect --unsigned' "$d/make2" || fail "make collect without SIGN_KEY"
pass "make collect SIGN_KEY signs"
