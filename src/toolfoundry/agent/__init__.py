"""The agent side: vendors behind one interface, and the loop that makes and reuses tools."""

from toolfoundry.agent.approval import (
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    approve_as,
    defer,
)
from toolfoundry.agent.loop import SYSTEM_PROMPT, AgentEvent, run_agent
from toolfoundry.agent.providers import Provider, ProviderError, provider_for
from toolfoundry.agent.transcript import AgentRun, RunStore, StopReason, ToolOutcome, TurnRecord

__all__ = [
    "SYSTEM_PROMPT",
    "AgentEvent",
    "AgentRun",
    "ApprovalDecision",
    "ApprovalRequest",
    "Approver",
    "Provider",
    "ProviderError",
    "RunStore",
    "StopReason",
    "ToolOutcome",
    "TurnRecord",
    "approve_as",
    "defer",
    "provider_for",
    "run_agent",
]
