#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): leaves a detached process behind (double fork +
setsid at hello); otherwise well-behaved, exits 0 after shutdown."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase


def hello(q):
    r = negbase.OPS["hello"](q)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(3600)", *sys.argv[1:2]])
        os._exit(0)
    os.wait()
    return r


negbase.serve(hooks={"hello": hello})
