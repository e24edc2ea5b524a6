"""The second tier's seam: run one Python tool call under OS isolation, wherever that is.

Implementations: a bubblewrap jail spawned by this process (with a warm pool), a remote
executor service over HTTP, and Docker where an engine runs. The forge and the foundry only
see this protocol.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol

from toolfoundry.sandbox.host.protocols import FetchProvider
from toolfoundry.spec import CallLimits, CallResult
from toolfoundry.spec.limits import CALL_LIMIT_BOUNDS, Bound
from toolfoundry.spec.limits import MIB as MIB  # re-exported for the tier's modules

# What each of the tier's own limits accepts (time and output are the call limits' ranges):
# a CPython process needs some 16 MiB of address space to start at all.
PROCESS_LIMIT_BOUNDS: dict[str, Bound] = {
    "timeout_s": CALL_LIMIT_BOUNDS["timeout_s"],
    "cpu_s": Bound(1, 3600),
    "memory_bytes": Bound(16 * MIB, 1024 * 1024 * MIB),
    "max_processes": Bound(1, 4096),
    "max_file_bytes": Bound(0, 1024 * 1024 * MIB),
    "output_bytes": CALL_LIMIT_BOUNDS["output_bytes"],
    "log_bytes": Bound(0, 256 * MIB),
}


@dataclass(frozen=True)
class ProcessLimits:
    """What one Python call may use.

    A tool's calls and test runs take ``timeout_s`` and ``output_bytes`` from the configured
    :class:`~toolfoundry.spec.CallLimits` (:meth:`bounded_by`); the rest are the tier's own
    (a CPython process needs far more address space than the JavaScript sandbox's memory cap).

    Attributes:
        timeout_s: wall-clock budget for the whole call, interpreter start included (this
            default is for direct use of an executor).
        cpu_s: CPU-seconds rlimit.
        memory_bytes: address-space rlimit.
        max_processes: process-count rlimit inside the jail.
        max_file_bytes: largest file the tool may write (in its tmpfs).
        output_bytes: cap on the JSON-encoded result.
        log_bytes: cap on captured stdout/stderr.
        allowed_packages: installed packages the tool may import besides the stdlib allowlist.
        queue_s: the longest this call may wait for room in the tier's admission budget, when
            sooner than the admission's own wait (an inner call, which must end by its outer
            call's deadline); None for the admission's.
    """

    timeout_s: float = 5.0
    cpu_s: int = 5
    memory_bytes: int = 512 * MIB
    max_processes: int = 16
    max_file_bytes: int = 16 * MIB
    output_bytes: int = CallLimits().output_bytes
    log_bytes: int = 64 * 1024
    allowed_packages: tuple[str, ...] = ()
    queue_s: float | None = None

    def __post_init__(self) -> None:
        for name, bound in PROCESS_LIMIT_BOUNDS.items():
            problem = bound.problem(getattr(self, name))
            if problem is not None:
                raise ValueError(f"{name} {problem}")

    def bounded_by(self, limits: CallLimits) -> ProcessLimits:
        """These limits with the time and output of ``limits`` (a call's configured ones)."""
        return dataclasses.replace(
            self, timeout_s=limits.timeout_s, output_bytes=limits.output_bytes
        )


class Executor(Protocol):
    """Runs ``handler(args)`` of a Python tool module in isolation and returns a CallResult.

    Never raises for anything the tool does: timeouts, crashes, bombs and bad output all come
    back as a failed CallResult with the right error kind.
    """

    def run(
        self,
        code: str,
        args: Any,
        limits: ProcessLimits,
        *,
        tool: str | None = None,
        fetch: FetchProvider | None = None,
    ) -> CallResult:
        """Run one call; ``fetch`` answers the tool's ``fetch()`` (None: no network at all)."""
        ...

    def close(self) -> None:
        """Stop warm workers and release resources."""
        ...
