#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): says it is unavailable because user namespaces
are blocked (declaring that reason as the host condition userns_blocked)
without looking; on a host that allows them, probe.truthful must fail."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase


def hello(q):
    return {"protocol": 1, "provider": {"name": "negative-control", "version": "0"},
            "reasons": ["ready", "userns_denied"], "config_keys": [],
            "reason_conditions": {"userns_denied": "userns_blocked"}}


def probe(q):
    return {"available": False, "reason": "userns_denied", "capabilities": negbase.NOTHING,
            "facts": {}, "detail": "user namespaces are blocked (not actually checked)"}


negbase.serve(hooks={"hello": hello, "probe": probe})
