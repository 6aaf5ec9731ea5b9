#!/usr/bin/env bash
# A newcomer's `make test` as root runs every suite the host supports: the
# unprivileged test user the suites switch to is created by make test
# itself (workflows/test-user.sh, also used by .ci/run) when missing,
# before any suite runs; it is left alone when present; and a non-root run
# says why it cannot create it instead of failing.
source "$(dirname "$0")/../lib/common.sh"
SRC=$AGSBX_SOURCE_DIR
script=$SRC/workflows/test-user.sh
[[ -x $script ]] || fail "$script missing or not executable"

# make test runs the script, and before the tests.
plan=$(make -C "$SRC" -n test BUILD="$T_ROOT/b" 2>/dev/null)
grep -q 'workflows/test-user.sh' <<<"$plan" || fail "make test does not create the test user"
[[ $(grep -n 'test-user.sh' <<<"$plan" | head -1 | cut -d: -f1) -lt $(grep -n 'ctest' <<<"$plan" | head -1 | cut -d: -f1) ]] \
  || fail "make test creates the test user only after the tests"
grep -q 'workflows/test-user.sh' "$SRC/.ci/run" || fail ".ci/run does not use the same script"
pass "make test (and .ci/run) create the test user before any suite"

[[ $(id -u) == 0 ]] || skip "test user creation" 1 "needs root"
command -v useradd >/dev/null || skip useradd 1 "useradd missing"

# Present: left alone.
before=$(getent passwd "$AGSBX_TEST_USER" || true)
[[ -n $before ]] || fail "$AGSBX_TEST_USER should exist here"
AGSBX_TEST_USER=$AGSBX_TEST_USER "$script" 2>/dev/null
[[ $(getent passwd "$AGSBX_TEST_USER") == "$before" ]] || fail "an existing test user was changed"

# Missing: created (a throw-away name, removed again).
u=agsbx-fresh-$$
t_on_exit "userdel -r '$u' 2>/dev/null"
AGSBX_TEST_USER=$u "$script" 2>"$T_ROOT/create.err" || fail "creating $u: $(cat "$T_ROOT/create.err")"
id -u "$u" >/dev/null || fail "$u was not created"
[[ $(id -u "$u") != 0 ]] || fail "$u has uid 0"
[[ -z $(id -Gn "$u" | tr ' ' '\n' | grep -vx "$u") ]] || fail "$u got extra groups: $(id -Gn "$u")"
userdel -r "$u" 2>/dev/null || true
pass "a missing test user is created (unprivileged, no extra group); an existing one is left alone"

# Not root: a note, exit 0.
# (a copy the user can run: the clone may sit below a private directory)
st=$(mktemp -d /tmp/agsbx-fm-XXXXXX); chmod 755 "$st"; t_on_exit "rm -rf '$st'"
cp "$script" "$st/test-user.sh"; chmod 755 "$st/test-user.sh"
out=$(as_user "$st/test-user.sh" 2>&1) || fail "not root: exit $?"
grep -q "not root" <<<"$out" || fail "not root: no explanation: $out"
pass "not root: the script explains and exits 0"
