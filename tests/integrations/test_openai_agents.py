"""The OpenAI Agents SDK's own Runner over foundry_tools, driven by its offline ScriptedModel."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, FunctionTool, RunConfig, Runner
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from tests.integrations.drafts import BAD_ARGUMENTS, word_count_draft
from tests.shared_drafts import network_draft

from toolfoundry import Foundry
from toolfoundry.integrations.openai_agents import foundry_tools

OFFLINE = RunConfig(tracing_disabled=True)  # the SDK's own trace export needs OpenAI


class Script:
    """A ScriptedModel whose steps record what each model call was offered and sent."""

    def __init__(self, *outputs: list[Any]) -> None:
        self.offered: list[list[str]] = []
        self.outputs: dict[str, str] = {}
        self.model = ScriptedModel([ModelStep.respond(self._answer(o)) for o in outputs])

    def _answer(self, output: list[Any]) -> Any:
        def respond(call: ModelCall) -> list[Any]:
            self.offered.append([t.name for t in call.tools])
            for item in call.input if isinstance(call.input, list) else []:
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    self.outputs[item["call_id"]] = item["output"]
            return output

        return respond


def test_a_tool_made_in_a_run_is_called_in_the_same_run(fd: Foundry, recorded: Any) -> None:
    script = Script(
        [function_call("create_tool", word_count_draft(), call_id="c1")],
        [function_call("word_count", {"text": "a b c d"}, call_id="c2")],
        [function_call("word_count", BAD_ARGUMENTS, call_id="c3")],
        [assistant_message("four words")],
    )
    agent = Agent(name="builder", model=script.model, tools=[*foundry_tools(fd)])
    result = Runner.run_sync(agent, "count the words of 'a b c d'", run_config=OFFLINE)

    assert result.final_output == "four words"
    assert "word_count" not in script.offered[0]
    assert "word_count" in script.offered[1]  # Agent.tools refreshed for the next turn
    assert json.loads(script.outputs["c1"])["status"] == "active"
    assert script.outputs["c2"] == "4"
    refused = json.loads(script.outputs["c3"])  # the SDK's tool error: the output text
    assert refused["ok"] is False
    assert refused["error"]["kind"] == "invalid_arguments"
    assert refused["error"]["problems"][0]["path"] == "$.text"
    usage = fd.usage("word_count")
    assert usage.calls == 2
    assert usage.failures == {"invalid_arguments": 1}
    ids = [s.attributes.get("gen_ai.tool.call.id") for s in recorded.finished()]
    assert {"c1", "c2", "c3"} <= set(ids)  # the framework's call ids label the spans


def test_tools_keep_their_own_schema_and_other_tools_stay(fd: Foundry) -> None:
    fd.create_tool(word_count_draft())
    tools = foundry_tools(fd)
    by_name = {t.name: t for t in tools}
    assert by_name["word_count"].params_json_schema == fd.show("word_count").spec.parameters
    assert by_name["word_count"].strict_json_schema is False
    assert set(by_name) >= {"create_tool", "search_tools", "run_js"}

    other = FunctionTool(
        name="clock",
        description="The time.",
        params_json_schema={"type": "object", "properties": {}},
        on_invoke_tool=lambda ctx, raw: _noon(),
        strict_json_schema=False,
    )
    draft = word_count_draft()
    draft["name"] = "letters"
    draft["distinct_from"] = {"name": "word_count", "why": "a second name for it, on purpose"}
    script = Script([function_call("create_tool", draft, call_id="c1")], [assistant_message("ok")])
    agent = Agent(name="a", model=script.model, tools=[other, *tools])
    Runner.run_sync(agent, "go", run_config=OFFLINE)
    names = [t.name for t in agent.tools]
    assert names[0] == "clock"
    assert "letters" in names
    assert names.count("word_count") == 1
    # an unchanged spec keeps its FunctionTool object across refreshes
    assert next(t for t in agent.tools if t.name == "word_count") is by_name["word_count"]


async def _noon() -> str:
    return "12:00"


def test_a_risky_tool_waits_for_the_sdks_approval_then_is_approved_by_name(
    fd: Foundry,
) -> None:
    draft = network_draft("weather", "api.example.com")
    script = Script(
        [function_call("create_tool", draft, call_id="risky")], [assistant_message("made it")]
    )
    agent = Agent(
        name="builder", model=script.model, tools=[*foundry_tools(fd, approved_by="alice")]
    )
    first = Runner.run_sync(agent, "weather in Oslo", run_config=OFFLINE)

    (asked,) = first.interruptions
    assert asked.tool_name == "create_tool"
    assert fd.tools() == []  # nothing is created before the human decides
    state = first.to_state()
    state.approve(asked)
    resumed = Runner.run_sync(agent, state, run_config=OFFLINE)

    assert resumed.final_output == "made it"
    assert json.loads(script.outputs["risky"])["status"] == "active"
    assert fd.show("weather").status.value == "active"
    assert fd.audit("weather")[-1].actor == "alice"


def test_a_rejected_risky_tool_is_never_created(fd: Foundry) -> None:
    script = Script(
        [function_call("create_tool", network_draft("w", "api.example.com"), call_id="r")],
        [assistant_message("fine")],
    )
    agent = Agent(name="builder", model=script.model, tools=[*foundry_tools(fd)])
    first = Runner.run_sync(agent, "weather", run_config=OFFLINE)
    state = first.to_state()
    state.reject(first.interruptions[0], rejection_message="not today")
    Runner.run_sync(agent, state, run_config=OFFLINE)
    assert fd.tools() == []
    assert script.outputs["r"] == "not today"


def test_a_pure_create_needs_no_approval_and_unparseable_arguments_are_refused(
    fd: Foundry,
) -> None:
    script = Script(
        [function_call("create_tool", word_count_draft(), call_id="c1")],
        [function_call("word_count", "{not json", call_id="bad")],
        [assistant_message("ok")],
    )
    agent = Agent(name="builder", model=script.model, tools=[*foundry_tools(fd)])
    result = Runner.run_sync(agent, "go", run_config=OFFLINE)
    assert result.interruptions == []
    refused = json.loads(script.outputs["bad"])
    assert refused["error"]["kind"] == "invalid_arguments"
    assert fd.usage("word_count").failures == {"invalid_arguments": 1}
