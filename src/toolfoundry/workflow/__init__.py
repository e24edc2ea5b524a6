"""Deterministic workflows: ordered steps over shared state, each reporting one of six statuses.

A workflow is code, not a plan: its order and dependencies are fixed, and each step says why
it did or did not advance (``completed``, ``empty``, ``ready``, ``skipped``, ``unavailable``,
``blocked`` with blockers), so the orchestrating model can pick the right degradation path.
A :class:`Workflow` is itself a tool of level ``workflow``.
"""

from toolfoundry.workflow.definition import Workflow, WorkflowArgumentsError, workflow
from toolfoundry.workflow.result import WorkflowResult
from toolfoundry.workflow.step import Step, WorkflowDeclarationError

__all__ = [
    "Step",
    "Workflow",
    "WorkflowArgumentsError",
    "WorkflowDeclarationError",
    "WorkflowResult",
    "workflow",
]
