#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): never answers an execute (and ignores SIGTERM)."""
import os, signal, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase
signal.signal(signal.SIGTERM, signal.SIG_IGN)
negbase.serve(execute_fn=lambda q: time.sleep(3600))
