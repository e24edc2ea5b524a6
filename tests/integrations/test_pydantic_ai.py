"""Pydantic AI's own agent loop over a FoundryToolset, driven by its offline FunctionModel."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from tests.integrations.drafts import BAD_ARGUMENTS, word_count_draft
from tests.shared_drafts import network_draft

from toolfoundry import Foundry
from toolfoundry.integrations.pydantic_ai import FoundryToolset


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """The tool results the model was sent in the last request."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return [p for p in last.parts if isinstance(p, ToolReturnPart)]


def test_a_tool_made_in_a_run_is_called_in_the_same_run(fd: Foundry, recorded: Any) -> None:
    seen: list[list[str]] = []
    results: list[ToolReturnPart] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append([t.name for t in info.function_tools])
        step = len(seen)
        if step > 1:
            results.extend(returns(messages))
        if step == 1:
            return ModelResponse(parts=[ToolCallPart("create_tool", word_count_draft(), "c1")])
        if step == 2:
            return ModelResponse(parts=[ToolCallPart("word_count", {"text": "a b c d"}, "c2")])
        if step == 3:
            return ModelResponse(parts=[ToolCallPart("word_count", BAD_ARGUMENTS, "c3")])
        return ModelResponse(parts=[TextPart("four words")])

    agent = Agent(FunctionModel(model), toolsets=[FoundryToolset(fd)])
    run = agent.run_sync("count the words of 'a b c d'")

    assert run.output == "four words"
    assert "word_count" not in seen[0]
    assert "create_tool" in seen[0]
    assert "word_count" in seen[1]  # re-read at the next step of the same run
    created, counted, refused = results
    assert isinstance(created.content, dict)
    assert created.content["status"] == "active"
    assert counted.content == 4
    # invalid arguments come back as Pydantic AI's retry: a tool error the model can fix
    assert refused.outcome == "retried"
    assert '"kind": "invalid_arguments"' in str(refused.content)
    assert '"path": "$.text"' in str(refused.content)
    usage = fd.usage("word_count")
    assert usage.calls == 2
    assert usage.failures == {"invalid_arguments": 1}
    ids = [s.attributes.get("gen_ai.tool.call.id") for s in recorded.finished()]
    assert {"c1", "c2", "c3"} <= set(ids)  # the framework's call ids label the spans


def test_the_offered_schema_is_the_tools_own(fd: Foundry) -> None:
    fd.create_tool(word_count_draft())
    offered: dict[str, Any] = {}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.update({t.name: t.parameters_json_schema for t in info.function_tools})
        return ModelResponse(parts=[TextPart("ok")])

    Agent(FunctionModel(model), toolsets=[FoundryToolset(fd)]).run_sync("hi")
    assert offered["word_count"] == fd.show("word_count").spec.parameters


def test_a_failing_call_is_a_terminal_tool_failure(fd: Foundry) -> None:
    draft = word_count_draft()
    draft.update(
        name="thrower",
        code=(
            "export function handler({ text }) {\n"
            "  if (text === 'x') throw new Error('boom');\n"
            "  return 1;\n"
            "}\n"
        ),
        tests=[{"input": {"text": "a"}, "expected": 1}],
    )
    assert fd.create_tool(draft).status == "active"
    got: list[ToolReturnPart] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("thrower", {"text": "x"})])
        got.extend(returns(messages))
        return ModelResponse(parts=[TextPart("it failed")])

    Agent(FunctionModel(model), toolsets=[FoundryToolset(fd)]).run_sync("go")
    (failed,) = got
    assert failed.outcome == "failed"
    assert '"kind": "runtime_error"' in str(failed.content)
    assert "boom" in str(failed.content)


def risky_model(draft: dict[str, Any]) -> FunctionModel:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("create_tool", draft, "risky")])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(model)


def test_a_risky_tool_waits_for_pydantic_ais_approval_then_is_approved_by_name(
    fd: Foundry,
) -> None:
    draft = network_draft("weather", "api.example.com")
    agent = Agent(
        risky_model(draft), toolsets=[FoundryToolset(fd)], output_type=[str, DeferredToolRequests]
    )
    first = agent.run_sync("what is the weather in Oslo")

    assert isinstance(first.output, DeferredToolRequests)
    (asked,) = first.output.approvals
    assert asked.tool_name == "create_tool"
    assert "network" in first.output.metadata["risky"]["reasons"][0]
    assert fd.tools() == []  # nothing is created before the human decides

    resumed = agent.run_sync(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(
            approvals={"risky": True}, metadata={"risky": {"approved_by": "alice"}}
        ),
    )
    assert resumed.output == "done"
    version = fd.show("weather")
    assert version.status.value == "active"
    assert fd.audit("weather")[-1].actor == "alice"


def test_a_denied_risky_tool_is_never_created(fd: Foundry) -> None:
    agent = Agent(
        risky_model(network_draft("weather", "api.example.com")),
        toolsets=[FoundryToolset(fd)],
        output_type=[str, DeferredToolRequests],
    )
    first = agent.run_sync("weather")
    agent.run_sync(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"risky": ToolDenied("not today")}),
    )
    assert fd.tools() == []


def test_without_framework_approval_the_version_waits_for_the_foundrys_review(
    fd: Foundry,
) -> None:
    agent = Agent(
        risky_model(network_draft("weather", "api.example.com")),
        toolsets=[FoundryToolset(fd, approval=False)],
    )
    assert agent.run_sync("weather").output == "done"
    (pending,) = fd.pending()
    assert pending.name == "weather"
