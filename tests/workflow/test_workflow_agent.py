"""A workflow offered to the real agent loop: the model sees each status and acts on it."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest

from toolfoundry.agent.loop import run_agent
from toolfoundry.agent.providers.base import Message, ToolCall, ToolChoice, Turn
from toolfoundry.foundry import Foundry
from toolfoundry.spec import ToolSpec

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "announce_workflow.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("announce_workflow_agent", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class Operator:
    """A scripted orchestrator: previews the announcement, then publishes when it is ready."""

    model_id = "scripted:operator"

    def __init__(self, **first: object) -> None:
        self.first = {"topic": "sandbox", **first}
        self.seen: list[dict[str, object]] = []

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        tool_choice: ToolChoice = "auto",
        max_tokens: int = 4096,
    ) -> Turn:
        assert "announce" in {t.name for t in tools}
        last = messages[-1]
        if last.role == "user":
            return self._call(self.first)
        seen = json.loads(last.content)
        self.seen.append({"step": seen["step"], "is_error": last.is_error})
        if seen["step"]["status"] == "ready":
            return self._call({"topic": "sandbox", "publish": True})
        return Turn(text=f"announce is {seen['step']['status']}")

    def _call(self, arguments: dict[str, object]) -> Turn:
        call = ToolCall(f"c{len(self.seen)}", "announce", arguments, json.dumps(arguments))
        return Turn(tool_calls=(call,))


def test_preview_then_publish(example: ModuleType, foundry: Foundry) -> None:
    board = example.Board("t")
    flow = example.build_announce(example.ARCHIVE, example.Feed(example.FEED), board)
    model = Operator()
    run = run_agent("announce the sandbox", model, foundry, tools=[flow], store=False)
    assert run.final_text == "announce is completed"
    assert [s["step"] for s in model.seen] == [
        {
            "status": "ready",
            "message": "stopped at publish_post: preconditions are met; "
            "the step was not asked to run",
        },
        {"status": "completed"},
    ]
    assert len(board.posts) == 1
    assert all("announce" in turn.offered for turn in run.turns)


def test_blocked_reaches_the_model_as_an_error(example: ModuleType, foundry: Foundry) -> None:
    board = example.Board("t")
    flow = example.build_announce(example.ARCHIVE, example.Feed(example.FEED), board)
    model = Operator(max_notes=0, max_feed_items=0, publish=True)
    run = run_agent("announce the sandbox", model, foundry, tools=[flow], store=False)
    assert run.final_text == "announce is blocked"
    (seen,) = model.seen
    assert seen["is_error"] is True
    assert seen["step"] == {
        "status": "blocked",
        "blockers": ["research_evidence_empty", "draft_post_blocked"],
        "message": "stopped at draft_post: preconditions not met; the step was not run",
    }
    value = json.loads(run.turns[0].outcomes[0].content)["value"]
    assert value["steps"]["search_feed"]["status"] == "skipped"
    assert board.posts == []


def test_unavailable_is_not_an_error(example: ModuleType, foundry: Foundry) -> None:
    flow = example.build_announce(example.ARCHIVE, example.Feed(example.FEED), example.Board(None))
    model = Operator(publish=True)
    run = run_agent("announce the sandbox", model, foundry, tools=[flow], store=False)
    (seen,) = model.seen
    assert seen["is_error"] is False
    assert seen["step"] == {
        "status": "unavailable",
        "message": "stopped at publish_post: missing dependency: board_session",
    }
    assert run.final_text == "announce is unavailable"
