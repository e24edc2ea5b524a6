"""LangChain's create_agent (a LangGraph graph) over FoundryMiddleware, with a fake chat model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from tests.integrations.drafts import BAD_ARGUMENTS, user_says, word_count_draft
from tests.shared_drafts import network_draft

from toolfoundry import Foundry
from toolfoundry.integrations.langchain import FoundryMiddleware, foundry_tools


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, able to bind tools: it records what each call offered."""

    offered: list[list[str]] = []

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        self.offered.append([t.name if hasattr(t, "name") else t["name"] for t in tools])
        return self


def scripted(*turns: AIMessage) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter(turns), offered=[])


def call(name: str, args: Any, call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def tool_messages(messages: list[BaseMessage]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


def test_a_tool_made_in_a_run_is_called_in_the_same_run(fd: Foundry, recorded: Any) -> None:
    model = scripted(
        call("create_tool", word_count_draft(), "c1"),
        call("word_count", {"text": "a b c d"}, "c2"),
        call("word_count", BAD_ARGUMENTS, "c3"),
        AIMessage(content="four words"),
    )
    agent = create_agent(model, middleware=[FoundryMiddleware(fd)])
    state = agent.invoke(user_says("count the words of 'a b c d'"))

    assert state["messages"][-1].content == "four words"
    assert "word_count" not in model.offered[0]
    assert "word_count" in model.offered[1]  # offered at the next model call of the run
    results = tool_messages(state["messages"])
    assert json.loads(str(results["c1"].content))["status"] == "active"
    assert results["c2"].content == "4"
    assert results["c2"].status == "success"
    refused = results["c3"]
    assert refused.status == "error"  # LangChain's tool error
    error = json.loads(str(refused.content))["error"]
    assert error["kind"] == "invalid_arguments"
    assert error["problems"][0]["path"] == "$.text"
    usage = fd.usage("word_count")
    assert usage.calls == 2
    assert usage.failures == {"invalid_arguments": 1}
    ids = [s.attributes.get("gen_ai.tool.call.id") for s in recorded.finished()]
    assert {"c1", "c2", "c3"} <= set(ids)  # the model's call ids label the spans


def test_structured_tools_carry_the_tools_own_schema(fd: Foundry) -> None:
    fd.create_tool(word_count_draft())
    by_name = {t.name: t for t in foundry_tools(fd)}
    assert by_name["word_count"].args_schema == fd.show("word_count").spec.parameters
    message = by_name["word_count"].invoke(
        {"type": "tool_call", "name": "word_count", "id": "x", "args": {"text": "\ud800 b"}}
    )
    assert isinstance(message, ToolMessage)
    # a lone surrogate: counted, or refused as invalid_arguments, as a ToolMessage either way
    assert message.content == "2" or '"invalid_arguments"' in str(message.content)


def risky_agent(fd: Foundry, *turns: AIMessage) -> Any:
    return create_agent(
        scripted(*turns), middleware=[FoundryMiddleware(fd)], checkpointer=InMemorySaver()
    )


def test_a_risky_tool_interrupts_the_graph_then_is_approved_by_name(fd: Foundry) -> None:
    agent = risky_agent(
        fd,
        call("create_tool", network_draft("weather", "api.example.com"), "r1"),
        AIMessage(content="made it"),
    )
    thread = {"configurable": {"thread_id": "t1"}}

    async def run() -> dict[str, Any]:
        first = await agent.ainvoke({"messages": [("user", "weather in Oslo")]}, thread)
        (paused,) = first["__interrupt__"]
        assert paused.value["name"] == "weather"
        assert "network" in paused.value["reasons"][0]
        assert fd.tools() == []  # nothing is created before the human decides
        resume: Command[Any] = Command(resume={"type": "approve", "by": "alice"})
        resumed: dict[str, Any] = await agent.ainvoke(resume, thread)
        return resumed

    state = asyncio.run(run())
    assert state["messages"][-1].content == "made it"
    assert fd.show("weather").status.value == "active"
    assert fd.audit("weather")[-1].actor == "alice"


def test_a_rejected_risky_tool_is_never_created(fd: Foundry) -> None:
    agent = risky_agent(
        fd,
        call("create_tool", network_draft("weather", "api.example.com"), "r1"),
        AIMessage(content="fine"),
    )
    thread = {"configurable": {"thread_id": "t2"}}
    agent.invoke(user_says("weather"), thread)
    state = agent.invoke(Command(resume={"type": "reject", "message": "not today"}), thread)
    rejected = tool_messages(state["messages"])["r1"]
    assert rejected.status == "error"
    assert "not today" in str(rejected.content)
    assert fd.tools() == []


def test_outside_a_graph_a_risky_version_waits_for_the_foundrys_review(fd: Foundry) -> None:
    create = next(t for t in foundry_tools(fd) if t.name == "create_tool")
    out = json.loads(create.invoke(network_draft("weather", "api.example.com")))
    assert out["status"] == "pending_approval"
    assert [v.name for v in fd.pending()] == ["weather"]


def test_a_graph_without_checkpointer_leaves_a_risky_version_to_the_foundrys_review(
    fd: Foundry,
) -> None:
    model = scripted(
        call("create_tool", network_draft("weather", "api.example.com"), "r1"),
        AIMessage(content="waiting"),
    )
    state = create_agent(model, middleware=[FoundryMiddleware(fd)]).invoke(user_says("weather"))
    created = json.loads(str(tool_messages(state["messages"])["r1"].content))
    assert created["status"] == "pending_approval"
    assert [v.name for v in fd.pending()] == ["weather"]
