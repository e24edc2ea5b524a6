"""The Python tier's pool-wide budget: N concurrent calls x their memory budget never
exceed the configured total; the rest wait in line, then fail ``overloaded``. Real jails."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from toolfoundry.sandbox.process import Admission
from toolfoundry.sandbox.process.bwrap import BwrapExecutor
from toolfoundry.sandbox.process.executor import MIB, ProcessLimits
from toolfoundry.sandbox.process.pool import WarmPool
from toolfoundry.spec import CallResult

SLEEPER = (
    "import time\n\n"
    "def handler(args):\n"
    "    start = time.time()\n"
    "    time.sleep(args['s'])\n"
    "    return [start, time.time()]\n"
)
LIMITS = ProcessLimits(timeout_s=20, memory_bytes=128 * MIB)


def concurrently(run: Any, arguments: list[dict[str, Any]], stagger_s: float = 0.0) -> list[Any]:
    results: list[Any] = [None] * len(arguments)

    def one(i: int) -> None:
        results[i] = run(arguments[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(arguments))]
    for thread in threads:
        thread.start()
        time.sleep(stagger_s)
    for thread in threads:
        thread.join(timeout=120)
    return results


def most_at_once(intervals: list[list[float]]) -> int:
    edges = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    running = peak = 0
    for _, step in edges:  # an end sorts before a start at the same instant
        running += step
        peak = max(peak, running)
    return peak


@pytest.mark.parametrize("warm", [False, True])
def test_concurrent_calls_never_hold_more_than_the_total(warm: bool) -> None:
    admission = Admission(total_bytes=2 * LIMITS.memory_bytes, wait_s=60)
    executor = WarmPool(2, admission=admission) if warm else BwrapExecutor(admission=admission)
    try:
        results: list[CallResult] = concurrently(
            lambda a: executor.run(SLEEPER, a, LIMITS), [{"s": 0.6}] * 6
        )
    finally:
        executor.close()
    assert all(r.ok for r in results), [r.to_dict() for r in results]
    assert most_at_once([r.value for r in results]) <= 2  # seen from inside the jails
    stats = admission.stats()
    assert stats.peak_bytes <= admission.total_bytes
    assert stats.peak_running == 2  # the budget was used, not just never reached
    assert (stats.admitted, stats.refused, stats.running, stats.in_use_bytes) == (6, 0, 0, 0)
    assert any(r.details.get("queued_ms", 0) > 100 for r in results)  # some waited in line


def test_a_call_that_finds_no_room_in_time_is_overloaded() -> None:
    admission = Admission(total_bytes=LIMITS.memory_bytes, wait_s=0.3)
    busy = BwrapExecutor(admission=admission)
    first, second = concurrently(
        lambda a: busy.run(SLEEPER, a, LIMITS), [{"s": 2.0}, {"s": 0}], stagger_s=0.3
    )
    assert first.ok, first.to_dict()
    assert second.error is not None
    assert second.error.kind.value == "overloaded"
    assert "busy" in second.error.message
    assert "128 MiB" in second.error.message
    assert 250 <= second.details["queued_ms"] < 2000
    too_big = busy.run(SLEEPER, {"s": 0}, ProcessLimits(memory_bytes=256 * MIB))
    assert too_big.error is not None
    assert too_big.error.kind.value == "overloaded"
    assert "python_total_mib" in too_big.error.message
    assert too_big.duration_ms < 100  # refused at once: it can never fit
