#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): says it is unavailable for the reason
REASON, declared as the host condition COND, without looking:
    neg-blocked-as.py COND REASON [MARKER]
probe.truthful must compare the claim with what the harness itself finds
on the host for COND (tests/cli/hostcond-claims.sh)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase

COND, REASON = sys.argv[1], sys.argv[2]


def hello(q):
    return {"protocol": 1, "provider": {"name": "negative-control", "version": "0"},
            "reasons": ["ready", REASON], "config_keys": [],
            "reason_conditions": {REASON: COND}}


def probe(q):
    return {"available": False, "reason": REASON, "capabilities": negbase.NOTHING,
            "facts": {}, "detail": COND + " (not actually checked)"}


negbase.serve(hooks={"hello": hello, "probe": probe})
