"""The in-jail runner: reads one request on stdin, runs ``handler(args)``, writes one result.

This file is bind-mounted read-only into the jail and run by the system interpreter with
``-I -S -B``; it imports only the standard library and nothing of toolfoundry. It is not the
boundary (the tool runs in the same interpreter and can undo anything done here); the jail
around it is. What it adds is a precise error kind for well-behaved failures: rlimits applied
before the tool's code runs, refused imports reported as ``capability_denied``, MemoryError
as ``memory_limit``, and a result frame the tool's own prints cannot produce.

Protocol: the host writes one JSON request to stdin and closes it::

    {"code": str, "args": any, "limits": {...}, "packages": [str], "allowed": [str]}

The runner writes ``b"R"`` to the result fd given as ``argv[1]`` once it waits for the
request, then exactly one frame (``argv[1]`` is ``stdout`` where only stdio crosses, as
with docker: the runner then keeps fd 1 for itself and points the tool's stdout at stderr):
``b"TFR1" + 8-byte big-endian length + JSON`` where the JSON is
``{"ok": true, "value": ...}`` or ``{"ok": false, "kind": str, "message": str}``.
Everything the tool prints goes to stdout/stderr, which the host keeps as logs.
"""

from __future__ import annotations

import builtins
import json
import os
import resource
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

MAGIC = b"TFR1"
READY = b"R"
TOOL_MODULE = "__tool__"
TOOL_FILE = "<tool>"


class ImportRefused(ImportError):
    """An import the tool is not allowed (reported as capability_denied)."""


def apply_limits(limits: Mapping[str, int]) -> None:
    """Lower this process's rlimits; warm workers have used some CPU already, so add it."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu_used = int(used.ru_utime + used.ru_stime) + 1
    cpu = int(limits["cpu_s"]) + cpu_used
    for which, value in (
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_AS, (int(limits["memory_bytes"]),) * 2),
        (resource.RLIMIT_NPROC, (int(limits["max_processes"]),) * 2),
        (resource.RLIMIT_FSIZE, (int(limits["max_file_bytes"]),) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_NOFILE, (64, 64)),
    ):
        resource.setrlimit(which, value)


def _allowed(name: str, permitted: frozenset[str], parent_ok: bool) -> bool:
    # the same rule as toolfoundry.sandbox.process.allowlist.module_allowed (no imports here)
    for entry in permitted:
        if name == entry or name.startswith(entry + "."):
            return True
        if parent_ok and entry.startswith(name + "."):
            return True
    return False


def guard_imports(allowed: Sequence[str]) -> None:
    """Refuse imports written in the tool's own module unless they are allowed.

    Imports made by allowed modules for themselves are not checked: ``json`` may import
    ``re``; the tool may not import ``socket``, nor ``request`` from ``urllib``.
    """
    permitted = frozenset(allowed)
    original = builtins.__import__

    def checked(
        name: str,
        globals: Mapping[str, Any] | None = None,
        locals: Mapping[str, Any] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> Any:
        if globals is not None and globals.get("__name__") == TOOL_MODULE:
            wanted = [f"{name}.{item}" for item in fromlist or () if item != "*"]
            if (
                level
                or not _allowed(name, permitted, True)
                or not all(_allowed(w, permitted, False) for w in wanted)
            ):
                raise ImportRefused(f"import of {name!r} is not allowed in this tool")
        return original(name, globals, locals, fromlist, level)

    builtins.__import__ = checked


def run_handler(code: str, args: Any) -> Any:
    """Execute the module and call its handler (awaiting it when it is a coroutine)."""
    namespace: dict[str, Any] = {"__name__": TOOL_MODULE, "__builtins__": builtins}
    exec(compile(code, TOOL_FILE, "exec"), namespace)
    handler = namespace.get("handler")
    if not callable(handler):
        raise LookupError("the module defines no handler(args) function")
    result = handler(args)
    if hasattr(result, "__await__"):
        import asyncio  # only async tools pay for it

        result = asyncio.run(_awaited(result))
    return result


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _tool_traceback(exc: BaseException) -> str:
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == TOOL_FILE]
    where = f" (line {frames[-1].lineno})" if frames else ""
    text = str(exc)
    return f"{type(exc).__name__}: {text}{where}" if text else f"{type(exc).__name__}{where}"


def outcome(request: Mapping[str, Any]) -> dict[str, Any]:
    """Run the request and describe what happened as a result frame's JSON object."""
    try:
        value = run_handler(request["code"], request.get("args"))
    except ImportRefused as exc:
        return {"ok": False, "kind": "capability_denied", "message": _tool_traceback(exc)}
    except MemoryError as exc:
        return {"ok": False, "kind": "memory_limit", "message": _tool_traceback(exc)}
    except SystemExit as exc:
        return {"ok": False, "kind": "runtime_error", "message": f"the tool exited ({exc.code})"}
    except BaseException as exc:  # the tool's failure is a value, whatever it raised
        return {"ok": False, "kind": "runtime_error", "message": _tool_traceback(exc)}
    try:
        encoded = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return {
            "ok": False,
            "kind": "runtime_error",
            "message": f"the result is not JSON-serialisable: {exc}",
        }
    limit = int(request["limits"]["output_bytes"])
    if len(encoded.encode()) > limit:
        return {
            "ok": False,
            "kind": "output_too_large",
            "message": f"the result is larger than {limit} bytes",
        }
    return {"ok": True, "value": value}


def write_frame(fd: int, payload: Mapping[str, Any]) -> None:
    """Write one length-prefixed frame; all of it, even through short writes."""
    body = json.dumps(payload, allow_nan=False).encode()
    data = MAGIC + len(body).to_bytes(8, "big") + body
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def main(argv: Sequence[str], read: Callable[[], bytes]) -> int:
    """Wait for the request (a warm worker blocks here), then run it and report."""
    if argv[1] == "stdout":  # no fd beyond stdio (docker): the tool's stdout joins stderr
        result_fd = os.dup(1)
        os.dup2(2, 1)
    else:
        result_fd = int(argv[1])
    os.set_inheritable(result_fd, False)  # children the tool starts do not get the channel
    os.write(result_fd, READY)
    request = json.loads(read())
    sys.path.extend(request.get("packages", []))
    apply_limits(request["limits"])
    guard_imports(request.get("allowed", []))
    payload = outcome(request)
    sys.stdout.flush()
    sys.stderr.flush()
    write_frame(result_fd, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv, sys.stdin.buffer.read))
