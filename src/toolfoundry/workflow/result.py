"""What a workflow run returns: every step's status, one overall status, and the outputs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolfoundry.spec import StepResult, StepStatus

# Statuses that mean "this step did not advance the workflow", the first of which in step
# order is the root cause reported as the overall status. ``skipped`` is not among them:
# the operator turned that step off, so the workflow is not stuck on it.
_STALLED = (StepStatus.BLOCKED, StepStatus.UNAVAILABLE, StepStatus.EMPTY, StepStatus.READY)


@dataclass(frozen=True)
class WorkflowResult:
    """The outcome of one workflow run.

    Attributes:
        workflow: the workflow's name.
        status: ``completed`` when the workflow's success condition holds; otherwise the
            status of the first step (in order) that did not advance, or ``skipped`` when
            every step was turned off.
        steps: each step's result, by name, in run order.
        outputs: the state's outputs after the run (JSON-ready).
        stopped_at: the step whose status is the overall status (None when completed).
    """

    workflow: str
    status: StepStatus
    steps: Mapping[str, StepResult]
    outputs: Mapping[str, Any] = field(default_factory=dict)
    stopped_at: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", StepStatus(self.status))
        object.__setattr__(self, "steps", dict(self.steps))
        if self.stopped_at is not None and self.stopped_at not in self.steps:
            raise ValueError(f"stopped_at names an unknown step {self.stopped_at!r}")

    @property
    def blockers(self) -> tuple[str, ...]:
        """Every blocker of every blocked step, in step order, without repeats."""
        seen: dict[str, None] = {}
        for result in self.steps.values():
            seen.update(dict.fromkeys(result.blockers))
        return tuple(seen)

    def step(self, name: str) -> StepResult:
        """The result of the step called ``name`` (KeyError when there is none)."""
        return self.steps[name]

    def statuses(self) -> dict[str, str]:
        """Step name -> status value, for quick assertions and logs."""
        return {name: result.status.value for name, result in self.steps.items()}

    def to_step_result(self) -> StepResult:
        """The whole run as one StepResult, without data (reported like any operation's step).

        Its blockers are the blocked steps' when the overall status is ``blocked``; its message
        names the step the run stopped at.
        """
        blockers = self.blockers if self.status is StepStatus.BLOCKED else ()
        message = ""
        if self.stopped_at is not None:
            step = self.steps[self.stopped_at]
            message = f"stopped at {self.stopped_at}" + (
                f": {step.message}" if step.message else ""
            )
        return StepResult(self.status, blockers=blockers, message=message)

    def to_dict(self) -> dict[str, Any]:
        """The JSON a model reads: overall status, blockers, each step, then the outputs."""
        out: dict[str, Any] = {"workflow": self.workflow, "status": self.status.value}
        if self.stopped_at is not None:
            out["stopped_at"] = self.stopped_at
        if self.blockers:
            out["blockers"] = list(self.blockers)
        out["steps"] = {name: result.to_dict() for name, result in self.steps.items()}
        out["outputs"] = dict(self.outputs)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorkflowResult:
        """Parse :meth:`to_dict`'s shape; raises ValueError naming what is wrong."""
        if not isinstance(data, Mapping):
            raise ValueError("a workflow result must be an object")
        steps_data = data.get("steps")
        if not isinstance(steps_data, Mapping) or not steps_data:
            raise ValueError("a workflow result needs a non-empty 'steps' object")
        steps: dict[str, StepResult] = {}
        for name, item in steps_data.items():
            if not isinstance(item, Mapping):
                raise ValueError(f"steps.{name} must be an object")
            try:
                steps[name] = StepResult(
                    StepStatus(str(item.get("status"))),
                    data=item.get("data"),
                    blockers=tuple(item.get("blockers", ())),
                    message=str(item.get("message", "")),
                    details=dict(item.get("details", {})),
                )
            except ValueError as exc:
                raise ValueError(f"steps.{name}: {exc}") from exc
        result = cls(
            workflow=str(data.get("workflow", "")),
            status=StepStatus(str(data.get("status"))),
            steps=steps,
            outputs=dict(data.get("outputs", {})),
            stopped_at=data.get("stopped_at"),
        )
        if "blockers" in data and list(data["blockers"]) != list(result.blockers):
            raise ValueError("'blockers' must list the blocked steps' blockers in step order")
        return result


def overall(steps: Mapping[str, StepResult], done: bool) -> tuple[StepStatus, str | None]:
    """The overall status and the step it comes from.

    Args:
        steps: the step results in run order.
        done: whether the workflow's success condition holds.
    """
    if done:
        return StepStatus.COMPLETED, None
    for name, result in steps.items():
        if result.status in _STALLED:
            return result.status, name
    if all(r.status is StepStatus.SKIPPED for r in steps.values()):
        return StepStatus.SKIPPED, None
    # Every step completed or was skipped, yet the success condition does not hold: the
    # last step that ran found nothing to show for it.
    return StepStatus.EMPTY, None
