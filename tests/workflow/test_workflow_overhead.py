"""Runner overhead per step (slow: run with `pytest -m slow tests/workflow -s` to see figures)."""

from __future__ import annotations

import time

import pytest

from toolfoundry.spec import StepResult, StepStatus
from toolfoundry.workflow import Workflow

STEPS = 100
RUNS = 100


def long_flow(n: int = 1) -> dict[str, int]:
    """A hundred gated steps.

    Args:
        n: the cap every step reads.
    """
    return {"n": n, "count": 0}


def count(state: dict[str, int]) -> StepResult:
    state["count"] += 1
    return StepResult(StepStatus.COMPLETED)


@pytest.mark.slow
def test_per_step_overhead() -> None:
    flow = Workflow(long_flow)
    for i in range(STEPS):
        flow.step(
            count,
            name=f"s{i}",
            cap="n",
            needs={"session": lambda s: True},
            requires={"ready": lambda s: s["count"] >= 0},
        )
    assert flow.run().outputs["count"] == STEPS
    begin = time.perf_counter()
    for _ in range(RUNS):
        flow.run()
    run_us = (time.perf_counter() - begin) / RUNS / STEPS * 1e6
    begin = time.perf_counter()
    for _ in range(RUNS):
        assert flow.call({}).ok
    call_us = (time.perf_counter() - begin) / RUNS / STEPS * 1e6
    print(f"\nworkflow runner: {run_us:.1f} us/step (run), {call_us:.1f} us/step (call, JSON)")
    # generous bound for a loaded 2-core machine: gates and bookkeeping, not the steps' work
    assert run_us < 1000
