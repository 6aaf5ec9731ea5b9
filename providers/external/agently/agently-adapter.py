#!/usr/bin/env python3
"""agsbx-external/1 adapter for Agently's own code_execution providers.

    agently-adapter.py --agently-src DIR --provider landlock|bubblewrap|trusted_local|seatbelt

Loads the provider module from a user's Agently checkout (DIR is the
directory that holds the `agently/` package) without running the package
`__init__.py` files (they import pydantic, httpx and agently-stage, which the
providers never use), then speaks agsbx-external/1 (docs/external-protocol.md)
on stdin/stdout ("upstream" below always means that Agently code).
Everything Agently's API cannot express is mapped here and labelled: fields
the adapter inferred are listed in the result's `inferred`, values it
supplied itself in `meta.adapter`. Nothing is made up to fill a gap
the provider left: a call that never returns is never answered.

Exit status: 0 after `shutdown` or end of input, 2 bad arguments or an Agently
checkout the provider cannot be loaded from (nothing spoken then).
Only the standard library and typing_extensions (which Agently needs).
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import importlib
import json
import math
import os
import platform
import re
import sys
import time
import types
from datetime import datetime, timezone
from pathlib import Path

PROTOCOL = 1
MAX_LINE = 16 * 1024 * 1024
EP = "agently.builtins.plugins.ExecutionResourceProvider"

# Per provider: the upstream module, class, the config keys upstream accepts,
# and every reason its probe/ensure can give (read from the upstream source;
# ensure codes lose their "execution_resource." prefix; the protocol wants
# [a-z0-9_] names, so other characters become "_" and the upstream string
# stays in the facts). trusted_local is available with the reason "unsafe
# host toolchains available", never "ready": that reason is declared as its
# ready reason. `conditions` names the reasons that state a host condition
# the harness can check itself (probe.truthful compares them).
PROVIDERS = {
    "landlock": {
        "module": "LandlockExecutionResourceProvider",
        "cls": "LandlockExecutionResourceProvider",
        "config_keys": ["dependency_policy"],
        "reasons": ["ready", "not_linux", "kernel_does_not_support_landlock",
                    "landlock_enforcement_failed", "toolchain_unavailable",
                    "landlock_config_invalid", "landlock_unavailable",
                    "workspace_grant_required"],
        "ready_reasons": ["ready"],
        "conditions": {"kernel_does_not_support_landlock": "landlock_unsupported"},
    },
    "bubblewrap": {
        "module": "BubblewrapExecutionResourceProvider",
        "cls": "BubblewrapExecutionResourceProvider",
        "config_keys": ["dependency_policy", "network"],
        "reasons": ["ready", "not_linux", "bwrap_binary_missing", "bwrap_mechanism_failed",
                    "bwrap_user_namespace_blocked", "toolchain_unavailable",
                    "bubblewrap_config_invalid", "bubblewrap_unavailable",
                    "workspace_grant_required"],
        "ready_reasons": ["ready"],
        "conditions": {"bwrap_user_namespace_blocked": "userns_blocked"},
    },
    "trusted_local": {
        "module": "TrustedLocalExecutionResourceProvider",
        "cls": "TrustedLocalExecutionResourceProvider",
        "config_keys": ["allow_unsafe_local"],
        "reasons": ["unsafe_host_toolchains_available", "no_host_toolchains_found",
                    "trusted_local_not_allowed", "trusted_local_snapshot_required",
                    "workspace_grant_required"],
        "ready_reasons": ["unsafe_host_toolchains_available"],
        "conditions": {},
    },
    "seatbelt": {
        "module": "SeatbeltExecutionResourceProvider",
        "cls": "SeatbeltExecutionResourceProvider",
        "config_keys": ["dependency_policy", "network"],
        "reasons": ["ready", "not_macos", "sandbox_exec_missing", "sandbox_exec_failed",
                    "toolchain_unavailable",
                    "seatbelt_config_invalid", "seatbelt_unavailable",
                    "workspace_grant_required"],
        "ready_reasons": ["ready"],
        "conditions": {},
    },
}
# The adapter's own refusals (besides the protocol's generic ones).
ADAPTER_REASONS = ["config_invalid", "grant_invalid", "released", "unsupported",
                   "step_invalid", "bundle_changed", "provider_exception", "result_too_large"]
BOOL_KEYS = {"allow_unsafe_local", "network"}
PACKAGES = ["agently", "agently.types", "agently.types.data", "agently.core",
            "agently.core.TaskWorkspace", "agently.builtins", "agently.builtins.plugins", EP]
DATA_LEAVES = ["code_execution", "task_workspace", "execution_resource"]


class LoadError(Exception):
    pass


class ExecutionResourceError(RuntimeError):
    """Stand-in for agently.core's class (whose module needs agently-stage)."""

    def __init__(self, message, *, code, payload=None):
        super().__init__(message)
        self.code = code
        self.payload = payload


# ---- loading the user's checkout ---------------------------------------------

def register_packages(src: Path) -> None:
    # Module objects with __path__ only: imports of leaf modules work, the
    # package __init__.py files (third-party imports) never run.
    for name in PACKAGES:
        if name in sys.modules:
            continue
        module = types.ModuleType(name)
        module.__path__ = [str(src.joinpath(*name.split(".")))]
        sys.modules[name] = module
        parent, _, leaf = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], leaf, module)


def load_provider(src: Path, provider: str):
    """Returns (provider instance, {module name: sha256 of its file})."""
    spec = PROVIDERS[provider]
    files = [src / "agently/types/data" / f"{leaf}.py" for leaf in DATA_LEAVES]
    files.append(src / "agently/builtins/plugins/ExecutionResourceProvider" / f"{spec['module']}.py")
    for f in files:
        if not f.is_file():
            raise LoadError(f"{f} missing: --agently-src must be the directory holding agently/")
    register_packages(src)
    data = sys.modules["agently.types.data"]
    try:
        for leaf in DATA_LEAVES:
            module = importlib.import_module(f"agently.types.data.{leaf}")
            for name in getattr(module, "__all__", []):
                setattr(data, name, getattr(module, name))
        sys.modules["agently.core"].ExecutionResourceError = ExecutionResourceError
        module = importlib.import_module(f"{EP}.{spec['module']}")
        instance = getattr(module, spec["cls"])()
    except Exception as error:  # the user's checkout: name what broke, in one line
        raise LoadError(f"cannot load {spec['module']} from {src}: {type(error).__name__}: {error}") from None
    digests = {}
    for name, module in sorted(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name.startswith("agently.") and path:
            digests[name] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return instance, digests


def agently_version(src: Path) -> str:
    for candidate in (src / "pyproject.toml", src / "setup.cfg"):
        try:
            for line in candidate.read_text(encoding="utf-8").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "version" and value.strip():
                    return value.strip().strip("\"'")
        except OSError:
            continue
    return "unknown"


# ---- mapping helpers -----------------------------------------------------------

def jsonable(value):
    """Upstream meta as JSON: drops live objects (the resource), keeps facts."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items() if k != "resource"}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    # The bundle holds integers within +-2^53 only (a real number or a
    # larger integer is a protocol violation): those travel as text.
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and -2 ** 53 <= value <= 2 ** 53:
        return value
    return repr(value)


def map_capabilities(caps: dict) -> tuple[dict, list]:
    iso = caps.get("isolation") if isinstance(caps.get("isolation"), dict) else {}
    out, inferred = {}, []
    for axis in ("process_contained", "host_filesystem_restricted",
                 "privilege_escalation_blocked", "syscalls_restricted"):
        if isinstance(iso.get(axis), bool):
            out[axis] = iso[axis]
        else:  # not stated upstream: the weakest claim
            out[axis] = False
            inferred.append(f"capabilities.{axis}")
    out["network"] = str(caps.get("network", "inherited"))
    if "network" not in caps:
        inferred.append("capabilities.network")
    out["environment_scrubbed"] = None  # upstream has no such claim
    out["mechanism"] = str(iso.get("mechanism") or caps.get("mechanism") or "none")
    out["safety_class"] = str(caps.get("safety_class", "unknown"))
    return out, inferred


def shared_facts(provider: str, probe: dict) -> dict:
    """Upstream observations the harness can cross-check with its host probes,
    under the harness's fact names (the mapping is recorded beside them)."""
    meta = probe.get("meta") if isinstance(probe.get("meta"), dict) else {}
    availability = meta.get("availability") if isinstance(meta.get("availability"), dict) else {}
    facts = {}
    if provider == "landlock" and isinstance(availability.get("abi_version"), int):
        facts["system_abi"] = availability["abi_version"]
    if provider == "bubblewrap" and isinstance(availability.get("binary"), str):
        facts["bwrap_path"] = availability["binary"]
    return facts


def unavailable_detail(provider: str, probe: dict) -> str:
    """The reason with what upstream's own mechanism probe printed, so a
    reader can tell a blocked host from a broken probe."""
    meta = probe.get("meta") if isinstance(probe.get("meta"), dict) else {}
    availability = meta.get("availability") if isinstance(meta.get("availability"), dict) else {}
    said = " ".join(str(availability[k]).strip() for k in ("stderr", "error") if availability.get(k))
    detail = f"Agently's {provider} provider reports {probe.get('reason')!r}"
    return f"{detail}; its mechanism probe said: {said[:600]}" if said else detail


def reason_name(text: str) -> str:
    """An upstream reason as a protocol reason name ([a-z0-9_]+)."""
    return re.sub(r"[^a-z0-9_]+", "_", str(text).lower()).strip("_") or "unknown"


def upstream_reason(error: ExecutionResourceError) -> str:
    # "..._unavailable" carries the probe's reason: report the cause, as the
    # provider observed it; other codes lose only their namespace prefix.
    code = str(error.code).removeprefix("execution_resource.")
    payload = error.payload if isinstance(error.payload, dict) else {}
    availability = payload.get("availability")
    if code.endswith("_unavailable") and isinstance(availability, dict) and availability.get("reason"):
        return reason_name(availability["reason"])
    return reason_name(code)


def convert_config(config: dict, provider: str) -> tuple[dict, dict]:
    """Harness config values are strings; upstream's boolean keys want bools.
    Returns (config, adapter notes)."""
    out, notes = {}, {}
    for key, value in config.items():
        if key in BOOL_KEYS and isinstance(value, str):
            if value not in ("true", "false"):
                raise ValueError(f"{key} must be true or false, not {value!r}")
            out[key] = value == "true"
            notes[key] = f"string {value!r} converted to a boolean"
        else:
            out[key] = value
    if provider == "trusted_local" and "allow_unsafe_local" not in out:
        # Upstream refuses without the host's explicit opt-in. Collecting
        # evidence about it is that opt-in; recorded, and overridable with
        # --config ID.allow_unsafe_local=false.
        out["allow_unsafe_local"] = True
        notes["allow_unsafe_local"] = "supplied by the adapter (not in the harness config)"
    return out, notes


class Refusal(Exception):
    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
        self.message = message


def data_types():
    return sys.modules["agently.types.data"]


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat()


# ---- grant, bundle and manifest in Agently's types ---------------------------

ROLES = ("source", "build", "output", "logs")


def require(cond: bool, reason: str, message: str) -> None:
    if not cond:
        raise Refusal(reason, message)


def build_grant(g: dict):
    """The harness's grant as a TaskWorkspaceAccessGrant. Upstream providers
    use execution_area/<role> for cwd and logs and the roots' host paths for
    binds and rules, so the roots must be exactly that layout."""
    T = data_types()
    require(isinstance(g, dict) and isinstance(g.get("id"), str) and isinstance(g.get("area"), str)
            and isinstance(g.get("roots"), list), "grant_invalid", "grant needs id, area and roots")
    area = Path(g["area"])
    roots = {}
    for root in g["roots"]:
        require(isinstance(root, dict) and root.get("role") in ROLES and isinstance(root.get("path"), str)
                and isinstance(root.get("writable"), bool), "grant_invalid", f"bad grant root {root!r}")
        require(Path(root["path"]) == area / root["role"], "grant_invalid",
                f"root {root['role']} is {root['path']}, Agently needs {area / root['role']}")
        roots[root["role"]] = T.TaskWorkspaceAccessRoot(
            role=root["role"], host_path=root["path"],
            access_mode="read_write" if root["writable"] else "read_only")
    require(set(roots) == set(ROLES), "grant_invalid", "grant needs the roots " + ", ".join(ROLES))
    return T.TaskWorkspaceAccessGrant(
        grant_id=g["id"], task_workspace_id="agsbx-evidence", execution_id=g["id"],
        action_call_id="agsbx-evidence", mode="snapshot", execution_area=str(area),
        roots=tuple(roots[r] for r in ROLES), issued_at=utc_now())


def build_files(g: dict) -> tuple[list, list]:
    """The files the harness materialised (executable, unlike upstream's own
    materialize, which writes 0644), as bundle files and manifest entries."""
    T = data_types()
    files, entries = [], []
    source = Path(g["area"]) / "source"
    for f in g.get("files") or []:
        require(isinstance(f, dict) and isinstance(f.get("name"), str) and isinstance(f.get("path"), str)
                and isinstance(f.get("sha256"), str), "grant_invalid", f"bad grant file {f!r}")
        require(Path(f["path"]) == source / f["name"], "grant_invalid", f"{f['path']} is not in source/")
        try:
            content = Path(f["path"]).read_bytes()
            item = T.CodeExecutionFile(path=f["name"], content=content)
        except (OSError, ValueError, TypeError) as error:
            raise Refusal("grant_invalid", f"{f['path']}: {error}") from None
        require(item.sha256 == "sha256:" + f["sha256"].lower(), "bundle_changed",
                f"{f['path']} does not have the sha256 the harness recorded")
        files.append(item)
        entries.append(T.TaskWorkspaceExecutionManifestFile(
            path=f"source/{f['name']}", host_path=f["path"], sha256=item.sha256,
            bytes=len(content), role="source"))
    require(bool(files), "grant_invalid", "an Agently bundle needs at least one file")
    return files, entries


def build_bundle(h: "Handle", step: dict):
    """A bundle and manifest for one step (the digest covers argv, so every
    argv needs its own bundle); Agently's own validation applies."""
    T = data_types()
    require(isinstance(step, dict) and isinstance(step.get("argv"), list) and step.get("cwd") in ROLES,
            "step_invalid", "step needs argv and a cwd role")
    env = step.get("env") or {}
    argv0 = step["argv"][0] if step["argv"] else ""
    entry = next((f.path for f in h.files if str(Path(h.grant.execution_area) / "source" / f.path) == argv0),
                 h.files[0].path)
    try:
        run = T.CodeExecutionStep(argv=tuple(step["argv"]), role="run", cwd=step["cwd"], env=dict(env))
        bundle = T.CodeExecutionBundle.create(language="native", files=h.files, entrypoint=entry,
                                              build_steps=(), run_step=run)
    except (TypeError, ValueError) as error:
        raise Refusal("step_invalid", f"Agently rejects the step: {error}") from None
    g = h.grant
    manifest = T.TaskWorkspaceExecutionManifest(
        grant_id=g.grant_id, task_workspace_id=g.task_workspace_id, execution_id=g.execution_id,
        action_call_id=g.action_call_id, bundle_id=bundle.bundle_id, bundle_digest=bundle.bundle_digest,
        files=tuple(h.entries), entrypoint=f"source/{entry}", expected_outputs=())
    return bundle, manifest


# ---- results --------------------------------------------------------------------

def encode_stream(text, limit: int) -> tuple[str, bool, bool]:
    """(base64, lossy, cut). Upstream hands back str decoded with
    errors="replace": re-encoded bytes equal the originals only when no
    U+FFFD was substituted, and can be longer (one invalid byte becomes three).
    Each captured byte gives at most one character, so more characters than
    the limit means the provider kept too much: passed on as is for the
    harness to judge. Only the re-encoding's growth is cut, and labelled."""
    text = text if isinstance(text, str) else ""
    data = text.encode("utf-8")
    cut = len(text) <= limit < len(data)
    if cut:
        data = data[:limit].decode("utf-8", errors="ignore").encode("utf-8")
    return base64.b64encode(data).decode("ascii"), "\ufffd" in text, cut


def map_result(res: dict, duration_us: int, timeout_s: int, limit: int) -> tuple[dict, list]:
    rc = res.get("returncode")
    inferred = ["timed_out"]
    if not isinstance(rc, int):
        rc = None
        inferred.append("exit_code")
    # asyncio reports death by signal N as -N (observed by waitpid, not inferred).
    exit_code, sig = (None, -rc) if rc is not None and rc < 0 else (rc, None)
    out, lossy_out, cut_out = encode_stream(res.get("stdout"), limit)
    err, lossy_err, cut_err = encode_stream(res.get("stderr"), limit)
    inferred += ["stdout_b64"] * lossy_out + ["stderr_b64"] * lossy_err
    inferred += ["stdout_truncated"] * cut_out + ["stderr_truncated"] * cut_err
    # No timed-out flag upstream: a timeout is returncode 124 with its own
    # stderr_truncated forced true, after at least the timeout.
    timed_out = rc == 124 and res.get("stderr_truncated") is True and duration_us >= timeout_s * 1_000_000
    stderr_truncated = bool(res.get("stderr_truncated")) or cut_err
    return {
        "exit_code": exit_code, "signal": sig, "timed_out": timed_out, "cancelled": False,
        "stdout_b64": out, "stderr_b64": err,
        "stdout_truncated": bool(res.get("stdout_truncated")) or cut_out, "stderr_truncated": stderr_truncated,
        "stdout_total": None, "stderr_total": None, "duration_us": duration_us,
    }, inferred


def cancelled_result(duration_us: int) -> tuple[dict, list]:
    # Upstream raises CancelledError and returns nothing: status and output
    # of the cancelled run are unknown, not empty.
    return {
        "exit_code": None, "signal": None, "timed_out": False, "cancelled": True,
        "stdout_b64": "", "stderr_b64": "", "stdout_truncated": False, "stderr_truncated": False,
        "stdout_total": None, "stderr_total": None, "duration_us": duration_us,
    }, ["stdout_b64", "stderr_b64", "stdout_truncated", "stderr_truncated"]


def upstream_meta(res: dict) -> dict:
    keys = ("ok", "status", "returncode", "outputs", "log_refs", "unsafe", "diagnostics", "meta")
    return {k: jsonable(res[k]) for k in keys if k in res}


RESULT_NOTES = {
    "timeout": "upstream takes whole seconds (minimum 1): timeout_ms rounded up",
    "timed_out": "upstream has no flag: returncode 124 with stderr_truncated (forced on timeout) "
                 "after at least the timeout",
    "output": "upstream returns UTF-8 text decoded with replacement; re-encoded here (growth "
              "past max_output_bytes from replacement characters is cut and flagged truncated)",
    "totals": "upstream reports no byte totals (null)",
    "duration_us": "measured by the adapter around the upstream call",
    "language": "bundle language 'native' supplied by the adapter (the payload is a binary)",
}


# ---- handles ----------------------------------------------------------------------

class Handle:
    """One harness handle. Upstream fixes max_output_bytes at ensure, per
    stream; an execute asking for another limit runs on an upstream handle
    ensured for that limit (same grant and config), so the provider's own
    bounding is what the harness observes."""

    def __init__(self, adapter: "Adapter", grant, files, entries, config: dict):
        self.adapter, self.grant, self.files, self.entries = adapter, grant, files, entries
        self.config = config
        self.upstream: dict[int, dict] = {}
        self.main_limit = 0
        self.released = False
        self.lock = asyncio.Lock()

    async def ensure(self, limit: int) -> dict:
        provider = self.adapter.provider
        try:
            handle = await provider.async_ensure(
                requirement={"kind": "code_execution", "task_workspace_access_grant": self.grant,
                             "config": dict(self.config)},
                policy={"max_output_bytes": limit})
        except ExecutionResourceError as error:
            raise Refusal(upstream_reason(error), f"{error.code}: {error}") from None
        self.upstream[limit] = handle
        return handle

    async def for_limit(self, limit: int) -> tuple[dict, bool]:
        """(upstream handle, whether it was ensured for this execute)."""
        async with self.lock:
            if limit in self.upstream:
                return self.upstream[limit], False
            if self.released:  # forwarded: upstream itself refuses a closed resource
                return self.upstream[self.main_limit], False
            return await self.ensure(limit), True

    async def release(self) -> None:
        self.released = True
        for handle in list(self.upstream.values()):
            await self.adapter.provider.async_release(handle)

    def main(self) -> dict:
        return self.upstream[self.main_limit]


def execute_refusal(error: BaseException) -> Refusal:
    """Upstream raises plain exceptions where the protocol has reasons."""
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, RuntimeError) and "closed" in str(error):
        return Refusal("released", text)
    if isinstance(error, PermissionError):
        return Refusal("step_invalid" if "cwd" in str(error) else "bundle_changed", text)
    return Refusal("provider_exception", text)


# ---- the protocol ---------------------------------------------------------------

class Adapter:
    def __init__(self, provider_id: str, src: Path, provider, digests: dict, out):
        self.id, self.src, self.provider, self.digests, self.out = provider_id, src, provider, digests, out
        self.spec = PROVIDERS[provider_id]
        self.handles: dict[str, Handle] = {}
        self.executions: dict[str, asyncio.Task] = {}
        self.pending: set[asyncio.Task] = set()

    def send(self, obj: dict) -> None:
        line = json.dumps(obj, separators=(",", ":"), default=repr).encode("utf-8") + b"\n"
        if len(line) > MAX_LINE:
            line = json.dumps({"id": obj.get("id"), "ok": False, "reason": "result_too_large",
                               "message": f"response of {len(line)} bytes exceeds the line limit"}).encode() + b"\n"
        self.out.write(line)
        self.out.flush()

    async def answer(self, req: dict) -> None:
        rid = req["id"]
        handler = getattr(self, "op_" + str(req.get("op")), None)
        try:
            if handler is None:
                raise Refusal("unsupported", f"unknown op {req.get('op')!r}")
            body = await handler(req)
            self.send({"id": rid, "ok": True, **body})
        except Refusal as refusal:
            self.send({"id": rid, "ok": False, "reason": refusal.reason, "message": refusal.message})
        except Exception as error:  # upstream code failing is the provider's, not the protocol's
            print(f"agently-adapter: {req.get('op')}: {type(error).__name__}: {error}", file=sys.stderr)
            self.send({"id": rid, "ok": False, "reason": "provider_exception",
                       "message": f"{type(error).__name__}: {error}"[:2000]})

    # -- ops --

    async def op_hello(self, req: dict) -> dict:
        return {"protocol": PROTOCOL,
                "provider": {"name": f"agently.{self.id}", "version": agently_version(self.src)},
                "reasons": self.spec["reasons"] + ADAPTER_REASONS,
                "ready_reasons": self.spec["ready_reasons"], "config_keys": self.spec["config_keys"],
                "reason_conditions": self.spec["conditions"]}

    async def op_probe(self, req: dict) -> dict:
        probe = await self.provider.async_probe(requirement={"kind": "code_execution"}, policy={})
        caps = probe.get("capabilities") if isinstance(probe.get("capabilities"), dict) else {}
        mapped, inferred = map_capabilities(caps)
        facts = {"upstream_probe": jsonable(probe), "agently_src": str(self.src),
                 "modules_sha256": self.digests, "python": platform.python_version(),
                 "python_executable": sys.executable,
                 "adapter": {"inferred": inferred + ["capabilities.environment_scrubbed"],
                             "shared_facts_from": {"system_abi": "meta.availability.abi_version",
                                                   "bwrap_path": "meta.availability.binary"}}}
        facts.update(shared_facts(self.id, probe))
        available = probe.get("available") is True
        reason = reason_name(probe.get("reason", ""))
        facts["upstream_reason"] = probe.get("reason")
        body = {"available": available, "reason": reason, "capabilities": mapped, "facts": facts}
        if not available:
            body["detail"] = unavailable_detail(self.id, probe)
        return body

    async def op_ensure(self, req: dict) -> dict:
        grant = build_grant(req.get("grant"))
        files, entries = build_files(req["grant"])
        config = req.get("config") or {}
        require(isinstance(config, dict), "config_invalid", "config must be an object")
        try:
            upstream_config, notes = convert_config(config, self.id)
        except ValueError as error:
            raise Refusal("config_invalid", str(error)) from None
        limit = (req.get("limits") or {}).get("max_output_bytes")
        require(isinstance(limit, int) and limit > 0, "config_invalid", "limits.max_output_bytes missing")
        h = Handle(self, grant, files, entries, upstream_config)
        h.main_limit = limit
        upstream = await h.ensure(limit)
        hid = str(upstream.get("handle_id") or f"agently-{len(self.handles)}")
        self.handles[hid] = h
        meta = {"upstream": jsonable({k: v for k, v in upstream.items() if k != "resource"}),
                "adapter": {"config": upstream_config, "config_notes": notes,
                            "grant_mode": "snapshot (supplied by the adapter)",
                            "max_output_bytes": f"{limit} per stream, fixed at ensure upstream"}}
        return {"handle": hid, "meta": meta}

    def handle(self, req: dict) -> Handle:
        h = self.handles.get(req.get("handle"))
        require(h is not None, "unsupported", f"unknown handle {req.get('handle')!r}")
        return h

    async def op_health(self, req: dict) -> dict:
        # Forwarded even after release: what upstream says is the evidence.
        status = await self.provider.async_health_check(self.handle(req).main())
        return {"status": "ready" if status == "ready" else "unhealthy"}

    async def op_release(self, req: dict) -> dict:
        await self.handle(req).release()
        return {}

    async def op_cancel(self, req: dict) -> dict:
        # Agently's cancel is cancelling the awaiting task; the pending
        # execute answers once upstream has unwound (and not before).
        run = self.executions.get(req.get("exec_id"))
        if run is None:
            return {"cancelled": False}
        run["cancel"] = True
        task = run.get("task")
        return {"cancelled": task is None or (not task.done() and task.cancel())}

    async def op_execute(self, req: dict) -> dict:
        exec_id = req.get("exec_id")
        require(isinstance(exec_id, str) and exec_id not in self.executions, "step_invalid",
                "execute needs a fresh exec_id")
        run = self.executions[exec_id] = {"cancel": False, "task": None}
        try:
            return await self.execute(req, run)
        finally:
            del self.executions[exec_id]

    async def execute(self, req: dict, run: dict) -> dict:
        h = self.handle(req)
        limits = req.get("limits") or {}
        timeout_ms, limit = limits.get("timeout_ms"), limits.get("max_output_bytes")
        require(isinstance(timeout_ms, int) and timeout_ms > 0 and isinstance(limit, int) and limit > 0,
                "step_invalid", "limits need timeout_ms and max_output_bytes")
        bundle, manifest = build_bundle(h, req.get("step"))
        upstream, fresh = await h.for_limit(limit)
        timeout_s = max(1, math.ceil(timeout_ms / 1000))
        adapter_meta = {"notes": RESULT_NOTES, "timeout_ms": timeout_ms, "timeout_s": timeout_s,
                        "max_output_bytes": limit, "upstream_handle": upstream.get("handle_id"),
                        "upstream_handle_ensured_for_this_limit": fresh,
                        "bundle_id": bundle.bundle_id, "bundle_digest": bundle.bundle_digest}
        t0 = time.monotonic_ns()
        if run["cancel"]:
            result, inferred = cancelled_result(0)
            return {"result": {**result, "meta": {"adapter": adapter_meta}, "inferred": inferred}}
        run["task"] = asyncio.ensure_future(upstream["resource"].async_execute_code(
            bundle=bundle, manifest=manifest, grant=h.grant, timeout=timeout_s))
        try:
            res = await run["task"]
        except asyncio.CancelledError:
            result, inferred = cancelled_result((time.monotonic_ns() - t0) // 1000)
            return {"result": {**result, "meta": {"adapter": adapter_meta}, "inferred": inferred}}
        except ExecutionResourceError as error:
            raise Refusal(upstream_reason(error), f"{error.code}: {error}") from None
        except Exception as error:
            raise execute_refusal(error) from None
        res = res if isinstance(res, dict) else {}
        result, inferred = map_result(res, (time.monotonic_ns() - t0) // 1000, timeout_s, limit)
        meta = {"upstream": upstream_meta(res), "adapter": adapter_meta}
        if isinstance(res.get("meta"), dict) and isinstance(res["meta"].get("mechanism"), str):
            # The provider's own word: lifecycle.consistent compares it with the probe.
            meta["mechanism"] = res["meta"]["mechanism"]
        return {"result": {**result, "meta": meta, "inferred": inferred}}

    # -- the loop --

    async def serve(self, reader: asyncio.StreamReader) -> None:
        while True:
            try:
                line = await reader.readline()
            except ValueError:
                print("agently-adapter: request line over the limit", file=sys.stderr)
                return
            if not line:
                return
            try:
                req = json.loads(line)
            except ValueError:
                print(f"agently-adapter: not JSON: {line[:200]!r}", file=sys.stderr)
                continue
            if not isinstance(req, dict) or not isinstance(req.get("id"), int):
                print(f"agently-adapter: request without an integer id: {line[:200]!r}", file=sys.stderr)
                continue
            if req.get("op") == "shutdown":
                # Answers still being computed go out first (briefly: a
                # provider call that never returns must not hold shutdown).
                if self.pending:
                    await asyncio.wait(list(self.pending), timeout=5)
                self.send({"id": req["id"], "ok": True})
                return
            task = asyncio.ensure_future(self.answer(req))
            self.pending.add(task)
            task.add_done_callback(self.pending.discard)


def protocol_streams():
    """The protocol gets private copies of stdin/stdout; fds 0 and 1 become
    /dev/null and stderr, so nothing upstream or its children print or read
    can touch the protocol stream."""
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


async def main_async(adapter: Adapter, proto_in) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE + 1)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), proto_in)
    await adapter.serve(reader)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="agently-adapter.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--agently-src", required=True, help="directory holding the agently/ package")
    parser.add_argument("--provider", required=True, choices=sorted(PROVIDERS))
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    sys.dont_write_bytecode = True  # never write into the user's checkout
    args = parse_args(argv)  # exits 2 with a usage line on bad arguments
    src = Path(args.agently_src).resolve()
    try:
        provider, digests = load_provider(src, args.provider)
    except LoadError as error:
        print(f"agently-adapter: error: {error}", file=sys.stderr)
        return 2
    proto_in, proto_out = protocol_streams()
    adapter = Adapter(args.provider, src, provider, digests, proto_out)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main_async(adapter, proto_in))
    proto_out.flush()
    # A provider call that never returned (a pipe held by an escaped
    # process) must not keep the adapter alive after shutdown.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
