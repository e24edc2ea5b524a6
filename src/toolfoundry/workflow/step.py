"""One workflow step: a plain function over the shared state, and the gates in front of it.

The gates are evaluated in a fixed order, and the step function runs only when all pass:

1. ``cap``: a configuration cap of 0 means the operator turned the step off -> ``skipped``.
2. ``needs``: dependencies such as a platform session; a missing one -> ``unavailable``.
3. ``after`` and ``requires``: earlier steps that must have completed, and preconditions on
   the state; every failing one is named -> ``blocked`` with those blockers.
4. ``run_if``: false means the step is ``ready`` but was not asked to run (a preview).
5. The function itself; exceptions of a kind listed in ``unavailable_on`` -> ``unavailable``.
   Any other exception propagates: it is a bug, not a degradation path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from toolfoundry.spec import StepResult, StepStatus

S = TypeVar("S")

Check = Callable[[S], bool]
Cap = str | Callable[[S], int | None]


class WorkflowDeclarationError(ValueError):
    """A workflow or step declared in a way the runner cannot honour."""


@dataclass(frozen=True)
class Step(Generic[S]):
    """A declared step. Build it with :meth:`toolfoundry.workflow.Workflow.step`.

    Attributes:
        name: the step's name in results (``research``, ``publish_post``).
        run: the step function; takes the shared state, returns a StepResult.
        cap: a state attribute (or mapping key) holding a count cap, or a function of the
            state returning it; ``0`` skips the step, ``None`` means no cap.
        needs: dependency name -> check; a failing check makes the step ``unavailable``.
        requires: blocker name -> check; every failing check is reported as a blocker.
        after: earlier steps that must have ``completed``; otherwise the blocker is
            ``<step>_<status>`` (e.g. ``research_empty``).
        unavailable_on: exception kinds that mean a dependency failed (``unavailable``).
        run_if: when given and false, a step whose gates all pass is reported ``ready``.
    """

    name: str
    run: Callable[[S], StepResult]
    cap: Cap[S] | None = None
    needs: Mapping[str, Check[S]] = field(default_factory=dict)
    requires: Mapping[str, Check[S]] = field(default_factory=dict)
    after: tuple[str, ...] = ()
    unavailable_on: tuple[type[Exception], ...] = ()
    run_if: Check[S] | None = None

    def summary(self) -> str:
        """The step and its gates in a few words, for the workflow's description."""
        notes = []
        if isinstance(self.cap, str):
            notes.append(f"skipped when {self.cap} is 0")
        elif self.cap is not None:
            notes.append("capped")
        if self.needs:
            notes.append(f"needs {', '.join(self.needs)}")
        blockers = [f"{a}_<status>" for a in self.after] + list(self.requires)
        if blockers:
            notes.append(f"blocked by {', '.join(blockers)}")
        if self.run_if is not None:
            notes.append("ready until asked to run")
        return self.name + (f" ({'; '.join(notes)})" if notes else "")

    def evaluate(
        self,
        state: S,
        earlier: Mapping[str, StepResult],
        unavailable_on: tuple[type[Exception], ...] = (),
    ) -> StepResult:
        """Pass the gates in order and run the step when they all pass.

        Args:
            state: the workflow's shared state.
            earlier: results of the steps that already ran, by name.
            unavailable_on: the workflow's exception kinds, added to the step's own.

        Raises:
            Exception: whatever the step (or a check) raised, when it is not of a kind
                listed in ``unavailable_on``; the note names the step.
        """
        kinds = self.unavailable_on + unavailable_on
        try:
            return self._evaluate(state, earlier)
        except kinds as exc:
            return StepResult(
                StepStatus.UNAVAILABLE,
                message=f"{type(exc).__name__}: {exc}",
                details={"error": type(exc).__name__},
            )
        except Exception as exc:
            exc.add_note(f"raised in workflow step {self.name!r}")
            raise

    def _evaluate(self, state: S, earlier: Mapping[str, StepResult]) -> StepResult:
        cap = self._cap_value(state)
        if cap == 0:
            label = self.cap if isinstance(self.cap, str) else "cap"
            return StepResult(
                StepStatus.SKIPPED,
                message=f"{label} is 0: the operator turned this step off",
                details={"cap": label},
            )
        missing = [name for name, check in self.needs.items() if not check(state)]
        blockers = [
            f"{name}_{earlier[name].status.value}"
            for name in self.after
            if earlier[name].status is not StepStatus.COMPLETED
        ]
        blockers += [name for name, check in self.requires.items() if not check(state)]
        if missing:
            details: dict[str, Any] = {"missing": missing}
            if blockers:
                details["also_blocked_by"] = blockers
            return StepResult(
                StepStatus.UNAVAILABLE,
                message=f"missing dependency: {', '.join(missing)}",
                details=details,
            )
        if blockers:
            return StepResult(
                StepStatus.BLOCKED,
                blockers=tuple(blockers),
                message="preconditions not met; the step was not run",
            )
        if self.run_if is not None and not self.run_if(state):
            return StepResult(
                StepStatus.READY, message="preconditions are met; the step was not asked to run"
            )
        result = self.run(state)
        if not isinstance(result, StepResult):
            raise TypeError(
                f"workflow step {self.name!r} returned {type(result).__name__}; "
                "a step must return a toolfoundry.spec.StepResult"
            )
        return result

    def _cap_value(self, state: S) -> int | None:
        if self.cap is None:
            return None
        if isinstance(self.cap, str):
            value = state[self.cap] if isinstance(state, Mapping) else getattr(state, self.cap)
        else:
            value = self.cap(state)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise WorkflowDeclarationError(
                f"step {self.name!r}: its cap must be a non-negative integer or None, got {value!r}"
            )
        return value
