# verify --keys-url against a keys file served over HTTP on loopback
# (like https://github.com/USER.keys): trusted, untrusted, 404, too big,
# unreachable.
source "$AGSBX_SOURCE_DIR/tests/lib/common.sh"

B=$AGSBX_BIN
D=$AGSBX_SOURCE_DIR/tests/data/bundles
T=$(t_tmpdir vkeys)
[[ -x $PY ]] || skip python3 1 "/usr/bin/python3 missing"
mkdir "$T/www"
# GitHub's format: one key per line, no comment
cut -d' ' -f1,2 "$D/keys/fixture_ed25519.pub" >"$T/www/fixture.keys"
ssh-keygen -q -t ed25519 -N '' -f "$T/other"
{ echo; cat "$T/other.pub"; cut -d' ' -f1,2 "$D/keys/fixture_ed25519.pub"; } >"$T/www/several.keys"
cut -d' ' -f1,2 "$T/other.pub" >"$T/www/other.keys"
head -c $((300 * 1024)) /dev/zero | tr '\0' 'A' >"$T/www/huge.keys"
echo "not a key" >"$T/www/junk.keys"

port=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$T/www" && exec $PY -m http.server --bind 127.0.0.1 "$port") >"$T/http.log" 2>&1 &
server=$!
t_on_exit "kill $server 2>/dev/null; wait $server 2>/dev/null"
for _ in $(seq 100); do
  $PY -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/fixture.keys')" 2>/dev/null && break
  sleep 0.1
done
U=http://127.0.0.1:$port

# Plain http is refused unless asked for: the loopback server below is.
INS=
expect_rc 2 "$B" verify "$D/signed.json" $INS --keys-url "$U/fixture.keys" >/dev/null 2>"$T/err"
grep -q 'plain http keys URL refused.*--allow-insecure-keys-url' "$T/err" || fail "http refusal: $(cat "$T/err")"
INS=--allow-insecure-keys-url

expect_rc 0 "$B" verify "$D/signed.json" $INS --keys-url "$U/fixture.keys" >"$T/out"
grep -q "^signer:     $U/fixture.keys (keys URL)" "$T/out" || fail "identity: $(cat "$T/out")"
expect_rc 0 "$B" verify "$D/signed.json" $INS --keys-url "$U/several.keys" >/dev/null
expect_rc 1 "$B" verify "$D/signed.json" $INS --keys-url "$U/other.keys" >/dev/null 2>&1
expect_rc 2 "$B" verify "$D/signed.json" $INS --keys-url "$U/missing.keys" >/dev/null 2>"$T/err"
grep -q 'HTTP status 404' "$T/err" || fail "404 message: $(cat "$T/err")"
expect_rc 2 "$B" verify "$D/signed.json" $INS --keys-url "$U/huge.keys" >/dev/null 2>"$T/err"
grep -q 'larger than 256 KiB' "$T/err" || fail "size cap message: $(cat "$T/err")"
expect_rc 2 "$B" verify "$D/signed.json" $INS --keys-url "$U/junk.keys" >/dev/null 2>&1
expect_rc 2 "$B" verify "$D/signed.json" $INS --keys-url "file:///etc/passwd" >/dev/null 2>&1
kill "$server"; wait "$server" 2>/dev/null || true
expect_rc 3 "$B" verify "$D/signed.json" $INS --keys-url "$U/fixture.keys" >/dev/null 2>&1
pass "keys URL: trusted, untrusted, 404, size cap, junk, unreachable"
