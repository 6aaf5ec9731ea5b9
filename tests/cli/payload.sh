#!/usr/bin/env bash
# agsbx-payload (docs/payload.md): every op prints one ASCII JSON object with
# the documented fields; denials carry the right errno name; usage errors exit
# 2 with an "error" member; spawn-detached leaves a detached, SIGTERM-deaf
# tree that this test kills by pid; the static binary runs in an empty root.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

P=$AGSBX_BUILD_DIR/agsbx-payload
[[ -x $P ]] || fail "payload not built: $P"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER (useradd -m $AGSBX_TEST_USER)"

# t_tmpdir registers its cleanup inside the $(...) subshell, where it is
# lost; register the removal again in this shell.
keep_tmp() { t_on_exit "rm -rf '$1'"; }
T=$(t_tmpdir payload); keep_tmp "$T"
ALL=$T/all-json # every object printed, for the ASCII check at the end
S=$(t_stage_for_user); keep_tmp "$S"
PU=$S/agsbx-payload
UID_T=$(id -u "$AGSBX_TEST_USER")
MARK=agsbx-t-payload-$$-$RANDOM$RANDOM

kill_marker() {
  local p
  for p in $(marker_processes "$1"); do kill -KILL "$p" 2>/dev/null || true; done
}
t_on_exit "kill_marker $MARK"

# check_json FILE: exactly one line holding one JSON object with "op".
check_json() {
  [[ $(wc -l <"$1") == 1 ]] || fail "$1: not exactly one line: $(head -c 300 "$1")"
  jqe "$1" 'type == "object" and has("op")'
  cat "$1" >>"$ALL"
}

# run_ok OUT CMD...: CMD must exit 0 and print one JSON object.
run_ok() {
  local out=$1; shift
  set +e; "$@" >"$out" 2>"$out.err"; local rc=$?; set -e
  [[ $rc == 0 ]] || fail "exit $rc (want 0): $* -- $(head -c 300 "$out.err")"
  check_json "$out"
}

# jqe FILE EXPR [--arg|--argjson|--rawfile NAME VALUE]...: EXPR must hold
# for the object in FILE (as jq -e: its last output neither false nor null).
# Queued, and checked by jqe_flush in one jq start: a jq start costs 25 ms
# of CPU and this test makes 150 of them. FILE is copied when queued, as it
# may be reused; each expression's arguments are bound under its own names
# and re-bound to the ones it uses, so expressions cannot see each other's.
JQE_N=0 JQE_PROG="" JQE_ARGS=() JQE_WHAT=()
jqe() {
  local f=$1 e=$2 k=$JQE_N bind=""
  shift 2
  cp "$f" "$T/jqe-$k.json"
  JQE_ARGS+=(--slurpfile "in_$k" "$T/jqe-$k.json")
  while (($#)); do
    JQE_ARGS+=("$1" "${2}_$k" "$3")
    bind+="\$${2}_$k as \$$2 | "
    shift 3
  done
  JQE_PROG+="${JQE_PROG:+,}(\$in_$k[0] | $bind[$e] | last | . != false and . != null)"
  JQE_WHAT+=("$f: want $e")
  JQE_N=$((k + 1))
}
jqe_flush() {
  ((JQE_N)) || return 0
  local bad
  if ! bad=$(jq -n -r "${JQE_ARGS[@]}" "[$JQE_PROG] | to_entries[] | select(.value | not) | .key"); then
    # Only now, one start per file: which one is not JSON.
    for ((k = 0; k < JQE_N; k++)); do
      jq empty "$T/jqe-$k.json" 2>/dev/null || fail "${JQE_WHAT[k]%%: want*}: not JSON: $(head -c 300 "$T/jqe-$k.json")"
    done
    fail "jqe: jq failed on the queued expressions: ${JQE_WHAT[*]}"
  fi
  for k in $bad; do
    echo "FAIL: ${JQE_WHAT[k]}, got $(head -c 600 "$T/jqe-$k.json")" >&2
  done
  [[ -z $bad ]] || fail "$(wc -w <<<"$bad") payload expectation(s) not met (above)"
  JQE_N=0 JQE_PROG="" JQE_ARGS=() JQE_WHAT=()
}

ns_inode() { readlink "/proc/$1/ns/$2" | sed 's/.*\[\([0-9]*\)\]/\1/'; }

# content decoded as Latin-1 must give back the first 256 bytes of FILE:
# the escaping is lossless even for control characters and invalid UTF-8.
content_roundtrips() {
  "$PY" - "$1" "$2" <<'EOF' || fail "content of $1 does not round-trip $2"
import json, sys
obj = json.loads(open(sys.argv[1], "rb").read())
want = open(sys.argv[2], "rb").read()[:256]
sys.exit(0 if obj["content"].encode("latin-1") == want else 1)
EOF
}

# ---- true, uname
run_ok "$T/true" "$P" true
jqe "$T/true" '.op == "true" and .ok == true and .errno == null'
run_ok "$T/uname" "$P" uname
jqe "$T/uname" '.ok and .sysname == "Linux" and .release == $r and .machine == $m and (.version | type) == "string"' \
  --arg r "$(uname -r)" --arg m "$(uname -m)"
jqe_flush; pass "true, uname"

# ---- read
printf 'hello "payload"\n' >"$T/file"
run_ok "$T/r1" "$P" read "$T/file"
jqe "$T/r1" '.ok and .errno == null and .bytes == 16 and .content == $c and .path == $p' \
  --rawfile c "$T/file" --arg p "$T/file"
run_ok "$T/r2" "$P" read "$T/missing"
jqe "$T/r2" '.ok == false and .errno == "ENOENT" and .errno_num == 2 and .bytes == null and .content == null'
run_ok "$T/r3" "$P" read "$T"
jqe "$T/r3" '.ok == false and .errno == "EISDIR" and .stage == "read"'
head -c 10000 /dev/zero | tr '\0' 'a' >"$T/big"
run_ok "$T/r4" "$P" read "$T/big"
jqe "$T/r4" '.ok and .bytes == 4096 and (.content | length) == 256'
jqe_flush; pass "read: content, ENOENT, EISDIR, 4096-byte cap, 256-byte excerpt"

# ---- read-alt: openat2 and io_uring (io_uring may be disabled on a host:
# then its stage is setup, never a read)
run_ok "$T/ra1" "$P" read-alt "$T/file"
jqe "$T/ra1" '.ok and .openat2.ok and .openat2.content == $c and
  (.io_uring.ok and .io_uring.content == $c and .io_uring.stage == "done" or
   .io_uring.ok == false and .io_uring.stage == "setup")' --rawfile c "$T/file"
run_ok "$T/ra2" "$P" read-alt "$T/missing"
jqe "$T/ra2" '.ok == false and .openat2.errno == "ENOENT" and .openat2.stage == "openat2" and
  (.io_uring.errno == "ENOENT" and .io_uring.stage == "openat" or .io_uring.stage == "setup")'
run_ok "$T/ra3" "$P" read-alt "$T/big"
jqe "$T/ra3" '.openat2.bytes == 4096 and (.openat2.content | length) == 128'
jqe_flush; pass "read-alt: openat2 and io_uring reads, ENOENT at their open stage, 128-byte excerpts"

# ---- hostile bytes: control characters, quotes, backslashes, NUL,
# invalid UTF-8; in file content, env values, paths and the op name.
printf 'a"b\\c\x00\x01\x1b[31m\x7f\n\t\xff\xfe\xc3\x28\xe2\x82\xed\xa0\x80 end' >"$T/hostile"
run_ok "$T/h1" "$P" read "$T/hostile"
jqe "$T/h1" '.ok and .bytes == ($n | tonumber)' --arg n "$(stat -c %s "$T/hostile")"
content_roundtrips "$T/h1" "$T/hostile"
run_ok "$T/h2" "$P" read "$T/"$'bad\n\x01\xff"\\name'
jqe "$T/h2" '.errno == "ENOENT" and (.path | endswith("bad\n\u0001\u00ff\"\\name"))'
run_ok "$T/h3" env "AGSBX_T_HOSTILE=$(printf 'x\x02\xff"\\\xc3')" "$P" env AGSBX_T_HOSTILE
jqe "$T/h3" '.present and .value == "x\u0002\u00ff\"\\\u00c3"'
set +e; "$P" $'op\x01\xff"\\' >"$T/h4" 2>/dev/null; rc=$?; set -e
[[ $rc == 2 ]] || fail "hostile op name: exit $rc, want 2"
check_json "$T/h4"
jqe "$T/h4" '.op == "op\u0001\u00ff\"\\" and (.error | type) == "string"'
jqe_flush; pass "hostile bytes stay valid JSON and round-trip"

# ---- write
run_ok "$T/w1" "$P" write "$T/written" "nonce-$$"
jqe "$T/w1" '.ok and .bytes == ($n | length)' --arg n "nonce-$$"
[[ $(cat "$T/written") == "nonce-$$" ]] || fail "written file holds $(cat "$T/written")"
RO=$(t_tmpdir ro); keep_tmp "$RO" # root-owned 0755: read-only for the test user
run_ok "$T/w2" as_user "$PU" write "$RO/x" text
jqe "$T/w2" '.ok == false and .errno == "EACCES" and .stage == "open" and .bytes == 0'
[[ ! -e $RO/x ]] || fail "denied write left $RO/x on the host"
jqe_flush; pass "write: succeeds in a writable dir, EACCES for the unprivileged user in a read-only dir"

# ---- symlink-read
run_ok "$T/s1" "$P" symlink-read "$T/lnk" "$T/file"
jqe "$T/s1" '.symlink_ok and .symlink_errno == null and .ok and .content == $c' --rawfile c "$T/file"
[[ $(readlink "$T/lnk") == "$T/file" ]] || fail "symlink not created"
run_ok "$T/s2" "$P" symlink-read "$T/lnk" "$T/file"
jqe "$T/s2" '.symlink_ok == false and .symlink_errno == "EEXIST" and .ok'
run_ok "$T/s3" "$P" symlink-read "$T/dangling" "$T/nowhere"
jqe "$T/s3" '.symlink_ok and .ok == false and .errno == "ENOENT"'
UW=$(t_tmpdir uw); keep_tmp "$UW"; chown "$AGSBX_TEST_USER" "$UW"
run_ok "$T/s4" as_user "$PU" symlink-read "$UW/esc" /etc/shadow
jqe "$T/s4" '.symlink_ok and .ok == false and .errno == "EACCES" and .content == null'
jqe_flush; pass "symlink-read: created and read, EEXIST, dangling, EACCES through the link"

# ---- ns: the payload runs in this shell's namespaces
run_ok "$T/n1" "$P" ns
for n in net pid mnt user uts ipc cgroup; do
  jqe "$T/n1" '.ns[$n] == ($i | tonumber)' --arg n "$n" --arg i "$(ns_inode $$ "$n")"
done
jqe "$T/n1" '.ok and .ns.net == ($i | tonumber)' --arg i "$(stat -L -c %i /proc/self/ns/net)"
run_ok "$T/n2" unshare -n "$P" ns
jqe "$T/n2" '.ns.net != ($i | tonumber) and .ns.pid == ($p | tonumber)' \
  --arg i "$(ns_inode $$ net)" --arg p "$(ns_inode $$ pid)"
jqe_flush; pass "ns: inodes equal /proc/\$\$/ns/*, a new netns differs"

# ---- status
"$P" status >"$T/st1" 2>/dev/null &
spid=$!
wait "$spid" || fail "status exited $?"
check_json "$T/st1"
self_status() { awk -v k="$1:" '$1 == k { print $2 }' /proc/$$/status; }
jqe "$T/st1" '.ok and .pid == ($p | tonumber) and .ppid == ($pp | tonumber) and .uid == 0 and .euid == 0 and .gid == 0' \
  --arg p "$spid" --arg pp "$$"
jqe "$T/st1" '.no_new_privs == ($nnp | tonumber) and .seccomp == ($sc | tonumber) and .kernel_release == $r' \
  --arg nnp "$(self_status NoNewPrivs)" --arg sc "$(self_status Seccomp)" --arg r "$(uname -r)"
jqe "$T/st1" '.cap_eff == $c and .cap_eff_source == "proc" and .cap_eff_zero == ($c | test("^0+$"))' \
  --arg c "$(self_status CapEff)"
jqe "$T/st1" '(.apparmor_label | type) == "null" or (.apparmor_label | type) == "string"'
run_ok "$T/st2" as_user "$PU" status
jqe "$T/st2" '.uid == ($u | tonumber) and .euid == ($u | tonumber) and .cap_eff_zero and .cap_eff == "0000000000000000" and .no_new_privs == 0' \
  --arg u "$UID_T"
run_ok "$T/st3" setpriv --no-new-privs "$P" status
jqe "$T/st3" '.no_new_privs == 1'
jqe_flush; pass "status: ids, NoNewPrivs, Seccomp, CapEff match /proc; unprivileged user has no caps"

# ---- pid-visible
run_ok "$T/p1" "$P" pid-visible $$
jqe "$T/p1" '.ok and .kill_ok and .kill_errno == null and .proc_exists and .visible_pids > 1 and .pid_ns == ($i | tonumber)' \
  --arg i "$(ns_inode $$ pid)"
sleep 0 & dead=$!; wait "$dead"
run_ok "$T/p2" "$P" pid-visible "$dead"
jqe "$T/p2" '.ok == false and .errno == "ESRCH" and .kill_errno == "ESRCH" and .proc_exists == false'
run_ok "$T/p3" as_user "$PU" pid-visible 1
jqe "$T/p3" '.ok and .kill_ok == false and .kill_errno == "EPERM" and .proc_exists'
run_ok "$T/p4" unshare -p -f --mount-proc "$P" pid-visible $$
jqe "$T/p4" '.ok == false and .proc_exists == false and .visible_pids <= 3 and .pid_ns != ($i | tonumber)' \
  --arg i "$(ns_inode $$ pid)"
jqe_flush; pass "pid-visible: own shell visible, reaped pid ESRCH, EPERM still visible, hidden in a new pid ns"

# ---- env
canary=canary-$$-$RANDOM
run_ok "$T/e1" env "AGSBX_T_CANARY=$canary" "$P" env AGSBX_T_CANARY
jqe "$T/e1" '.ok and .present and .value == $v and .name == "AGSBX_T_CANARY"' --arg v "$canary"
run_ok "$T/e2" env -u AGSBX_T_CANARY "$P" env AGSBX_T_CANARY
jqe "$T/e2" '.present == false and .value == null'
run_ok "$T/e3" env -i A=1 B=2 "$P" env A
jqe "$T/e3" '.present and .value == "1" and .count == 2'
jqe_flush; pass "env: present, absent, environ count"

# ---- connect (loopback only)
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True); time.sleep(300)' >"$T/port" &
lpid=$!
t_on_exit "kill $lpid 2>/dev/null"
# A listener whose accept queue is full (backlog 0, filled, never accepting):
# the kernel drops further SYNs, so a connect can only time out.
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
port = s.getsockname()[1]
fill = []
for _ in range(3):
    c = socket.socket(); c.setblocking(False); c.connect_ex(("127.0.0.1", port)); fill.append(c)
time.sleep(0.2)
print(port, flush=True); time.sleep(300)' >"$T/fullport" &
fpid=$!
t_on_exit "kill $fpid 2>/dev/null"
for _ in $(seq 100); do [[ -s $T/port && -s $T/fullport ]] && break; sleep 0.1; done
port=$(cat "$T/port"); fullport=$(cat "$T/fullport")
[[ -n $port && -n $fullport ]] || fail "loopback listeners did not start"
closed=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

run_ok "$T/c1" "$P" connect 127.0.0.1 "$port"
jqe "$T/c1" '.ok and .errno == null and .port == ($p | tonumber) and .host == "127.0.0.1" and .timeout_ms == 2000' --arg p "$port"
run_ok "$T/c2" "$P" connect 127.0.0.1 "$closed" 1000
jqe "$T/c2" '.ok == false and .errno == "ECONNREFUSED" and .errno_num == 111'
run_ok "$T/c3" "$P" connect 127.0.0.1 "$fullport" 300
jqe "$T/c3" '.ok == false and .errno == "ETIMEDOUT" and .timeout_ms == 300'
run_ok "$T/c4" unshare -n "$P" connect 127.0.0.1 "$port" 1000
jqe "$T/c4" '.ok == false and .errno == "ENETUNREACH"'
jqe_flush; pass "connect: loopback listener ok, closed port ECONNREFUSED, full backlog ETIMEDOUT, empty netns ENETUNREACH"

# ---- flood
N=1048576
set +e; "$P" flood $N >"$T/f.out" 2>"$T/f.err"; rc=$?; set -e
[[ $rc == 0 ]] || fail "flood exited $rc"
tail -n 1 "$T/f.out" >"$T/f.json"
check_json "$T/f.json"
jqe "$T/f.json" '.op == "flood" and .ok and .bytes == ($n | tonumber)' --arg n "$N"
out_size=$(stat -c %s "$T/f.out"); json_size=$(stat -c %s "$T/f.json")
[[ $out_size == $((N + 1 + json_size)) ]] || fail "flood stdout is $out_size bytes, want $N + newline + $json_size"
[[ $(head -c $N "$T/f.out" | tr -d x | wc -c) == 0 ]] || fail "flood stdout is not all x"
[[ $(stat -c %s "$T/f.err") == "$N" ]] || fail "flood stderr is $(stat -c %s "$T/f.err") bytes, want $N"
[[ $(tr -d y <"$T/f.err" | wc -c) == 0 ]] || fail "flood stderr is not all y"
run_ok "$T/f0" "$P" flood 0
jqe "$T/f0" '.ok and .bytes == 0'
jqe_flush; pass "flood: 1 MiB of x on stdout then the JSON line, 1 MiB of y on stderr"

# ---- remount
run_ok "$T/m1" as_user "$PU" remount "$RO"
jqe "$T/m1" '.ok == false and .errno == "EPERM" and .remount.ok == false and .remount.errno == "EPERM" and .tmpfs.ok == false and .tmpfs.errno == "EPERM"'
MNT=$(t_tmpdir mnt); keep_tmp "$MNT"
# As root in a private mount namespace (the host's mounts are untouched):
# a read-only bind is made writable and a tmpfs is mounted then unmounted.
run_ok "$T/m2" unshare -m --propagation private sh -c \
  'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && "$0" remount "$1"' "$P" "$MNT"
jqe "$T/m2" '.ok and .remount.ok and .tmpfs.ok and .tmpfs.unmounted'
! findmnt "$MNT" >/dev/null || fail "a mount at $MNT leaked to the host"
jqe_flush; pass "remount: EPERM twice for the unprivileged user; both succeed for root in a private mount ns"

# ---- usage errors: exit 2 and an object with "error"
usage_case() {
  set +e; "$P" "$@" >"$T/u" 2>/dev/null; local rc=$?; set -e
  [[ $rc == 2 ]] || fail "usage error exited $rc (want 2): $*"
  check_json "$T/u"
  jqe "$T/u" '(.error | type) == "string" and (.error | length) > 0'
}
usage_case
jqe "$T/u" '.op == null'
usage_case bogus
jqe "$T/u" '.op == "bogus"'
usage_case read
usage_case read a b
usage_case true extra
usage_case write only-path
usage_case pid-visible abc
usage_case pid-visible 0
usage_case connect localhost 80
usage_case connect 127.0.0.1 0
usage_case connect 127.0.0.1 80 -5
usage_case flood -1
usage_case flood 1x
usage_case spawn-detached only-marker
usage_case linger
jqe "$T/u" '.op == "linger"'
# Each op row's own argument check (a bound or a validator), one case each.
usage_case balloon 8
usage_case exit 256
usage_case fds relative/path
usage_case fork-bound 4097
usage_case kernel-ifaces x /tmp
usage_case kernel-surface /dev/null packet=2 alg=0
usage_case keyring desc -1
usage_case kill-self 65
usage_case net 127.0.0.1 80 icmp text 100
usage_case net 127.0.0.1 80 tcp text 100 attached
usage_case ptrace 0
usage_case unix-connect "/$(printf 'x%.0s' {1..120})"
usage_case unix-connects /ok ""
jqe_flush; pass "usage errors exit 2 with an error member"

# ---- spawn-detached: a setsid grandchild deaf to SIGTERM, a hanging parent
wait_file() { # wait_file FILE: until FILE is non-empty (bounded, not a timing assertion)
  local i
  for i in $(seq 200); do [[ -s $1 ]] && return 0; sleep 0.05; done
  fail "$1 never appeared"
}
alive() { [[ -e /proc/$1 ]] && ! awk '$1 == "State:" { exit !($2 == "Z") }' "/proc/$1/status" 2>/dev/null; }
wait_gone() {
  local i
  for i in $(seq 200); do alive "$1" || return 0; sleep 0.05; done
  fail "pid $1 survived SIGKILL"
}
"$P" spawn-detached "$MARK" "$T/ready" >"$T/sd.out" 2>"$T/sd.err" &
orig=$!
wait_file "$T/ready"
wait_file "$T/sd.out"
check_json "$T/sd.out"
g=$(cat "$T/ready")
[[ $g =~ ^[0-9]+$ ]] || fail "ready file holds '$g'"
jqe "$T/sd.out" '.ok and .grandchild_pid == ($g | tonumber) and .marker == $m' --arg g "$g" --arg m "$MARK"
marker_processes "$MARK" >"$T/sd.pids"
grep -qx "$g" "$T/sd.pids" || fail "grandchild $g does not carry the marker"
grep -qx "$orig" "$T/sd.pids" || fail "the original $orig is not running"
tr '\0' ' ' <"/proc/$g/cmdline" | grep -q " linger $MARK " || fail "grandchild is not 'linger MARKER': $(tr '\0' ' ' <"/proc/$g/cmdline")"
gsid=$(ps -o sid= -p "$g" | tr -d ' '); osid=$(ps -o sid= -p "$orig" | tr -d ' ')
gppid=$(ps -o ppid= -p "$g" | tr -d ' ')
[[ $gsid == "$g" && $gsid != "$osid" ]] || fail "grandchild session $gsid, original session $osid"
[[ $gppid != "$orig" ]] || fail "grandchild is still the original's child"
kill -TERM "$orig" "$g"
sleep 0.3
alive "$orig" || fail "the original died of SIGTERM"
alive "$g" || fail "the grandchild died of SIGTERM"
kill -KILL "$orig" "$g"
set +e; wait "$orig"; rc=$?; set -e
[[ $rc == 137 ]] || fail "original ended with $rc, want 137 (SIGKILL)"
wait_gone "$g"
[[ -z $(marker_processes "$MARK") ]] || fail "marker processes remain: $(marker_processes "$MARK")"
jqe_flush; pass "spawn-detached: setsid grandchild with the marker ignores SIGTERM, so does the parent; killed by pid"

# ---- the static binary is a whole root filesystem: bwrap with an empty
# tmpfs root, no /proc (so no /proc/self/exe), as the unprivileged user.
if have bwrap; then
  OUTD=$(t_tmpdir out); keep_tmp "$OUTD"; chown "$AGSBX_TEST_USER" "$OUTD"
  M2=$MARK-bwrap
  BW=(bwrap --unshare-all --die-with-parent --new-session --tmpfs / --ro-bind "$PU" /agsbx-payload
      --dev /dev --bind "$OUTD" /out)
  run_ok "$T/b1" as_user "${BW[@]}" /agsbx-payload uname
  jqe "$T/b1" '.ok and .sysname == "Linux"'
  run_ok "$T/b2" as_user "${BW[@]}" /agsbx-payload status
  jqe "$T/b2" '.seccomp == -1 and .cap_eff_source == "capget" and .cap_eff_zero and .apparmor_label == null'
  run_ok "$T/b3" as_user "${BW[@]}" /agsbx-payload ns
  jqe "$T/b3" '.ok == false and .errno == "ENOENT" and .ns.net == null'
  as_user "${BW[@]}" /agsbx-payload spawn-detached "$M2" /out/ready >"$T/b4" 2>"$T/b4.err" &
  bgjob=$!
  wait_file "$OUTD/ready"
  wait_file "$T/b4"
  check_json "$T/b4"
  jqe "$T/b4" '.ok and .grandchild_pid == ($g | tonumber)' --arg g "$(cat "$OUTD/ready")"
  marker_processes "$M2" >"$T/b4.pids"
  found=0
  while read -r p; do
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "^/agsbx-payload linger $M2 " && found=1
  done <"$T/b4.pids"
  [[ $found == 1 ]] || fail "no 'linger $M2' process on the host"
  kill_marker "$M2"
  wait "$bgjob" 2>/dev/null || true
  for p in $(cat "$T/b4.pids"); do wait_gone "$p"; done
  [[ -z $(marker_processes "$M2") ]] || fail "bwrap marker processes remain"
  jqe_flush; pass "runs in an empty bwrap root without /proc, including spawn-detached (argv[0] re-exec)"
else
  skip bubblewrap 1 "bwrap is not installed"
fi

# ---- catalogue v2 ops
# caps: as the test user, su (setuid root) gains euid 0 outside any sandbox,
# and the payload sees it while su waits for a password.
if [[ -u /usr/bin/su ]]; then
  run_ok "$T/c1" as_user "$PU" caps /usr/bin/su
  jqe "$T/c1" '.ok and .cap_eff == "0000000000000000" and (.cap_bnd | test("^[0-9a-f]{16}$")) and .no_new_privs == 0
    and .setuid.ok and .setuid.observed and .setuid.euid == 0 and .setuid.method == "proc"'
  # Under NoNewPrivs the setuid bit is ignored.
  run_ok "$T/c2" as_user setpriv --no-new-privs "$PU" caps /usr/bin/su
  jqe "$T/c2" '.no_new_privs == 1 and .setuid.observed and .setuid.euid == ($u | tonumber)' --arg u "$UID_T"
fi
run_ok "$T/c3" "$P" caps /nonexistent
jqe "$T/c3" '.setuid.ok == false and .setuid.errno == "ENOENT"'
# ptrace: a process of the same user, with a secret in its environment.
as_user env -i AGSBX_T_SECRET=s3cr3t "$PU" linger "$MARK" &
tgt=$!
for _ in $(seq 100); do [[ -n $(marker_processes "$MARK") ]] && break; sleep 0.05; done
tp=$(marker_processes "$MARK" | head -1)
run_ok "$T/p1" as_user "$PU" ptrace "$tp"
jqe "$T/p1" '.ok and .environ.ok and (.environ.content | contains("AGSBX_T_SECRET=s3cr3t")) and .vm_readv.ok'
run_ok "$T/p2" as_user "$PU" ptrace 999999999
jqe "$T/p2" '.ok == false and .attach.errno == "ESRCH" and .environ.errno == "ENOENT"'
kill_marker "$MARK"; wait "$tgt" 2>/dev/null || true
# net: UDP send, TCP to a closed IPv6 port, the detached variant, bad input.
run_ok "$T/n1" "$P" net 127.0.0.1 9 udp hello 1000
jqe "$T/n1" '.ok and .proto == "udp" and .detached == false'
run_ok "$T/n2" "$P" net ::1 9 tcp x 1000 detached
jqe "$T/n2" '(.ok == false and .detached and (.errno == "ECONNREFUSED" or .errno == "EADDRNOTAVAIL" or .errno == "ENETUNREACH"))'
expect_rc 2 "$P" net 127.0.0.1 9 sctp x 1000
expect_rc 2 "$P" net localhost 9 tcp x 1000
# unix-connect: abstract without a listener, missing path.
run_ok "$T/u1" "$P" unix-connect "@agsbx-t-none-$$"
jqe "$T/u1" '.ok == false and .errno == "ECONNREFUSED" and .abstract'
run_ok "$T/u2" "$P" unix-connect "$T/no.sock"
jqe "$T/u2" '.ok == false and .errno == "ENOENT" and .abstract == false'
# unix-connects: each address in order; usage errors for none or an empty one.
run_ok "$T/uc" "$P" unix-connects "@agsbx-t-none-$$" "$T/no.sock"
jqe "$T/uc" '.ok and (.sockets | length == 2) and .sockets[0].abstract and .sockets[0].errno == "ECONNREFUSED" and
             .sockets[1].errno == "ENOENT" and (.sockets[1].abstract | not)'
expect_rc 2 "$P" unix-connects
expect_rc 2 "$P" unix-connects ""
# fds: an inherited directory descriptor reads the file through ".." (the
# descriptor listed with its target), as do cwd and root outside any sandbox.
exec 7<"$T"
run_ok "$T/fd1" "$P" fds "$T/file"
exec 7<&-
jqe "$T/fd1" '.ok and ([.descriptors[] | select(.fd == 7 and .type == "dir" and .target == $t and
             .canary_read.ok and .canary_read.content == $c)] | length == 1) and
             ([.bases[] | .canary_read.ok] | all) and ([.bases[].base] == ["cwd", "/proc/self/cwd", "/proc/self/root"])' \
  --arg t "$T" --rawfile c "$T/file"
expect_rc 2 "$P" fds relative/path
# keyring: nothing to find under a fresh description; a bad serial is usage.
run_ok "$T/kr" "$P" keyring "agsbx-t-none-$$" 0
jqe "$T/kr" '.ok and (.searches | length == 3) and ([.searches[] | .ok] | any | not) and (.by_serial.ok | not)'
expect_rc 2 "$P" keyring x -1
# link-read, exit, kill-self, io-uring, mounts.
run_ok "$T/l1" "$P" link-read "$T/file" "$T/file.link"
jqe "$T/l1" '.link_ok and .bytes == 16 and (.link_inode | type) == "number"'
set +e; "$P" exit 42 >"$T/e1"; rc=$?; "$P" kill-self 15 >"$T/k1"; rk=$?; set -e
[[ $rc == 42 && $rk == 143 ]] || fail "exit 42 -> $rc, kill-self 15 -> $rk"
check_json "$T/e1"; check_json "$T/k1"
expect_rc 2 "$P" exit 256
run_ok "$T/i1" "$P" io-uring
jqe "$T/i1" '.ok or .errno == "ENOSYS" or .errno == "EPERM"'
run_ok "$T/m1" "$P" mounts /proc
jqe "$T/m1" '.ok and (.mount_points | split("\n") | index("/proc") != null)'
jqe_flush; pass "caps (setuid gain outside, none under NoNewPrivs), ptrace, net, unix-connect(s), fds, keyring, link-read, exit, kill-self, io-uring, mounts"

# ---- every object printed was ASCII with no raw control characters
if LC_ALL=C grep -n $'[\x01-\x1f\x7f-\xff]' "$ALL" >/dev/null; then
  fail "non-ASCII or control bytes in payload JSON"
fi
[[ -z $(marker_processes "$MARK") ]] || fail "marker processes remain at the end"
jqe_flush; pass "all output ASCII; no marker process left"
