"""The scorer is structural and discriminates: correct scores 100%, naive and silent score low."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from toolfoundry.agent.evaluation import (
    ModelSelectionError,
    Scenario,
    ScriptedProvider,
    evaluate_degradation,
    load_scenarios,
    scenario_messages,
    score_turn,
    select_model,
)
from toolfoundry.agent.evaluation.actions import action_specs
from toolfoundry.agent.providers.base import Message, ToolCall, ToolChoice, Turn
from toolfoundry.spec import ToolSpec


def scenario(scenario_id: str) -> Scenario:
    return next(s for s in load_scenarios() if s.id == scenario_id)


def turn(*calls: tuple[str, object]) -> Turn:
    return Turn(
        tool_calls=tuple(
            ToolCall(f"c{i}", name, args if isinstance(args, dict) else None, json.dumps(args))
            for i, (name, args) in enumerate(calls)
        )
    )


def test_correct_model_scores_every_status() -> None:
    report = evaluate_degradation(select_model("scripted:correct"))
    assert report.overall.share == 1.0
    assert {k: v.share for k, v in report.by_status().items()} == {
        "blocked": 1.0,
        "skipped": 1.0,
        "unavailable": 1.0,
        "empty": 1.0,
    }
    assert report.model == "scripted:correct"


def test_naive_model_that_retries_skipped_and_forces_blocked_scores_low() -> None:
    report = evaluate_degradation(select_model("scripted:naive"))
    shares = {k: v.share for k, v in report.by_status().items()}
    assert shares["skipped"] == 0.0
    assert shares["blocked"] == 0.0
    assert shares["unavailable"] == 0.0
    assert report.overall.share <= 0.3
    retried = [v for v in report.verdicts if v.action == "retry_step"]
    assert retried
    assert all(v.outcome == "wrong_action" for v in retried)


def test_silent_model_scores_nothing() -> None:
    report = evaluate_degradation(select_model("scripted:silent"))
    assert report.overall.correct == 0
    assert {v.outcome for v in report.verdicts} == {"no_action"}


def test_prompt_carries_describe_json_and_the_response() -> None:
    chosen = scenario("creative-blocked-evidence-empty")
    system, user = scenario_messages(chosen)
    assert system.role == "system"
    blocks = user.content.split("```json\n")
    catalog = json.loads(blocks[1].split("\n```")[0])
    response = json.loads(blocks[2].split("\n```")[0])
    assert catalog["workflow_count"] == 1
    assert catalog["tool_count"] == len(chosen.catalog)
    assert response["steps"]["seedance_generation"]["blockers"] == ["research_evidence_empty"]
    assert chosen.task in user.content


def test_structural_scoring() -> None:
    chosen = scenario("creative-blocked-evidence-empty")
    right = score_turn(chosen, turn(("gather_input", {"blocker": " Research_Evidence_Empty "})))
    assert right.outcome == "correct"
    assert score_turn(chosen, turn(("gather_input", {"blocker": "brief_missing"}))).outcome == (
        "wrong_action"
    )
    forced = score_turn(chosen, turn(("retry_step", {"step": "seedance_generation"})))
    assert (forced.outcome, forced.action) == ("wrong_action", "retry_step")
    unknown = score_turn(chosen, turn(("submit_anyway", {})))
    assert unknown.outcome == "invalid_action"
    assert "unknown action" in unknown.detail
    missing = score_turn(chosen, turn(("gather_input", {})))
    assert missing.outcome == "invalid_action"
    assert "blocker" in missing.detail
    unparsed = score_turn(chosen, turn(("gather_input", "not an object")))
    assert unparsed.outcome == "invalid_action"
    silent = score_turn(chosen, Turn(text="I would gather evidence."))
    assert (silent.outcome, silent.detail) == ("no_action", "I would gather evidence.")
    # the first call is the answer
    first = turn(("retry_step", {"step": "top_ads"}), ("gather_input", {"blocker": "x"}))
    assert score_turn(chosen, first).outcome == "wrong_action"


def test_offered_tools_are_the_next_actions() -> None:
    names = [s.name for s in action_specs()]
    assert names == [
        "gather_input",
        "leave_step",
        "route_around",
        "request_session",
        "retry_step",
        "widen_query",
        "stop",
    ]
    for spec in action_specs():
        assert spec.description
        assert spec.parameters["type"] == "object"


class Flaky:
    """A provider whose calls fail the way a vendor API can."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.calls = 0

    @property
    def model_id(self) -> str:
        return "flaky:model"

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        tool_choice: ToolChoice = "auto",
        max_tokens: int = 4096,
    ) -> Turn:
        self.calls += 1
        error = RuntimeError("503 from the vendor")
        error.kind = self.kind  # type: ignore[attr-defined]
        raise error


def test_provider_failures_are_scored_and_configuration_errors_stop() -> None:
    scenarios = load_scenarios()[:3]
    flaky = Flaky("api")
    report = evaluate_degradation(flaky, scenarios)
    assert flaky.calls == 3
    assert [v.outcome for v in report.verdicts] == ["provider_error"] * 3
    assert "503" in report.verdicts[0].detail
    with pytest.raises(RuntimeError, match="503"):
        evaluate_degradation(Flaky("configuration"), scenarios)


def test_model_selection() -> None:
    assert isinstance(select_model("scripted:naive"), ScriptedProvider)
    with pytest.raises(ModelSelectionError, match="scripted:correct"):
        select_model("scripted:clever")
    with pytest.raises(ModelSelectionError, match="provider:model"):
        select_model("gpt-4o")
