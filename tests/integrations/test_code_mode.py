"""Code mode through each framework adapter: the model's one run_js call runs a snippet whose
`tools` reaches the registry's tools; only the aggregate comes back, with the run's id, and
the inner calls are audited with the run as their caller."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest
from tests.integrations.drafts import user_says, word_count_draft

from toolfoundry import Foundry

SNIPPET = """export async function handler({ texts }) {
  let total = 0;
  for (const text of texts) total += await tools.word_count({ text });
  return { total };
}"""
ARGS = {"code": SNIPPET, "args": {"texts": ["a b", "c d e", "f"]}}


def check(fd: Foundry, answer: Any) -> None:
    """The run answered the aggregate and its id; each inner call names the run."""
    out = json.loads(answer) if isinstance(answer, str) else answer
    assert out["value"] == {"total": 6}, out
    rows = [a for a in fd.audit("word_count") if a.event.value == "called"]
    assert [r.caller for r in rows] == [f"run:{out['run_id']}"] * 3
    assert fd.usage("word_count").callers == {"run_js": 3}


@pytest.fixture
def counted(fd: Foundry) -> Foundry:
    assert fd.create_tool(word_count_draft()).status == "active"
    return fd


def test_pydantic_ai(counted: Foundry) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from toolfoundry.integrations.pydantic_ai import FoundryToolset

    returned: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            returned.extend(p.content for p in last.parts if isinstance(p, ToolReturnPart))
        if not returned:
            return ModelResponse(parts=[ToolCallPart("run_js", ARGS, "c1")])
        return ModelResponse(parts=[TextPart("six")])

    agent = Agent(FunctionModel(model), toolsets=[FoundryToolset(counted)])
    assert agent.run_sync("count the words").output == "six"
    check(counted, returned[0])


def test_openai_agents(counted: Foundry) -> None:
    pytest.importorskip("agents")
    from agents import Agent, RunConfig, Runner
    from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

    from toolfoundry.integrations.openai_agents import foundry_tools

    outputs: dict[str, str] = {}

    def respond(output: list[Any]) -> Any:
        def answer(call: ModelCall) -> list[Any]:
            for item in call.input if isinstance(call.input, list) else []:
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    outputs[item["call_id"]] = item["output"]
            return output

        return answer

    model = ScriptedModel(
        [
            ModelStep.respond(respond([function_call("run_js", ARGS, call_id="c1")])),
            ModelStep.respond(respond([assistant_message("six")])),
        ]
    )
    agent = Agent(name="coder", model=model, tools=[*foundry_tools(counted)])
    result = Runner.run_sync(agent, "count the words", run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == "six"
    check(counted, outputs["c1"])


def test_langchain(counted: Foundry) -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, ToolMessage
    from tests.integrations.test_langchain import scripted

    from toolfoundry.integrations.langchain import FoundryMiddleware

    model = scripted(
        AIMessage(content="", tool_calls=[{"name": "run_js", "args": ARGS, "id": "c1"}]),
        AIMessage(content="six"),
    )
    agent = create_agent(model, middleware=[FoundryMiddleware(counted)])
    state = agent.invoke(user_says("count the words"))
    assert state["messages"][-1].content == "six"
    [message] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    check(counted, str(message.content))


def test_smolagents(counted: Foundry) -> None:
    pytest.importorskip("smolagents")
    from smolagents.memory import ActionStep  # type: ignore[import-untyped]
    from tests.integrations.test_smolagents import run

    agent, _model = run(counted, ("run_js", ARGS))
    [ran, _final] = [s for s in agent.memory.steps if isinstance(s, ActionStep)]
    # smolagents shows a dict observation as its repr
    check(counted, ast.literal_eval(str(ran.observations)))
