"""Admission control for the Python tier: concurrent calls x their memory never exceed a total.

Each call's jail is held to its own ``memory_bytes`` (``budget.py``), but N concurrent calls
can together take N times that: a burst of calls, or a draft's tests running before anyone
approved it, could push the machine into swap or the OOM killer. :class:`Admission` admits a
call only while the memory budgets of the calls running plus its own fit ``total_bytes``; a
call that does not fit waits in line (first come, first served, so a large call is not
starved by small ones) for at most ``wait_s``, then is refused with the error kind
``overloaded`` (not the code's fault: retry later). A call larger than the total is refused
at once. Calls and a draft's test runs pass the same executor, so the same admission.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from toolfoundry.spec import CallResult, ErrorKind
from toolfoundry.spec.limits import MIB, PYTHON_QUEUE_S, PYTHON_TOTAL_BYTES


@dataclass(frozen=True)
class AdmissionStats:
    """What an admission saw: for operators (and the tests)."""

    running: int
    in_use_bytes: int
    peak_bytes: int
    peak_running: int
    admitted: int
    refused: int


class Admission:
    """A pool-wide memory budget for concurrent Python calls (thread-safe).

    Args:
        total_bytes: the sum of the running calls' ``memory_bytes`` at most.
        wait_s: how long a call that does not fit waits for room before it is refused.
    """

    def __init__(self, total_bytes: int = PYTHON_TOTAL_BYTES, wait_s: float = PYTHON_QUEUE_S):
        if total_bytes <= 0 or not wait_s >= 0:
            raise ValueError("total_bytes must be positive and wait_s non-negative")
        self.total_bytes, self.wait_s = total_bytes, wait_s
        self._cond = threading.Condition()
        self._line: deque[int] = deque()  # tickets waiting, first in line first
        self._tickets = itertools.count()
        self._in_use = self._running = 0
        self._peak = self._peak_running = self._admitted = self._refused = 0

    def run(
        self, memory_bytes: int, call: Callable[[], CallResult], *, wait_s: float | None = None
    ) -> CallResult:
        """``call()`` once ``memory_bytes`` fits the total, or the ``overloaded`` refusal.

        The wait is not part of the call's own time budget (``call`` starts its clock); it is
        reported as ``details.queued_ms``. ``wait_s`` shortens it for this call (an inner
        call of code mode waits no longer than its outer call's deadline).
        """
        started = time.monotonic()
        refusal = self._enter(
            memory_bytes, self.wait_s if wait_s is None else min(wait_s, self.wait_s)
        )
        queued_ms = (time.monotonic() - started) * 1000
        if refusal is not None:
            refused = CallResult.failure(ErrorKind.OVERLOADED, refusal, duration_ms=queued_ms)
            refused.details["queued_ms"] = round(queued_ms, 1)
            return refused
        try:
            result = call()
        finally:
            self._leave(memory_bytes)
        if queued_ms >= 1:
            result.details["queued_ms"] = round(queued_ms, 1)
        return result

    def stats(self) -> AdmissionStats:
        """A snapshot of the counters."""
        with self._cond:
            return AdmissionStats(
                self._running,
                self._in_use,
                self._peak,
                self._peak_running,
                self._admitted,
                self._refused,
            )

    def _enter(self, memory_bytes: int, wait_s: float) -> str | None:
        if memory_bytes > self.total_bytes:
            with self._cond:
                self._refused += 1
            return (
                f"the call's memory budget ({memory_bytes // MIB} MiB) is larger than the Python "
                f"tier's total for concurrent calls ({self.total_bytes // MIB} MiB, "
                "[limits] python_total_mib)"
            )
        deadline = time.monotonic() + wait_s
        with self._cond:
            ticket = next(self._tickets)
            self._line.append(ticket)
            try:
                while self._line[0] != ticket or self._in_use + memory_bytes > self.total_bytes:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._refused += 1
                        return (
                            f"the Python tier is busy: {self._running} call(s) hold "
                            f"{self._in_use // MIB} of its {self.total_bytes // MIB} MiB for "
                            f"concurrent calls and this one ({memory_bytes // MIB} MiB) waited "
                            f"{wait_s:g} s; retry later"
                        )
                    self._cond.wait(left)
            finally:
                self._line.remove(ticket)
                self._cond.notify_all()  # the next in line may fit now
            self._in_use += memory_bytes
            self._running += 1
            self._admitted += 1
            self._peak = max(self._peak, self._in_use)
            self._peak_running = max(self._peak_running, self._running)
        return None

    def _leave(self, memory_bytes: int) -> None:
        with self._cond:
            self._in_use -= memory_bytes
            self._running -= 1
            self._cond.notify_all()
