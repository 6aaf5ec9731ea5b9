#!/usr/bin/env bash
# Installation: `cmake --install` into DESTDIR + a prefix, and the .deb from
# CPack (contents, Debian relationships, dpkg-deb -x), each then used for a
# real `collect --provider landlock` from another directory as the
# unprivileged test user: the helpers are found in libexec/agsbx-evidence
# relative to the binary. AGSBX_LIBEXEC_DIR overrides the lookup; a missing
# helper directory is a one-line error with exit 3.
source "$(dirname "$0")/../lib/common.sh"
d=$(t_tmpdir install)

abi=$(/usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None,use_errno=True); print(l.syscall(444,None,0,1))')
[[ $abi -ge 1 ]] || skip "landlock" 1 "the kernel reports no Landlock ABI ($abi)"
have_test_user || skip "test user" 1 "needs root and the user $AGSBX_TEST_USER"

# collect_as_user ROOT LABEL: the installed binary under ROOT/bin, run from
# an unrelated directory, must produce a conformant landlock bundle.
collect_as_user() {
  local root=$1 label=$2 work out rc
  work=$(t_tmpdir "work-$label")
  chown "$AGSBX_TEST_USER" "$work"
  out="$work/F.json"
  set +e
  as_user sh -c 'cd "$1" && exec "$2" collect --provider landlock --unsigned -o F.json' sh "$work" "$root/bin/agsbx-evidence" \
    2>"$work/log"
  rc=$?
  set -e
  [[ $rc == 0 ]] || { tail -n 20 "$work/log" >&2; fail "$label: installed collect exited $rc"; }
  [[ $(jq -r '.providers[] | select(.id=="landlock") | .verdict' "$out") == conformant ]] || fail "$label: landlock not conformant"
  local helper
  helper=$(jq -r '.providers[] | select(.id=="landlock") | .probe.facts.helper.path' "$out")
  [[ $helper == "$root/libexec/agsbx-evidence/agsbx-landlock-exec" ]] || fail "$label: helper from $helper, not the installed libexec"
  grep -q '^next steps:' "$work/log" || fail "$label: no next-steps block on stderr"
  pass "$label: collect from another directory as $AGSBX_TEST_USER, helpers from libexec"
}

# ---- cmake --install with DESTDIR and a prefix ---------------------------
prefix=/opt/agsbx-t
DESTDIR="$d/dest" cmake --install "$AGSBX_BUILD_DIR" --prefix "$prefix" >"$d/install.log"
root="$d/dest$prefix"
helpers=$(t_helpers)
for f in bin/agsbx-evidence $(sed 's|^|libexec/agsbx-evidence/|' <<<"$helpers") share/man/man1/agsbx-evidence.1 \
         share/bash-completion/completions/agsbx-evidence share/doc/agsbx-evidence/LICENSE \
         share/agsbx-evidence/schemas/evidence-bundle.schema.json; do
  [[ -e "$root/$f" ]] || fail "install: $f missing"
done
for f in agsbx-payload agsbx-landlock-exec agsbx-simulate; do   # the list itself is not empty or stale
  grep -qx "$f" <<<"$helpers" || fail "agsbx-helpers.list lacks $f"
done
[[ ! -e "$root/bin/agsbx-payload" ]] || fail "install: helpers must not land in bin/"
chmod -R a+rX "$d/dest"
collect_as_user "$root" destdir

# The acceptance form: cmake --install --prefix P, run as root from elsewhere.
cmake --install "$AGSBX_BUILD_DIR" --prefix "$d/P" >/dev/null
(cd / && "$d/P/bin/agsbx-evidence" collect --provider landlock --unsigned -q -o "$d/p.json")
[[ $(jq -r '.providers[0].verdict' "$d/p.json") == conformant ]] || fail "--prefix install: landlock not conformant"
pass "cmake --install --prefix P; P/bin/agsbx-evidence collect from /"

# The lookup: AGSBX_LIBEXEC_DIR wins; a directory without the payload is an
# installation error (3), one line, no bundle.
set +e
AGSBX_LIBEXEC_DIR="$d/nonexistent" "$root/bin/agsbx-evidence" collect --provider landlock --unsigned -o "$d/x.json" 2>"$d/err"
rc=$?
set -e
[[ $rc == 3 ]] || fail "AGSBX_LIBEXEC_DIR without helpers: exit $rc, want 3"
grep -q "payload .*nonexistent.* is missing" "$d/err" || fail "AGSBX_LIBEXEC_DIR: message does not name the path: $(cat "$d/err")"
[[ ! -e "$d/x.json" ]] || fail "a bundle was written without helpers"
mv "$root/libexec/agsbx-evidence" "$d/moved-libexec"
expect_rc 3 "$root/bin/agsbx-evidence" collect --provider landlock --unsigned -o "$d/x.json" 2>/dev/null
AGSBX_LIBEXEC_DIR="$d/moved-libexec" "$root/bin/agsbx-evidence" collect --provider landlock --unsigned -q -o "$d/y.json"
[[ $(jq -r '.providers[0].probe.facts.helper.path' "$d/y.json") == "$d/moved-libexec/agsbx-landlock-exec" ]] \
  || fail "AGSBX_LIBEXEC_DIR not used for the helper"
pass "AGSBX_LIBEXEC_DIR overrides the lookup; missing helpers exit 3 without a bundle"

# ---- the .deb ---------------------------------------------------------------
command -v cpack >/dev/null || fail "cpack missing (cmake)"
(cd "$d" && cpack --config "$AGSBX_BUILD_DIR/CPackConfig.cmake" -B "$d/pkg" >"$d/cpack.log" 2>&1) \
  || { tail "$d/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$d"/pkg/agsbx-evidence_*.deb)
dpkg-deb -c "$deb" >"$d/contents"
for f in ./usr/bin/agsbx-evidence $(sed 's|^|./usr/libexec/agsbx-evidence/|' <<<"$helpers") \
         ./usr/share/bash-completion/completions/agsbx-evidence ./usr/share/man/man1/agsbx-evidence.1; do
  grep -q " $f\$" "$d/contents" || fail ".deb lacks $f"
done
[[ $(dpkg-deb -f "$deb" Package) == agsbx-evidence ]] || fail ".deb Package"
dpkg-deb -f "$deb" Depends | grep -q libjansson || fail ".deb Depends lacks jansson: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$deb" Depends | grep -q libsodium || fail ".deb Depends lacks libsodium"
dpkg-deb -f "$deb" Depends | grep -q bubblewrap && fail "bubblewrap must be a Recommends, not a Depends"
dpkg-deb -f "$deb" Recommends | grep -qw bubblewrap || fail ".deb Recommends lacks bubblewrap"
dpkg-deb -f "$deb" Suggests | grep -qw docker.io || fail ".deb Suggests lacks docker.io"
dpkg-deb -f "$deb" Suggests | grep -qw runsc || fail ".deb Suggests lacks runsc"
# Installable here (dependencies satisfied) without touching the system.
dpkg --dry-run -i "$deb" >"$d/dry.log" 2>&1 || { cat "$d/dry.log" >&2; fail "dpkg -i --dry-run refuses the package"; }
dpkg-deb -x "$deb" "$d/debroot"
chmod -R a+rX "$d/debroot"
collect_as_user "$d/debroot/usr" deb
