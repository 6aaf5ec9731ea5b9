#!/usr/bin/python3
"""allowed_signers lines for the differential test (tests/cli/signers-diff.sh).

usage: lib-signers-corpus.py KEY.pub OTHER.pub OUT.jsonl
Writes one JSON object per line: {"name", "identity", "text", "want"}: text is
a whole allowed_signers file (one line, or a few well-formed ones), identity
what -I / --identity names, want "accept"/"reject" for the hand-written cases
whose verdict is known (the six issue-26 reproducers among them), null for the
generated ones, where only agreement with ssh-keygen counts.

Deterministic: the same keys give the same corpus (random.Random(26)).
"""
import base64
import json
import random
import struct
import sys

P = "dev@example.org"


def sshstr(b):
    return struct.pack(">I", len(b)) + b


def keyline(path):
    typ, b64 = open(path).read().split()[:2]
    return typ, b64


def blob_variants(b64):
    """(name, "TYPE BASE64") key texts built from the signing key's blob."""
    raw = base64.b64decode(b64)
    n = struct.unpack(">I", raw[:4])[0]
    pk = raw[4 + n:]
    enc = lambda b: base64.b64encode(b).decode()
    return [
        ("key-ok", "ssh-ed25519 " + b64),
        ("key-shortname-ED25519", "ssh-ed25519 " + enc(sshstr(b"ED25519") + pk)),
        ("key-shortname-ed25519", "ssh-ed25519 " + enc(sshstr(b"ed25519") + pk)),
        ("key-trailing-bytes", "ssh-ed25519 " + enc(raw + b"\0")),
        ("key-truncated", "ssh-ed25519 " + enc(raw[:-1])),
        ("key-no-padding", "ssh-ed25519 " + b64.rstrip("=")),
        ("key-extra-padding", "ssh-ed25519 " + b64 + "="),
        ("key-junk-after-padding", "ssh-ed25519 " + b64 + "x"),
        ("key-bad-base64", "ssh-ed25519 !!!notbase64"),
        ("key-type-rsa", "ssh-rsa " + b64),
        ("key-type-case", "SSH-ED25519 " + b64),
        ("key-type-sk", "sk-ssh-ed25519@openssh.com " + b64),
        ("key-type-cert", "ssh-ed25519-cert-v01@openssh.com " + b64),
        ("key-type-unknown", "ssh-foo " + b64),
        ("key-inner-rsa", "ssh-ed25519 " + enc(sshstr(b"ssh-rsa") + pk)),
        ("key-inner-nul", "ssh-ed25519 " + enc(sshstr(b"ssh-ed25519\0") + pk)),
        ("key-short-pk", "ssh-ed25519 " + enc(sshstr(b"ssh-ed25519") + sshstr(b"\1" * 31))),
        ("key-type-only", "ssh-ed25519"),
        ("key-type-only-blank", "ssh-ed25519 "),
        ("key-tab", "ssh-ed25519\t" + b64),
        ("key-two-spaces", "ssh-ed25519  " + b64),
        ("key-comment", "ssh-ed25519 " + b64 + " alice@laptop"),
        ("key-comment-options", "ssh-ed25519 " + b64 + ' namespaces="git",x'),
        ("key-cr-in-blob", "ssh-ed25519 " + b64[:20] + "\r" + b64[20:]),
        ("key-vt-in-blob", "ssh-ed25519 " + b64[:20] + "\v" + b64[20:]),
    ]


def named_cases(K, O):
    """Hand-written cases: (name, identity, text, want)."""
    c = [
        # the six reproducers of the hardening review: verify said "valid and
        # trusted" (exit 0) where ssh-keygen exits 255
        ("issue26-repeated-namespaces", P, f'{P} namespaces="git",namespaces="agsbx-evidence" {K}', "reject"),
        ("issue26-negated-512", P, f'{P},!{"*" * 600} {K}', "reject"),
        ("issue26-subpattern-1023", P, f'{P},{"x" * 1023} {K}', "reject"),
        ("issue26-trailing-comma", P, f'{P} namespaces="agsbx-evidence", {K}', "reject"),
        ("issue26-escaped-quote-at-end", P, f'{P} namespaces="agsbx-evidence,\\" {K}', "reject"),
        ("issue26-quote-mid-principal", 'foo"bar baz"', f'foo"bar baz" {K}', "reject"),
        # and their accepted neighbours
        ("quote-mid-principal-dequoted", "foobar baz", f'foo"bar baz" {K}', "accept"),
        ("negated-511", P, f'{P},!{"*" * 511} {K}', "reject"),
        ("negated-1022", P, f'{P},!{"*" * 1022} {K}', "reject"),
        ("negated-1023", P, f'!{"*" * 1023},{P} {K}', "reject"),
        ("subpattern-1022", P, f'{P},{"x" * 1022} {K}', "accept"),
        ("subpattern-1023-before", P, f'{"x" * 1023},{P} {K}', "reject"),
        ("subpattern-1023-star", P, f'{"*" * 1023} {K}', "reject"),
        ("subpattern-1022-star", P, f'{"*" * 1022} {K}', "accept"),
        ("namespaces-1023", P, f'{P} namespaces="agsbx-evidence,{"y" * 1023}" {K}', "reject"),
        ("namespaces-negated-600", P, f'{P} namespaces="agsbx-evidence,!{"*" * 600}" {K}', "reject"),
        ("repeated-namespaces-same", P, f'{P} namespaces="agsbx-evidence",namespaces="agsbx-evidence" {K}', "reject"),
        ("repeated-valid-after", P, f'{P} valid-after="20000101",valid-after="20010101" {K}', "reject"),
        ("repeated-cert-authority", P, f'{P} cert-authority,cert-authority {K}', "reject"),
        ("plain", P, f"{P} {K}", "accept"),
        ("namespaces-ok", P, f'{P} namespaces="agsbx-evidence" {K}', "accept"),
        ("namespaces-other", P, f'{P} namespaces="git" {K}', "reject"),
        ("escaped-quote-inside", P, f'{P} namespaces="agsbx-evidence,a\\"b" {K}', "accept"),
        ("escaped-quote-closed", P, f'{P} namespaces="agsbx-evidence\\"" {K}', "reject"),
        ("leading-comma", P, f'{P} ,namespaces="agsbx-evidence" {K}', "accept"),
        ("double-comma", P, f'{P} namespaces="agsbx-evidence",,valid-after="20000101" {K}', "accept"),
        ("other-key", P, f"{P} {O}", "reject"),
        ("cert-authority", P, f"{P} cert-authority {K}", "reject"),
        ("valid-window-inverted", P, f'{P} valid-after="20300101",valid-before="20200101" {K}', "reject"),
        ("valid-window-equal", P, f'{P} valid-after="20200101",valid-before="20200101" {K}', "reject"),
        ("valid-window-now", P, f'{P} valid-after="20000101",valid-before="29990101" {K}', "accept"),
        ("two-lines-second", P, f"other@x {O}\n{P} {K}", "accept"),
        ("two-lines-comment", P, f"# maintainers\n\n{P} {K}", "accept"),
        ("crlf", P, f"{P} {K}\r", "accept"),
        ("cr-separator", P, f"{P}\r{K}", "accept"),
    ]
    return c


PRINCIPALS = [
    # (text, matches P?) -- only the text matters; ssh-keygen judges
    P, "*", "*@example.org", "dev@*", "d?v@example.org", "de*@example.*", "DEV@example.org",
    "x@y," + P, P + ",x@y", P + ",", "," + P, ",," + P, P + ",,", "!" + P, "!x@y," + P,
    P + ",!x@y", P + ",!*", "!*," + P, P + ",!", "!", "\"" + P + "\"", "\"x y," + P + "\"",
    "\"" + P, P + "\"", "a\"b c\"," + P, P + ",a\"b c\"", "\"\"", "*" * 1022, "*" * 1023,
    P + ",!" + "*" * 511, P + ",!" + "*" * 512, P + ",!" + "x" * 512, P + "," + "z" * 1023,
    P + "," + "z" * 1022, "z" * 1100 + "," + P, "**@**", "?" * len(P), "?" * (len(P) + 1),
]

OPTIONS = [
    None, "", 'namespaces="agsbx-evidence"', 'NAMESPACES="agsbx-evidence"', 'Namespaces="agsbx-evidence"',
    'namespaces="git"', 'namespaces="*"', 'namespaces="agsbx-*"', 'namespaces="git,agsbx-evidence"',
    'namespaces="!git,agsbx-evidence"', 'namespaces="agsbx-evidence,!agsbx-*"', 'namespaces="!agsbx-evidence"',
    'namespaces=""', 'namespaces=agsbx-evidence', 'namespaces="agsbx-evidence', 'namespaces= "agsbx-evidence"',
    'namespaces ="agsbx-evidence"', 'namespaces="agsbx evidence,agsbx-evidence"',
    'namespaces="agsbx-evidence",', ',namespaces="agsbx-evidence"', 'namespaces="agsbx-evidence",,',
    'namespaces="agsbx-evidence",namespaces="git"', 'namespaces="git",namespaces="agsbx-evidence"',
    'namespaces="agsbx-evidence"x', 'namespaces="agsbx-evidence\\"', 'namespaces="agsbx-evidence\\""',
    'namespaces="agsbx-evidence,\\"', 'namespaces="\\"agsbx-evidence\\""', 'namespaces="agsbx-evidence\\",x"',
    'cert-authority', 'CERT-AUTHORITY', 'cert-authorityx', 'cert-authority=""', 'cert-authority,namespaces="*"',
    'valid-after="20000101"', 'valid-after="29990101"', 'valid-before="29990101"', 'valid-before="20000101"',
    'valid-after="20000101Z"', 'valid-after="20000101UTC"', 'valid-after="20000101utc"', 'valid-after="200001011200"',
    'valid-after="20000101120000"', 'valid-after="2000010112"', 'valid-after="19700101Z"', 'valid-after="19700101000001Z"',
    'valid-after="19691231Z"', 'valid-after="20001301"', 'valid-after="20000230"', 'valid-after=""', 'valid-after=20000101',
    'valid-before="29991231235959Z"', 'valid-before="299912312360"', 'VALID-BEFORE="29990101"',
    'valid-after="20000101",valid-before="29990101"', 'valid-before="29990101",valid-after="20000101"',
    'valid-after="20200101",valid-before="20100101"', 'valid-after="20000101",valid-after="20000101"',
    'valid-before="29990101",valid-before="29990102"', 'valid-after="20000101",', 'bogus', 'bogus="1"',
    'namespaces="agsbx-evidence",bogus', 'no-touch-required', 'verify-required', 'principals="x"',
    'namespaces="a b",valid-after="20000101"', 'namespaces="agsbx-evidence"\t', '"namespaces=agsbx-evidence"',
]

SEPARATORS = [" ", "  ", "\t", " \t "]
PREFIXES = ["", "", "", " ", "\t"]
SUFFIXES = ["", "", "", " ", " comment", "\r", " trailing words here"]


def generated(keys, rng, count):
    for i in range(count):
        pr = rng.choice(PRINCIPALS)
        opt = rng.choice(OPTIONS)
        kname, ktext = rng.choice(keys) if rng.random() < 0.3 else keys[0]
        sep = rng.choice(SEPARATORS)
        ident = P if rng.random() < 0.85 else rng.choice(["x@y", "DEV@example.org", "a\"b c\"", "ab c", "x y"])
        parts = [rng.choice(PREFIXES) + pr]
        if opt is not None:
            parts.append(opt)
        parts.append(ktext)
        text = sep.join(parts) + rng.choice(SUFFIXES)
        yield (f"gen-{i:03d}-{kname}", ident, text, None)


def main():
    typ, b64 = keyline(sys.argv[1])
    otyp, ob64 = keyline(sys.argv[2])
    K = f"{typ} {b64}"
    O = f"{otyp} {ob64}"
    rng = random.Random(26)
    keys = blob_variants(b64) + [("key-other", O)]
    cases = named_cases(K, O)
    # every key variant once, plainly and behind an option
    for kname, ktext in keys:
        cases.append((f"{kname}-plain", P, f"{P} {ktext}", None))
        cases.append((f"{kname}-opt", P, f'{P} namespaces="agsbx-evidence" {ktext}', None))
    # every principal and every option once with the signing key
    for i, pr in enumerate(PRINCIPALS):
        cases.append((f"principal-{i:02d}", P, f"{pr} {K}", None))
    for i, opt in enumerate(OPTIONS):
        if opt is not None:
            cases.append((f"option-{i:02d}", P, f"{P} {opt} {K}", None))
    cases.extend(generated(keys, rng, 420))
    with open(sys.argv[3], "w") as f:
        for name, ident, text, want in cases:
            f.write(json.dumps({"name": name, "identity": ident, "text": text, "want": want}) + "\n")


if __name__ == "__main__":
    main()
