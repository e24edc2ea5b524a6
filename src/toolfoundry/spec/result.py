"""What a tool call returns: a value or a structured error a model can act on."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NotRequired

from typing_extensions import TypedDict

from toolfoundry.base.problem import Problem


def elapsed_ms(started: float) -> float:
    """Milliseconds since ``started``, a ``time.perf_counter()`` reading (for ``duration_ms``)."""
    return (time.perf_counter() - started) * 1000.0


class ErrorKind(StrEnum):
    """Every way a call can fail; a model branches on these, so they are a public contract."""

    INVALID_ARGUMENTS = "invalid_arguments"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    CAPABILITY_DENIED = "capability_denied"
    RUNTIME_ERROR = "runtime_error"
    NOT_FOUND = "not_found"
    NOT_ACTIVE = "not_active"
    OUTPUT_TOO_LARGE = "output_too_large"
    # a result, log or error the host will not take: too deep, a number that is not a finite
    # double, text that is not valid Unicode (the JSON gate's rules, base/json_gate.py)
    INVALID_OUTPUT = "invalid_output"
    # the sandbox itself is missing or damaged: the code was never judged (not the code's fault)
    SANDBOX_UNAVAILABLE = "sandbox_unavailable"
    # the Python tier's pool-wide memory budget stayed full for the whole wait (retry later;
    # not the code's fault): sandbox/process/admission.py
    OVERLOADED = "overloaded"
    # code mode (tools calling tools): an inner call past ``[limits] inner_call_depth`` (a
    # cycle a -> b -> a ends here), or past ``inner_calls`` made under one outer call
    DEPTH_LIMIT = "depth_limit"
    CALL_LIMIT = "call_limit"
    # a tool whose code calls another failed because that callee cannot be called now (a
    # person disabled it, it is not active, it no longer exists): the message names the callee
    DEPENDENCY_UNAVAILABLE = "dependency_unavailable"
    # the registry database cannot be read or written (a full disk, a server that does not
    # answer): the server's fault, fixed by its operator; nothing of the call was recorded
    UNAVAILABLE = "unavailable"


class CallErrorJson(TypedDict):
    """A call error's JSON form: its kind, message and, for bad arguments, every problem."""

    kind: str
    message: str
    problems: NotRequired[list[dict[str, str]]]


@dataclass(frozen=True)
class CallError:
    """A failed call: its kind, a readable message, and (for bad arguments) every problem."""

    kind: ErrorKind
    message: str
    problems: tuple[Problem, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ErrorKind(self.kind))
        object.__setattr__(self, "problems", tuple(self.problems))

    def to_dict(self) -> CallErrorJson:
        out: CallErrorJson = {"kind": self.kind.value, "message": self.message}
        if self.problems:
            out["problems"] = [p.to_dict() for p in self.problems]
        return out


class ToolCallFailed(Exception):
    """Raised by :meth:`CallResult.unwrap` so Python callers can use exceptions; raised by a
    declared tool to fail with an error of its own kind (and the console output it relays)."""

    def __init__(self, error: CallError, logs: Sequence[str] = ()) -> None:
        super().__init__(f"{error.kind.value}: {error.message}")
        self.error = error
        self.logs = tuple(logs)


@dataclass(frozen=True)
class CallResult:
    """Outcome of one tool call. ``ok`` is true exactly when ``error`` is None."""

    ok: bool
    value: Any = None
    error: CallError | None = None
    logs: tuple[str, ...] = ()
    duration_ms: float = 0.0
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "logs", tuple(self.logs))
        if self.ok != (self.error is None):
            raise ValueError("CallResult.ok must be true exactly when error is None")

    @classmethod
    def success(
        cls, value: Any, *, logs: tuple[str, ...] | list[str] = (), duration_ms: float = 0.0
    ) -> CallResult:
        return cls(ok=True, value=value, logs=tuple(logs), duration_ms=duration_ms)

    @classmethod
    def failure(
        cls,
        kind: ErrorKind | str,
        message: str,
        *,
        problems: tuple[Problem, ...] | list[Problem] = (),
        logs: tuple[str, ...] | list[str] = (),
        duration_ms: float = 0.0,
    ) -> CallResult:
        error = CallError(ErrorKind(kind), message, tuple(problems))
        return cls(ok=False, error=error, logs=tuple(logs), duration_ms=duration_ms)

    def unwrap(self) -> Any:
        """Return the value, or raise :class:`ToolCallFailed` carrying the error."""
        if self.error is not None:
            raise ToolCallFailed(self.error, self.logs)
        return self.value

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape printed by ``toolfoundry call --json`` and ``js run --json``."""
        return {
            "ok": self.ok,
            "value": self.value,
            "error": self.error.to_dict() if self.error else None,
            "logs": list(self.logs),
            "duration_ms": round(self.duration_ms, 3),
        }
