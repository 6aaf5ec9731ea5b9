#!/usr/bin/env bash
# probe is read-only: it succeeds, with the same facts, under a Landlock
# ruleset that allows no filesystem write anywhere (tests/cli/lib-landlock-nowrite.py:
# read+execute on /, writes only to the /dev/null sink), as root and as the
# unprivileged user; and a normal run leaves its working directory empty.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

[[ -x $AGSBX_BIN ]] || fail "not built: $AGSBX_BIN"
command -v jq >/dev/null || skip jq 1 "jq is not installed"
NOWRITE=$AGSBX_SOURCE_DIR/tests/cli/lib-landlock-nowrite.py
T=$(t_tmpdir probe-ll)

set +e; $PY "$NOWRITE" /usr/bin/true; rc=$?; set -e
[[ $rc == 125 ]] && skip landlock 1 "Landlock unavailable on this kernel"
[[ $rc == 0 ]] || fail "lib-landlock-nowrite.py /usr/bin/true exited $rc"

# The wrapper really denies writes (so the test below can fail) and allows reads.
mkdir "$T/w"
if $PY "$NOWRITE" sh -c "echo x > '$T/w/f'" 2>/dev/null; then fail "wrapper allowed a file write"; fi
if $PY "$NOWRITE" mkdir "$T/w/d" 2>/dev/null; then fail "wrapper allowed mkdir"; fi
if $PY "$NOWRITE" sh -c "echo x > /dev/shm/agsbx-t-$$" 2>/dev/null; then
  rm -f "/dev/shm/agsbx-t-$$"; fail "wrapper allowed a write to /dev/shm"
fi
$PY "$NOWRITE" cat /proc/self/status >/dev/null || fail "wrapper denied reading /proc"
[[ -z $(ls -A "$T/w") ]] || fail "wrapper left files: $(ls -A "$T/w")"
pass "the no-write wrapper denies writes and allows reads"

# Outside and inside: same facts, apart from what the wrapper itself changes
# (no_new_privs) and what is per-process.
"$AGSBX_BIN" probe --json >"$T/out.json" 2>"$T/out.err" || fail "probe failed: $(cat "$T/out.err")"
set +e; $PY "$NOWRITE" "$AGSBX_BIN" probe --json >"$T/in.json" 2>"$T/in.err"; rc=$?; set -e
[[ $rc == 0 ]] || fail "probe under the no-write ruleset exited $rc: $(tail -n 20 "$T/in.err")"
jq -e . "$T/in.json" >/dev/null || fail "probe under the no-write ruleset printed no JSON"
[[ $(jq -r .privilege.no_new_privs.value "$T/in.json") == 1 ]] || fail "the wrapper did not apply (no_new_privs != 1)"
norm='del(.privilege.no_new_privs)'
diff <(jq -S "$norm" "$T/out.json") <(jq -S "$norm" "$T/in.json") >"$T/diff" ||
  fail "facts differ under the no-write ruleset: $(head -n 40 "$T/diff")"
"$AGSBX_BIN" probe >/dev/null 2>&1 || fail "probe (table) failed"
$PY "$NOWRITE" "$AGSBX_BIN" probe >"$T/in.table" 2>"$T/in.table.err" ||
  fail "probe (table) under the no-write ruleset failed: $(tail -n 5 "$T/in.table.err")"
pass "probe succeeds under a no-write Landlock ruleset, with the same facts (root)"

# A coverage build (-DAGSBX_COVERAGE=ON) writes its counters at exit: one
# open(O_RDWR|O_CREAT) of DIR/X.gcda for every DIR/X.gcno the compiler left in
# the build dir. Exactly those calls, with exactly those paths and flags, are
# the toolchain's and not the probe's; any other write (a .gcda elsewhere, a
# mkdir, other flags) still fails the check. A normal build has no .gcno
# files, so the set is empty and the filter drops nothing.
find "$AGSBX_BUILD_DIR" -name '*.gcno' -printf '%p\n' | sed 's/\.gcno$/.gcda/' >"$T/own.gcda"
drop_own_gcda() {
  awk -v own="$T/own.gcda" '
    BEGIN { while ((getline p < own) > 0) gcda[p] = 1 }
    match($0, /^[0-9]+ +openat\(AT_FDCWD, "[^"]*", O_RDWR\|O_CREAT, 0666\) = [0-9]+$/) {
      split($0, q, "\""); if (q[2] in gcda) next
    }
    { print }'
}

# Independently of Landlock: trace every file-changing syscall of the probe
# and its children (bwrap/runsc --version): only read-only opens, and
# /dev/null (the runner's sink), may appear.
if have strace; then
  calls=open,openat,openat2,creat,mkdir,mkdirat,unlink,unlinkat,rename,renameat,renameat2,truncate,ftruncate
  calls+=,symlink,symlinkat,link,linkat,chmod,fchmod,fchmodat,chown,fchown,fchownat,lchown,mknod,mknodat
  calls+=,setxattr,lsetxattr,fsetxattr,removexattr,lremovexattr,fremovexattr,utimensat,mount,umount2
  # LeakSanitizer cannot run under ptrace.
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -e signal=none -e trace="$calls" \
    -o "$T/fs.trace" "$AGSBX_BIN" probe --json >/dev/null 2>"$T/fs.err" || fail "probe under strace: $(tail -n 5 "$T/fs.err")"
  grep -Eq 'open(at)?\(.*O_RDONLY' "$T/fs.trace" || fail "strace saw no open at all: the check would be vacuous"
  bad=$(grep -vE '^[0-9]+ +\+\+\+ |resumed>' "$T/fs.trace" |
    grep -vE '^[0-9]+ +open(at|at2)?\([^"]*"[^"]*", *O_RDONLY' |
    grep -vE '^[0-9]+ +open(at|at2)?\([^"]*"/dev/null", ' | drop_own_gcda || true)
  [[ -z $bad ]] || fail "probe made file-changing calls: $(head -n 10 <<<"$bad")"
  pass "strace: the probe and its children only open files read-only"
else
  echo "note: strace unavailable; read-only shown by the Landlock run only" >&2
fi

# Working directory stays empty after a normal run.
mkdir "$T/cwd"
(cd "$T/cwd" && "$AGSBX_BIN" probe --json >/dev/null 2>&1) || fail "probe in an empty cwd failed"
[[ -z $(ls -A "$T/cwd") ]] || fail "probe wrote into its cwd: $(ls -A "$T/cwd")"

if have_test_user; then
  S=$(t_stage_for_user)
  install -m 0644 "$NOWRITE" "$S/lib-landlock-nowrite.py"   # the clone may be private
  as_user "$S/agsbx-evidence" probe --json >"$T/u-out.json" 2>"$T/u-out.err" ||
    fail "probe as $AGSBX_TEST_USER failed: $(cat "$T/u-out.err")"
  as_user $PY "$S/lib-landlock-nowrite.py" "$S/agsbx-evidence" probe --json >"$T/u-in.json" 2>"$T/u-in.err" ||
    fail "probe as $AGSBX_TEST_USER under the no-write ruleset failed: $(tail -n 20 "$T/u-in.err")"
  diff <(jq -S "$norm" "$T/u-out.json") <(jq -S "$norm" "$T/u-in.json") >"$T/u-diff" ||
    fail "facts differ as $AGSBX_TEST_USER under the no-write ruleset: $(head -n 40 "$T/u-diff")"
  pass "probe succeeds under a no-write Landlock ruleset, with the same facts ($AGSBX_TEST_USER)"
else
  skip "test user" 1 "needs root and the user $AGSBX_TEST_USER (useradd -m $AGSBX_TEST_USER)"
fi
