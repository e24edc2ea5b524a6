"""What one sandboxed call may use: time, memory, output, logs, and the four host capabilities."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolfoundry.sandbox.host.protocols import FetchProvider, StorageBackend, ToolsProvider
from toolfoundry.sandbox.host.storage import StorageQuota
from toolfoundry.spec.limits import CALL_LIMIT_BOUNDS, Bound, CallLimits
from toolfoundry.spec.limits import MIB as MIB  # re-exported: the sandbox sizes in bytes

# The defaults are the configured call limits' (spec/limits.py), written there once.
_DEFAULT = CallLimits()


@dataclass(frozen=True)
class SandboxPolicy:
    """Limits and capabilities for one call of :func:`toolfoundry.sandbox.run_js`.

    Nothing is reachable by default: no network, no storage, no tools. Limits are enforced by the
    runtime (wasmtime), not by the script. A tool's calls and test runs get theirs from the
    configured :class:`~toolfoundry.spec.CallLimits` through :meth:`under`; the byte-sized
    fields stay settable one by one for direct use (``toolfoundry js run --memory``).

    Attributes:
        timeout_s: wall-clock budget for the whole call, compilation included.
        memory_bytes: what the tool may allocate; the sandbox's own baseline is not counted.
        output_bytes: cap on the JSON-encoded result (``output_too_large`` beyond it).
        log_lines: console lines kept; later ones are dropped and a marker is added.
        log_bytes: total console bytes kept.
        fetch: network capability (e.g. ``FetchPolicy`` or ``FixtureFetch``); None denies fetch.
        storage: localStorage backend; None makes every localStorage call fail with
            ``capability_denied``.
        storage_namespace: the namespace for localStorage; defaults to ``tool:<tool>``.
        storage_quota: key count, value size and total bytes allowed per namespace.
        tool: the calling tool's name, for audit and the default storage namespace.
        tools: code mode's ``tools`` (``sandbox/host/protocols.py``); None makes every
            ``tools.NAME(...)`` fail with ``capability_denied``.
        deadline: a ``time.monotonic()`` instant the call must end by even sooner than
            ``timeout_s`` allows: an inner call's is its outer call's.
    """

    timeout_s: float = _DEFAULT.timeout_s
    memory_bytes: int = _DEFAULT.memory_bytes
    output_bytes: int = _DEFAULT.output_bytes
    log_lines: int = 1000
    log_bytes: int = 64 * 1024
    fetch: FetchProvider | None = None
    storage: StorageBackend | None = None
    storage_namespace: str | None = None
    storage_quota: StorageQuota = field(default_factory=StorageQuota)
    tool: str | None = None
    tools: ToolsProvider | None = None
    deadline: float | None = None

    def __post_init__(self) -> None:
        memory = CALL_LIMIT_BOUNDS["memory_mib"]  # the configured range, here in bytes
        bounds = {
            "timeout_s": CALL_LIMIT_BOUNDS["timeout_s"],
            "memory_bytes": Bound(memory.low * MIB, memory.high * MIB),
            "output_bytes": CALL_LIMIT_BOUNDS["output_bytes"],
        }
        for name, bound in bounds.items():
            problem = bound.problem(getattr(self, name))
            if problem is not None:
                raise ValueError(f"{name} {problem}")
        if self.log_lines < 0 or self.log_bytes < 0:
            raise ValueError("log caps must be non-negative")

    @classmethod
    def under(cls, limits: CallLimits, **capabilities: Any) -> SandboxPolicy:
        """The policy of one call under ``limits``; ``capabilities`` are the other fields
        (``fetch``, ``storage``, ``storage_namespace``, ``tool``...)."""
        return cls(
            timeout_s=limits.timeout_s,
            memory_bytes=limits.memory_bytes,
            output_bytes=limits.output_bytes,
            **capabilities,
        )

    @property
    def namespace(self) -> str:
        """The localStorage namespace this call uses."""
        if self.storage_namespace:
            return self.storage_namespace
        return f"tool:{self.tool}" if self.tool else "anonymous"
