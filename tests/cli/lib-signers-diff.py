#!/usr/bin/python3
"""Runs an allowed_signers corpus through agsbx-evidence verify and stock
ssh-keygen -Y verify (tests/cli/signers-diff.sh).

usage: lib-signers-diff.py AGSBX_BIN BUNDLE CANON SIG CORPUS.jsonl WORKDIR
For every case: the file is written, then
  agsbx-evidence verify BUNDLE --allowed-signers FILE --identity ID
  ssh-keygen -Y verify -f FILE -I ID -n agsbx-evidence -s SIG < CANON
and their accept (exit 0) / reject must agree; a case with a "want" must
also give that verdict. Prints one line per disagreement and a summary;
exit 1 on any disagreement.
"""
import json
import os
import subprocess
import sys


def run(argv, stdin=None):
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as inp:
        p = subprocess.run(argv, stdin=inp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return p.returncode, p.stderr.decode(errors="replace").strip().splitlines()


def main():
    b, bundle, canon, sig, corpus, work = sys.argv[1:7]
    path = os.path.join(work, "allowed_signers")
    bad = []
    stats = {"cases": 0, "accepted": 0, "ours_bad_input": 0, "named": 0}
    for raw in open(corpus):
        case = json.loads(raw)
        with open(path, "w") as f:
            f.write(case["text"] + "\n")
        ours, oerr = run([b, "verify", bundle, "--allowed-signers", path, "--identity", case["identity"]])
        ssh, serr = run(["ssh-keygen", "-Y", "verify", "-f", path, "-I", case["identity"], "-n",
                         "agsbx-evidence", "-s", sig], stdin=canon)
        stats["cases"] += 1
        if ours not in (0, 1, 2) or ssh not in (0, 255):
            bad.append(f"{case['name']}: unexpected exit (ours {ours}: {oerr[-1:]}, ssh-keygen {ssh}: {serr[-1:]})")
            continue
        stats["accepted"] += ours == 0
        stats["ours_bad_input"] += ours == 2
        want = case["want"]
        if want:
            stats["named"] += 1
        why = []
        if (ours == 0) != (ssh == 0):
            why.append(f"ours exit {ours} ({(oerr or [''])[-1]}), ssh-keygen exit {ssh} ({(serr or [''])[-1]})")
        if want and (ssh == 0) != (want == "accept"):
            why.append(f"ssh-keygen exit {ssh}, the case expects {want}")
        if why:
            bad.append(f"{case['name']}: {'; '.join(why)}; line {case['text'][:160]!r}")
    for line in bad:
        print("DIFF:", line, file=sys.stderr)
    print(f"{stats['cases']} cases ({stats['named']} named): {stats['accepted']} accepted by both,"
          f" {stats['cases'] - stats['accepted']} rejected ({stats['ours_bad_input']} of them bad input to us),"
          f" {len(bad)} disagreements")
    # a corpus that both accept or both reject throughout tests nothing
    if stats["cases"] < 500 or stats["accepted"] < 50 or stats["cases"] - stats["accepted"] < 50:
        print("corpus too small or one-sided", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
