"""Each adapter through its official SDK over HTTP, against a server speaking the vendor's wire.

Assertions are on what the server RECEIVED (tool lists, tool results, ids, flags), not only on
what the loop returns.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from toolfoundry.agent import StopReason, run_agent
from toolfoundry.catalog import anthropic_tools, openai_chat_tools, openai_responses_tools
from toolfoundry.foundry import Foundry
from toolfoundry.foundry.meta_tools import builtin_tools

from .conftest import DOUBLE_DRAFT, KINDS, answer, calls

if TYPE_CHECKING:
    from tests.agent.conftest import VendorServer


def tool_names(kind: str, body: dict[str, Any]) -> list[str]:
    tools = body.get("tools", [])
    if kind in ("openai", "compat"):
        return sorted(t["function"]["name"] for t in tools)
    return sorted(t["name"] for t in tools)


def tool_results(kind: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results in a request, as {id, content, is_error} in order."""
    if kind in ("openai", "compat"):
        return [
            {"id": m["tool_call_id"], "content": json.loads(m["content"])}
            for m in body["messages"]
            if m["role"] == "tool"
        ]
    if kind == "openai-responses":
        return [
            {"id": i["call_id"], "content": json.loads(i["output"])}
            for i in body["input"]
            if i.get("type") == "function_call_output"
        ]
    return [
        {"id": b["tool_use_id"], "content": json.loads(b["content"]), "is_error": b["is_error"]}
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    ]


def test_openai_chat_single_call_sends_the_catalog_projection_and_the_tool_result(
    vendor: VendorServer, foundry: Foundry
) -> None:
    vendor.play(calls("openai", ("add", {"a": 2, "b": 40})), answer("openai", "42"))
    run = run_agent("add 2 and 40", vendor.provider("openai"), foundry)

    assert run.stop_reason is StopReason.COMPLETED
    assert run.final_text == "42"
    first, second = vendor.bodies()
    assert [r["path"] for r in vendor.requests] == ["/v1/chat/completions"] * 2
    specs = [*foundry.active_specs(), *(t.spec for t in builtin_tools(foundry))]
    assert first["tools"] == openai_chat_tools(specs)  # from the catalog, never re-derived
    assert first["tool_choice"] == "auto"
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][1] == {"role": "user", "content": "add 2 and 40"}
    assert vendor.requests[0]["headers"]["authorization"] == "Bearer test-key"
    assistant = second["messages"][2]
    call_id = assistant["tool_calls"][0]["id"]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "add",
        "arguments": json.dumps({"a": 2, "b": 40}),
    }
    [result] = tool_results("openai", second)
    assert result["id"] == call_id
    assert result["content"]["ok"] is True
    assert result["content"]["value"] == 42


def test_openai_chat_parallel_calls_answer_each_id_in_order(
    vendor: VendorServer, foundry: Foundry
) -> None:
    vendor.play(
        calls("openai", ("add", {"a": 1, "b": 1}), ("add", {"a": 10, "b": 20, "c": 3})),
        answer("openai", "2 and 33"),
    )
    run = run_agent("two sums", vendor.provider("openai"), foundry)

    assert run.stop_reason is StopReason.COMPLETED
    sent_ids = [c["id"] for c in vendor.bodies()[1]["messages"][2]["tool_calls"]]
    results = tool_results("openai", vendor.bodies()[1])
    assert [r["id"] for r in results] == sent_ids
    assert len(set(sent_ids)) == 2
    assert [r["content"]["value"] for r in results] == [2, 33]


def test_openai_strict_nulls_for_optional_arguments_are_restored(
    vendor: VendorServer, foundry: Foundry
) -> None:
    # strict mode makes `c` required-but-nullable; a model writing null means "left out"
    vendor.play(calls("openai", ("add", {"a": 1, "b": 2, "c": None})), answer("openai", "3"))
    run_agent("1+2", vendor.provider("openai"), foundry)

    add = next(t for t in vendor.bodies()[0]["tools"] if t["function"]["name"] == "add")
    assert add["function"]["strict"] is True
    assert "null" in json.dumps(add["function"]["parameters"]["properties"]["c"])
    [result] = tool_results("openai", vendor.bodies()[1])
    assert result["content"]["value"] == 3


@pytest.mark.parametrize("kind", KINDS)
def test_tool_errors_go_back_structured_so_the_model_can_repair(
    kind: str, vendor: VendorServer, foundry: Foundry
) -> None:
    vendor.play(
        calls(kind, ("add", {"a": "two", "b": 2})),
        calls(kind, ("add", {"a": 2, "b": 2})),
        answer(kind, "4"),
    )
    run = run_agent("add two and 2", vendor.provider(kind), foundry)

    assert run.stop_reason is StopReason.COMPLETED
    [failed] = tool_results(kind, vendor.bodies()[1])
    content = failed["content"]
    assert content["ok"] is False
    assert content["error"]["kind"] == "invalid_arguments"
    assert content["error"]["problems"][0]["path"] == "$.a"
    assert content["step"] == {
        "status": "blocked",
        "blockers": ["invalid_arguments"],
        "message": content["error"]["message"],
    }
    if kind == "anthropic":
        assert failed["is_error"] is True
    repaired = tool_results(kind, vendor.bodies()[2])[-1]
    assert repaired["content"]["value"] == 4
    if kind == "anthropic":
        assert repaired["is_error"] is False
    assert run.turns[0].outcomes[0].is_error
    assert not run.turns[1].outcomes[0].is_error


def test_responses_sends_items_back_with_store_false(
    vendor: VendorServer, foundry: Foundry
) -> None:
    vendor.play(
        calls("openai-responses", ("add", {"a": 5, "b": 6}), ("add", {"a": 1, "b": 0})),
        answer("openai-responses", "11 and 1"),
    )
    run = run_agent("sums", vendor.provider("openai-responses"), foundry)

    assert run.final_text == "11 and 1"
    first, second = vendor.bodies()
    assert [r["path"] for r in vendor.requests] == ["/v1/responses"] * 2
    assert first["store"] is False
    assert second["store"] is False
    assert "previous_response_id" not in second
    assert first["instructions"].startswith("You work with a tool foundry")
    specs = [*foundry.active_specs(), *(t.spec for t in builtin_tools(foundry))]
    assert first["tools"] == openai_responses_tools(specs)
    assert first["input"] == [{"type": "message", "role": "user", "content": "sums"}]
    # reasoning items are not sent back: with store=false the API cannot resolve their ids
    assert all(i["type"] != "reasoning" for i in second["input"])
    assert all("id" not in i for i in second["input"])
    sent_calls = [i for i in second["input"] if i["type"] == "function_call"]
    outputs = tool_results("openai-responses", second)
    assert [c["call_id"] for c in sent_calls] == [o["id"] for o in outputs]
    assert [o["content"]["value"] for o in outputs] == [11, 1]


def test_anthropic_system_apart_tool_choice_and_results_merged_in_one_user_turn(
    vendor: VendorServer, foundry: Foundry
) -> None:
    vendor.play(
        calls("anthropic", ("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4}), text="Adding."),
        answer("anthropic", "3 and 7"),
    )
    run = run_agent("sums", vendor.provider("anthropic"), foundry)

    assert run.final_text == "3 and 7"
    first, second = vendor.bodies()
    assert [r["path"] for r in vendor.requests] == ["/v1/messages"] * 2
    headers = vendor.requests[0]["headers"]
    assert "anthropic-version" in headers
    # the SDK sends the key as x-api-key or, in recent versions, as a bearer token
    assert "test-key" in (headers.get("x-api-key", ""), headers.get("authorization", "")[7:])
    assert first["system"].startswith("You work with a tool foundry")
    assert first["tool_choice"] == {"type": "auto"}
    specs = [*foundry.active_specs(), *(t.spec for t in builtin_tools(foundry))]
    assert first["tools"] == anthropic_tools(specs)
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assistant = second["messages"][1]["content"]
    assert assistant[0] == {"type": "text", "text": "Adding."}
    uses = [b["id"] for b in assistant if b["type"] == "tool_use"]
    results = tool_results("anthropic", second)
    assert [r["id"] for r in results] == uses
    assert [r["content"]["value"] for r in results] == [3, 7]


def test_compat_tolerates_object_arguments_missing_ids_and_types(
    vendor: VendorServer, foundry: Foundry
) -> None:
    def play_once() -> list[str]:
        vendor.requests.clear()
        vendor.play(
            calls("compat", ("add", {"a": 7, "b": 8}), ("add", {"a": 7, "b": 8})),
            answer("compat", "15 twice"),
        )
        run = run_agent("7+8 twice", vendor.provider("compat", "llama3.1"), foundry)
        assert run.stop_reason is StopReason.COMPLETED
        return [r["id"] for r in tool_results("compat", vendor.bodies()[1])]

    first_ids = play_once()
    first, second = vendor.bodies()
    assert "max_tokens" in first
    assert "max_completion_tokens" not in first
    assert all(t["function"]["strict"] is False for t in first["tools"])
    sent = second["messages"][2]["tool_calls"]
    assert [c["type"] for c in sent] == ["function", "function"]
    assert json.loads(sent[0]["function"]["arguments"]) == {"a": 7, "b": 8}
    assert [c["id"] for c in sent] == first_ids
    assert len(set(first_ids)) == 2  # two identical calls still get distinct ids
    assert all(r["content"]["value"] == 15 for r in tool_results("compat", second))
    assert play_once() == first_ids  # synthesised ids are stable


@pytest.mark.parametrize("kind", KINDS)
def test_same_task_through_every_vendor_creates_a_tool_and_calls_it_next_turn(
    kind: str, vendor: VendorServer, foundry: Foundry
) -> None:
    """Switching vendor is one string: the same scripted task through all four kinds."""
    vendor.play(
        calls(kind, ("create_tool", DOUBLE_DRAFT), text="No tool doubles; writing one."),
        calls(kind, ("double", {"x": 21})),
        answer(kind, "42"),
    )
    run = run_agent("double 21", vendor.provider(kind), foundry)

    assert run.stop_reason is StopReason.COMPLETED, run.stop_message
    assert run.final_text == "42"
    assert run.created == ["double v1"]
    first, second, third = vendor.bodies()
    assert "double" not in tool_names(kind, first)
    assert "double" in tool_names(kind, second)  # offered from the next turn
    [created] = tool_results(kind, second)
    assert created["content"]["value"]["status"] == "active"
    [called] = tool_results(kind, third)[-1:]
    assert called["content"] == {"ok": True, "value": 42, "step": {"status": "completed"}}
    assert foundry.usage("double").calls == 1


def test_vendor_refusal_stops_the_run_with_a_clear_reason(
    vendor: VendorServer, foundry: Foundry
) -> None:
    from .conftest import wire

    vendor.play((400, wire("openai_error_400.json")))
    run = run_agent("anything", vendor.provider("openai"), foundry)

    assert run.stop_reason is StopReason.PROVIDER_ERROR
    assert "invalid_function_parameters" in run.stop_message or "400" in run.stop_message
    assert run.turns == []


@pytest.mark.parametrize(
    ("kind", "field", "wanted"),
    [
        ("openai", "tool_choice", "required"),
        ("openai-responses", "tool_choice", "required"),
        ("anthropic", "tool_choice", {"type": "any"}),
        ("compat", "tool_choice", "required"),
    ],
)
def test_tool_choice_is_translated_per_vendor(
    kind: str, field: str, wanted: str | dict[str, Any], vendor: VendorServer, foundry: Foundry
) -> None:
    from toolfoundry.agent.providers import Message

    vendor.play(answer(kind, "fine"))
    turn = vendor.provider(kind).complete(
        [Message("user", "hi")], foundry.active_specs(), tool_choice="required", max_tokens=77
    )
    assert turn.text == "fine"
    body = vendor.bodies()[0]
    assert body[field] == wanted
    token_field = {
        "openai": "max_completion_tokens",
        "openai-responses": "max_output_tokens",
        "anthropic": "max_tokens",
        "compat": "max_tokens",
    }[kind]
    assert body[token_field] == 77
    assert "system" not in body  # no system message, no system field
    assert "instructions" not in body


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("answer_", "error_kind", "says"),
    [
        ((500, {"error": {"type": "api_error", "message": "overloaded"}}), "api", "500"),
        (
            {"unexpected": "shape", "choices": "x", "output": 3, "content": 4},
            "protocol",
            "unreadable",
        ),
    ],
)
def test_every_vendor_tells_a_refusal_from_an_unreadable_answer(
    kind: str,
    answer_: dict[str, Any] | tuple[Any, ...],
    error_kind: str,
    says: str,
    vendor: VendorServer,
) -> None:
    from toolfoundry.agent.providers import Message, ProviderError

    vendor.play(answer_)
    provider = vendor.provider(kind)
    with pytest.raises(ProviderError) as caught:
        provider.complete([Message(role="user", content="hi")], [])

    assert caught.value.kind == error_kind
    assert says in str(caught.value)
    assert str(caught.value).startswith(provider.model_id)
