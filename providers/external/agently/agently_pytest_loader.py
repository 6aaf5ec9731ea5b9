"""pytest plugin: loads an Agently checkout the way agently-adapter.py does,
so upstream's own provider tests can run where Agently's package
dependencies cannot be installed (Debian 12: pydantic 2, httpx 0.28,
stamina, httpx-sse, agently-stage and newer json5/greenlet/packaging).

    env PYTHONPATH=<this directory> AGENTLY_SRC=<checkout> \
        python3 -m pytest -p agently_pytest_loader <checkout>/tests/test_....py

Before collection it registers Agently's packages as bare module objects
(their __init__.py files never run), re-exports agently.types.data, and sets
the adapter's stand-ins (agently.core.ExecutionResourceError; the
CodeRuntimeAdapter stand-in only where the checkout lacks that package).
It prints what it stood in for, so the attached output says so.
"""
import importlib.util
import os
import sys
from pathlib import Path


def pytest_configure(config):
    here = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location("agently_adapter", here / "agently-adapter.py")
    adapter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(adapter)
    src = Path(os.environ.get("AGENTLY_SRC") or config.rootpath).resolve()
    sys.dont_write_bytecode = True
    adapter.register_packages(src)
    data = sys.modules["agently.types.data"]
    for leaf in adapter.DATA_LEAVES:
        module = importlib.import_module(f"agently.types.data.{leaf}")
        # Upstream's tests import names the leaves define without listing
        # them in __all__ (ExecutionResourceRequirement): every public one.
        for name in dir(module):
            if not name.startswith("_") and not hasattr(data, name):
                setattr(data, name, getattr(module, name))
    sys.modules["agently.core"].ExecutionResourceError = adapter.ExecutionResourceError
    adapter.STAND_INS["code_runtime_adapter"] = adapter.load_code_runtime_adapter(src)
    print(f"agently_pytest_loader: {src} loaded without its package __init__ files; "
          f"stand-ins: {adapter.STAND_INS}", file=sys.stderr)
