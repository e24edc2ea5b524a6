"""The framework-neutral half of the adapters: what is offered, how calls run and fail."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.integrations.drafts import word_count_draft
from tests.shared_drafts import network_draft

from toolfoundry import Foundry, tool
from toolfoundry.foundry.meta_tools import builtin_tools
from toolfoundry.integrations.bridge import FoundryBridge


@tool
def shout(text: str) -> str:
    """Say a text louder.

    Args:
        text: what to say.
    """
    return text.upper()


def test_offers_every_meta_tool_then_declared_then_active_registry_tools(fd: Foundry) -> None:
    fd.create_tool(word_count_draft())
    fd.create_tool(network_draft("weather", "api.example.com"))  # pending: not offered
    names = [s.name for s in FoundryBridge(fd, [shout]).specs()]
    meta = [t.spec.name for t in builtin_tools(fd)]
    assert names == [*meta, "shout", "word_count"]


def test_two_offered_tools_with_one_name_are_refused(fd: Foundry) -> None:
    with pytest.raises(ValueError, match="shout"):
        FoundryBridge(fd, [shout, shout])


@pytest.mark.parametrize("args", [[1, 2], "text", None, 3.5])
def test_arguments_that_are_not_an_object_are_invalid_for_every_kind_of_tool(
    fd: Foundry, args: Any
) -> None:
    fd.create_tool(word_count_draft())
    bridge = FoundryBridge(fd, [shout])
    for name in ("word_count", "shout", "search_tools"):
        answer = bridge.call(name, args)
        assert answer.is_error
        assert answer.kind == "invalid_arguments"
        assert '"kind": "invalid_arguments"' in answer.error_text()


def test_hostile_strings_and_deep_nesting_come_back_as_values_or_structured_errors(
    fd: Foundry,
) -> None:
    fd.create_tool(word_count_draft())
    bridge = FoundryBridge(fd)
    lone = bridge.call("word_count", {"text": "\ud800 \udfff"})
    assert lone.value == 2 or lone.kind == "invalid_arguments"  # never a crash
    deep = json.loads("[" * 900 + "]" * 900)  # as deep as a model's JSON can nest
    answer = bridge.call("word_count", {"text": deep})
    assert answer.is_error
    assert answer.kind == "invalid_arguments"
    huge = bridge.call("search_tools", {"query": "a", "k": 10**400})
    assert huge.kind == "invalid_arguments"


def test_a_rejected_draft_is_a_tool_error_a_pending_one_is_not(fd: Foundry) -> None:
    bridge = FoundryBridge(fd)
    broken = word_count_draft()
    broken["tests"] = [{"input": {"text": "a"}, "expected": 2}]
    refused = bridge.call("create_tool", broken)
    assert refused.is_error
    assert refused.kind == "tests_failed"
    waiting = bridge.call("create_tool", network_draft("weather", "api.example.com"))
    assert not waiting.is_error
    assert waiting.value["status"] == "pending_approval"


def test_approval_reasons_come_from_the_foundrys_policy(fd: Foundry) -> None:
    bridge = FoundryBridge(fd)
    assert bridge.approval_reasons("create_tool", word_count_draft()) == ()
    (reason,) = bridge.approval_reasons("create_tool", network_draft("w", "api.example.com"))
    assert "api.example.com" in reason
    assert bridge.approval_reasons("create_tool", {"capabilities": {"bogus": 1}}) == ()
    assert bridge.approval_reasons("word_count", network_draft("w", "api.example.com")) == ()


def test_an_approved_create_is_active_at_once_in_the_approvers_name(fd: Foundry) -> None:
    answer = FoundryBridge(fd).call(
        "create_tool", network_draft("weather", "api.example.com"), approved_by="alice"
    )
    assert answer.value["status"] == "active"
    assert answer.value["approval"] == {"action": "approve", "by": "alice"}
    assert fd.audit("weather")[-1].actor == "alice"
