"""The meta-tools an agent or MCP client uses, called as tools (JSON in, CallResult out)."""

from __future__ import annotations

from typing import Any

import pytest

from toolfoundry.foundry import Foundry
from toolfoundry.foundry.meta_tools import builtin_tools
from toolfoundry.spec import DeclaredTool
from toolfoundry.spec.names import META_TOOL_NAMES

SLUG_V1 = """
export function handler({ text }) {
  return text.toLowerCase().trim().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}
"""


@pytest.fixture
def tools(foundry: Foundry) -> dict[str, DeclaredTool]:
    """The meta-tools over the shared foundry, by name."""
    return {t.spec.name: t for t in builtin_tools(foundry)}


def draft(code: str = SLUG_V1, **extra: Any) -> dict[str, Any]:
    return {
        "name": "slugify",
        "description": "Turn a title into a URL slug.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "code": code,
        "tests": [{"input": {"text": "Hello, World!"}, "expected": "hello-world"}],
        **extra,
    }


def test_names_and_levels(tools: dict[str, DeclaredTool]) -> None:
    assert tuple(tools) == META_TOOL_NAMES
    assert all(t.spec.capabilities.is_pure for t in tools.values())


def test_create_search_history_rollback_through_the_meta_tools(
    tools: dict[str, DeclaredTool],
) -> None:
    created = tools["create_tool"].call(draft()).unwrap()
    assert (created["status"], created["version"]) == ("active", 1)

    v2 = draft(SLUG_V1.replace('"-"', '"_"').replace("^-|-$", "^_|_$"))
    refused = tools["create_tool"].call(v2).unwrap()
    assert refused["status"] == "rejected"
    assert "tests_failed" in refused["step"]["blockers"] or "regression" in str(refused)

    hits = tools["search_tools"].call({"query": "slug for a title"}).unwrap()
    assert hits[0]["name"] == "slugify"

    history = tools["tool_history"].call({"name": "slugify"}).unwrap()
    assert [h["version"] for h in history] == [1]

    better = draft(SLUG_V1.replace("trim()", "trim().normalize('NFKD')"))
    assert tools["create_tool"].call(better).unwrap()["version"] == 2
    back = tools["rollback_tool"].call({"name": "slugify", "version": 1}).unwrap()
    assert (back["version"], back["current"]) == (1, True)


def test_create_tool_reports_bad_arguments_with_paths(tools: dict[str, DeclaredTool]) -> None:
    result = tools["create_tool"].call({"name": "x", "tests": "nope"})
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    paths = {p.path for p in result.error.problems}
    assert {"$.description", "$.tests"} <= paths
    # optional, as in every other door (draft_json.py): code may be a run (from_run)
    assert "$.parameters" not in paths
    assert "$.code" not in paths
    missing = tools["create_tool"].call({"name": "x", "description": "d"}).unwrap()
    assert missing["status"] == "rejected"
    codes = [f for f in missing["findings"] if f["path"] == "$.code"]
    assert "or from_run" in codes[0]["message"]


def test_run_js_is_sandboxed_and_reports_errors(tools: dict[str, DeclaredTool]) -> None:
    ok = tools["run_js"].call({"code": "export default 6 * 7"}).unwrap()
    assert ok["ok"] is True
    assert ok["value"] == 42
    # a failed run is a failed call (MCP: isError), with the console output kept
    code = "console.log('trying'); export default await fetch('https://example.com')"
    denied = tools["run_js"].call({"code": code})
    assert denied.error is not None
    assert denied.error.kind == "capability_denied"
    assert denied.logs == ("trying",)


def test_mcp_hints_say_which_meta_tools_change_the_registry() -> None:
    from toolfoundry.catalog import mcp_tools

    hints = {
        entry["name"]: entry["annotations"]["readOnlyHint"]
        for entry in mcp_tools(t.spec for t in builtin_tools())
    }
    assert hints == {
        "create_tool": False,
        "rollback_tool": False,
        "search_tools": True,
        "tool_history": True,
        "run_js": False,  # through `tools`, it does what the tools it calls do
        "show_tool": True,
        "call_tool": False,  # it does what the tool it calls does
    }


def test_out_of_range_numbers_are_argument_errors_not_crashes(
    tools: dict[str, DeclaredTool],
) -> None:
    for name, args in [
        ("rollback_tool", {"name": "slugify", "version": 10**30}),
        ("rollback_tool", {"name": "slugify", "version": 0}),
        ("search_tools", {"query": "x", "k": 10**30}),
    ]:
        result = tools[name].call(args)
        assert result.error is not None
        assert result.error.kind == "invalid_arguments", result.error


def test_show_tool_and_call_tool_through_the_python_api(tools: dict[str, DeclaredTool]) -> None:
    tools["create_tool"].call(draft()).unwrap()
    more = draft(
        SLUG_V1.replace("trim()", "trim().normalize('NFKD')"),
        tests=[{"name": "spaces", "input": {"text": "  a  b "}, "expected": "a-b"}],
    )
    assert tools["create_tool"].call(more).unwrap()["version"] == 2
    slug = tools["call_tool"].call({"name": "slugify", "arguments": {"text": "Hi There"}})
    assert slug.unwrap() == "hi-there"
    shown = tools["show_tool"].call({"name": "slugify"}).unwrap()
    assert shown["code"] == more["code"]
    suite = shown["suite"]["tests"]
    assert [(t["label"], t["input"]) for t in suite] == [
        ("v1:#0", {"text": "Hello, World!"}),
        ("spaces", {"text": "  a  b "}),
    ]
    assert shown["usage"]["calls"] == 1
    assert shown["last_error"] is None
    wrong = tools["call_tool"].call({"name": "slugify", "arguments": {"title": "x"}})
    assert wrong.error is not None
    assert wrong.error.kind == "invalid_arguments"  # slugify's own schema
    shown = tools["show_tool"].call({"name": "slugify"}).unwrap()
    assert shown["last_error"]["kind"] == "invalid_arguments"
    recursive = tools["call_tool"].call({"name": "show_tool", "arguments": {"name": "slugify"}})
    assert recursive.error is not None
    assert [p.path for p in recursive.error.problems] == ["$.name"]
