#!/usr/bin/env bash
# Catalogue v3 on real mechanisms as the test user:
#  - ipc.host_daemons_denied against real daemons of that user (dbus-daemon
#    --session, ssh-agent) named to collect by DBUS_SESSION_BUS_ADDRESS and
#    SSH_AUTH_SOCK, plus a python3 listener standing in for a daemon (as
#    gpg-agent in $XDG_RUNTIME_DIR: nothing else of the harness talks to
#    it, unlike $DOCKER_HOST, which the host probes query) that records
#    every byte it receives: none may arrive;
#    strace shows the payload's connect sends nothing;
#  - fs.inherited_fds_contained, and its negative control neg_leaked_fd
#    (the real bwrap with an O_PATH host directory descriptor leaked);
#  - secrets.keyring_denied, the key gone after collect and after SIGTERM
#    while it exists (as the user, and as root with --run-as);
#  - trusted_local (no sandbox) and neg_overclaim fail all three.
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
command -v bwrap >/dev/null || skip bubblewrap 1 "bwrap is not installed"
command -v dbus-daemon >/dev/null || skip dbus-daemon 1 "dbus-daemon is not installed (Debian package dbus)"
command -v ssh-agent >/dev/null || skip ssh-agent 1 "ssh-agent is not installed (openssh-client)"
command -v strace >/dev/null || skip strace 1 "strace is not installed"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"
[[ -x $AGSBX_BUILD_DIR/agsbx-evidence-negctl ]] || fail "negctl not built"

stage=$(t_stage_for_user)
d=$(t_tmpdir ipc)
chown "$AGSBX_TEST_USER:" "$d"

# start_daemon NAME CMD...: runs CMD as the test user in the background,
# its stdout on a FIFO held open here (later lines never meet a closed
# pipe): first its own pid (sh execs CMD), then CMD's first line, printed
# once it listens. Its stop by that pid is registered.
start_daemon() {
  local name=$1 line pid fd
  shift
  mkfifo -m 0666 "$d/$name.out"
  exec {fd}<>"$d/$name.out"
  as_user /bin/sh -c 'echo $$; exec "$@"' sh "$@" >"$d/$name.out" 2>"$d/$name.err" </dev/null &
  read -r -u "$fd" pid || fail "$name did not start"
  t_on_exit "kill $pid 2>/dev/null"
  read -r -u "$fd" line || fail "$name did not start: $(cat "$d/$name.err")"
}
start_daemon dbus dbus-daemon --session --nofork --nopidfile --address="unix:path=$d/bus" --print-address=1
# ssh-agent -D never flushes its stdout to a pipe: the forking form prints
# the daemon's pid as its parent exits, with the socket already bound.
agent_pid=$(as_user ssh-agent -a "$d/agent.sock" 2>/dev/null </dev/null | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')
[[ $agent_pid =~ ^[0-9]+$ ]] || fail "ssh-agent did not start"
t_on_exit "kill $agent_pid 2>/dev/null"
install -d -o "$AGSBX_TEST_USER" -m 0700 "$d/xdg" "$d/xdg/gnupg"
start_daemon standin /usr/bin/python3 -u -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o600); s.listen(64)
print("ready", flush=True)
log = open(sys.argv[2], "a", buffering=1)
while True:
    c, _ = s.accept()
    c.settimeout(2)
    n = 0
    try:
        while True:
            b = c.recv(4096)
            if not b: break
            n += len(b)
    except socket.timeout:
        pass
    log.write("bytes %d\n" % n)
    c.close()
' "$d/xdg/gnupg/S.gpg-agent" "$d/standin.log"
daemon_env=(DBUS_SESSION_BUS_ADDRESS="unix:path=$d/bus,guid=0123456789abcdef0123456789abcdef"
            SSH_AUTH_SOCK="$d/agent.sock" XDG_RUNTIME_DIR="$d/xdg")

# 1. The payload's connect sends nothing: no send* call at all, and its
#    only writes are its result on stdout (fd 1).
strace -f -qq -o "$d/trace" -e trace=connect,write,writev,sendto,sendmsg,sendmmsg,pwrite64 \
  "$AGSBX_BUILD_DIR/agsbx-payload" unix-connects "$d/bus" "$d/agent.sock" "$d/xdg/gnupg/S.gpg-agent" >"$d/direct.json"
[[ $(grep -c 'connect(' "$d/trace") == 3 ]] || fail "strace: want 3 connects: $(cat "$d/trace")"
! grep -E 'send(to|msg|mmsg)\(' "$d/trace" || fail "the payload sent on a daemon socket"
! grep -E '(write|writev|pwrite64)\(([02-9]|[1-9][0-9]+),' "$d/trace" || fail "the payload wrote to a descriptor other than stdout"
jq -e '[.sockets[] | .ok] | all' "$d/direct.json" >/dev/null || fail "root could not connect: $(cat "$d/direct.json")"
pass "strace: unix-connects connects three times and writes only its result to stdout"

# 2. Real verdicts as the test user.
set +e
as_user "${daemon_env[@]}" "$stage/agsbx-evidence" collect -q --provider trusted_local --provider landlock \
  --provider bubblewrap --work-dir "$d" --unsigned --output "$d/real.json" 2>"$d/real.err"
rc=$?
set -e
[[ $rc == 0 || $rc == 1 ]] || { cat "$d/real.err" >&2; fail "collect exited $rc"; }
chk() { jq -r --arg p "$1" --arg c "$2" ".providers[] | select(.id == \$p) | .checks[] | select(.id == \$c) | $3" "$4"; }
for p in trusted_local landlock bubblewrap; do
  for c in ipc.host_daemons_denied fs.inherited_fds_contained secrets.keyring_denied; do
    echo "# $p $c: $(chk $p $c '.verdict + ": " + .reason' "$d/real.json")"
  done
done
# Every daemon was found where the environment named it and reached by the
# control, so each was judged.
for want in "dbus-session|$d/bus|\$DBUS_SESSION_BUS_ADDRESS" "ssh-agent|$d/agent.sock|\$SSH_AUTH_SOCK" \
            "gpg-agent|$d/xdg/gnupg/S.gpg-agent|\$XDG_RUNTIME_DIR"; do
  IFS='|' read -r dn addr how <<<"$want"
  for p in trusted_local landlock bubblewrap; do
    chk $p ipc.host_daemons_denied '.facts.sockets[]' "$d/real.json" |
      jq -e --arg n "$dn" --arg a "$addr" --arg h "$how" -s \
        'any(.daemon == $n and .address == $a and .found_by == $h and .control == "connected" and .judged)' >/dev/null ||
      fail "$p: $dn not found at $addr by $how or not reached by the control: $(chk $p ipc.host_daemons_denied .facts "$d/real.json")"
  done
done
pass "three daemons found from the environment, each reached by the control as $AGSBX_TEST_USER"
# No sandbox: every daemon is reached, the canary read through cwd and
# root, the key read: each check observes the failure (not claimed).
for c in ipc.host_daemons_denied fs.inherited_fds_contained secrets.keyring_denied; do
  [[ $(chk trusted_local $c .verdict "$d/real.json") == not_claimed ]] || fail "trusted_local $c: not not_claimed"
  [[ $(chk trusted_local $c .reason "$d/real.json") == *REACHED* || $(chk trusted_local $c .reason "$d/real.json") == *READ* ]] ||
    fail "trusted_local $c: no reach recorded: $(chk trusted_local $c .reason "$d/real.json")"
done
# (ours only: an abstract X11 socket another test holds is host-wide)
[[ $(chk trusted_local ipc.host_daemons_denied '[.facts.sockets[] | select(.inside == "CONNECTED" and
     (.daemon == "dbus-session" or .daemon == "ssh-agent" or .daemon == "gpg-agent"))] | length' "$d/real.json") == 3 ]] ||
  fail "trusted_local: not all three daemons connected inside"
pass "trusted_local: daemons reached, canary read through cwd/root, key read (observed, not claimed)"
# bubblewrap claims process_contained and host_filesystem_restricted: all
# three pass on the real mechanism (its runs get a session keyring of their own).
for c in ipc.host_daemons_denied fs.inherited_fds_contained secrets.keyring_denied; do
  [[ $(chk bubblewrap $c .verdict "$d/real.json") == pass ]] || fail "bubblewrap $c: $(chk bubblewrap $c '.verdict + ": " + .reason' "$d/real.json")"
done
[[ $(jq -r '.providers[] | select(.id=="bubblewrap") | .verdict' "$d/real.json") == conformant ]] || fail "bubblewrap not conformant"
pass "bubblewrap: the three checks pass, conformant"
# Landlock claims host_filesystem_restricted: no descriptor or base reads the canary.
[[ $(chk landlock fs.inherited_fds_contained .verdict "$d/real.json") == pass ]] || fail "landlock fs.inherited_fds_contained"
pass "landlock: fs.inherited_fds_contained passes"

# Connections arrived (control and the sandboxes that reached it), never a byte.
[[ -s $d/standin.log ]] || fail "the stand-in daemon saw no connection"
! grep -v '^bytes 0$' "$d/standin.log" || fail "a byte reached the stand-in daemon"
pass "the stand-in daemon received $(wc -l <"$d/standin.log") connections and no byte"

# The keys are gone: neither the user nor the session keyring still has one.
for p in trusted_local landlock bubblewrap; do
  desc=$(chk $p secrets.keyring_denied .facts.description "$d/real.json")
  as_user "$stage/agsbx-payload" keyring "$desc" 0 | jq -e '[.searches[] | .ok] | any | not' >/dev/null ||
    fail "$p: the key $desc is still readable after collect"
done
pass "the keyring canaries are gone after collect"

# 3. Negative controls: the unsandboxed overclaimer fails all three; the
#    real bwrap with a leaked O_PATH descriptor fails the descriptor check
#    through that descriptor while its cwd and root stay inside.
set +e
as_user "${daemon_env[@]}" "$stage/agsbx-evidence-negctl" collect -q --provider neg_overclaim --provider neg_leaked_fd \
  --work-dir "$d" --unsigned --output "$d/neg.json" 2>"$d/neg.err"
rc=$?
set -e
[[ $rc == 1 ]] || { cat "$d/neg.err" >&2; fail "negctl collect exited $rc, want 1"; }
for c in ipc.host_daemons_denied fs.inherited_fds_contained secrets.keyring_denied; do
  [[ $(chk neg_overclaim $c .verdict "$d/neg.json") == fail ]] || fail "neg_overclaim $c: $(chk neg_overclaim $c '.verdict + ": " + .reason' "$d/neg.json")"
  pass "neg_overclaim: $c fails"
done
[[ $(chk neg_leaked_fd fs.inherited_fds_contained .verdict "$d/neg.json") == fail ]] ||
  fail "neg_leaked_fd: $(chk neg_leaked_fd fs.inherited_fds_contained '.verdict + ": " + .reason' "$d/neg.json")"
chk neg_leaked_fd fs.inherited_fds_contained .facts "$d/neg.json" | jq -e '
  ([.descriptors_inside[] | select(.o_path and .type == "dir" and .canary_read.ok)] | length == 1) and
  ([.bases_inside[] | .canary_read.ok] | any | not)' >/dev/null ||
  fail "neg_leaked_fd: not read through the leaked descriptor alone: $(chk neg_leaked_fd fs.inherited_fds_contained .facts "$d/neg.json")"
pass "neg_leaked_fd: the canary read through the leaked O_PATH descriptor only"

# 4. SIGTERM while the key exists: removed by the signal handler, as the
#    user (the key is the harness's) and as root with --run-as (removed in
#    a child that drops to the user).
hang() {
  local who=$1 desc hp
  rm -f "$d/hang.ready" "$d/hang.pid"
  touch "$d/hang.hold"
  mkfifo -m 0666 "$d/hang.ready"
  local cmd=("$stage/agsbx-evidence-negctl" collect -q --provider neg_hang_on_key --work-dir "$d" --unsigned
             --output "$d/hang.json" --jobs 1)
  # collect's own pid into hang.pid (sh execs it): as_user runs in a subshell.
  if [[ $who == user ]]; then
    as_user AGSBX_NEG_HANG_READY="$d/hang.ready" AGSBX_NEG_HANG_HOLD="$d/hang.hold" /bin/sh -c 'echo $$ >"$0"; exec "$@"' "$d/hang.pid" "${cmd[@]}" \
      2>"$d/hang.err" &
  else
    # --run-as wants a work dir no other user can change (collect refuses
    # one the sandbox user could redirect root's file operations through)
    local rw
    rw=$(mktemp -d /tmp/agsbx-ipc-root-XXXXXX)
    chmod 0755 "$rw"
    t_on_exit "rm -rf '$rw'"
    cmd[6]=$rw
    AGSBX_NEG_HANG_READY="$d/hang.ready" AGSBX_NEG_HANG_HOLD="$d/hang.hold" /bin/sh -c 'echo $$ >"$0"; exec "$@"' "$d/hang.pid" "${cmd[@]}" \
      --run-as "$AGSBX_TEST_USER" 2>"$d/hang.err" &
  fi
  local job=$!
  exec 3<>"$d/hang.ready"
  desc=""
  until read -r -t 5 desc <&3; do kill -0 $job 2>/dev/null || break; done
  exec 3<&-
  hp=$(cat "$d/hang.pid")
  [[ $desc == agsbx-canary-* ]] || { kill -KILL "$hp" 2>/dev/null || true; fail "$who: the key was not announced: $(cat "$d/hang.err")"; }
  as_user "$stage/agsbx-payload" keyring "$desc" 0 | jq -e '[.searches[] | .ok] | any' >/dev/null ||
    { kill -KILL $hp; fail "$who: the key $desc is not in place while collect stalls"; }
  # While hang.hold exists the stalled execution holds the check's own
  # clean-up back: the key can go only through the signal handler.
  kill -TERM $hp
  local i gone=0
  for ((i = 0; i < 100; i++)); do
    as_user "$stage/agsbx-payload" keyring "$desc" 0 | jq -e '[.searches[] | .ok] | any | not' >/dev/null && { gone=1; break; }
    sleep 0.1
  done
  rm -f "$d/hang.hold"
  set +e; wait $job; local rc=$?; set -e
  ((gone)) || fail "$who: the key $desc survived SIGTERM (the handler did not remove it)"
  [[ $rc == 143 ]] || fail "$who: interrupted collect exited $rc, want 143"
  pass "$who: SIGTERM while the keyring canary exists: removed"
}
hang user
hang root
