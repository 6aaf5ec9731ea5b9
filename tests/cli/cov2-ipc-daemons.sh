#!/usr/bin/env bash
# ipc.host_daemons_denied finds a daemon by every way the environment can
# name one that cli-escape-ipc does not use: DBUS_SESSION_BUS_ADDRESS with
# several addresses (a tcp one ignored, an abstract one, a path with a %xx
# escape, a key that is neither path nor abstract), WAYLAND_DISPLAY as a
# name in XDG_RUNTIME_DIR, an abstract X11 socket found in /proc/net/unix
# and named again by DISPLAY (":N.0"), and SSH_AUTH_SOCK as a symlink to a
# socket already found (one entry, by inode). The daemons are one python3
# listener of ours (path sockets in our tmpdir, abstract ones in the host
# network namespace, which hold no file) that records every byte it gets:
# none may arrive. Without a sandbox (trusted_local) every one is reached
# and an abstract one is listed but not judged (the network is shared);
# in bubblewrap (its own network namespace, as the test user) the abstract
# ones are judged too and none is reached.
source "$(dirname "$0")/../lib/common.sh"

command -v jq >/dev/null || skip jq 1 "jq is not installed"
d=$(t_tmpdir ipcd)
tag=agsbx-cov2-$$-$RANDOM
xn=$((7000 + RANDOM % 2000))
chk() { jq -c --arg p "$1" '.providers[] | select(.id == $p) | .checks[] | select(.id == "ipc.host_daemons_denied")' "$2"; }

# start_listener DIR ADDR...: one listener for every ADDR ("@name": abstract),
# run by the caller's wrapper ("${RUNNER[@]}"); its pid's kill is registered.
start_listener() {
  local dir=$1 fd pid line
  shift
  mkfifo -m 0666 "$dir/l.out"
  exec {fd}<>"$dir/l.out"
  "${RUNNER[@]}" /bin/sh -c 'echo $$; exec "$@"' sh "$PY" -u -c '
import select, socket, sys
socks = []
for a in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + a[1:] if a.startswith("@") else a)
    s.listen(64)
    socks.append(s)
print("ready", flush=True)
log = open(sys.argv[1], "a", buffering=1)
while True:
    for s in select.select(socks, [], [])[0]:
        c, _ = s.accept()
        c.settimeout(1)
        n = 0
        try:
            while True:
                b = c.recv(4096)
                if not b:
                    break
                n += len(b)
        except socket.timeout:
            pass
        log.write("bytes %d\n" % n)
        c.close()
' "$dir/log" "$@" >"$dir/l.out" 2>"$dir/l.err" </dev/null &
  read -r -u "$fd" pid || fail "listener did not start"
  t_on_exit "kill $pid 2>/dev/null"
  read -r -u "$fd" line || fail "listener did not start: $(cat "$dir/l.err")"
}

# ---- 1. no sandbox: found, reached, abstract ones not judged -------------
mkdir -m 0700 "$d/a" "$d/a/xdg"
RUNNER=(env)
start_listener "$d/a" "$d/a/bus" "@$tag-bus" "@/tmp/.X11-unix/X$xn" "$d/a/xdg/wl-$tag"
ln -s "$d/a/bus" "$d/a/agent-link"
env DBUS_SESSION_BUS_ADDRESS="tcp:host=localhost,port=1;unix:abstract=$tag-bus,guid=1;unix:tmpdir=/tmp,path=$d/a/b%75s" \
  SSH_AUTH_SOCK="$d/a/agent-link" XDG_RUNTIME_DIR="$d/a/xdg" WAYLAND_DISPLAY="wl-$tag" DISPLAY=":$xn.0" \
  "$AGSBX_BIN" collect -q --provider trusted_local --unsigned --output "$d/a.json" 2>"$d/a.err" ||
  fail "collect trusted_local: exit $?: $(tail -3 "$d/a.err")"
c=$(chk trusted_local "$d/a.json")
[[ $(jq -r .verdict <<<"$c") == not_claimed ]] || fail "trusted_local: $(jq -c '{verdict, reason}' <<<"$c")"
want=$(jq -cn --arg d "$d/a" --arg t "$tag" --arg x "$xn" '[
  {address: "@\($t)-bus", daemon: "dbus-session", found_by: "$DBUS_SESSION_BUS_ADDRESS", judged: false},
  {address: "\($d)/bus", daemon: "dbus-session", found_by: "$DBUS_SESSION_BUS_ADDRESS", judged: true},
  {address: "\($d)/xdg/wl-\($t)", daemon: "wayland", found_by: "$XDG_RUNTIME_DIR", judged: true},
  {address: "@/tmp/.X11-unix/X\($x)", daemon: "x11-abstract", found_by: "/proc/net/unix", judged: false}] | sort')
got=$(jq -c --arg d "$d/a" --arg t "$tag" --arg x "$xn" '[.facts.sockets[]
  | select((.address | startswith($d)) or .address == "@\($t)-bus" or .address == "@/tmp/.X11-unix/X\($x)")
  | {address, daemon, found_by, judged}] | sort' <<<"$c")
[[ $got == "$want" ]] || fail "trusted_local: daemons found: $got, want $want"
jq -e --arg d "$d/a" '[.facts.sockets[] | select(.address | startswith($d)) | .control == "connected" and .inside == "CONNECTED"]
  | all' <<<"$c" >/dev/null || fail "trusted_local: not every daemon reached: $(jq -c .facts.sockets <<<"$c")"
jq -e --arg t "$tag" '.reason | test("dbus-session @\($t)-bus: REACHED \\(not judged: the host network is shared\\)")' \
  <<<"$c" >/dev/null || fail "trusted_local: reason: $(jq -r .reason <<<"$c")"
pass "trusted_local: a tcp, abstract, %-escaped and other D-Bus address, a Wayland name, an abstract X11 socket and a symlinked duplicate"
[[ -s $d/a/log ]] || fail "the listener saw no connection"
! grep -v '^bytes 0$' "$d/a/log" || fail "a byte reached a listener"
pass "the listener got $(wc -l <"$d/a/log") connections and no byte"

# ---- 2. bubblewrap as the test user: abstract ones judged, none reached ---
have_test_user || skip "test user" 1 "part 2 needs root and the user $AGSBX_TEST_USER"
command -v bwrap >/dev/null || skip bubblewrap 1 "bwrap is not installed"
stage=$(t_stage_for_user)
install -d -o "$AGSBX_TEST_USER" -m 0700 "$d/b" "$d/b/xdg"
RUNNER=(as_user)
start_listener "$d/b" "$d/b/bus" "@$tag-ubus" "$d/b/xdg/wl-$tag"
set +e
as_user DBUS_SESSION_BUS_ADDRESS="unix:abstract=$tag-ubus;unix:path=$d/b/bus" XDG_RUNTIME_DIR="$d/b/xdg" \
  WAYLAND_DISPLAY="wl-$tag" "$stage/agsbx-evidence" collect -q --provider bubblewrap --work-dir "$d/b" --unsigned \
  --output "$d/b/b.json" 2>"$d/b/b.err"
rc=$?
set -e
[[ $rc == 0 || $rc == 1 ]] || fail "collect bubblewrap: exit $rc: $(tail -3 "$d/b/b.err")"
c=$(chk bubblewrap "$d/b/b.json")
[[ $(jq -r .verdict <<<"$c") == pass ]] || fail "bubblewrap: $(jq -c '{verdict, reason, facts}' <<<"$c")"
jq -e --arg t "$tag" --arg d "$d/b" '[.facts.sockets[] | select(.address == "@\($t)-ubus" or (.address | startswith($d)))]
  | length == 3 and all(.judged and .control == "connected" and .inside != "CONNECTED")' <<<"$c" >/dev/null ||
  fail "bubblewrap: $(jq -c .facts.sockets <<<"$c")"
! grep -v '^bytes 0$' "$d/b/log" || fail "a byte reached a listener"
pass "bubblewrap (own network namespace): the abstract D-Bus socket judged too, no daemon reached"
