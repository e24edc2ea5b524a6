"""The deferred projections (Anthropic ``defer_loading`` with its tool search tool, OpenAI
Responses ``tool_search``) and ``input_examples`` taken from a registry tool's passing tests,
through Foundry.catalog as a user renders them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolfoundry import Foundry
from toolfoundry.catalog import render
from toolfoundry.spec import ToolSpec
from toolfoundry.spec.tool import MAX_EXAMPLES

CODE = (
    "export function handler({ text, times = 1 }) {\n"
    "  if (!text) throw new Error('empty text');\n"
    "  return text.repeat(times);\n"
    "}\n"
)
PARAMS = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
    "required": ["text"],
}


def draft(tests: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": "repeat",
        "description": "Repeat a text.",
        "parameters": PARAMS,
        "code": CODE,
        "tests": tests,
    }


def test_input_examples_are_the_passing_tests_arguments(tmp_path: Path) -> None:
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd:
        tests = [
            {"input": {"text": ""}, "error": "empty"},  # an error case is no example
            *({"input": {"text": "ab", "times": n}, "expected": "ab" * n} for n in range(1, 6)),
        ]
        assert fd.create_tool(draft(tests)).status == "active"
        tool = json.loads(fd.catalog("anthropic"))[0]
        assert tool["input_examples"] == [{"text": "ab", "times": n} for n in (1, 2, 3)]
        assert "defer_loading" not in tool
        deferred = json.loads(fd.catalog("anthropic-deferred"))
        assert deferred[0] == {
            "type": "tool_search_tool_bm25_20251119",
            "name": "tool_search_tool_bm25",
        }
        assert deferred[1]["defer_loading"] is True
        assert deferred[1]["input_examples"] == tool["input_examples"]
        responses = json.loads(fd.catalog("responses-deferred"))
        assert responses[0] == {"type": "tool_search"}
        assert responses[1]["type"] == "function"
        assert responses[1]["defer_loading"] is True
        assert "input_examples" not in responses[1]  # OpenAI has no such field
        # the MCP listing's narrow read carries none (it has no use for them)
        assert fd.active_specs()[0].examples == []


def test_an_example_too_long_for_a_catalogue_is_left_out(tmp_path: Path) -> None:
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd:
        long = "x" * 2000
        tests = [
            {"input": {"text": long}, "expected": long},
            {"input": {"text": "a"}, "expected": "a"},
        ]
        assert fd.create_tool(draft(tests)).status == "active"
        assert json.loads(fd.catalog("anthropic"))[0]["input_examples"] == [{"text": "a"}]


def test_a_spec_holds_at_most_three_example_objects() -> None:
    spec = ToolSpec("t", "A tool.", PARAMS, examples=[{"text": "a"}])
    assert spec.examples == [{"text": "a"}]
    assert spec.replace(description="Another.").examples == [{"text": "a"}]
    assert spec.to_dict()["examples"] == [{"text": "a"}]
    assert "examples" not in ToolSpec("t", "A tool.", PARAMS).to_dict()
    with pytest.raises(ValueError, match="at most 3"):
        ToolSpec("t", "A tool.", PARAMS, examples=[{"text": "a"}] * (MAX_EXAMPLES + 1))
    with pytest.raises(ValueError, match="argument objects"):
        ToolSpec("t", "A tool.", PARAMS, examples=["text"])  # type: ignore[list-item]


def test_the_deferred_forms_defer_every_tool_and_change_nothing_else() -> None:
    specs = [ToolSpec("a_tool", "A.", PARAMS), ToolSpec("b_tool", "B.", PARAMS)]
    plain = json.loads(render("anthropic", specs))
    deferred = json.loads(render("anthropic-deferred", specs))[1:]
    assert [{k: v for k, v in t.items() if k != "defer_loading"} for t in deferred] == plain
    plain = json.loads(render("responses", specs))
    deferred = json.loads(render("responses-deferred", specs))[1:]
    assert [{k: v for k, v in t.items() if k != "defer_loading"} for t in deferred] == plain
