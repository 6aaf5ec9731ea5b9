#!/usr/bin/env bash
# collect refuses bad options and provider config before anything runs:
# exit 2, the first line "agsbx-evidence: error: " naming the problem, no
# bundle written and no run dir left. Covers the --config forms (ID.KEY=VALUE
# broken in each place), a wrapper's config keys (claims, home, inventory),
# the numeric ranges, and declarations that clash.
source "$(dirname "$0")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
w=$(t_tmpdir collect-usage)
out=$w/bundle.json

# CASE|WANT: the arguments (split on spaces, after --unsigned -q), the
# error text expected in the first line
cases=(
  "--config nodot|--config: expected ID.KEY=VALUE, got 'nodot'"
  "--config a.b|--config: expected ID.KEY=VALUE, got 'a.b'"
  "--config .k=v|--config: expected ID.KEY=VALUE, got '.k=v'"
  "--config a.=v|--config: expected ID.KEY=VALUE, got 'a.=v'"
  "--config a=b.c|--config: expected ID.KEY=VALUE, got 'a=b.c'"
  "--config nosuch.k=v|--config: provider 'nosuch' is not selected"
  "--provider trusted_local --config trusted_local.x=1|--config: trusted_local: unknown config key 'x'"
  "--wrap w=env --provider w --config w.claims=bogus|w.claims: unknown axis 'bogus'"
  "--wrap w=env --provider w --config w.claims=1|w.claims: expected AXIS[,AXIS...]"
  "--wrap w=env --provider w --config w.home=elsewhere|w.home: expected 'build' or 'real'"
  "--wrap w=env --provider w --config w.home=1|w.home: expected 'build' or 'real'"
  "--wrap w=env --provider w --config w.inventory=agsbx-no-such-command|w.inventory: expected a command line whose first word is an executable file"
  "--wrap w=env --provider w --config w.inventory=|w.inventory: expected a command line whose first word is an executable file"
  "--wrap w=env --provider w --config w.inventory=1|w.inventory: expected a command line whose first word is an executable file"
  "--wrap w=env --provider w --config w.color=red|w: unknown config key 'color'"
  "--wrap w=env --wrap w=env|--wrap: id 'w' declared twice"
  "--adapter trusted_local=x|--adapter: id 'trusted_local' is already a provider"
  "--adapter Bad=x|--adapter: id 'Bad' does not match"
  "--provider trusted_local --provider trusted_local|provider 'trusted_local' given twice"
  "--timeout-ms 99|--timeout-ms: expected an integer in [100, 3600000], got '99'"
  "--timeout-ms x|--timeout-ms: expected an integer"
  "--max-output-bytes 1023|--max-output-bytes: expected an integer in [1024, 67108864]"
  "--jobs 65|--jobs: expected an integer in [1, 64]"
  "--simulate nothing|--simulate: unknown simulation 'nothing'"
  "--host-policy other|--host-policy: unknown value 'other'"
  "--userns-sysctl-before 1|--host-policy and --userns-sysctl-before go together"
  "--work-dir /nonexistent-agsbx|--work-dir /nonexistent-agsbx: No such file or directory"
  "--output /nonexistent-agsbx/dir/x.json|--output: directory /nonexistent-agsbx/dir does not exist"
  "--run-as agsbx-no-such-user|--run-as: no such user 'agsbx-no-such-user'"
  "--subject-repo /nonexistent-agsbx|--subject-repo /nonexistent-agsbx:"
)
n=0
for c in "${cases[@]}"; do
  IFS=' ' read -r -a args <<<"${c%%|*}"
  want=${c#*|}
  o=(--output "$out")
  [[ ${args[0]} == --output ]] && o=()
  set +e
  (cd "$w" && TMPDIR="$w" "$AGSBX_BIN" collect --unsigned -q "${o[@]}" "${args[@]}" >"$w/stdout" 2>"$w/err")
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "${c%%|*}: exit $rc, want 2: $(head -c 300 "$w/err")"
  first=$(head -1 "$w/err")
  [[ $first == "agsbx-evidence: error: "*"$want"* ]] || fail "${c%%|*}: first line '$first', want '$want'"
  [[ ! -e $out && ! -s $w/stdout ]] || fail "${c%%|*}: wrote output"
  [[ -z $(find "$w" -maxdepth 1 -name 'agsbx-run-*') ]] || fail "${c%%|*}: left a run dir"
  n=$((n + 1))
done
pass "collect: $n bad options or configs exit 2 with one named error, before anything runs"
