"""Who decides on a tool that asks for risky capabilities during a run.

The loop calls an :data:`Approver` when ``create_tool`` leaves a version pending. A terminal
asks the person at the keyboard (``toolfoundry agent --ask``); a server defers, leaving the
version pending for the review page; tests and the demo approve in the name of someone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from toolfoundry.spec.capabilities import CapabilitiesJson


@dataclass(frozen=True)
class ApprovalRequest:
    """A pending version and what a reviewer needs to judge it."""

    name: str
    version: int
    description: str
    capabilities: CapabilitiesJson
    code: str
    findings: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ApprovalDecision:
    """``approve``, ``reject`` (with a reason) or ``defer`` (leave it pending)."""

    action: Literal["approve", "reject", "defer"]
    by: str = ""
    reason: str = ""


Approver = Callable[[ApprovalRequest], ApprovalDecision]


def defer(_request: ApprovalRequest) -> ApprovalDecision:
    """Leave every pending version for a human to review later (servers, non-interactive runs)."""
    return ApprovalDecision("defer")


def approve_as(by: str, reason: str = "auto-approved") -> Approver:
    """An approver that approves everything in ``by``'s name (tests, demos, trusted setups)."""

    def decide(_request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision("approve", by=by, reason=reason)

    return decide
