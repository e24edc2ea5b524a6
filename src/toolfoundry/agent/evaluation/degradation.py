"""The degradation-path evaluation: does a model pick the right next action for each status?

For every scenario the model gets the task, the catalog as describe JSON and one workflow
response, and is offered only the next-action tools (:mod:`.actions`). Its first tool call is
the answer; scoring is structural: the action's name and the values of the arguments that
matter (the step, the blocker, the alternative tool) against the scenario's accepted answers.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from toolfoundry.agent.evaluation.actions import action_specs, validate_action
from toolfoundry.agent.evaluation.scenarios import SCORED_STATUSES, Scenario, load_scenarios
from toolfoundry.agent.providers.base import Message, Provider, Turn
from toolfoundry.catalog import describe

SYSTEM = (
    "You orchestrate tools for a user. A workflow tool has just returned the response shown. "
    "Decide the single best next action and take it by calling exactly one of the next-action "
    "tools offered to you. Name steps, blockers and tools exactly as they appear."
)
Outcome = Literal["correct", "wrong_action", "invalid_action", "no_action", "provider_error"]


def scenario_messages(scenario: Scenario) -> list[Message]:
    """The conversation one scenario sends: system rules, then task, catalog and response."""
    catalog = json.dumps(describe(scenario.catalog), indent=2, ensure_ascii=False)
    response = json.dumps(scenario.response.to_dict(), indent=2, ensure_ascii=False)
    user = (
        f"Task: {scenario.task}\n\n"
        f"Catalog of the tools available (describe JSON):\n```json\n{catalog}\n```\n\n"
        f"The workflow `{scenario.response.workflow}` returned:\n```json\n{response}\n```\n\n"
        "What is the next action? Call exactly one next-action tool."
    )
    return [Message("system", SYSTEM), Message("user", user)]


@dataclass(frozen=True)
class Verdict:
    """How one scenario was answered.

    Attributes:
        scenario: the scenario.
        outcome: ``correct``, ``wrong_action`` (a valid action that is not right here),
            ``invalid_action`` (unknown action or arguments that break its schema),
            ``no_action`` (no tool call) or ``provider_error`` (the model call failed).
        action: the action called, if any.
        arguments: its arguments, if any.
        detail: why an answer was invalid, or the provider's error.
        attempt: which repetition of the scenario this is (from 1).
    """

    scenario: Scenario
    outcome: Outcome
    action: str | None = None
    arguments: dict[str, Any] | None = None
    detail: str = ""
    attempt: int = 1

    @property
    def correct(self) -> bool:
        return self.outcome == "correct"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.scenario.id,
            "status": self.scenario.status.value,
            "expected": self.scenario.expected,
            "outcome": self.outcome,
            "correct": self.correct,
            "action": self.action,
            "arguments": self.arguments,
            "detail": self.detail,
            "attempt": self.attempt,
        }


def score_turn(scenario: Scenario, turn: Turn) -> Verdict:
    """Score the model's turn: its first tool call is its answer."""
    if not turn.tool_calls:
        return Verdict(scenario, "no_action", detail=turn.text[:200])
    call = turn.tool_calls[0]
    problem = validate_action(call.name, call.arguments)
    if problem is not None:
        return Verdict(scenario, "invalid_action", call.name, call.arguments, problem)
    arguments = dict(call.arguments or {})
    outcome: Outcome = "correct" if scenario.accepts(call.name, arguments) else "wrong_action"
    return Verdict(scenario, outcome, call.name, arguments)


@dataclass(frozen=True)
class Share:
    """Correct answers out of a number of scenarios."""

    correct: int
    total: int

    @property
    def share(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"correct": self.correct, "total": self.total, "share": round(self.share, 4)}


@dataclass(frozen=True)
class DegradationReport:
    """Every verdict of one model, with the shares per status and overall."""

    model: str
    verdicts: tuple[Verdict, ...]
    repeat: int = 1

    def by_status(self) -> dict[str, Share]:
        """Share of correct degradation paths for each scored status that has scenarios."""
        out: dict[str, Share] = {}
        for status in SCORED_STATUSES:
            mine = [v for v in self.verdicts if v.scenario.status.value == status]
            if mine:
                out[status] = Share(sum(v.correct for v in mine), len(mine))
        return out

    @property
    def overall(self) -> Share:
        return Share(sum(v.correct for v in self.verdicts), len(self.verdicts))

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``toolfoundry eval degradation --json`` prints."""
        return {
            "model": self.model,
            "repeat": self.repeat,
            "overall": self.overall.to_dict(),
            "by_status": {k: v.to_dict() for k, v in self.by_status().items()},
            "scenarios": [v.to_dict() for v in self.verdicts],
        }


def evaluate_degradation(
    provider: Provider, scenarios: Iterable[Scenario] | None = None, *, repeat: int = 1
) -> DegradationReport:
    """Ask ``provider`` for the next action in every scenario and score the answers.

    Args:
        provider: the model.
        scenarios: the scenarios (default: the shipped ones).
        repeat: how many times each scenario is asked; shares count every attempt, which
            measures how reliably a sampling model picks the right path.

    A failing model call is scored ``provider_error`` and the run goes on; a configuration
    error (missing key, unknown model) stops it, since every call would fail the same way.
    """
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    tools = action_specs()
    chosen = list(load_scenarios() if scenarios is None else scenarios)
    verdicts = []
    for attempt in range(1, repeat + 1):
        for scenario in chosen:
            try:
                messages = scenario_messages(scenario)
                turn = provider.complete(messages, tools, tool_choice="required")
            except Exception as exc:
                if getattr(exc, "kind", None) == "configuration":
                    raise
                detail = f"{exc}"[:300]
                verdicts.append(Verdict(scenario, "provider_error", detail=detail, attempt=attempt))
                continue
            verdict = score_turn(scenario, turn)
            verdicts.append(dataclasses.replace(verdict, attempt=attempt))
    return DegradationReport(provider.model_id, tuple(verdicts), repeat)
