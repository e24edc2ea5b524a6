"""The engine seam: run one ES module with limits and host capabilities, return a CallResult."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from toolfoundry.sandbox.js.host_calls import CallHost
from toolfoundry.spec import CallResult


@dataclass(frozen=True)
class Limits:
    """Runtime-enforced bounds for one call.

    Attributes:
        deadline: ``time.monotonic()`` instant the call must end by (compilation included).
        memory_bytes: what the tool may allocate: linear memory may grow to the snapshot's
            baseline plus this (``WasmEngine.memory_limit``).
        output_bytes: cap on the JSON-encoded result.
    """

    deadline: float
    memory_bytes: int
    output_bytes: int


class Engine(Protocol):
    """Runs a tool module in a pristine JavaScript environment."""

    def run(self, module_code: str, args: Any, limits: Limits, host: CallHost) -> CallResult:
        """Evaluate ``module_code``, call its ``handler(args)`` (or take its default export).

        Never raises for anything the script does: every failure is a CallResult error.
        """
        ...
