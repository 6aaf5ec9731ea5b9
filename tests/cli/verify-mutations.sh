# Every single-character change to a signed bundle's content makes
# `verify` fail: for every byte of minimal-signed.json that is not
# whitespace between tokens, a copy with that byte changed must not verify
# (exit 1 or 2) — unless the change leaves the signed content as jq sees it
# unchanged (only the unsigned comment of signature.public_key qualifies).
# The in-process suite (test-evidence) does the same over every byte of the
# larger fixture; this runs the real binary.
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles
T=$(t_tmpdir vmut)
[[ -x $PY ]] || skip python3 1 "/usr/bin/python3 missing"
command -v jq >/dev/null || skip jq 1 "jq not installed"

cat >"$T/mutate.py" <<'PY'
import subprocess, sys, os
from concurrent.futures import ThreadPoolExecutor
binary, bundle, pub, tmp = sys.argv[1:5]
orig = open(bundle, "rb").read()
canon = subprocess.run(["jq", "-cjS", "del(.signature)", bundle], capture_output=True, check=True).stdout
positions = []
in_str = esc = False
for i, c in enumerate(orig):
    # whitespace between tokens is not content
    structural_ws = not in_str and c in b" \t\r\n"
    if in_str:
        if esc: esc = False
        elif c == 0x5c: esc = True
        elif c == 0x22: in_str = False
    elif c == 0x22:
        in_str = True
    if not structural_ws:
        positions.append(i)

def one(i):
    """None when verify rejected the mutation, else why it is a failure (or "" when harmless)."""
    c = orig[i]
    path = os.path.join(tmp, "m%d.json" % i)
    m = bytearray(orig); m[i] = c ^ 0x01
    open(path, "wb").write(m)
    rc = subprocess.run([binary, "verify", path, "--key", pub], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    try:
        if rc not in (0, 1, 2):
            return "byte %d: verify exited %d (crash?)" % (i, rc)
        if rc != 0:
            return None
        now = subprocess.run(["jq", "-cjS", "del(.signature)", path], capture_output=True).stdout
        if now != canon:
            return "byte %d (%r -> %r): content changed and verify still passed" % (i, chr(c), chr(c ^ 1))
        return ""
    finally:
        os.unlink(path)

# Independent processes: as many at once as there are cores.
with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
    results = list(ex.map(one, positions))
for r in results:
    if r:
        sys.exit(r)
tried = len(results)
rejected = sum(1 for r in results if r is None)
print("tried %d, rejected %d" % (tried, rejected))
if tried < 1000 or rejected < tried - 64:
    sys.exit("too few mutations tried or rejected")
PY
out=$($PY "$T/mutate.py" "$B" "$D/minimal-signed.json" "$D/keys/fixture_ed25519.pub" "$T") || fail "$out"
pass "single-character changes: $out"
