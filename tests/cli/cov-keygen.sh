#!/usr/bin/env bash
# keygen as the unprivileged test user: a key it writes is one OpenSSH reads
# (private 0600, .pub 0644, the printed fingerprint ssh-keygen's own); where
# it cannot write (a directory the user cannot write, a missing directory)
# or must not (the key or only its .pub already there, a directory in
# place) it exits 2 with one error line naming the path and leaves no file
# behind, the existing one untouched; a missing -f or a valueless -C is a
# usage error.
source "$(dirname "$0")/../lib/common.sh"

have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
command -v ssh-keygen >/dev/null || skip ssh-keygen 1 "ssh-keygen is not installed"
[[ -x $AGSBX_BIN ]] || fail "$AGSBX_BIN not built"
stage=$(t_stage_for_user)
w=$(t_tmpdir keygen)
mkdir "$w/ro" "$w/rw" "$w/rw/dir"
chmod 0755 "$w/ro"
chown "$AGSBX_TEST_USER:" "$w/rw" "$w/rw/dir"
echo "not a key" >"$w/rw/only.pub"
echo "old key" >"$w/rw/taken"
chown "$AGSBX_TEST_USER:" "$w/rw/only.pub" "$w/rw/taken"

set +e
as_user "$stage/agsbx-evidence" keygen -f "$w/rw/k" -C cov@test >"$w/out" 2>"$w/err"
rc=$?
set -e
[[ $rc == 0 ]] || fail "keygen exited $rc: $(cat "$w/err")"
[[ $(stat -c '%a %U' "$w/rw/k") == "600 $AGSBX_TEST_USER" && $(stat -c '%a' "$w/rw/k.pub") == 644 ]] ||
  fail "modes: $(stat -c '%n %a %U' "$w/rw/k" "$w/rw/k.pub")"
[[ $(ssh-keygen -y -f "$w/rw/k" | cut -d' ' -f1-2) == "$(cut -d' ' -f1-2 "$w/rw/k.pub")" ]] ||
  fail "ssh-keygen derives another public key from the private one"
fp=$(ssh-keygen -lf "$w/rw/k.pub" | cut -d' ' -f2)
grep -qF "$fp" "$w/out" || fail "the printed fingerprint is not ssh-keygen's $fp: $(cat "$w/out")"
[[ $(cut -d' ' -f3 "$w/rw/k.pub") == cov@test ]] || fail "comment: $(cat "$w/rw/k.pub")"
pass "keygen as $AGSBX_TEST_USER: a key pair ssh-keygen reads, modes 0600/0644, its fingerprint"

n=0
refused() { # WANT_RC WANT_TEXT ARGS...
  local want_rc=$1 want=$2 rc
  shift 2
  set +e
  as_user "$stage/agsbx-evidence" keygen "$@" >"$w/out" 2>"$w/err"
  rc=$?
  set -e
  [[ $rc == "$want_rc" ]] || fail "keygen $*: exit $rc, want $want_rc: $(cat "$w/err")"
  [[ $(grep -c '^agsbx-evidence: error: ' "$w/err") == 1 && $(head -1 "$w/err") == *"$want"* ]] ||
    fail "keygen $*: '$(head -1 "$w/err")', want one error line with '$want'"
  [[ ! -s $w/out ]] || fail "keygen $*: printed $(cat "$w/out")"
  n=$((n + 1))
}
refused 2 "$w/ro/k: Permission denied" -f "$w/ro/k"
refused 2 "$w/none/k: No such file or directory" -f "$w/none/k"
refused 2 "$w/rw/only.pub: already exists; refusing to overwrite a key" -f "$w/rw/only"
refused 2 "$w/rw/taken: already exists; refusing to overwrite a key" -f "$w/rw/taken"
refused 2 "$w/rw/dir: already exists" -f "$w/rw/dir"
refused 2 "-f FILE is required"
refused 2 "option '-C' needs a value" -f "$w/rw/c" -C
[[ -z $(ls "$w/ro") && ! -e $w/rw/only && ! -e $w/rw/c && ! -e $w/rw/c.pub ]] || fail "a refused keygen left a file: $(ls "$w/ro" "$w/rw")"
[[ $(cat "$w/rw/only.pub") == "not a key" && $(cat "$w/rw/taken") == "old key" ]] || fail "an existing file was changed"
pass "keygen: $n refusals, each one error line naming the path; no file left, the existing ones untouched"
