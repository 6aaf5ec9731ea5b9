#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): one mistyped, missing or out-of-range field of
agsbx-external/1, named by argv[1] (see BAD and BADRES); every other answer is
the negative adapters' usual (negbase). tests/cli/cov-adapter-shapes.sh expects
each mode's specific violation message."""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase

MODE = sys.argv[1]
DEL = object()  # a field to leave out
CAPS = negbase.NOTHING
HELLO = {"protocol": 1, "provider": {"name": "negctl-" + MODE, "version": "1"},
         "reasons": ["ready", "broken"], "config_keys": []}
# MODE -> (op, fields merged into its answer; or a raw line in its place)
BAD = {
    "hello-refused": ("hello", {"ok": False, "reason": "broken", "message": "no"}),
    "hello-protocol2": ("hello", {"protocol": 2}),
    "hello-protocol-str": ("hello", {"protocol": "1"}),
    "hello-provider-str": ("hello", {"provider": "negctl"}),
    "hello-name-int": ("hello", {"provider": {"name": 7, "version": "1"}}),
    "hello-version-missing": ("hello", {"provider": {"name": "negctl"}}),
    "hello-name-long": ("hello", {"provider": {"name": "n" * 200, "version": "1"}}),
    "hello-version-long": ("hello", {"provider": {"name": "negctl", "version": "v" * 200}}),
    "hello-reasons-empty": ("hello", {"reasons": []}),
    "hello-reasons-obj": ("hello", {"reasons": {"ready": 1}}),
    "hello-reason-upper": ("hello", {"reasons": ["ready", "Broken"]}),
    "hello-reason-long": ("hello", {"reasons": ["ready", "r" * 65]}),
    "hello-reason-int": ("hello", {"reasons": ["ready", 3]}),
    "hello-ready-unknown": ("hello", {"ready_reasons": ["fine"]}),
    "hello-ready-notarray": ("hello", {"ready_reasons": "ready"}),
    "hello-no-ready": ("hello", {"reasons": ["ok_now", "broken"]}),
    "hello-config-keys-int": ("hello", {"config_keys": [1]}),
    "hello-config-keys-missing": ("hello", {"config_keys": DEL}),
    "hello-conds-array": ("hello", {"reason_conditions": ["x"]}),
    "hello-conds-undeclared": ("hello", {"reason_conditions": {"gone": "apparmor_restricts_userns"}}),
    "hello-conds-unknown": ("hello", {"reason_conditions": {"broken": "no_such_condition"}}),
    "probe-refused": ("probe", {"ok": False, "reason": "broken", "message": "no"}),
    "probe-available-str": ("probe", {"available": "yes"}),
    "probe-reason-missing": ("probe", {"reason": DEL}),
    "probe-facts-array": ("probe", {"facts": []}),
    "probe-reason-undeclared": ("probe", {"reason": "elsewhere"}),
    "probe-detail-int": ("probe", {"detail": 5}),
    "probe-hint-obj": ("probe", {"hint": {}}),
    "probe-caps-array": ("probe", {"capabilities": []}),
    "probe-caps-bool-str": ("probe", {"capabilities": {**CAPS, "process_contained": "true"}}),
    "probe-caps-env-str": ("probe", {"capabilities": {**CAPS, "environment_scrubbed": "yes"}}),
    "probe-caps-net-open": ("probe", {"capabilities": {**CAPS, "network": "open"}}),
    "probe-caps-mech-missing": ("probe", {"capabilities": {**CAPS, "mechanism": DEL}}),
    "probe-caps-mech-long": ("probe", {"capabilities": {**CAPS, "mechanism": "m" * 200}}),
    "probe-caps-class-long": ("probe", {"capabilities": {**CAPS, "safety_class": "c" * 200}}),
    "ensure-refused-undeclared": ("ensure", {"ok": False, "reason": "elsewhere", "message": "x"}),
    "ensure-refused-nomessage": ("ensure", {"ok": False, "reason": "broken"}),
    "ensure-handle-missing": ("ensure", {"handle": DEL}),
    "ensure-handle-long": ("ensure", {"handle": "h" * 200}),
    "ensure-meta-array": ("ensure", {"meta": []}),
    "cancel-str": ("cancel", {"cancelled": "x"}),
    "cancel-missing": ("cancel", {"cancelled": DEL}),
    "health-weird": ("health", {"status": "weird"}),
    "line-array": ("probe", "[1,2]"),
    "line-notjson": ("probe", "{not json"),
    "line-id-str": ("probe", {"id": "x"}),
    "line-ok-str": ("probe", {"ok": "true"}),
    "line-id-unknown": ("probe", {"id": 999}),
    "line-id-duplicate": ("probe", {"id": 1}),
    "line-real": ("probe", {"facts": {"x": 1.5}}),
}
BADRES = {
    "exec-result-array": [], "exec-exit-str": {"exit_code": "0"}, "exec-signal-str": {"signal": "9"},
    "exec-timed-out-int": {"timed_out": 0}, "exec-cancelled-missing": {"cancelled": DEL},
    "exec-stdout-int": {"stdout_b64": 0}, "exec-stderr-missing": {"stderr_b64": DEL},
    "exec-b64-bad": {"stdout_b64": "@@@@"}, "exec-duration-neg": {"duration_us": -1},
    "exec-duration-str": {"duration_us": "1"}, "exec-meta-array": {"meta": []},
    "exec-inferred-obj": {"inferred": {}}, "exec-inferred-int": {"inferred": [1]},
    "exec-total-big": {"stdout_total": 1 << 60}, "exec-trunc-str": {"stdout_truncated": "no"},
}
# well-formed answers that still fail a run: the payload's own exit status
# through the adapter; a line after answering shutdown (shutdown-chatter)
QUIRKS = {"exec-exit-1": {"exit_code": 1}}


def strip(v):
    return {k: strip(x) for k, x in v.items() if x is not DEL} if isinstance(v, dict) else v


def mutated(op):
    def handler(q):
        body = {"hello": lambda q: HELLO}.get(op, negbase.OPS[op])(q) or {}
        bad = BAD.get(MODE)
        if bad and bad[0] == op:
            if isinstance(bad[1], str):
                raw(bad[1])
                return negbase.ANSWERED
            body = strip({"id": q["id"], "ok": True, **body, **bad[1]})
            raw(json.dumps(body))
            return negbase.ANSWERED
        return body
    return handler


def raw(line):
    with negbase.lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def execute(q):
    r = negbase.run(q)
    b = BADRES.get(MODE, QUIRKS.get(MODE, {}))
    r = b if isinstance(b, list) else strip({**r, **b})
    negbase.send({"id": q["id"], "ok": True, "result": r})


negbase.serve(execute_fn=execute, hooks={op: mutated(op) for op in ("hello", "probe", "ensure", "cancel", "health")})
if MODE == "shutdown-chatter":
    raw(json.dumps({"id": 0, "ok": True, "late": "after shutdown"}))
