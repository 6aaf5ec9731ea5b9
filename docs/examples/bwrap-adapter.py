#!/usr/bin/env python3
"""agsbx-external/1 example adapter: every execute runs under bwrap. Stdlib only."""
import base64, itertools, json, os, shutil, signal, subprocess, sys, threading, time
lock, procs, handles, cancelled, ids = threading.Lock(), {}, {}, set(), itertools.count(1)
def send(m):
    with lock: sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def bwrap_argv(roots, step):
    a = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--ro-bind", "/usr", "/usr",
         "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
         "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for r in roots.values(): a += ["--bind" if r["writable"] else "--ro-bind", r["path"], r["path"]]
    env = {"PATH": "/usr/bin:/bin", "HOME": roots["build"]["path"], "TMPDIR": roots["build"]["path"], **step["env"]}
    for k, v in env.items(): a += ["--setenv", k, v]
    return a + ["--chdir", roots[step["cwd"]]["path"], "--"] + step["argv"]
def execute(q):
    lim, t0, roots = q["limits"], time.monotonic_ns(), handles.get(q["handle"])
    if roots is None: return send({"id": q["id"], "ok": False, "reason": "released", "message": "released"})
    p = subprocess.Popen(bwrap_argv(roots, q["step"]), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    with lock: procs[q["exec_id"]] = p
    try: out, err, late = *p.communicate(timeout=lim["timeout_ms"] / 1000), False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL); out, err, late = *p.communicate(), True
    with lock: procs.pop(q["exec_id"], None); was_cancelled = q["exec_id"] in cancelled
    m, rc = lim["max_output_bytes"], p.returncode
    send({"id": q["id"], "ok": True, "result": {
        "exit_code": rc if rc >= 0 else None, "signal": -rc if rc < 0 else None, "timed_out": late,
        "cancelled": was_cancelled, "stdout_b64": base64.b64encode(out[:m]).decode(),
        "stderr_b64": base64.b64encode(err[:m]).decode(), "stdout_truncated": len(out) > m,
        "stderr_truncated": len(err) > m, "stdout_total": len(out), "stderr_total": len(err),
        "duration_us": (time.monotonic_ns() - t0) // 1000, "meta": {}, "inferred": []}})
def cancel(q):
    with lock: p = procs.get(q["exec_id"]); cancelled.add(q["exec_id"])
    if p: os.killpg(p.pid, signal.SIGKILL)
    return {"cancelled": p is not None}
CAPS = {"process_contained": True, "host_filesystem_restricted": True, "privilege_escalation_blocked": True,
        "syscalls_restricted": False, "network": "isolated", "environment_scrubbed": True,
        "mechanism": "bubblewrap", "safety_class": "namespace_sandbox"}
def probe(q):
    ok = shutil.which("bwrap") is not None and subprocess.run(["bwrap", "--unshare-all", "--ro-bind", "/", "/",
        "true"], capture_output=True).returncode == 0
    return {"available": ok, "reason": "ready" if ok else "bwrap_unusable", "capabilities": CAPS, "facts": {}}
def ensure(q):  # fail closed: no handle, hence no execution, without a working bwrap
    if not probe(q)["available"]: return {"ok": False, "reason": "bwrap_unusable", "message": "bwrap fails here"}
    handles[h := f'{q["grant"]["id"]}-{next(ids)}'] = {r["role"]: r for r in q["grant"]["roots"]}
    return {"handle": h, "meta": {}}
OPS = {"hello": lambda q: {"protocol": 1, "provider": {"name": "bwrap-example", "version": "1"},
                           "reasons": ["ready", "bwrap_unusable"], "config_keys": []},
       "probe": probe, "ensure": ensure, "cancel": cancel, "shutdown": lambda q: {},
       "health": lambda q: {"status": "ready" if q["handle"] in handles else "unhealthy"},
       "release": lambda q: handles.pop(q["handle"], None) and {}}
for line in sys.stdin:
    q = json.loads(line)
    if q["op"] == "execute": threading.Thread(target=execute, args=(q,)).start(); continue
    send({"id": q["id"], "ok": True, **(OPS[q["op"]](q) or {})})
    if q["op"] == "shutdown": break
