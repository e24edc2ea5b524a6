"""One sandboxed call of an ES module (:func:`run_js`), and the library preparation before it.

    >>> run_js("export function handler(a) { return a.x + 1 }", {"x": 1}).value
    2

``toolfoundry.sandbox`` offers :func:`run_js` under its own name (the public path); this module
is where it lives, with :func:`prepare_libraries`, which every process runs once before its
first call's code.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from toolfoundry.sandbox.js import library_cache
from toolfoundry.sandbox.js.call_setup import set_up_call
from toolfoundry.sandbox.js.installation import SandboxUnavailable
from toolfoundry.sandbox.js.modules import default_catalog
from toolfoundry.sandbox.js.wasm_engine import default_engine
from toolfoundry.sandbox.policy import SandboxPolicy
from toolfoundry.spec import CallResult, ErrorKind

# A library's trusted compile: its budget, and its policy (no tool code, no logs, no result).
_LIBRARY_COMPILE = SandboxPolicy(
    timeout_s=30.0, output_bytes=64, log_lines=0, log_bytes=0, storage_namespace="library-compile"
)
_DEFAULT_POLICY = SandboxPolicy()  # frozen: one for every call that names none
_libraries_ready = threading.Event()
_libraries_lock = threading.Lock()


def run_js(code: str, args: Any = None, policy: SandboxPolicy | None = None) -> CallResult:
    """Run an ES module in a pristine sandbox and return its result.

    The module exports ``handler(args)`` (sync or async) or a ``default`` value; top-level
    await works. The result must be JSON-serialisable.

    Args:
        code: the ES module source.
        args: JSON-ready arguments passed to ``handler`` (``{}`` when None).
        policy: limits and capabilities; the default allows no network and no storage.

    Returns:
        A CallResult; failures carry a kind (``timeout``, ``memory_limit``,
        ``capability_denied``, ``runtime_error``, ``output_too_large``, ``invalid_arguments``,
        or ``sandbox_unavailable`` when the sandbox itself is missing or damaged).
    """
    try:
        engine = default_engine()  # process setup (compiling the guest) is not the script's time
        prepare_libraries()  # so is compiling the libraries, before any tool's import runs
    except SandboxUnavailable as exc:
        return CallResult.failure(ErrorKind.SANDBOX_UNAVAILABLE, str(exc))
    started = time.monotonic()
    if not isinstance(code, str):
        return CallResult.failure(ErrorKind.INVALID_ARGUMENTS, "code must be a string")
    host, limits = set_up_call(
        policy or _DEFAULT_POLICY, started=started, libraries=default_catalog()
    )
    try:
        result = engine.run(code, {} if args is None else args, limits, host)
    finally:
        host.close()  # no inner call after the answer; an outer call's records are written
    elapsed = (time.monotonic() - started) * 1000.0
    details: dict[str, Any] = {"fetches": host.fetch_count}
    if host.tool_count:
        details["inner_calls"] = host.tool_count  # this call's own, through `tools`
    return CallResult(
        ok=result.ok,
        value=result.value,
        error=result.error,
        logs=result.logs,
        duration_ms=elapsed,
        details=details,
    )


def prepare_libraries() -> None:
    """Fill the library cache once per process, before any tool's import runs.

    Lazily, on the process's first JavaScript call (so ``serve`` starts without it), and
    outside that call's time budget; calls made meanwhile wait for it. Afterwards the library
    cache never changes, so no call can time an import to learn what earlier calls imported
    (an import served from cached bytecode is 5-12x faster than one compiled from source).
    A library whose bytecode cannot be cached is compiled from source in every call alike.

    The bytecode comes from disk when an earlier process kept it for this guest and these
    library files (``library_cache.py``: milliseconds); what is missing there is compiled
    here by trusted calls (0.3-1 s for all of them) and the file is written again.
    """
    if _libraries_ready.is_set():
        return
    with _libraries_lock:
        if _libraries_ready.is_set():
            return
        libraries = default_catalog()
        key, identity = default_engine().snapshot_key, libraries.identity()
        for specifier, code in library_cache.load(key, identity).items():
            libraries.keep_bytecode(specifier, code)  # names the catalog lacks are dropped
        compiled = False
        for specifier in libraries.names():
            for _attempt in range(2):  # a compile cut short by a loaded machine gets a retry
                if not libraries.wants_bytecode(specifier):
                    break
                _compile_library(specifier)
                compiled = True
        if compiled:
            library_cache.store(key, identity, libraries.cached_bytecode())
        _libraries_ready.set()


def _compile_library(specifier: str) -> None:
    """Cache a bundled library's bytecode, compiled by a call that runs no tool code.

    A tool's own call compiles a library from source but its bytecode is never cached (the
    tool could have forged it); this trusted call, whose only code is the import, supplies it.
    """
    libraries = default_catalog()
    if not libraries.wants_bytecode(specifier):  # cached already, or a form of a library
        return
    host, limits = set_up_call(
        _LIBRARY_COMPILE, started=time.monotonic(), libraries=libraries, trusted=True
    )
    default_engine().run(f"import {json.dumps(specifier)}; export default 0;", {}, limits, host)
