#!/usr/bin/env python3
"""Drives the Agently adapter's docker/gvisor entry over agsbx-external/1
directly (no harness) to observe what the harness cannot see between two
requests: which containers exist on the daemon right after a timed-out
execute has answered (before release), and after release.

    lib-agently-docker-drive.py ADAPTER AGENTLY_SRC PROVIDER DOCKER_HOST PAYLOAD WORKDIR

Runs as whoever starts it (the test starts it as the unprivileged user with
access to the daemon). Prints one JSON object with what it observed; exit 1
when the adapter did not answer.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time


class Client:
    def __init__(self, argv, cwd):
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": cwd, "LANG": "C.UTF-8",
               "AGSBX_EXTERNAL_PROTOCOL": "1"}
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd, env=env)
        self.cond, self.got, self.next = threading.Condition(), {}, 0
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.p.stdout:
            msg = json.loads(line)
            with self.cond:
                self.got[msg["id"]] = msg
                self.cond.notify_all()

    def call(self, op, timeout=60, **fields):
        self.next += 1
        rid = self.next
        self.p.stdin.write((json.dumps({"id": rid, "op": op, **fields}) + "\n").encode())
        self.p.stdin.flush()
        with self.cond:
            if not self.cond.wait_for(lambda: rid in self.got, timeout):
                print(f"FAIL: {op} not answered within {timeout} s", file=sys.stderr)
                self.p.kill()
                sys.exit(1)
            return self.got.pop(rid)


def containers(docker_host):
    # HOME: the docker CLI keeps its config there; the work dir, never the user's.
    res = subprocess.run(["docker", "ps", "-a", "--format", "{{.Names}} {{.State}}"], capture_output=True,
                         text=True, timeout=30, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "DOCKER_HOST": docker_host,
                                                     "HOME": WORK})
    return sorted(res.stdout.split("\n")[:-1]) if res.returncode == 0 else [f"error: {res.stderr.strip()}"]


def marker_processes(marker):
    """Host processes whose command line holds the marker (pid and argv[0..2])."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if any(marker.encode() in a for a in argv):
            found.append(f"{pid} " + " ".join(a.decode(errors="replace") for a in argv[:3]))
    return found


WORK = "/nonexistent"


def main(adapter, src, provider, docker_host, payload, work):
    global WORK
    WORK = work
    area = os.path.join(work, "area")
    roots = []
    for role in ("source", "build", "output", "logs"):
        os.makedirs(os.path.join(area, role))
        roots.append({"role": role, "path": os.path.join(area, role), "writable": role != "source"})
    exe = os.path.join(area, "source", "agsbx-payload")
    shutil.copy(payload, exe)
    os.chmod(exe, 0o755)
    data = open(exe, "rb").read()
    grant = {"id": "drive", "area": area, "roots": roots,
             "files": [{"name": "agsbx-payload", "path": exe, "sha256": hashlib.sha256(data).hexdigest(),
                        "bytes": len(data), "executable": True}]}
    c = Client(["python3", adapter, "--agently-src", src, "--provider", provider, "--docker-host", docker_host],
               work)
    seen = {"hello": c.call("hello", protocol=1)["ok"]}
    probe = c.call("probe", timeout=300)
    image = (probe.get("facts") or {}).get("runtime_image") or {}
    seen["probe"] = {"available": probe.get("available"), "reason": probe.get("reason"),
                     "runtime_image": {k: image.get(k) for k in ("status", "image", "image_id")}}
    ens = c.call("ensure", timeout=120, grant=grant, config={}, limits={"max_output_bytes": 4096})
    if not ens.get("ok"):
        seen["ensure"] = ens
        print(json.dumps(seen))
        return 0
    marker = f"agsbx-drive-marker-{os.getpid()}"
    t0 = time.monotonic()
    res = c.call("execute", timeout=60, handle=ens["handle"], exec_id="x1",
                 step={"argv": [exe, "linger", marker], "cwd": "build", "env": {}},
                 limits={"timeout_ms": 1000, "max_output_bytes": 4096})
    r = res.get("result", {})
    seen["timed_out_execute"] = {"ok": res.get("ok"), "timed_out": r.get("timed_out"),
                                 "exit_code": r.get("exit_code"), "seconds": round(time.monotonic() - t0, 1),
                                 "upstream": r.get("meta", {}).get("upstream", {}).get("status")}
    seen["containers_after_timeout"] = containers(docker_host)
    seen["marker_processes_after_timeout"] = marker_processes(marker)
    c.call("release", handle=ens["handle"])
    seen["containers_after_release"] = containers(docker_host)
    time.sleep(2)
    seen["marker_processes_2s_after_release"] = marker_processes(marker)
    c.call("shutdown")
    c.p.stdin.close()
    c.p.wait(timeout=15)
    print(json.dumps(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:7]))
