"""Statuses: the six a workflow step (or any foundry operation) reports to a model, and the
four of a tool version."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NotRequired

from typing_extensions import TypedDict


class StepStatus(StrEnum):
    """Why a step did or did not advance, so the orchestrating model can pick a path.

    - ``completed``: the step did its work and produced data.
    - ``empty``: the step ran correctly but found nothing (not an error: widen the query or stop).
    - ``ready``: preconditions are met; the step can run when asked (nothing was done yet).
    - ``skipped``: the operator configured the step off (e.g. a cap of 0); leave it alone.
    - ``unavailable``: a dependency is missing or down (no session, service error); route around.
    - ``blocked``: preconditions failed; ``blockers`` says which input to go back and gather.
    """

    COMPLETED = "completed"
    EMPTY = "empty"
    READY = "ready"
    SKIPPED = "skipped"
    UNAVAILABLE = "unavailable"
    BLOCKED = "blocked"


class StepJson(TypedDict):
    """A step's JSON form (``blockers`` only when blocked, the rest only when set)."""

    status: str
    blockers: NotRequired[list[str]]
    message: NotRequired[str]
    data: NotRequired[Any]
    details: NotRequired[dict[str, Any]]


@dataclass(frozen=True)
class StepResult:
    """Outcome of one step: a status, the blockers when blocked, and the data produced."""

    status: StepStatus
    data: Any = None
    blockers: tuple[str, ...] = ()
    message: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", StepStatus(self.status))
        object.__setattr__(self, "blockers", tuple(self.blockers))
        if self.status is StepStatus.BLOCKED and not self.blockers:
            raise ValueError("a blocked step must name at least one blocker")
        if self.status is not StepStatus.BLOCKED and self.blockers:
            raise ValueError(f"only a blocked step has blockers (status is {self.status})")

    def to_dict(self) -> StepJson:
        """JSON-ready form; ``blockers`` appears only when blocked."""
        out: StepJson = {"status": self.status.value}
        if self.blockers:
            out["blockers"] = list(self.blockers)
        if self.message:
            out["message"] = self.message
        if self.data is not None:
            out["data"] = self.data
        if self.details:
            out["details"] = dict(self.details)
        return out


class VersionStatus(StrEnum):
    """The lifecycle of one tool version; the forge's verdict and the registry's stored status.

    - ``pending_approval``: tests passed; a human must approve its capabilities.
    - ``active``: callable (at most one version per tool is current).
    - ``rejected``: refused by the forge (never stored) or by a reviewer.
    - ``disabled``: switched off by an operator; ``enable`` makes it active again.
    """

    PENDING_APPROVAL = "pending_approval"
    ACTIVE = "active"
    REJECTED = "rejected"
    DISABLED = "disabled"
