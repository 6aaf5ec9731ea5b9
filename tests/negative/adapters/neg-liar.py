#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): claims every axis, runs argv directly on the host."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase
negbase.CAPS[0] = {"process_contained": True, "host_filesystem_restricted": True,
                   "privilege_escalation_blocked": True, "syscalls_restricted": True,
                   "network": "isolated", "environment_scrubbed": True,
                   "mechanism": "negative_control", "safety_class": "namespace_sandbox"}
negbase.serve()
