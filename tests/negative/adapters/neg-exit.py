#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): exits (status 3) in the middle of its first execute."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase


def die(q):
    sys.stderr.write("neg-exit: dying mid-execute\n")
    sys.stderr.flush()
    os._exit(3)


negbase.serve(execute_fn=die)
