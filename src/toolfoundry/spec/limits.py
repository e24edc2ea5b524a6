"""What one call of a tool may use: the ``[limits]`` of every real call and every test run.

The one limits type and the one place its defaults are written. The forge runs a draft's test
cases under the same :class:`CallLimits` its calls will have (a tool whose output is over
``output_bytes`` fails its tests instead of becoming active and failing every call); the
sandbox's ``SandboxPolicy.under`` and the Python tier's ``ProcessLimits.bounded_by`` turn them
into what each runtime enforces.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class CallLimits:
    """Time, memory and output one call may use.

    Attributes:
        timeout_s: wall-clock budget of a call, compilation included.
        memory_mib: cap on the JavaScript sandbox's linear memory, in MiB.
        output_bytes: cap on the JSON-encoded result (``output_too_large`` beyond it).
    """

    timeout_s: float = 2.0
    memory_mib: int = 64
    output_bytes: int = 1 * MIB

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {self.timeout_s!r}")
        if self.memory_mib <= 0 or self.output_bytes <= 0:
            raise ValueError("memory_mib and output_bytes must be positive")

    @property
    def memory_bytes(self) -> int:
        """:attr:`memory_mib` in bytes."""
        return self.memory_mib * MIB
