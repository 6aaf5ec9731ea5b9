#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): answers probe with a line that is not JSON."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase


def garbage(q):
    sys.stdout.write("this is \x01 not json {\n")
    sys.stdout.flush()
    return {}


negbase.serve(hooks={"probe": garbage})
