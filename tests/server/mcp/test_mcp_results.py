"""How a CallResult becomes an MCP CallToolResult, and the meta-tools' annotations."""

from __future__ import annotations

import json

import mcp_types as types
import pytest
from tests.factories import error_of

from toolfoundry.foundry.meta_tools import builtin_tools
from toolfoundry.server.mcp.results import call_tool_result
from toolfoundry.server.mcp.server import meta_tool_entries
from toolfoundry.spec import CallResult, ErrorKind, Problem
from toolfoundry.spec.names import META_TOOL_NAMES

POINT = {
    "type": "object",
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "required": ["x", "y"],
}


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize(
    ("value", "structured"),
    [
        ({"x": 1, "y": 2}, {"x": 1, "y": 2}),
        ([1, "a"], {"result": [1, "a"]}),
        ("hé", {"result": "hé"}),
        (None, {"result": None}),
        (3.5, {"result": 3.5}),
    ],
)
def test_values_become_structured_content_and_json_text(value: object, structured: object) -> None:
    result = call_tool_result(CallResult.success(value, duration_ms=1.23456), None)
    assert result.is_error is False
    assert result.structured_content == structured
    assert json.loads(text(result)) == value
    assert result.meta == {"toolfoundry/duration_ms": 1.235}


def test_a_value_matching_the_output_schema_passes() -> None:
    result = call_tool_result(CallResult.success({"x": 1, "y": 2}), POINT)
    assert result.is_error is False


def test_a_value_contradicting_the_output_schema_is_a_runtime_error() -> None:
    result = call_tool_result(CallResult.success({"x": 1, "y": "two"}, logs=["hi"]), POINT)
    assert result.is_error is True
    assert text(result).startswith("runtime_error: the tool returned a value that does not")
    assert "$.y" in text(result)
    assert result.structured_content["error"]["kind"] == "runtime_error"
    assert result.meta is not None
    assert result.meta["toolfoundry/logs"] == ["hi"]


def test_failures_state_kind_message_problems_and_logs() -> None:
    failed = CallResult.failure(
        ErrorKind.INVALID_ARGUMENTS,
        "2 problem(s)",
        problems=[Problem("$.a", "'a' is a required property"), Problem("$.b", "not a number")],
        logs=["starting"],
    )
    result = call_tool_result(failed, POINT)  # the schema is not applied to failures
    assert result.is_error is True
    assert text(result).splitlines() == [
        "invalid_arguments: 2 problem(s)",
        "- $.a: 'a' is a required property",
        "- $.b: not a number",
        "console output:",
        "  starting",
    ]
    assert result.structured_content == {"error": error_of(failed).to_dict()}


def test_meta_tools_that_change_the_registry_are_not_read_only() -> None:
    entries = {e["name"]: e for e in meta_tool_entries({t.spec.name: t for t in builtin_tools()})}
    assert list(entries) == list(META_TOOL_NAMES)
    for name in ("create_tool", "rollback_tool"):
        assert entries[name]["annotations"]["readOnlyHint"] is False
        assert entries[name]["annotations"]["destructiveHint"] is False
    for name in ("search_tools", "tool_history", "show_tool"):
        assert entries[name]["annotations"]["readOnlyHint"] is True
    # call_tool, and run_js through its `tools`, do what the tools they call do: maybe fetch,
    # maybe overwrite storage
    for name in ("call_tool", "run_js"):
        assert entries[name]["annotations"]["readOnlyHint"] is False
        assert entries[name]["annotations"]["destructiveHint"] is True
        assert entries[name]["annotations"]["openWorldHint"] is True
    for entry in entries.values():
        types.Tool.model_validate(entry)  # every entry is a valid MCP Tool
