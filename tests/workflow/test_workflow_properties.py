"""Properties of the runner over random workflows: gates decide, steps never run past them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolfoundry.spec import StepResult, StepStatus
from toolfoundry.workflow import Workflow


class Outage(Exception):
    """The declared dependency failure."""


@dataclass(frozen=True)
class Plan:
    cap: int | None
    session: bool
    checks: tuple[bool, ...]
    after_previous: bool
    run_if: bool | None
    outcome: str  # what the step function does when it runs


plans = st.builds(
    Plan,
    cap=st.sampled_from([None, 0, 2]),
    session=st.booleans(),
    checks=st.lists(st.booleans(), max_size=3).map(tuple),
    after_previous=st.booleans(),
    run_if=st.sampled_from([None, True, False]),
    outcome=st.sampled_from(["completed", "empty", "blocked", "outage"]),
)


def build(steps: list[Plan]) -> Workflow[dict[str, Any]]:
    def random_flow() -> dict[str, Any]:
        """A generated workflow."""
        return {"ran": []}

    flow = Workflow(random_flow, unavailable_on=(Outage,))
    for i, plan in enumerate(steps):

        def run(state: dict[str, Any], i: int = i, plan: Plan = plan) -> StepResult:
            state["ran"].append(i)
            if plan.outcome == "outage":
                raise Outage(f"step {i} dependency down")
            if plan.outcome == "blocked":
                return StepResult(StepStatus.BLOCKED, blockers=(f"own_{i}",))
            return StepResult(StepStatus(plan.outcome))

        flow.step(
            run,
            name=f"s{i}",
            cap=(lambda s, c=plan.cap: c),
            needs={"session": lambda s, ok=plan.session: ok},
            requires={f"check_{i}_{j}": (lambda s, ok=ok: ok) for j, ok in enumerate(plan.checks)},
            after=[f"s{i - 1}"] if plan.after_previous and i else [],
            run_if=None if plan.run_if is None else (lambda s, go=plan.run_if: go),
        )
    return flow


def expected(plans: list[Plan]) -> list[tuple[str, tuple[str, ...], bool]]:
    """(status, blockers, ran) per step, from the documented gate order."""
    out: list[tuple[str, tuple[str, ...], bool]] = []
    for i, plan in enumerate(plans):
        blockers = []
        if plan.after_previous and i and out[i - 1][0] != "completed":
            blockers.append(f"s{i - 1}_{out[i - 1][0]}")
        blockers += [f"check_{i}_{j}" for j, ok in enumerate(plan.checks) if not ok]
        if plan.cap == 0:
            out.append(("skipped", (), False))
        elif not plan.session:
            out.append(("unavailable", (), False))
        elif blockers:
            out.append(("blocked", tuple(blockers), False))
        elif plan.run_if is False:
            out.append(("ready", (), False))
        elif plan.outcome == "outage":
            out.append(("unavailable", (), True))
        elif plan.outcome == "blocked":
            out.append(("blocked", (f"own_{i}",), True))
        else:
            out.append((plan.outcome, (), True))
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(plans, min_size=1, max_size=5))
def test_gates_decide_and_steps_never_run_past_them(steps: list[Plan]) -> None:
    flow = build(steps)
    state = flow.start({})
    result = flow.run_state(state)
    want = expected(steps)
    got = [(r.status.value, r.blockers) for r in result.steps.values()]
    assert got == [(status, blockers) for status, blockers, _ in want]
    assert state["ran"] == [i for i, (_, _, ran) in enumerate(want) if ran]

    statuses = [status for status, _, _ in want]
    stalled = [i for i, s in enumerate(statuses) if s not in ("completed", "skipped")]
    if "completed" in statuses and not stalled:
        assert (result.status, result.stopped_at) == (StepStatus.COMPLETED, None)
    elif stalled:
        assert result.stopped_at == f"s{stalled[0]}"
        assert result.status.value == statuses[stalled[0]]
    else:
        assert result.status is StepStatus.SKIPPED
    assert build(steps).run().to_dict() == result.to_dict()
