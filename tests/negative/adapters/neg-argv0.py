#!/usr/bin/env python3
"""NEGATIVE CONTROL (test-only): a policy keyed on argv[0]. A step whose argv[0]
is the harness payload runs under bwrap (filesystem hidden); any other argv[0]
(/bin/sh, /usr/bin/env ...) runs directly on the host. Claims the filesystem
axis; the argv[0] variants of the fs.* attacks must catch it."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import negbase

negbase.CAPS[0] = dict(negbase.NOTHING, host_filesystem_restricted=True)


def bwrapped(q):
    step, roots = q["step"], negbase.handles[q["handle"]]
    if os.path.basename(step["argv"][0]) == "agsbx-payload":
        a = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
             "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
             "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev"]
        for role, path in roots.items():
            a += ["--ro-bind" if role == "source" else "--bind", path, path]
        q = dict(q, step=dict(step, argv=a + ["--chdir", roots[step["cwd"]], "--"] + step["argv"]))
    negbase.send({"id": q["id"], "ok": True, "result": negbase.run(q)})


negbase.serve(execute_fn=bwrapped)
