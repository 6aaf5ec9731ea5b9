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
cmds=(probe providers checks collect verify report diff matrix attest keygen bench schema)

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
for h in --help -h help; do
  "$B" help $h >"$d/hh" || fail "help $h exited non-zero"
  grep -q '^usage: agsbx-evidence ' "$d/hh" || fail "help $h: no usage"
done
# did you mean: a close command or long option is named, a far one is not
expect_rc 2 "$B" colect 2>"$d/dym"
grep -qx "agsbx-evidence: error: unknown command 'colect' (did you mean 'collect'?)" "$d/dym" || fail "colect: $(head -1 "$d/dym")"
expect_rc 2 "$B" help verfy 2>"$d/dym"
grep -q "unknown command 'verfy' (did you mean 'verify'?)" "$d/dym" || fail "help verfy: $(head -1 "$d/dym")"
expect_rc 2 "$B" verify x.json --alowed-signers f 2>"$d/dym"
grep -qx "agsbx-evidence: error: unknown option '--alowed-signers' (did you mean '--allowed-signers'?)" "$d/dym" \
  || fail "--alowed-signers: $(head -1 "$d/dym")"
expect_rc 2 "$B" collect --porvider landlock 2>"$d/dym"
grep -q "(did you mean '--provider'?)" "$d/dym" || fail "--porvider: $(head -1 "$d/dym")"
expect_rc 2 "$B" zzzz 2>"$d/dym"
grep -q "did you mean" "$d/dym" && fail "zzzz: a suggestion for a name nothing is close to"
expect_rc 2 "$B" report x.json --qqqqqq 2>"$d/dym"
grep -q "did you mean" "$d/dym" && fail "--qqqqqq: a suggestion for an option nothing is close to"
"$B" --version | grep -q '^agsbx-evidence [0-9]' || fail "--version"
pass "help CMD == CMD --help; options, --version and an example in each of ${#cmds[@]} commands; help --help; did you mean"

# -o and '-'
"$B" collect --provider landlock --unsigned -q -o - >"$d/stdout.json" 2>"$d/err"
jq -e '.schema == "agsbx-evidence/v1"' "$d/stdout.json" >/dev/null || fail "collect -o - did not write the bundle to stdout"
expect_rc 2 "$B" collect --provider landlock --unsigned -o - --json 2>/dev/null
"$B" collect --provider landlock --unsigned -o "$d/o.json" 2>"$d/err"
[[ -s $d/o.json ]] || fail "collect -o"
# next steps on stderr, naming the binary as invoked ($B is a path here):
# unsigned: sign, attach, and no verify (verify rejects an unsigned bundle);
# signed: verify with --keys-url, attach.
grep -q '^next steps:' "$d/err" || fail "no next-steps block"
grep -qF "sign:    $B collect --sign-key" "$d/err" || fail "next steps: no sign step with the binary as invoked: $(cat "$d/err")"
grep -q 'verify:' "$d/err" && fail "next steps: suggests verifying an unsigned bundle"
grep -qF "$B report $d/o.json --format markdown" "$d/err" || fail "next steps: report not with the binary as invoked"
grep -q 'gh pr comment --body-file' "$d/err" || fail "next steps: no attach step"
"$B" keygen -f "$d/nk" >/dev/null 2>&1
(cd "$(dirname "$B")" && ./agsbx-evidence collect --provider landlock --sign-key "$d/nk" -o "$d/s.json" 2>"$d/serr")
grep -qF "verify:  ./agsbx-evidence verify $d/s.json --keys-url https://github.com/USER.keys" "$d/serr" \
  || fail "next steps (signed): no verify step with ./agsbx-evidence: $(cat "$d/serr")"
grep -q '  sign:' "$d/serr" && fail "next steps (signed): still asks to sign"
PATH="$(dirname "$B"):$PATH" agsbx-evidence collect --provider landlock --unsigned -o "$d/p.json" 2>"$d/perr"
grep -qF "sign:    agsbx-evidence collect" "$d/perr" || fail "next steps: found on PATH, not printed as agsbx-evidence"
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
# Against the CLI: the commands are those of --help (and help); every
# option offered is one the command accepts: `CMD OPT=x --zz-unknown`
# parses OPT first and never runs CMD (OPT=x: "takes no value" or
# consumed; then the unknown option ends the parse), so "unknown option
# 'OPT'" is the only way it can fail. Nothing but schema names after schema.
complete_words() { # CWORD WORDS...
  bash -c 'source "$1"; shift; COMP_CWORD=$1; shift; COMP_WORDS=("$@"); _agsbx_evidence; echo "${COMPREPLY[*]}"' \
    sh "$AGSBX_SOURCE_DIR/completion/agsbx-evidence.bash" "$@"
}
cli_cmds=$("$B" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' | sort)
comp_cmds=$(complete_words 1 "$B" "" | tr ' ' '\n' | grep -v '^-' | grep -vx help | sort)
[[ $cli_cmds == "$comp_cmds" ]] || fail "completion commands differ from --help's: $(diff <(echo "$cli_cmds") <(echo "$comp_cmds") | tr '\n' ' ')"
grep -qx cleanup <<<"$comp_cmds" || fail "completion lacks cleanup"
n=0
for c in $cli_cmds; do
  for o in $(complete_words 2 "$B" "$c" -); do
    [[ $o == --* && $o != --help ]] || continue   # --help: taken before parsing
    set +e; "$B" "$c" "$o=x" --zz-unknown >/dev/null 2>"$d/copt"; rc=$?; set -e
    grep -q "unknown option '$o'" "$d/copt" && fail "completion offers '$c $o', which the CLI refuses"
    [[ $rc == 2 ]] || fail "$c $o=x --zz-unknown: exit $rc, want 2 (a usage error before anything runs): $(cat "$d/copt")"
    n=$((n + 1))
  done
done
[[ $n -ge 40 ]] || fail "only $n completed options checked"
for bad in "verify --challenge" "collect --expect-challenge" "collect --version"; do
  set -- $bad
  grep -qw -- "$2" <<<"$(complete_words 2 "$B" "$1" -)" && fail "completion offers $bad"
  expect_rc 2 "$B" "$1" "$2" x 2>/dev/null   # the CLI does refuse it
done
touch "$d/evidence-file.json"
[[ $(cd "$d" && complete_words 2 "$B" schema ev) == evidence-bundle ]] || fail "schema completion: $(cd "$d" && complete_words 2 "$B" schema ev)"
[[ $(cd "$d" && complete_words 2 "$B" schema in-toto-s) == in-toto-statement-v1 ]] || fail "schema completion of in-toto"
pass "bash completion: commands, formats, options; $n options the CLI accepts, none it refuses; schema names, no files"

# The man page's SYNOPSIS names every command, and for each command but
# collect (whose [options] the OPTIONS section lists) every option of its
# --help table (short or long form); badge, verify --json and
# --allow-insecure-keys-url among them.
syn=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$AGSBX_SOURCE_DIR/docs/agsbx-evidence.1" |
      sed -E 's/\\-/-/g; s/\\f[BIR]//g; s/"//g')
for c in $cli_cmds; do
  grep -q "agsbx-evidence $c\b" <<<"$syn" || fail "man SYNOPSIS lacks $c"
  [[ $c == collect ]] && continue
  while read -r line; do
    opts=$(sed -E 's/  .*//' <<<"$line" | grep -oE -- '(^|[ ,])--?[A-Za-z0-9][A-Za-z0-9-]*' | tr -d ' ,' | { grep -vx -- '-h\|--help' || true; })
    [[ -z $opts ]] && continue
    found=0
    for o in $opts; do grep -qE -- "(^|[^a-z-])$o([^a-z-]|\$)" <<<"$syn" && found=1; done
    [[ $found == 1 ]] || fail "man SYNOPSIS lacks $c $(tr '\n' ' ' <<<"$opts")"
  done < <("$B" "$c" --help | sed -nE 's/^  (-.*)$/\1/p')
done
grep -q 'markdown | json | badge' <<<"$syn" || fail "man SYNOPSIS: matrix --format lacks badge"
pass "man SYNOPSIS: every command and its options (badge, verify --json, --allow-insecure-keys-url)"

# make collect SIGN_KEY=... passes the key; without it, --unsigned.
make -n -C "$AGSBX_SOURCE_DIR" collect SIGN_KEY=/k/id_ed25519 BUILD=b >"$d/make1" 2>&1
grep -q -- 'collect --sign-key /k/id_ed25519' "$d/make1" || fail "make collect SIGN_KEY: $(cat "$d/make1")"
make -n -C "$AGSBX_SOURCE_DIR" collect BUILD=b >"$d/make2" 2>&1
grep -q -- 'collect --unsigned' "$d/make2" || fail "make collect without SIGN_KEY"
pass "make collect SIGN_KEY signs"
