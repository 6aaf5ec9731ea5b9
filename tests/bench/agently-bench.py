#!/usr/bin/env python3
"""Per-execute latency of Agently's providers: direct vs through the adapter.

    agently-bench.py PROVIDER ADAPTER AGENTLY_SRC PAYLOAD WORKDIR RUNS

Alternates, RUNS times each, in one process and one run:
  raw      subprocess fork+exec of `payload true` (the floor)
  direct   upstream's async_execute_code in this process (no protocol)
  adapter  the same execute through agently-adapter.py over agsbx-external/1
and prints p50/p90 in microseconds and the ratios adapter/direct (the cost
of the protocol and the mapping) and direct/raw (the provider's own cost).
"""
import asyncio
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    provider, adapter_path, src, payload, workdir, runs = sys.argv[1:7]
    runs = int(runs)
    here = Path(__file__).resolve().parent
    drive = load(here.parent / "cli" / "lib-agently-drive.py", "drive")
    ad = load(adapter_path, "agently_adapter")
    up, _ = ad.load_provider(Path(src).resolve(), provider)
    import tempfile
    work = tempfile.mkdtemp(prefix="bench-", dir=workdir)
    area, dst, grant = drive.make_area(work, payload)

    # direct: upstream in this process, the adapter's own grant/bundle builders
    g = ad.build_grant(grant)
    files, entries = ad.build_files(grant)
    config, _ = ad.convert_config({}, provider)
    loop = asyncio.new_event_loop()
    handle = loop.run_until_complete(up.async_ensure(
        requirement={"kind": "code_execution", "task_workspace_access_grant": g, "config": config},
        policy={"max_output_bytes": 20000}))
    h = ad.Handle(None, g, files, entries, config)
    bundle, manifest = ad.build_bundle(h, {"argv": [dst, "true"], "cwd": "build", "env": {}})

    def direct():
        loop.run_until_complete(handle["resource"].async_execute_code(
            bundle=bundle, manifest=manifest, grant=g, timeout=10))

    c = drive.Client(["python3", adapter_path, "--agently-src", src, "--provider", provider], work)
    c.call("hello", protocol=1)
    c.call("probe")
    hid = c.call("ensure", 60, grant=grant, config={}, limits={"max_output_bytes": 20000})["handle"]

    def via_adapter():
        r = c.call("execute", 20, handle=hid, exec_id=f"b{c.next}",
                   step={"argv": [dst, "true"], "cwd": "build", "env": {}},
                   limits={"timeout_ms": 10000, "max_output_bytes": 20000})
        assert r["ok"] and r["result"]["exit_code"] == 0, r

    def raw():
        subprocess.run([dst, "true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)

    times = {"raw": [], "direct": [], "adapter": []}
    fns = {"raw": raw, "direct": direct, "adapter": via_adapter}
    for name, fn in fns.items():  # warm-up
        fn()
    for _ in range(runs):
        for name, fn in fns.items():
            t0 = time.perf_counter_ns()
            fn()
            times[name].append((time.perf_counter_ns() - t0) // 1000)
    c.send("shutdown")
    c.p.wait(15)
    p50 = {k: pct(v, 0.5) for k, v in times.items()}
    for k, v in times.items():
        print(f"{provider:14} {k:8} p50 {p50[k]:7d} us  p90 {pct(v, 0.9):7d} us  (n={len(v)})")
    print(f"{provider:14} adapter/direct {p50['adapter'] / p50['direct']:.2f}  "
          f"(+{p50['adapter'] - p50['direct']} us per execute)  direct/raw {p50['direct'] / p50['raw']:.1f}")


if __name__ == "__main__":
    main()
