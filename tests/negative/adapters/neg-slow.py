#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): answers every execute, but 7 s after its
timeout_ms (the harness allows timeout_ms + 5 s)."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase


def slow(q):
    r = negbase.run(q)
    time.sleep(q["limits"]["timeout_ms"] / 1000 + 7)
    negbase.send({"id": q["id"], "ok": True, "result": r})


negbase.serve(execute_fn=slow)
