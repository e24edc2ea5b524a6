"""What a sandboxed call hands back at its end, read through the JSON gate.

The JavaScript prelude's driver and the Python tier's runner both answer
``{"ok":true,"value":V}`` or ``{"ok":false,"kind":K,"message":M}``, but nothing inside the
sandbox is trusted (a tool can rewrite either): a value that breaks the gate's rules
(nested past the depth limit, ``JSON.rawJSON("1e999")``, a 5000-digit integer, a lone
surrogate) is ``invalid_output`` with each problem located in the value; a malformed answer is
``invalid_output`` too. An error's message is text for people, so a lone surrogate in it is
shown as its escape instead of refusing the error (:func:`toolfoundry.base.json_gate.well_formed`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from toolfoundry.base.json_gate import InvalidJson, JsonLimits, decode, well_formed
from toolfoundry.spec import CallError, CallResult, ErrorKind

OK_PREFIX = b'{"ok":true,"value":'


@dataclass(frozen=True)
class GuestAnswer:
    """A decoded answer: a value, the error the sandbox reported, or the host's refusal.

    Attributes:
        value: the tool's value (when ``kind`` and ``refused`` are None).
        kind: the error kind the sandbox reported (the caller decides what to believe).
        message: the reported error message.
        refused: the host's verdict that the answer itself is ``invalid_output``.
    """

    value: Any = None
    kind: str | None = None
    message: str = ""
    refused: CallError | None = None

    def refusal(self, logs: tuple[str, ...] | list[str], duration_ms: float = 0.0) -> CallResult:
        """The failed call for an answer the host refused (``refused`` is set)."""
        assert self.refused is not None
        error = self.refused
        return CallResult.failure(
            error.kind, error.message, problems=error.problems, logs=logs, duration_ms=duration_ms
        )


def read_answer(raw: bytes) -> GuestAnswer:
    """Decode the answer bytes a call returned (their size was checked by the caller).

    Problems in the value are located in the value (``$`` is the value itself).
    """
    limits = JsonLimits(max_bytes=len(raw))
    if raw.startswith(OK_PREFIX) and raw.endswith(b"}"):
        try:
            return GuestAnswer(decode(raw[len(OK_PREFIX) : -1], limits))
        except InvalidJson as exc:
            return _invalid("the result", exc)
    try:
        frame = decode(raw, limits.enclosing())
    except InvalidJson as exc:
        if any(p.reason not in ("unicode", "encoding") for p in exc.problems):
            return _invalid("the result", _in_value(exc))
        # only text that is not valid Unicode: the depth and numbers passed, so the stdlib
        # may read it, and the message is shown with the surrogate escaped
        try:
            frame = json.loads(raw.decode("utf-8", "surrogatepass"))
        except ValueError:  # bytes that are not even CESU-8
            return _invalid("the result", _in_value(exc))
        if not isinstance(frame, dict) or frame.get("ok") is not False:
            return _invalid("the result", _in_value(exc))
    if not isinstance(frame, dict) or not isinstance(frame.get("ok"), bool):
        refused = CallError(ErrorKind.INVALID_OUTPUT, "the sandbox's answer is malformed")
        return GuestAnswer(refused=refused)
    if frame["ok"]:
        return GuestAnswer(frame.get("value"))
    kind = frame.get("kind")
    message = frame.get("message", "")
    return GuestAnswer(
        kind=kind if isinstance(kind, str) else ErrorKind.RUNTIME_ERROR,
        message=well_formed(message if isinstance(message, str) else str(message)),
    )


def _in_value(exc: InvalidJson) -> InvalidJson:
    """Paths under the answer's ``value`` relocated to the value itself."""
    moved = [
        replace(p, path="$" + p.path[len("$.value") :]) if p.path.startswith("$.value") else p
        for p in exc.problems
    ]
    return InvalidJson(moved)


def _invalid(what: str, exc: InvalidJson) -> GuestAnswer:
    problems = tuple(p.problem() for p in exc.problems)
    first = exc.problems[0]
    message = f"{what} is not a value the host accepts: {first.path}: {first.message}"
    if len(problems) > 1:
        message += f" (and {len(problems) - 1} more)"
    return GuestAnswer(refused=CallError(ErrorKind.INVALID_OUTPUT, message, problems))
