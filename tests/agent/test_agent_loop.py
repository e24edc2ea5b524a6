"""The loop's rules: limits, top-k retrieval, approval, stored transcripts."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from toolfoundry.agent import (
    ApprovalDecision,
    ApprovalRequest,
    RunStore,
    StopReason,
    approve_as,
    defer,
    run_agent,
)
from toolfoundry.foundry import Foundry
from toolfoundry.spec.names import META_TOOL_NAMES

from .conftest import answer, calls

if TYPE_CHECKING:
    from tests.agent.conftest import VendorServer

NETWORK_DRAFT = {
    "name": "fx_rate",
    "description": "Euro exchange rate of a currency, from the rates service.",
    "parameters": {
        "type": "object",
        "properties": {"currency": {"type": "string"}},
        "required": ["currency"],
    },
    "code": (
        "export async function handler({ currency }) {\n"
        "  const r = await fetch(`https://rates.example/v1/${currency}`);\n"
        "  return (await r.json()).rate;\n}\n"
    ),
    "capabilities": {"network": ["rates.example"]},
    "fixtures": [{"url": "https://rates.example/v1/USD", "status": 200, "body": '{"rate": 1.08}'}],
    "tests": [{"input": {"currency": "USD"}, "expected": 1.08}],
}

LIBRARY = [  # name, description, expression of x, a test input, its expected output
    (
        "celsius_to_fahrenheit",
        "Convert a temperature from Celsius to Fahrenheit.",
        "x * 9 / 5 + 32",
        100,
        212,
    ),
    (
        "fahrenheit_to_celsius",
        "Convert a temperature from Fahrenheit to Celsius.",
        "(x - 32) * 5 / 9",
        212,
        100,
    ),
    ("kelvin_to_celsius", "Convert a temperature from Kelvin to Celsius.", "x - 273", 273, 0),
    (
        "word_count",
        "Count the words of a text passage.",
        "String(x).split(/\\s+/).length",
        "a b",
        2,
    ),
    (
        "reverse_text",
        "Reverse the characters of a text string.",
        "[...String(x)].reverse().join('')",
        "ab",
        "ba",
    ),
]


def offered(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body["tools"]}


def test_max_turns_stops_a_model_that_never_answers(vendor: VendorServer, foundry: Foundry) -> None:
    vendor.play(*[calls("openai", ("add", {"a": i, "b": 1})) for i in range(5)])
    run = run_agent("loop forever", vendor.provider("openai"), foundry, max_turns=2)

    assert run.stop_reason is StopReason.MAX_TURNS
    assert "2 turns" in run.stop_message
    assert len(vendor.requests) == 2
    assert len(run.turns) == 2
    assert foundry.usage("add").calls == 2  # both turns' calls ran


def test_token_budget_counts_usage_from_the_wire_and_bounds_each_turn(
    vendor: VendorServer, foundry: Foundry
) -> None:
    # every tool-call answer reports 82 prompt + 17 completion tokens (wire fixture)
    vendor.play(*[calls("openai", ("add", {"a": 1, "b": 1})) for _ in range(5)])
    run = run_agent("spend", vendor.provider("openai"), foundry, max_tokens=150, turn_tokens=4096)

    assert run.stop_reason is StopReason.MAX_TOKENS
    assert (run.input_tokens, run.output_tokens) == (164, 34)
    assert len(vendor.requests) == 2
    # the second turn may only use what is left of the budget
    assert vendor.bodies()[1]["max_completion_tokens"] == 150 - 99


def test_wall_time_limit_is_checked_before_each_turn(
    vendor: VendorServer, foundry: Foundry
) -> None:
    run = run_agent("anything", vendor.provider("openai"), foundry, max_seconds=0)
    assert run.stop_reason is StopReason.MAX_SECONDS
    assert vendor.requests == []


def test_large_library_offers_top_k_for_the_task_then_what_search_tools_found(
    vendor: VendorServer, foundry: Foundry
) -> None:
    for name, description, expression, example, expected in LIBRARY:
        result = foundry.create_tool(
            {
                "name": name,
                "description": description,
                "parameters": {"type": "object", "properties": {"x": {}}, "required": ["x"]},
                "code": f"export function handler({{ x }}) {{ return {expression}; }}",
                "tests": [{"input": {"x": example}, "expected": expected}],
            }
        )
        assert result.status == "active", result.to_dict()
    vendor.play(
        calls("openai", ("search_tools", {"query": "reverse text", "k": 1})),
        calls("openai", ("reverse_text", {"x": "abc"})),
        answer("openai", "cba"),
    )
    run = run_agent("convert 20 celsius to fahrenheit", vendor.provider("openai"), foundry, top_k=2)

    assert run.stop_reason is StopReason.COMPLETED
    meta = set(META_TOOL_NAMES)
    first, second, _ = vendor.bodies()
    first_registry = offered(first) - meta
    assert len(first_registry) == 2
    assert "celsius_to_fahrenheit" in first_registry
    assert "reverse_text" not in first_registry
    assert meta <= offered(first)
    assert "reverse_text" in offered(second)  # found by search_tools, offered next turn
    assert run.turns[1].outcomes[0].result["value"] == "cba"


def test_pending_tool_is_approved_by_the_callback_and_offered_next_turn(
    vendor: VendorServer, foundry: Foundry
) -> None:
    seen: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> ApprovalDecision:
        seen.append(request)
        return approve_as("alice", "read-only GET")(request)

    vendor.play(
        calls("openai", ("create_tool", NETWORK_DRAFT)),
        answer("openai", "fx_rate is ready"),
    )
    run = run_agent("euro rate tool", vendor.provider("openai"), foundry, approval=approver)

    assert run.stop_reason is StopReason.COMPLETED
    [request] = seen
    assert (request.name, request.version) == ("fx_rate", 1)
    assert request.capabilities["network"] == ["rates.example"]
    assert "fetch(" in request.code
    assert foundry.show("fx_rate").status.value == "active"
    assert [a.approver for a in foundry.registry.approvals("fx_rate")] == ["alice"]
    [result] = [m for m in vendor.bodies()[1]["messages"] if m["role"] == "tool"]
    content = json.loads(result["content"])
    assert content["ok"] is True
    assert content["value"]["status"] == "active"
    assert content["value"]["approval"]["by"] == "alice"
    assert "fx_rate" in offered(vendor.bodies()[1])
    assert run.created == ["fx_rate v1"]


def test_deferred_approval_leaves_the_version_pending_and_tells_the_model(
    vendor: VendorServer, foundry: Foundry
) -> None:
    vendor.play(calls("anthropic", ("create_tool", NETWORK_DRAFT)), answer("anthropic", "ok"))
    run = run_agent("euro rate tool", vendor.provider("anthropic"), foundry, approval=defer)

    assert run.stop_reason is StopReason.COMPLETED
    assert foundry.show("fx_rate").status.value == "pending_approval"
    [block] = [
        b
        for m in vendor.bodies()[1]["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert block["is_error"] is False  # nothing for the model to repair
    content = json.loads(block["content"])
    assert content["step"]["blockers"] == ["awaiting_approval"]
    assert "human" in content["value"]["note"]
    assert "fx_rate" not in {t["name"] for t in vendor.bodies()[1]["tools"]}
    assert run.created == []


def test_every_turn_is_stored_with_the_run(vendor: VendorServer, foundry: Foundry) -> None:
    vendor.play(
        calls("openai", ("add", {"a": 1, "b": 2}), text="adding"),
        calls("openai", ("no_such_tool", {})),
        answer("openai", "done"),
    )
    run = run_agent("store me", vendor.provider("openai"), foundry)

    stored = RunStore(foundry.registry).get(run.id)
    assert stored is not None
    assert stored == json.loads(json.dumps(run.to_dict()))
    assert stored["model"] == "openai:test-model"
    assert stored["stop_reason"] == "completed"
    assert [len(t["tool_calls"]) for t in stored["turns"]] == [1, 1, 0]
    assert stored["turns"][0]["text"] == "adding"
    assert stored["turns"][0]["tool_calls"][0]["result"]["value"] == 3
    missing = stored["turns"][1]["tool_calls"][0]
    assert missing["is_error"] is True
    assert missing["result"]["error"]["kind"] == "not_found"
    assert stored["usage"] == {"input_tokens": 82 * 2 + 120, "output_tokens": 17 * 2 + 9}
    [summary] = RunStore(foundry.registry).recent()
    assert summary["id"] == run.id
    assert summary["turns"] == 3


def test_unreadable_arguments_are_reported_not_guessed(
    vendor: VendorServer, foundry: Foundry
) -> None:
    broken = calls("openai", ("add", {}))
    broken["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"a": 1, "b":'
    vendor.play(broken, answer("openai", "sorry"))
    run = run_agent("add", vendor.provider("openai"), foundry)

    [outcome] = run.turns[0].outcomes
    assert outcome.is_error
    assert outcome.result["error"]["kind"] == "invalid_arguments"
    assert "not a JSON object" in outcome.result["error"]["message"]
    # the history sent back keeps what the model wrote
    sent = vendor.bodies()[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert sent == '{"a": 1, "b":'
    assert foundry.usage("add").calls == 0


@pytest.mark.postgres
def test_a_replayed_session_runs_and_is_stored_on_postgresql(pg_url: str) -> None:
    from toolfoundry.agent import provider_for
    from toolfoundry.foundry import Foundry

    provider = provider_for("replay:demo#create")
    task = provider.recording.sessions["create"]["task"]  # type: ignore[attr-defined]
    with Foundry.open(pg_url) as fd:
        run = run_agent(task, provider, fd)
        assert run.stop_reason is StopReason.COMPLETED, run.stop_message
        assert run.created == ["slugify v1"]
        stored = RunStore(fd.registry).get(run.id)
        assert stored is not None
        assert len(stored["turns"]) == 5
        assert stored["turns"][1]["tool_calls"][0]["result"]["step"]["blockers"] == ["tests_failed"]
        assert fd.usage("slugify").calls == 2


@pytest.mark.parametrize("kind", ["openai", "openai-responses", "anthropic"])
def test_an_answer_cut_at_the_turn_limit_is_not_reported_as_completed(
    kind: str, vendor: VendorServer, foundry: Foundry
) -> None:
    cut = answer(kind, "The answer is")
    if kind == "openai":
        cut["choices"][0]["finish_reason"] = "length"
    elif kind == "openai-responses":
        cut["status"] = "incomplete"
        cut["incomplete_details"] = {"reason": "max_output_tokens"}
    else:
        cut["stop_reason"] = "max_tokens"
    vendor.play(cut)
    run = run_agent("long", vendor.provider(kind), foundry, turn_tokens=5)

    assert run.stop_reason is StopReason.MAX_TOKENS
    assert "cut at 5 output tokens" in run.stop_message
    assert run.final_text == "The answer is"


def test_declared_python_tools_are_offered_and_called_next_to_the_registry(
    vendor: VendorServer, foundry: Foundry
) -> None:
    from toolfoundry.declare import from_function

    def shout(text: str, times: int = 1) -> str:
        """Upper-case a text and repeat it.

        Args:
            text: what to shout.
            times: how many times.
        """
        return " ".join([text.upper()] * times)

    declared = from_function(shout)
    vendor.play(
        calls("openai", ("shout", {"text": "hey", "times": 2}), ("shout", {"text": 3})),
        answer("openai", "HEY HEY"),
    )
    run = run_agent("shout", vendor.provider("openai"), foundry, tools=[declared])

    first, second = vendor.bodies()
    assert [m["role"] for m in second["messages"]][-2:] == ["tool", "tool"]
    shout_tool = next(t for t in first["tools"] if t["function"]["name"] == "shout")
    assert shout_tool["function"]["description"].startswith("Upper-case a text")
    ok, bad = run.turns[0].outcomes
    assert ok.result["value"] == "HEY HEY"
    assert bad.is_error
    assert bad.result["error"]["kind"] == "invalid_arguments"
    assert run.stop_reason is StopReason.COMPLETED
