#!/usr/bin/env python3
"""Writes one-defect variants of the OpenSSH (openssh-key-v1) Ed25519 private
key argv[1] into directory argv[2], one file per case (NAME.key), and prints
"NAME<TAB>expected error" lines for tests/cli/cov-sign-key-parse.sh. (An
encrypted key is only parsed before the run, so it is no case here.)"""
import base64, os, struct, sys

MAGIC = b"openssh-key-v1\0"
BEGIN, END = "-----BEGIN OPENSSH PRIVATE KEY-----", "-----END OPENSSH PRIVATE KEY-----"


def s(b):
    return struct.pack(">I", len(b)) + b


def rd(buf, off):
    n = struct.unpack(">I", buf[off:off + 4])[0]
    return buf[off + 4:off + 4 + n], off + 4 + n


def pem(raw):
    b = base64.b64encode(raw).decode()
    return BEGIN + "\n" + "\n".join(b[i:i + 70] for i in range(0, len(b), 70)) + "\n" + END + "\n"


text = open(sys.argv[1]).read()
raw = base64.b64decode("".join(text.split(BEGIN)[1].split(END)[0].split()))
assert raw.startswith(MAGIC)
off = len(MAGIC)
cipher, off = rd(raw, off)
kdf, off = rd(raw, off)
kdfopts, off = rd(raw, off)
nkeys = struct.unpack(">I", raw[off:off + 4])[0]
off += 4
pub, off = rd(raw, off)
priv, off = rd(raw, off)
assert cipher == b"none" and kdf == b"none" and nkeys == 1
# the private section
c1, c2 = priv[:4], priv[4:8]
p = 8
ktype, p = rd(priv, p)
pk, p = rd(priv, p)
sk, p = rd(priv, p)
comment, p = rd(priv, p)
assert ktype == b"ssh-ed25519" and len(pk) == 32 and len(sk) == 64


def padded(body):
    i = 1
    while len(body) % 8:
        body += bytes([i])
        i += 1
    return body


def section(c1=c1, c2=c2, ktype=ktype, pk=pk, sk=sk, comment=comment, tail=None):
    body = c1 + c2 + (s(ktype) if ktype is not None else b"") + (s(pk) if pk is not None else b"") + \
        (s(sk) if sk is not None else b"") + (s(comment) if comment is not None else b"")
    return padded(body) if tail is None else body + tail


def key(cipher=b"none", kdf=b"none", kdfopts=b"", nkeys=1, pub=pub, priv=None, raw_cut=None, magic=MAGIC):
    out = magic + s(cipher) + s(kdf) + s(kdfopts) + struct.pack(">I", nkeys) + s(pub) + \
        s(priv if priv is not None else section())
    return pem(out[:raw_cut] if raw_cut is not None else out)


other_pk = bytes(31) + b"\x01"
rsa_pub = s(b"ssh-rsa") + s(b"\x01\x00\x01") + s(b"\x00" + bytes(range(1, 129)))
cases = {
    # the container
    "no-pem": ("just text\n", "not an OpenSSH private key (openssh-key-v1 PEM)"),
    "no-end": (BEGIN + "\nAAAA\n", "not an OpenSSH private key (openssh-key-v1 PEM)"),
    "bad-base64": (BEGIN + "\n!!!!\n" + END + "\n", "not an OpenSSH private key (openssh-key-v1 PEM)"),
    "short-magic": (pem(b"openssh"), "not an openssh-key-v1 private key"),
    "bad-magic": (key(magic=b"openssh-key-v2\0"), "not an openssh-key-v1 private key"),
    "cut-in-cipher": (key(raw_cut=len(MAGIC) + 2), "malformed openssh-key-v1 private key"),
    "cut-in-kdf": (key(raw_cut=len(MAGIC) + 8 + 2), "malformed openssh-key-v1 private key"),
    "cut-in-kdfopts": (key(raw_cut=len(MAGIC) + 16 + 2), "malformed openssh-key-v1 private key"),
    "cut-in-nkeys": (key(raw_cut=len(MAGIC) + 20 + 2), "malformed openssh-key-v1 private key"),
    "two-keys": (key(nkeys=2), "malformed openssh-key-v1 private key"),
    "cut-in-pub": (key(raw_cut=len(MAGIC) + 24 + 10), "malformed openssh-key-v1 private key"),
    "cut-in-priv": (key(raw_cut=len(MAGIC) + 28 + len(pub) + 10), "malformed openssh-key-v1 private key"),
    # the private section
    "no-checkints": (key(priv=b"\0\0"), "truncated private key"),
    "checkints-differ": (key(priv=section(c2=b"\x01\x02\x03\x04")), "private key check bytes differ"),
    "private-type-rsa": (key(priv=section(ktype=b"ssh-rsa")), "malformed Ed25519 private key"),
    "private-pk-short": (key(priv=section(pk=pk[:31])), "malformed Ed25519 private key"),
    "private-sk-short": (key(priv=section(sk=sk[:63])), "malformed Ed25519 private key"),
    "private-no-comment": (key(priv=section(comment=None, tail=b"")), "malformed Ed25519 private key"),
    "halves-differ": (key(priv=section(sk=sk[:32] + other_pk)), "private and public halves of the key differ"),
    "bad-padding": (key(priv=section(tail=b"\x01\x03")), "bad private key padding"),
    "pub-differs": (key(pub=s(b"ssh-ed25519") + s(other_pk)), "public key does not match the private key"),
    # consistent halves, but not a key pair: the signing check before the run catches it
    "seed-mismatch": (key(pub=s(b"ssh-ed25519") + s(other_pk), priv=section(pk=other_pk, sk=sk[:32] + other_pk)),
                      "signature does not match the bundle content"),
    # an RSA public half over an Ed25519 private section: handed to ssh-keygen, which refuses it
    "other-type": (key(pub=rsa_pub), "ssh-keygen -Y sign failed"),
}
os.makedirs(sys.argv[2], exist_ok=True)
for name, (body, want) in cases.items():
    path = os.path.join(sys.argv[2], name + ".key")
    with open(path, "w") as f:
        f.write(body)
    os.chmod(path, 0o600)
    print(f"{name}\t{want}")
