"""What one call of a tool may use: the ``[limits]`` of every real call and every test run.

The one limits type and the one place its defaults are written. The forge runs a draft's test
cases under the same :class:`CallLimits` its calls will have (a tool whose output is over
``output_bytes`` fails its tests instead of becoming active and failing every call); the
sandbox's ``SandboxPolicy.under`` and the Python tier's ``ProcessLimits.bounded_by`` turn them
into what each runtime enforces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

MIB = 1024 * 1024


@dataclass(frozen=True)
class Bound:
    """The numbers one limit accepts: finite, in [low, high] (``low`` itself excluded when
    ``low_open``), whole when ``integer``. ``inf``, ``nan``, a negative, a huge value or a
    bool is refused by :meth:`problem`, wherever the limit is read (``toolfoundry.toml``,
    a CLI flag, the Python API), so nothing out of range reaches a runtime.
    """

    low: float
    high: float
    integer: bool = True
    low_open: bool = False

    def problem(self, value: object) -> str | None:
        """Why ``value`` is refused (``"must be ..."``), or None when it is accepted."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"must be {self.wanted}"
        if self.integer and not isinstance(value, int):
            return f"must be {self.wanted}"
        # compared without converting: an int beyond a double's range is simply too big
        finite = isinstance(value, int) or math.isfinite(value)
        below = value <= self.low if self.low_open else value < self.low
        if not finite or below or value > self.high:
            return f"must be {self.wanted}, got {_number(value)}"
        return None

    @property
    def wanted(self) -> str:
        """What is accepted, in words: ``a number in (0, 3600]``."""
        kind = "an integer" if self.integer else "a number"
        opening = "(" if self.low_open else "["
        return f"{kind} in {opening}{_number(self.low)}, {_number(self.high)}]"


def _number(value: float) -> str:
    if isinstance(value, int) and value.bit_length() > 64:  # str() of 4300+ digits raises
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value)) if abs(value) < 1e16 else repr(value)
    return repr(value)


# The one home of each call limit's accepted range. timeout_s: an hour at most (the epoch
# deadline is ticks of 1 ms); memory_mib: the JavaScript sandbox needs 8 MiB, and wasm32
# linear memory ends at 4 GiB; output_bytes: a result is decoded whole by the host;
# inner_call_depth: each level holds a sandbox instance and a worker thread while it waits
# (0: no tool may call another); inner_calls: calls through `tools` under one outer call.
CALL_LIMIT_BOUNDS: dict[str, Bound] = {
    "timeout_s": Bound(0, 3600, integer=False, low_open=True),
    "memory_mib": Bound(8, 4096),
    "output_bytes": Bound(1, 256 * MIB),
    "inner_call_depth": Bound(0, 16),
    "inner_calls": Bound(0, 1_000_000),
}

# MCP list pages (``serve --page-size``): entries of ``tools/list``, tools (two resources each)
# of ``resources/list``. A page is built and sent whole, so it is capped like any answer.
LIST_PAGE_SIZE = 100
LIST_PAGE_BOUND = Bound(1, 10_000)

# [fetch] max_requests: the fetch requests one call may make, each counted whether answered or
# refused (past it, every request is refused). Both tiers hold it; the Python tier ends a call
# that asks as many times again (sandbox/process/watch.py: fetch_frames_cap).
FETCH_REQUESTS = 20
FETCH_REQUESTS_BOUND = Bound(1, 10_000)

# The Python tier's admission control (sandbox/process/admission.py; [limits] python_total_mib
# and python_queue_s): the memory budgets of its concurrent calls and test runs together, and
# how long one waits for room before it is refused as overloaded.
PYTHON_TOTAL_BYTES = 2048 * MIB  # four calls at the tier's default 512 MiB
PYTHON_QUEUE_S = 10.0


@dataclass(frozen=True)
class CallLimits:
    """Time, memory, output and inner calls one call may use.

    Attributes:
        timeout_s: wall-clock budget of a call, compilation included; the calls it makes
            through ``tools`` share it (the outer deadline is the inner deadline).
        memory_mib: cap on the JavaScript sandbox's linear memory, in MiB.
        output_bytes: cap on the JSON-encoded result (``output_too_large`` beyond it).
        inner_call_depth: how deep calls through ``tools`` may nest (a ``run_js`` snippet's
            or a tool's own calls are depth 1); deeper is ``depth_limit``, so a cycle ends.
        inner_calls: how many calls through ``tools`` one outer call may make, at every
            depth together; more is ``call_limit``.
    """

    timeout_s: float = 2.0
    memory_mib: int = 64
    output_bytes: int = 1 * MIB
    inner_call_depth: int = 4
    inner_calls: int = 1000

    def __post_init__(self) -> None:
        for item in fields(self):
            problem = CALL_LIMIT_BOUNDS[item.name].problem(getattr(self, item.name))
            if problem is not None:
                raise ValueError(f"{item.name} {problem}")

    @property
    def memory_bytes(self) -> int:
        """:attr:`memory_mib` in bytes."""
        return self.memory_mib * MIB


@dataclass(frozen=True)
class DraftLimits:
    """Size caps applied while parsing a draft (configurable, e.g. from toolfoundry.toml).

    Kept here, beside the call limits, so that reading the configuration does not load the
    forge (pydantic, tree-sitter); :mod:`toolfoundry.forge` offers it under its own name too.
    """

    max_code_bytes: int = 256 * 1024
    max_draft_bytes: int = 8 * 1024 * 1024
    max_tests: int = 200
    max_description_chars: int = 4096
