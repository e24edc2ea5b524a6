"""The executor service's JSON: one call request in, one CallResult out.

POST /v1/run   Authorization: Bearer TOKEN
{"code": str, "args": any, "tool": str|null, "limits": {ProcessLimits fields}}
-> 200 {"ok", "value", "error": {"kind", "message"}|null, "logs", "duration_ms"}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.spec import CallResult, ErrorKind

RUN_PATH = "/v1/run"
LIMIT_FIELDS = tuple(f.name for f in dataclasses.fields(ProcessLimits))


class WireError(ValueError):
    """A request or response that does not have the wire shape."""


def limits_to_dict(limits: ProcessLimits) -> dict[str, Any]:
    """JSON-ready limits."""
    out = dataclasses.asdict(limits)
    out["allowed_packages"] = list(limits.allowed_packages)
    return out


def limits_from_dict(data: Any, ceiling: ProcessLimits) -> ProcessLimits:
    """Limits a client asked for, each no looser than the service's ``ceiling``.

    Raises:
        WireError: unknown fields or wrong types.
    """
    if not isinstance(data, Mapping):
        raise WireError("limits must be an object")
    unknown = sorted(set(data) - set(LIMIT_FIELDS))
    if unknown:
        raise WireError(f"unknown limits: {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for name in LIMIT_FIELDS:
        if name not in data:
            continue
        value, cap = data[name], getattr(ceiling, name)
        if name == "allowed_packages":
            if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
                raise WireError("limits.allowed_packages must be a list of names")
            refused = sorted(set(value) - set(cap))
            if refused:
                raise WireError(f"this executor does not offer packages: {', '.join(refused)}")
            values[name] = tuple(value)
        elif name == "queue_s":  # null: the service's own wait in line; a number: shorter
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise WireError("limits.queue_s must be a positive number or null")
            values[name] = float(value) if cap is None else min(float(value), cap)
        elif isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise WireError(f"limits.{name} must be a positive number")
        else:
            values[name] = type(cap)(min(value, cap))
    try:
        return dataclasses.replace(ceiling, **values)
    except ValueError as exc:  # ProcessLimits' own ranges (e.g. cpu_s 0.5 is 0 seconds)
        raise WireError(f"limits.{exc}") from None


def result_from_dict(data: Any) -> CallResult:
    """Rebuild a CallResult from its ``to_dict`` form.

    Raises:
        WireError: the shape is wrong.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("ok"), bool):
        raise WireError("not a call result")
    logs = data.get("logs", [])
    duration = data.get("duration_ms", 0.0)
    if not isinstance(logs, list) or not all(isinstance(line, str) for line in logs):
        raise WireError("logs must be a list of strings")
    if not isinstance(duration, int | float):
        raise WireError("duration_ms must be a number")
    if data["ok"]:
        return CallResult.success(data.get("value"), logs=logs, duration_ms=float(duration))
    error = data.get("error")
    if not isinstance(error, Mapping) or not isinstance(error.get("message"), str):
        raise WireError("a failed result needs error.kind and error.message")
    try:
        kind = ErrorKind(str(error.get("kind")))
    except ValueError as exc:
        raise WireError(f"unknown error kind {error.get('kind')!r}") from exc
    return CallResult.failure(kind, error["message"], logs=logs, duration_ms=float(duration))
