"""smolagents' own ToolCallingAgent loop over FoundryTools, driven by a scripted Model."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("smolagents")

from smolagents import ToolCallingAgent  # type: ignore[import-untyped]
from smolagents.memory import ActionStep  # type: ignore[import-untyped]
from smolagents.models import (  # type: ignore[import-untyped]
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)
from tests.integrations.drafts import BAD_ARGUMENTS, TOO_SHORT, word_count_draft
from tests.shared_drafts import network_draft

from toolfoundry import Foundry
from toolfoundry.integrations.smolagents import FoundryTools, foundry_tools


class ScriptedModel(Model):  # type: ignore[misc]  # smolagents is untyped
    """A smolagents Model answering each step with the next scripted tool call."""

    def __init__(self, *calls: tuple[str, Any]) -> None:
        super().__init__(model_id="scripted")
        self.calls = list(calls)
        self.offered: list[list[str]] = []

    def generate(
        self,
        messages: list[ChatMessage],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, str] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        self.offered.append([t.name for t in tools_to_call_from or []])
        name, args = self.calls.pop(0)
        function = ChatMessageToolCallFunction(name=name, arguments=args)
        call = ChatMessageToolCall(
            function=function, id=f"call{len(self.offered)}", type="function"
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def run(fd: Foundry, *calls: tuple[str, Any]) -> tuple[ToolCallingAgent, ScriptedModel]:
    box = FoundryTools(fd)
    model = ScriptedModel(*calls, ("final_answer", {"answer": "done"}))
    agent = ToolCallingAgent(
        tools=box.tools(), model=model, step_callbacks=[box.refresh], verbosity_level=-1
    )
    assert agent.run("count the words") == "done"
    return agent, model


def steps(agent: ToolCallingAgent) -> list[ActionStep]:
    return [s for s in agent.memory.steps if isinstance(s, ActionStep)]


def test_a_tool_made_in_a_run_is_called_in_the_same_run(fd: Foundry) -> None:
    agent, model = run(
        fd,
        ("create_tool", word_count_draft()),
        ("word_count", {"text": "a b c d"}),
        ("word_count", TOO_SHORT),
        ("word_count", BAD_ARGUMENTS),
    )
    created, counted, short, mistyped, _final = steps(agent)

    assert "word_count" not in model.offered[0]
    assert "word_count" in model.offered[1]  # the step callback refreshed agent.tools
    assert "'status': 'active'" in str(created.observations)
    assert counted.observations == "4"
    # a schema violation reaches the foundry and comes back as the step's tool error
    assert short.error is not None
    failure = json.loads(str(short.error).split("FoundryToolError: ", 1)[1].split("\n")[0])
    assert failure["error"]["kind"] == "invalid_arguments"
    assert failure["error"]["problems"][0]["path"] == "$.text"
    # a wrong top-level type is caught by smolagents' own check first (never reaches us)
    assert mistyped.error is not None
    assert "should be 'string'" in str(mistyped.error)
    usage = fd.usage("word_count")
    assert usage.calls == 2
    assert usage.failures == {"invalid_arguments": 1}


def test_inputs_are_the_arguments_own_schemas(fd: Foundry) -> None:
    fd.create_tool(word_count_draft())
    (tool,) = [t for t in foundry_tools(fd) if t.name == "word_count"]
    assert tool.inputs == {"text": fd.show("word_count").spec.parameters["properties"]["text"]}
    create = next(t for t in foundry_tools(fd) if t.name == "create_tool")
    assert create.inputs["capabilities"]["nullable"] is True  # optional in the schema


def test_a_dashed_name_is_offered_under_an_identifier_and_called_by_its_own(
    fd: Foundry,
) -> None:
    draft = word_count_draft()
    draft["name"] = "count-words"
    assert fd.create_tool(draft).status == "active"
    agent, _ = run(fd, ("count_words", {"text": "x y"}))
    assert steps(agent)[0].observations == "2"
    assert fd.usage("count-words").calls == 1


def test_a_risky_version_waits_for_the_foundrys_review(fd: Foundry) -> None:
    agent, _ = run(fd, ("create_tool", network_draft("weather", "api.example.com")))
    assert "pending_approval" in str(steps(agent)[0].observations)
    assert [v.name for v in fd.pending()] == ["weather"]
