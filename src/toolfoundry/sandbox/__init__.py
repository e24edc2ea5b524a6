"""Run untrusted JavaScript tools: QuickJS-NG in WebAssembly, limits enforced by wasmtime.

    >>> run_js("export function handler(a) { return a.x + 1 }", {"x": 1}).value
    2

Nothing is ambient: a script reaches the world only through fetch, localStorage and crypto,
each answered (and checked) by the host according to the :class:`SandboxPolicy`.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from toolfoundry.sandbox.policy import SandboxPolicy
from toolfoundry.spec import CallResult, ErrorKind

__all__ = ["SandboxPolicy", "run_js"]

_LIBRARY_COMPILE_BUDGET_S = 30.0
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
    from toolfoundry.sandbox.host.storage import StorageHook
    from toolfoundry.sandbox.js.engine import Limits
    from toolfoundry.sandbox.js.host_calls import CallHost
    from toolfoundry.sandbox.js.installation import SandboxUnavailable
    from toolfoundry.sandbox.js.modules import default_catalog
    from toolfoundry.sandbox.js.wasm_engine import default_engine

    try:
        engine = default_engine()  # process setup (compiling the guest) is not the script's time
        _prepare_libraries()  # so is compiling the libraries, before any tool's import runs
    except SandboxUnavailable as exc:
        return CallResult.failure(ErrorKind.SANDBOX_UNAVAILABLE, str(exc))
    started = time.monotonic()
    policy = policy or SandboxPolicy()
    if not isinstance(code, str):
        return CallResult.failure(ErrorKind.INVALID_ARGUMENTS, "code must be a string")
    deadline = started + policy.timeout_s
    fetch = (
        policy.fetch.handler(deadline=deadline, tool=policy.tool)
        if policy.fetch is not None
        else None
    )
    host = CallHost(
        fetch=fetch,
        storage=StorageHook(policy.storage, policy.namespace, policy.storage_quota),
        libraries=default_catalog(),
        log_lines=policy.log_lines,
        log_bytes=policy.log_bytes,
        deadline=deadline,
    )
    limits = Limits(
        deadline=deadline, memory_bytes=policy.memory_bytes, output_bytes=policy.output_bytes
    )
    result = engine.run(code, {} if args is None else args, limits, host)
    elapsed = (time.monotonic() - started) * 1000.0
    return CallResult(
        ok=result.ok,
        value=result.value,
        error=result.error,
        logs=result.logs,
        duration_ms=elapsed,
        details={"fetches": host.fetch_count},
    )


def _prepare_libraries() -> None:
    """Fill the library cache once per process, before any tool's import runs.

    Lazily, on the process's first JavaScript call (so ``serve`` starts without it), and
    outside that call's time budget; calls made meanwhile wait for it. Afterwards the library
    cache never changes, so no call can time an import to learn what earlier calls imported
    (an import served from cached bytecode is 5-12x faster than one compiled from source).
    A library whose bytecode cannot be cached is compiled from source in every call alike.

    The bytecode comes from disk when an earlier process kept it for this guest and these
    library files (``js/library_cache.py``: milliseconds); what is missing there is compiled
    here by trusted calls (0.3-1 s for all of them) and the file is written again.
    """
    if _libraries_ready.is_set():
        return
    from toolfoundry.sandbox.js import library_cache
    from toolfoundry.sandbox.js.modules import default_catalog
    from toolfoundry.sandbox.js.wasm_engine import default_engine

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
    import json

    from toolfoundry.sandbox.host.storage import StorageHook, StorageQuota
    from toolfoundry.sandbox.js.engine import Limits
    from toolfoundry.sandbox.js.host_calls import CallHost
    from toolfoundry.sandbox.js.modules import default_catalog
    from toolfoundry.sandbox.js.wasm_engine import default_engine

    libraries = default_catalog()
    if not libraries.wants_bytecode(specifier):  # cached already, or a form of a library
        return
    deadline = time.monotonic() + _LIBRARY_COMPILE_BUDGET_S
    host = CallHost(
        fetch=None,
        storage=StorageHook(None, "library-compile", StorageQuota()),
        libraries=libraries,
        log_lines=0,
        log_bytes=0,
        deadline=deadline,
        trusted=True,
    )
    limits = Limits(deadline=deadline, memory_bytes=SandboxPolicy().memory_bytes, output_bytes=64)
    default_engine().run(f"import {json.dumps(specifier)}; export default 0;", {}, limits, host)
