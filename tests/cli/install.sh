#!/usr/bin/env bash
# Installation: `cmake --install` into DESTDIR + a prefix, and the .deb from
# CPack (contents, Debian relationships, dpkg-deb -x), each then used for a
# real `collect --provider landlock` from another directory as the
# unprivileged test user: the helpers are found in libexec/agsbx-evidence
# relative to the binary. The .deb is lintian-clean: no error, no warning,
# the one override carries its reason; copyright (DEP-5), a Debian-format
# gzipped changelog, a gzipped man page, stripped binaries built with the
# hardening flags, python3 in Depends for the adapter script. AGSBX_LIBEXEC_DIR overrides the lookup; a missing
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
for f in bin/agsbx-evidence $(sed 's|^|libexec/agsbx-evidence/|' <<<"$helpers") share/man/man1/agsbx-evidence.1.gz \
         share/bash-completion/completions/agsbx-evidence share/doc/agsbx-evidence/LICENSE \
         share/agsbx-evidence/schemas/evidence-bundle.schema.json \
         share/agsbx-evidence/workflows/agsbx-evidence-reusable.yml share/agsbx-evidence/workflows/agsbx-evidence.yml \
         share/agsbx-evidence/action/install-mechanisms.sh share/agsbx-evidence/action/pr-comment.sh; do
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
         ./usr/share/bash-completion/completions/agsbx-evidence ./usr/share/man/man1/agsbx-evidence.1.gz \
         ./usr/share/doc/agsbx-evidence/copyright ./usr/share/doc/agsbx-evidence/changelog.gz \
         ./usr/share/lintian/overrides/agsbx-evidence; do
  grep -q " $f\$" "$d/contents" || fail ".deb lacks $f"
done
[[ $(dpkg-deb -f "$deb" Package) == agsbx-evidence ]] || fail ".deb Package"
dpkg-deb -f "$deb" Depends | grep -q libjansson || fail ".deb Depends lacks jansson: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$deb" Depends | grep -q libsodium || fail ".deb Depends lacks libsodium"
dpkg-deb -f "$deb" Depends | grep -q bubblewrap && fail "bubblewrap must be a Recommends, not a Depends"
dpkg-deb -f "$deb" Recommends | grep -qw bubblewrap || fail ".deb Recommends lacks bubblewrap"
dpkg-deb -f "$deb" Suggests | grep -qw docker.io || fail ".deb Suggests lacks docker.io"
dpkg-deb -f "$deb" Suggests | grep -qw runsc || fail ".deb Suggests lacks runsc"
dpkg-deb -f "$deb" Depends | grep -qw python3 || fail ".deb Depends lacks python3 (the adapter script)"
# Installable here (dependencies satisfied) without touching the system.
dpkg --dry-run -i "$deb" >"$d/dry.log" 2>&1 || { cat "$d/dry.log" >&2; fail "dpkg -i --dry-run refuses the package"; }
dpkg-deb -x "$deb" "$d/debroot"
chmod -R a+rX "$d/debroot"

# lintian: 0 errors, 0 warnings (info and pedantic tags shown, for the log);
# every override has a comment saying why.
have lintian || fail "lintian missing (workflows/install-deps.sh --test installs it)"
set +e
lintian --no-cfg --fail-on error,warning -I --pedantic "$deb" >"$d/lintian.log" 2>&1
lrc=$?
set -e
grep -v 'running with root privileges' "$d/lintian.log" >&2 || true
[[ $lrc == 0 ]] || fail "lintian exited $lrc"
[[ $(grep -c '^E: ' "$d/lintian.log") == 0 && $(grep -c '^W: ' "$d/lintian.log") == 0 ]] || fail "lintian: errors or warnings"
ov="$d/debroot/usr/share/lintian/overrides/agsbx-evidence"
awk '/^agsbx-evidence: / { if (!c) bad = bad $0 "\n"; c = 0; next } /^#/ { c = 1 }' "$ov" >"$d/ov-bad"
[[ ! -s $d/ov-bad ]] || fail "lintian overrides without a reason: $(cat "$d/ov-bad")"
grep -q '^agsbx-evidence: statically-linked-binary \[usr/libexec/agsbx-evidence/agsbx-payload\]' "$ov" || fail "no override for the static payload"
# the control: lintian does see a packaging error (an unstripped binary)
cp -a "$d/debroot" "$d/badroot"; mkdir -p "$d/badroot/DEBIAN"
dpkg-deb -e "$deb" "$d/badroot/DEBIAN"
cp "$AGSBX_BUILD_DIR/agsbx-landlock-exec" "$d/badroot/usr/libexec/agsbx-evidence/agsbx-landlock-exec"
dpkg-deb --root-owner-group -b "$d/badroot" "$d/bad.deb" >/dev/null
lintian --no-cfg "$d/bad.deb" >"$d/lintian-bad.log" 2>&1 || true
grep -q '^E: .*unstripped-binary-or-object' "$d/lintian-bad.log" || fail "control: lintian missed an unstripped binary"
# what the clean result rests on, checked directly
zcat "$d/debroot/usr/share/doc/agsbx-evidence/changelog.gz" >"$d/changelog"
[[ $(dpkg-parsechangelog -l "$d/changelog" -S Version) == "$(dpkg-deb -f "$deb" Version)" ]] || fail "changelog version != package version"
grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' "$d/debroot/usr/share/doc/agsbx-evidence/copyright" \
  || fail "copyright is not DEP-5"
zcat "$d/debroot/usr/share/man/man1/agsbx-evidence.1.gz" | grep -q '^\.SH SYNOPSIS' || fail "man page not gzipped troff"
# An instrumented build (make coverage) is built without the hardening
# flags on purpose (CMakeLists.txt: -O0 --coverage); its package is checked
# for everything else.
harden=1
grep -q '^AGSBX_COVERAGE:BOOL=ON$' "$AGSBX_BUILD_DIR/CMakeCache.txt" 2>/dev/null && harden=0
for b in usr/bin/agsbx-evidence usr/libexec/agsbx-evidence/agsbx-landlock-exec usr/libexec/agsbx-evidence/agsbx-payload; do
  file "$d/debroot/$b" | grep -q ', stripped' || fail "$b not stripped"
  readelf -d "$d/debroot/$b" >"$d/dyn" 2>&1 || true   # the static payload has no dynamic section
  ((!harden)) || grep -q 'BIND_NOW\|FLAGS.*NOW' "$d/dyn" || [[ $b == *payload ]] || fail "$b: no -z now"
  readelf -lW "$d/debroot/$b" >"$d/phdr"
  grep -q GNU_RELRO "$d/phdr" || fail "$b: no RELRO"
done
nm -D "$d/debroot/usr/bin/agsbx-evidence" >"$d/nm"
((!harden)) || grep -q '__[a-z]*_chk' "$d/nm" || fail "agsbx-evidence: no fortified libc call (-D_FORTIFY_SOURCE)"
((harden)) || echo "note: coverage build: -z now and fortify not checked (built without them on purpose)"
pass "lintian: 0 errors, 0 warnings, overrides with reasons; changelog, copyright, man.gz, stripped, hardened"
collect_as_user "$d/debroot/usr" deb
