#!/usr/bin/env python3
"""Drives the Agently adapter over agsbx-external/1 directly (no harness) and
asserts its mappings: limits per execute, whole-second timeouts shown as 124
with timed_out inferred, cancel, health/execute forwarded after release,
Agently's step validation and TOCTOU guard as refusals; and, beside them,
upstream's process-group cleanup defect (a timed-out run whose detached
grandchild keeps the pipes returns only once that process is killed).

    lib-agently-drive.py PROVIDER ADAPTER AGENTLY_SRC PAYLOAD WORKDIR

Runs as whoever starts it (the CLI test starts it as the unprivileged user).
Prints "ok - ..." per assertion; exits 1 on the first failure.
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROLES = ("source", "build", "output", "logs")


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def ok(msg):
    print(f"ok - {msg}")


class Client:
    def __init__(self, argv, cwd):
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": cwd, "LANG": "C.UTF-8",
               "AGSBX_EXTERNAL_PROTOCOL": "1"}
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd, env=env)
        self.cond = threading.Condition()
        self.got, self.next = {}, 0
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.p.stdout:
            msg = json.loads(line)
            with self.cond:
                self.got[msg["id"]] = msg
                self.cond.notify_all()

    def send(self, op, **fields):
        self.next += 1
        self.p.stdin.write((json.dumps({"id": self.next, "op": op, **fields}) + "\n").encode())
        self.p.stdin.flush()
        return self.next

    def wait(self, rid, timeout):
        end = time.monotonic() + timeout
        with self.cond:
            while rid not in self.got:
                left = end - time.monotonic()
                if left <= 0 or not self.cond.wait(left):
                    if rid not in self.got:
                        fail(f"no answer to request {rid} within {timeout}s")
            return self.got.pop(rid)

    def call(self, op, timeout=30, **fields):
        return self.wait(self.send(op, **fields), timeout)


def make_area(work, payload):
    area = os.path.join(work, "area")
    for r in ROLES:
        os.makedirs(os.path.join(area, r))
    dst = os.path.join(area, "source", "agsbx-payload")
    shutil.copy(payload, dst)
    os.chmod(dst, 0o755)
    with open(dst, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    grant = {"id": "grant-drive", "area": area,
             "roots": [{"role": r, "path": os.path.join(area, r), "writable": r != "source"} for r in ROLES],
             "files": [{"name": "agsbx-payload", "path": dst, "sha256": sha,
                        "bytes": os.path.getsize(dst), "executable": True}]}
    return area, dst, grant


def marker_pids(marker):
    """This user's processes whose cmdline holds marker."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(pid))
        except OSError:
            continue
    return pids


def kill_marker(marker):
    """SIGKILLs this user's processes whose cmdline holds marker; a count."""
    n = 0
    for pid in marker_pids(marker):
        try:
            os.kill(pid, 9)
            n += 1
        except OSError:
            continue
    return n


def main():
    provider, adapter, src, payload, workdir = sys.argv[1:6]
    work = tempfile.mkdtemp(prefix="drive-", dir=workdir)
    area, dst, grant = make_area(work, payload)
    canary = os.path.join(work, "secret.txt")
    with open(canary, "w") as f:
        f.write("CANARY-SECRET\n")
    c = Client(["python3", adapter, "--agently-src", src, "--provider", provider], work)

    hello = c.call("hello", protocol=1)
    ready = hello.get("ready_reasons")
    if not hello["ok"] or not set(ready) <= set(hello["reasons"]):
        fail(f"hello: {hello}")
    probe = c.call("probe")
    if not probe["ok"] or probe["available"] is not True or probe["reason"] not in ready:
        fail(f"probe not available: {probe.get('reason')} {probe.get('detail')}")
    ok(f"{provider}: hello and probe (reason {probe['reason']!r}, declared ready)")

    en = c.call("ensure", 60, grant=grant, config={}, limits={"max_output_bytes": 20000})
    if not en["ok"]:
        fail(f"ensure: {en}")
    h = en["handle"]

    def execute(args, timeout_ms=10000, limit=20000, exec_id=None, wait=None):
        rid = c.send("execute", handle=h, exec_id=exec_id or f"x{c.next}",
                     step={"argv": [dst] + args, "cwd": "build", "env": {}},
                     limits={"timeout_ms": timeout_ms, "max_output_bytes": limit})
        return rid if wait is False else c.wait(rid, wait or timeout_ms / 1000 + 10)

    r = execute(["write", os.path.join(area, "output", "n"), "nonce"])
    with open(os.path.join(area, "output", "n")) as f:
        if not r["ok"] or f.read() != "nonce" or r["result"]["exit_code"] != 0:
            fail(f"grant write: {r}")
    ok(f"{provider}: a write into output reaches the host; exit_code 0")

    # Another output limit than ensure's: an upstream handle ensured for it.
    r = execute(["flood", str(4 << 20)], limit=4096)["result"]
    out, err = base64.b64decode(r["stdout_b64"]), base64.b64decode(r["stderr_b64"])
    if not (len(out) <= 4096 and len(err) <= 4096 and r["stdout_truncated"] and r["stderr_truncated"]
            and r["meta"]["adapter"]["upstream_handle_ensured_for_this_limit"] is True
            and r["stdout_total"] is None):
        fail(f"flood with limit 4096: {len(out)}/{len(err)} {r['meta']['adapter']}")
    ok(f"{provider}: a per-execute output limit runs on an upstream handle ensured for it (4096 held)")

    # A process-group member that ignores SIGTERM: upstream SIGKILLs the
    # group after 1 s and reports 124; the adapter infers timed_out.
    t0 = time.monotonic()
    r = execute(["linger", "drive-marker-" + provider], timeout_ms=300)["result"]
    took = time.monotonic() - t0
    if not (r["exit_code"] == 124 and r["timed_out"] is True and "timed_out" in r["inferred"]
            and r["meta"]["adapter"]["timeout_s"] == 1 and took >= 1.0):
        fail(f"timeout: {r['exit_code']} {r['timed_out']} {r['inferred']} after {took:.2f}s")
    ok(f"{provider}: timeout 300 ms ran as 1 s, returncode 124, timed_out inferred ({took:.1f} s)")

    # The defect: a detached grandchild (new session, deaf to SIGTERM) keeps
    # the output pipes, so the timed-out call does not return at all; it
    # returns once that process is gone.
    marker = f"drive-marker-d-{provider}-{os.getpid()}"
    ready = os.path.join(area, "output", "ready-d")
    rid = execute(["spawn-detached", marker, ready], timeout_ms=300, exec_id="dx", wait=False)
    with c.cond:
        answered = c.cond.wait_for(lambda: rid in c.got, timeout=8)
    if answered or not os.path.exists(ready):
        fail(f"a detached grandchild's run answered ({answered}) or never started")
    killed = kill_marker(marker)
    r = c.wait(rid, 10)["result"]
    if not (killed == 1 and r["exit_code"] == 124 and r["timed_out"] is True):
        fail(f"after killing the escapee ({killed}): {r}")
    ok(f"{provider}: a timed-out run whose detached grandchild holds the pipes returns only once it is killed")

    rid = execute(["linger", "drive-marker-c-" + provider], timeout_ms=20000, exec_id="cx", wait=False)
    # Cancel once the program runs: on a loaded machine a fixed pause can
    # land the cancel inside upstream's spawn, which is another case.
    deadline = time.monotonic() + 10
    while not marker_pids("drive-marker-c-" + provider) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    cancel = c.call("cancel", exec_id="cx")
    r = c.wait(rid, 15)["result"]
    if not (cancel["cancelled"] is True and r["cancelled"] is True and r["exit_code"] is None
            and "stdout_b64" in r["inferred"]):
        fail(f"cancel: {cancel} {r}")
    ok(f"{provider}: cancel cancels the awaiting task; no exit status or output is made up")

    r = c.call("execute", handle=h, exec_id="bad", step={"argv": [dst, ""], "cwd": "build", "env": {}},
               limits={"timeout_ms": 5000, "max_output_bytes": 20000})
    if r["ok"] or r["reason"] != "step_invalid":
        fail(f"an empty argument must be refused by Agently's CodeExecutionStep: {r}")
    ok(f"{provider}: Agently's step validation shows as step_invalid")

    with open(dst, "ab") as f:
        f.write(b"\0")
    r = c.call("execute", handle=h, exec_id="toctou", step={"argv": [dst, "true"], "cwd": "build", "env": {}},
               limits={"timeout_ms": 5000, "max_output_bytes": 20000})
    if r["ok"] or r["reason"] != "bundle_changed":
        fail(f"a changed bundle file must be refused (upstream's TOCTOU guard): {r}")
    ok(f"{provider}: upstream's TOCTOU guard shows as bundle_changed")

    if not c.call("release", handle=h)["ok"]:
        fail("release")
    health = c.call("health", handle=h)
    r = c.call("execute", handle=h, exec_id="after", step={"argv": [dst, "true"], "cwd": "build", "env": {}},
               limits={"timeout_ms": 5000, "max_output_bytes": 20000})
    if r["ok"] or r["reason"] != "released":
        fail(f"execute after release: {r}")
    print(f"health after release (upstream's answer, forwarded): {health['status']}")
    with open(os.path.join(work, "health-after-release"), "w") as f:
        f.write(health["status"] + "\n")
    c.send("shutdown")
    if c.p.wait(15) != 0:
        fail("adapter exit status after shutdown")
    ok(f"{provider}: release, execute after release refused, shutdown exits 0")


if __name__ == "__main__":
    main()
