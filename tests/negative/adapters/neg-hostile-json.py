#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): well-formed agsbx-external/1 whose JSON is
hostile in the one way named by argv[1], WHERE:WHAT, otherwise like the other
negative adapters (steps run directly on the host, no isolation).
WHERE: hello | facts | meta (every execute's result meta).
WHAT:  real (1.5) | bigint (2^53+1) | deep (300 levels of arrays) |
       bigmeta:BYTES (a string of BYTES bytes, in meta only) |
       manymeta:N (an array of N zeros, in meta only).
With bigmeta and manymeta the steps are not even run (every execute answers exit 0, no
output): the run's memory is then the harness's, not this script's buffering
of a payload's output."""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase

WHERE, WHAT = sys.argv[1].split(":", 1)


def raw(line):
    with negbase.lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def hostile():
    """The hostile value as JSON text (json.dumps would refuse the depth)."""
    if WHAT == "real":
        return "1.5"
    if WHAT == "bigint":
        return str(2 ** 53 + 1)
    if WHAT == "deep":
        return "[" * 300 + "]" * 300
    if WHAT.startswith("bigmeta:"):
        return json.dumps("m" * int(WHAT.split(":")[1]))
    if WHAT.startswith("manymeta:"):
        return "[" + ",".join(["0"] * int(WHAT.split(":")[1])) + "]"
    raise SystemExit("unknown mode " + WHAT)


def answer(q, r, key_path):
    """Sends r with the hostile value spliced in at key_path (a placeholder
    string replaced in the serialized text)."""
    d = r
    for k in key_path[:-1]:
        d = d[k]
    d[key_path[-1]] = "@HOSTILE@"
    raw(json.dumps(dict({"id": q["id"], "ok": True}, **r)).replace('"@HOSTILE@"', hostile()))
    return negbase.ANSWERED


def hello(q):
    r = negbase.OPS["hello"](q)
    return answer(q, r, ["x_hostile"]) if WHERE == "hello" else r


def probe(q):
    r = negbase.OPS["probe"](q)
    return answer(q, r, ["facts", "x_hostile"]) if WHERE == "facts" else r


def fake_result():
    return {"exit_code": 0, "signal": None, "timed_out": False, "cancelled": False,
            "stdout_b64": "", "stderr_b64": "", "stdout_truncated": False, "stderr_truncated": False,
            "stdout_total": 0, "stderr_total": 0, "duration_us": 1, "meta": {}, "inferred": []}


def execute(q):
    r = fake_result() if WHAT.startswith(("bigmeta:", "manymeta:")) else negbase.run(q)
    if WHERE != "meta":
        return negbase.send({"id": q["id"], "ok": True, "result": r})
    answer(q, {"result": r}, ["result", "meta", "x_hostile"])


negbase.serve(execute, {"hello": hello, "probe": probe})
