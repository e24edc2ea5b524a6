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

``fetch(url, method=, headers=, body=)`` is a global of the tool's module: it sends a frame
``{"url", "method", "headers": [[k, v]], "body": base64|null}`` on the fd ``argv[2]`` and
reads the host's answer frame on ``argv[3]`` (the JS tier's FetchHandler shapes). The host
applies the tool's fetch policy (allowlist, SSRF rules, credentials) or the test fixtures;
the jail itself has no network.
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
FETCH_KINDS = frozenset({"capability_denied", "timeout", "runtime_error"})


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


class FetchFailed(Exception):
    """A request the host refused or could not complete; ``kind`` is a call error kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Response:
    """What ``fetch`` returns: status, lower-cased headers, and the body as bytes or text."""

    def __init__(self, answer: Mapping[str, Any]) -> None:
        import base64

        self.status = int(answer["status"])
        self.status_text = str(answer.get("statusText", ""))
        self.url = str(answer.get("url", ""))
        self.headers = {str(k).lower(): str(v) for k, v in answer.get("headers", [])}
        self.content = base64.b64decode(answer.get("body") or "")

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        """The body decoded as UTF-8."""
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.content)


class Fetch:
    """The tool's ``fetch``: one request at a time over the host's fetch channel."""

    def __init__(self, out_fd: int | None, in_fd: int | None, granted: bool) -> None:
        self.out_fd, self.in_fd, self.granted = out_fd, in_fd, granted

    def __call__(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        body: str | bytes | None = None,
    ) -> Response:
        import base64

        if not self.granted or self.out_fd is None or self.in_fd is None:
            raise FetchFailed(
                "capability_denied", "fetch is not allowed: this tool has no network capability"
            )
        data = body.encode() if isinstance(body, str) else body
        request = {
            "url": str(url),
            "method": str(method).upper(),
            "headers": [[str(k), str(v)] for k, v in (headers or {}).items()],
            "body": base64.b64encode(data).decode("ascii") if data is not None else None,
        }
        write_frame(self.out_fd, request)
        answer = read_frame(self.in_fd)
        error = answer.get("error")
        if isinstance(error, Mapping):
            raise FetchFailed(str(error.get("kind")), str(error.get("message")))
        return Response(answer)


def run_handler(code: str, args: Any, fetch: Fetch) -> Any:
    """Execute the module and call its handler (awaiting it when it is a coroutine)."""
    namespace: dict[str, Any] = {
        "__name__": TOOL_MODULE,
        "__builtins__": builtins,
        "fetch": fetch,
    }
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


def outcome(request: Mapping[str, Any], fetch: Fetch) -> dict[str, Any]:
    """Run the request and describe what happened as a result frame's JSON object."""
    try:
        value = run_handler(request["code"], request.get("args"), fetch)
    except FetchFailed as exc:
        kind = exc.kind if exc.kind in FETCH_KINDS else "runtime_error"
        return {"ok": False, "kind": kind, "message": _tool_traceback(exc)}
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


def read_frame(fd: int) -> dict[str, Any]:
    """Read one frame (blocking); a broken channel is a runtime error of the tool."""
    header = _read_exactly(fd, 12)
    if header[:4] != MAGIC:
        raise FetchFailed("runtime_error", "the fetch channel is broken")
    answer = json.loads(_read_exactly(fd, int.from_bytes(header[4:], "big")))
    if not isinstance(answer, dict):
        raise FetchFailed("runtime_error", "the fetch channel is broken")
    return answer


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise FetchFailed("runtime_error", "the fetch channel closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# Code of the usual shapes, compiled (never run) before the runner says it is ready.
_WARM_UP = """
import json
from collections import Counter
async def a(x, *r, k=1, **o):
    return [i async for i in x] if x else {k: v for k, v in o.items()}
class C:
    'a docstring'
    def handler(self, args: dict) -> dict:
        try:
            n = int(args.get("n", 0)) ** 2 // 3 % 7
        except (KeyError, ValueError) as e:
            raise RuntimeError(f"bad {e!r}: {n:>4}") from e
        with open("x") as f, open("y") as g:
            pass
        return {"s": sum(x for x in range(n) if x), "l": lambda y: y, "t": (1, 2.5, None)}
"""


def warm_up() -> None:
    """Pay the interpreter's first-use costs before a call arrives, not during it.

    The first ``compile`` in a new interpreter costs ~0.7-1 ms (the parser's own set-up),
    the next one ~30 µs; a warm worker does this while it waits, so a call does not. Only
    this fixed text is compiled, never run; the JSON codec is exercised once too.
    """
    compile(_WARM_UP, TOOL_FILE, "exec")
    json.loads(json.dumps({"a": [1, 2.5, "x", None, True]}))


def main(argv: Sequence[str], read: Callable[[], bytes]) -> int:
    """Wait for the request (a warm worker blocks here), then run it and report."""
    if argv[1] == "stdout":  # no fd beyond stdio (docker): the tool's stdout joins stderr
        result_fd = os.dup(1)
        os.dup2(2, 1)
        fetch_out: int | None = None
        fetch_in: int | None = None
    else:
        result_fd, fetch_out, fetch_in = int(argv[1]), int(argv[2]), int(argv[3])
    for fd in (result_fd, fetch_out, fetch_in):
        if fd is not None:
            os.set_inheritable(fd, False)  # children the tool starts do not get the channels
    warm_up()
    os.write(result_fd, READY)
    request = json.loads(read())
    sys.path.extend(request.get("packages", []))
    apply_limits(request["limits"])
    guard_imports(request.get("allowed", []))
    payload = outcome(request, Fetch(fetch_out, fetch_in, bool(request.get("fetch"))))
    sys.stdout.flush()
    sys.stderr.flush()
    write_frame(result_fd, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv, sys.stdin.buffer.read))
