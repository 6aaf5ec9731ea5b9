#!/usr/bin/env python3
"""Benchmark adapter (not a sandbox): answers every execute at once with a
canned exit 0 and runs nothing, so a round trip through it is the
agsbx-external/1 overhead alone. Used by tests/bench/external.sh only."""
import json, sys

RESULT = {"exit_code": 0, "signal": None, "timed_out": False, "cancelled": False, "stdout_b64": "",
          "stderr_b64": "", "stdout_truncated": False, "stderr_truncated": False, "stdout_total": 0,
          "stderr_total": 0, "duration_us": 0, "meta": {}, "inferred": ["exit_code"]}
CAPS = {"process_contained": False, "host_filesystem_restricted": False, "privilege_escalation_blocked": False,
        "syscalls_restricted": False, "network": "inherited", "environment_scrubbed": None,
        "mechanism": "none", "safety_class": "trusted_local"}
OPS = {"hello": {"protocol": 1, "provider": {"name": "immediate", "version": "0"}, "reasons": ["ready"],
                 "config_keys": []},
       "probe": {"available": True, "reason": "ready", "capabilities": CAPS, "facts": {}},
       "ensure": {"handle": "h", "meta": {}}, "health": {"status": "ready"}, "execute": {"result": RESULT},
       "cancel": {"cancelled": False}, "release": {}, "shutdown": {}}
out = sys.stdout
for line in sys.stdin:
    q = json.loads(line)
    out.write(json.dumps({"id": q["id"], "ok": True, **OPS[q["op"]]}) + "\n")
    out.flush()
    if q["op"] == "shutdown":
        break
