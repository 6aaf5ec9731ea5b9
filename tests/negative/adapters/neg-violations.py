#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): breaks agsbx-external/1 in the one way named by
argv[1] (see MODES); otherwise like the other negative adapters."""
import base64, json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase

MODE = sys.argv[1]


def raw(line):
    with negbase.lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def probe(q):
    r = {"available": True, "reason": "ready", "capabilities": negbase.NOTHING, "facts": {}}
    if MODE == "dup-id":
        raw(json.dumps({"id": q["id"], "ok": True, **r}))
    if MODE == "unknown-id":
        q = dict(q, id=q["id"] + 1000)
    if MODE == "not-object":
        raw("[1, 2, 3]")
        return negbase.ANSWERED
    if MODE == "mistyped-ok":
        raw(json.dumps({"id": q["id"], "ok": "yes", **r}))
        return negbase.ANSWERED
    if MODE == "bad-caps":
        r["capabilities"] = dict(negbase.NOTHING, network="sometimes")
    if MODE == "long-line":
        r["facts"] = {"pad": "x" * (17 << 20)}
    raw(json.dumps({"id": q["id"], "ok": True, **r}))
    return negbase.ANSWERED


BASE_HELLO = negbase.OPS["hello"]


def hello(q):
    r = BASE_HELLO(q)
    return dict(r, protocol=2) if MODE == "bad-hello" else r


def ensure(q):
    if MODE == "bad-reason":
        raw(json.dumps({"id": q["id"], "ok": False, "reason": "made_up", "message": "no"}))
        return negbase.ANSWERED
    return negbase.ensure(q)


def execute(q):
    r = negbase.run(q)
    if MODE == "missing-field":
        del r["inferred"]
    if MODE == "bad-b64":
        r["stdout_b64"] = "!!!not base64!!!"
    if MODE == "over-limit":
        r["stdout_b64"] = base64.b64encode(b"x" * (q["limits"]["max_output_bytes"] + 1)).decode()
    negbase.send({"id": q["id"], "ok": True, "result": r})


def shutdown(q):
    raw(json.dumps({"id": q["id"], "ok": True}))
    if MODE == "after-shutdown":
        raw(json.dumps({"id": q["id"], "ok": True, "late": True}))
    if MODE == "linger":
        time.sleep(3600)
    return negbase.ANSWERED


negbase.serve(execute_fn=execute, hooks={"hello": hello, "probe": probe, "ensure": ensure, "shutdown": shutdown})
