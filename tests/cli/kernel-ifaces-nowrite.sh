#!/usr/bin/env bash
# fs.kernel_interfaces_readonly changes nothing: the payload's
# kernel-ifaces op, run as root (so the interfaces really open for
# write), makes no write-family call on any descriptor but its result on
# stdout (strace), and a stand-in file it opens keeps its content and
# mtime. In the host's mount namespace it attempts no mount.
source "$(dirname "$0")/../lib/common.sh"
[[ $(id -u) == 0 ]] || skip "root" 1 "the interfaces open for write only as root"
command -v strace >/dev/null || skip "strace" 1 "strace not installed"
P="$AGSBX_BUILD_DIR/agsbx-payload"
d=$(t_tmpdir kif)
printf 'stand-in\n' > "$d/stand-in"
touch -d '2001-01-01 00:00:00' "$d/stand-in"
before=$(stat -c '%s %Y' "$d/stand-in"); core=$(cat /proc/sys/kernel/core_pattern)
host_mnt=$(stat -L -c %i /proc/self/ns/mnt)
strace -f -qq -o "$d/trace" -e trace=open,openat,write,pwrite64,writev,pwritev,pwritev2,sendfile,splice,mount \
  "$P" kernel-ifaces "$host_mnt" "$d" "$d/stand-in" > "$d/out.json"
jq -e '.w.x0 == "opened"' "$d/out.json" >/dev/null || fail "the stand-in was not opened for write: $(cat "$d/out.json")"
jq -e '.w.core_pattern == "opened"' "$d/out.json" >/dev/null || fail "core_pattern did not open as root: $(cat "$d/out.json")"
grep -q 'openat(.*"/proc/sys/kernel/core_pattern", O_WRONLY' "$d/trace" || fail "no write-open of core_pattern in the trace"
! grep -E 'O_TRUNC|O_CREAT' "$d/trace" | grep -qE 'core_pattern|release_agent|stand-in' || fail "an interface opened with O_TRUNC/O_CREAT"
# Every write-family call goes to fd 1 (the result), none elsewhere.
bad=$(grep -E '(^|[0-9]+ +)(write|pwrite64|writev|pwritev2?|sendfile|splice)\(' "$d/trace" | grep -vE '(write|writev)\(1,' || true)
[[ -z $bad ]] || fail "write-family calls besides the result: $bad"
grep -qE 'write\(1,' "$d/trace" || fail "the trace did not see the result being written (strace filter broken?)"
[[ $(stat -c '%s %Y' "$d/stand-in") == "$before" && $(cat "$d/stand-in") == stand-in ]] || fail "the stand-in changed"
[[ $(cat /proc/sys/kernel/core_pattern) == "$core" ]] || fail "core_pattern changed"
pass "kernel-ifaces: interfaces opened for write, no byte written (strace), stand-in unchanged"
# The host's mount namespace: no mount attempted.
! grep -q '^[0-9]* *mount(' "$d/trace" || fail "a mount was attempted in the host's mount namespace"
jq -e '.mount.attempted == false and .mounts_permitted == 0' "$d/out.json" >/dev/null || fail "mount: $(jq -c .mount "$d/out.json")"
pass "kernel-ifaces: no mount in the host's mount namespace"
