#!/usr/bin/env bash
# collect without --output names the bundle agsbx-evidence-HOST-UTC.json in
# the current directory, HOST reduced to [A-Za-z0-9.-] (anything else, a
# blank, a slash, "~", "_" or a UTF-8 byte, becomes "_"): a host name can
# never put the bundle into another directory or make a name a shell
# splits. The host name is set in a UTS namespace of our own (unshare -u),
# so the host's stays untouched.
source "$(dirname "$0")/../lib/common.sh"

[[ $(id -u) == 0 ]] || skip "root" 1 "a UTS namespace of our own (unshare -u) needs root"
command -v unshare >/dev/null || skip unshare 1 "unshare (util-linux) is not installed"
d=$(t_tmpdir default-name)
mkdir "$d/cwd" "$d/cwd/Bad Host"
(cd "$d/cwd" && unshare -u "$PY" -c '
import os, socket, sys
socket.sethostname(b"Bad Host/x_y.Z-9~\xc3\xa9")
os.execv(sys.argv[1], sys.argv[1:])' "$AGSBX_BIN" collect --provider trusted_local --unsigned -q) 2>"$d/err" ||
  fail "collect without --output: exit $?: $(tail -3 "$d/err")"
shopt -s nullglob
found=("$d"/cwd/*.json)
[[ ${#found[@]} == 1 ]] || fail "want one bundle in the current directory, found: $(ls -R "$d/cwd")"
name=$(basename "${found[0]}")
[[ $name =~ ^agsbx-evidence-Bad_Host_x_y\.Z-9___-[0-9]{8}T[0-9]{6}Z\.json$ ]] || fail "bundle name $name"
[[ -z $(ls -A "$d/cwd/Bad Host") ]] || fail "the host name's slash put something into a subdirectory"
jq -e '.providers[0].id == "trusted_local"' "${found[0]}" >/dev/null || fail "$name is not the bundle"
pass "default output name: host reduced to [A-Za-z0-9.-] ($name)"
