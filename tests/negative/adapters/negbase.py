"""NEGATIVE CONTROLS (test-only): the shared part of the deliberately broken
agsbx-external/1 adapters in this directory. It runs each step's argv
directly on the host (no isolation at all); each neg-*.py breaks the
protocol in exactly one way. Never ship or use these as a sandbox."""
import base64, itertools, json, os, signal, subprocess, sys, threading, time

lock, procs, handles, ids = threading.Lock(), {}, {}, itertools.count(1)
NOTHING = {"process_contained": False, "host_filesystem_restricted": False,
           "privilege_escalation_blocked": False, "syscalls_restricted": False,
           "network": "inherited", "environment_scrubbed": False,
           "mechanism": "negative_control", "safety_class": "trusted_local"}


def send(m):
    with lock:
        sys.stdout.write(json.dumps(m) + "\n")
        sys.stdout.flush()


def stop(p):
    """Kills the process group only: a detached grandchild survives (and may
    hold the pipes, so they are not waited for)."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        return p.communicate(timeout=1)
    except subprocess.TimeoutExpired:
        p.wait()
        return b"", b""


def run(q):
    """Runs the step on the host and returns the execute result."""
    lim, t0 = q["limits"], time.monotonic_ns()
    roots = handles[q["handle"]]
    env = {"PATH": "/usr/bin:/bin", **q["step"]["env"]}
    p = subprocess.Popen(q["step"]["argv"], cwd=roots[q["step"]["cwd"]], env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    with lock:
        procs[q["exec_id"]] = p
    deadline, late, cancelled = time.monotonic() + lim["timeout_ms"] / 1000, False, False
    while True:
        try:
            out, err = p.communicate(timeout=0.05)
            break
        except subprocess.TimeoutExpired:
            with lock:
                cancelled = q["exec_id"] not in procs
            late = not cancelled and time.monotonic() >= deadline
            if cancelled or late:
                out, err = stop(p)
                break
    with lock:
        procs.pop(q["exec_id"], None)
    m, rc = lim["max_output_bytes"], p.returncode
    return {"exit_code": rc if rc >= 0 else None, "signal": -rc if rc < 0 else None,
            "timed_out": late, "cancelled": cancelled,
            "stdout_b64": base64.b64encode(out[:m]).decode(),
            "stderr_b64": base64.b64encode(err[:m]).decode(),
            "stdout_truncated": len(out) > m, "stderr_truncated": len(err) > m,
            "stdout_total": len(out), "stderr_total": len(err),
            "duration_us": (time.monotonic_ns() - t0) // 1000, "meta": {}, "inferred": []}


def execute(q):
    send({"id": q["id"], "ok": True, "result": run(q)})


def cancel(q):
    with lock:
        p = procs.pop(q["exec_id"], None)
    return {"cancelled": p is not None}


def ensure(q):
    h = f"h{next(ids)}"
    handles[h] = {r["role"]: r["path"] for r in q["grant"]["roots"]}
    return {"handle": h, "meta": {}}


def release(q):
    handles.pop(q["handle"], None)
    return {}


OPS = {
    "hello": lambda q: {"protocol": 1, "provider": {"name": "negative-control", "version": "0"},
                        "reasons": ["ready"], "config_keys": []},
    # What the adapter itself sees (the transport rules, checked by tests).
    "probe": lambda q: {"available": True, "reason": "ready", "capabilities": CAPS[0],
                        "facts": {"uid": os.getuid(), "cwd": os.getcwd(), "env": sorted(os.environ),
                                  "cwd_entries": len(os.listdir("."))}},
    "ensure": ensure, "release": release, "cancel": cancel, "shutdown": lambda q: {},
    "health": lambda q: {"status": "ready" if q["handle"] in handles else "unhealthy"},
}
CAPS = [NOTHING]


ANSWERED = object()


def serve(execute_fn=execute, hooks=None):
    """The request loop; hooks maps an op to a replacement handler (one that
    wrote its own answer returns ANSWERED)."""
    ops = dict(OPS, **(hooks or {}))
    for line in sys.stdin:
        q = json.loads(line)
        if q["op"] == "execute":
            if q["handle"] not in handles:
                send({"id": q["id"], "ok": False, "reason": "released", "message": "released"})
                continue
            threading.Thread(target=execute_fn, args=(q,), daemon=True).start()
            continue
        r = ops[q["op"]](q)
        if r is not ANSWERED:
            send({"id": q["id"], "ok": True, **(r or {})})
        if q["op"] == "shutdown":
            break
