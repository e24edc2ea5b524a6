"""Every rendered tool validates against the vendor SDK's own types and the format's rules,
and every schema is valid JSON Schema 2020-12."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from anthropic.types import ToolParam
from jsonschema import Draft202012Validator
from mcp.types import ListToolsResult, Tool
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter

from toolfoundry.catalog import (
    anthropic_tools,
    describe,
    gemini_function_declarations,
    mcp_tools,
    openai_chat_tools,
    openai_responses_tools,
    project,
    render,
)
from toolfoundry.catalog.openai_strict import FORMATS as STRICT_FORMATS
from toolfoundry.catalog.openai_strict import KEPT as STRICT_KEPT
from toolfoundry.spec import ToolSpec


def subschemas(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema object nested in ``schema`` (properties, items, anyOf, $defs, ...)."""
    if not isinstance(schema, dict):
        return
    yield schema
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            for sub in value.values():
                yield from subschemas(sub)
        elif key in ("items", "additionalProperties", "not"):
            yield from subschemas(value)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            for sub in value:
                yield from subschemas(sub)


def validated(adapter: TypeAdapter[Any], data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = adapter.validate_python(data)
    # fields the SDK types as Iterable (Anthropic's input_examples) validate lazily
    return {
        k: v if isinstance(v, dict | str) or not hasattr(v, "__iter__") else list(v)
        for k, v in result.items()
    }


def test_openai_chat_tools_match_sdk_types(specimens: list[ToolSpec]) -> None:
    tool_adapter = TypeAdapter(ChatCompletionFunctionToolParam)
    function_adapter = TypeAdapter(FunctionDefinition)
    for tool in openai_chat_tools(specimens):
        # TypedDict validation drops unknown keys, so equality also catches stray keys.
        assert validated(tool_adapter, tool) == tool
        assert validated(function_adapter, tool["function"]) == tool["function"]
        Draft202012Validator.check_schema(tool["function"]["parameters"])


def test_openai_responses_tools_match_sdk_types(specimens: list[ToolSpec]) -> None:
    adapter = TypeAdapter(FunctionToolParam)
    for tool in openai_responses_tools(specimens):
        assert validated(adapter, tool) == tool
        assert tool["type"] == "function"
        assert "function" not in tool
        Draft202012Validator.check_schema(tool["parameters"])


def test_strict_tools_follow_strict_mode_rules(specimens: list[ToolSpec]) -> None:
    tools = {t["function"]["name"]: t["function"] for t in openai_chat_tools(specimens)}
    strict = {n for n, f in tools.items() if f["strict"]}
    # open dicts, tuples and root anyOf cannot be strict; everything else must be
    assert sorted(set(tools) - strict) == ["create_record", "lookup_user", "publish_report"]
    allowed = STRICT_KEPT | {"properties", "items", "anyOf", "$defs", "additionalProperties"}
    for name in strict:
        for schema in subschemas(tools[name]["parameters"]):
            assert set(schema) <= allowed | {"format"}, (name, schema)
            assert schema.get("format", "date") in STRICT_FORMATS | {"date"}
            if schema.get("type") == "object" or "object" in schema.get("type", []):
                assert schema["additionalProperties"] is False
                assert schema["required"] == list(schema["properties"])
    slug = tools["slugify"]["parameters"]["properties"]
    assert slug["separator"] == {
        "type": ["string", "null"],
        "description": '(default: "-"; maxLength: 3)',
    }


def test_non_strict_request_keeps_schema_unchanged(specimens: list[ToolSpec]) -> None:
    for tool, spec in zip(
        openai_chat_tools(specimens, strict=False), sorted(specimens, key=_order), strict=True
    ):
        assert tool["function"]["strict"] is False
        expected = {k: v for k, v in spec.parameters.items() if k != "$schema"}
        assert tool["function"]["parameters"] == expected


def test_anthropic_tools_match_sdk_types(specimens: list[ToolSpec]) -> None:
    adapter = TypeAdapter(ToolParam)
    for tool in anthropic_tools(specimens):
        assert validated(adapter, tool) == tool
        schema = tool["input_schema"]
        assert schema["type"] == "object"
        assert not {"anyOf", "oneOf", "allOf"} & set(schema)
        Draft202012Validator.check_schema(schema)
    lookup = next(t for t in anthropic_tools(specimens) if t["name"] == "lookup_user")
    assert 'at least one of: [{"required": ["id"]}' in lookup["description"]


GEMINI_KEYS = {
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "anyOf",
    "default",
    "minProperties",
    "maxProperties",
}


def test_gemini_declarations_use_only_the_openapi_subset(specimens: list[ToolSpec]) -> None:
    declarations = gemini_function_declarations(specimens)
    assert [d["name"] for d in declarations] == sorted(
        (s.name for s in specimens), key=lambda n: _order(_by_name(specimens, n))
    )
    for declaration in declarations:
        assert set(declaration) <= {"name", "description", "parameters"}
        if "parameters" not in declaration:
            continue
        Draft202012Validator.check_schema(declaration["parameters"])
        for schema in subschemas(declaration["parameters"]):
            assert set(schema) <= GEMINI_KEYS, schema
            assert schema.get("type") in {None, "string", "number", "integer", "boolean"} | {
                "array",
                "object",
            }
            assert all(isinstance(v, str) for v in schema.get("enum", []))
    tree = next(d for d in declarations if d["name"] == "tree_sum")
    cut = tree["parameters"]["properties"]["root"]["properties"]["children"]["items"]
    assert cut["type"] == "object"
    assert "recursive" in cut["description"]
    boards = next(d for d in declarations if d["name"] == "list_boards")
    assert "parameters" not in boards


def test_mcp_entries_match_sdk_types(specimens: list[ToolSpec]) -> None:
    listing = project("mcp", specimens)
    result = ListToolsResult.model_validate(listing)
    assert [t.name for t in result.tools] == [t["name"] for t in mcp_tools(specimens)]
    for entry in listing["tools"]:
        tool = Tool.model_validate(entry)
        assert tool.model_dump(by_alias=True, exclude_none=True) == entry
        Draft202012Validator.check_schema(entry["inputSchema"])
        if "outputSchema" in entry:
            Draft202012Validator.check_schema(entry["outputSchema"])
    by_name = {e["name"]: e for e in listing["tools"]}
    assert by_name["slugify"]["annotations"]["readOnlyHint"] is True
    assert by_name["fetch_weather"]["annotations"] == {
        "title": "Fetch weather",
        "readOnlyHint": False,
        "openWorldHint": True,
    }
    assert by_name["fetch_weather"]["outputSchema"]["properties"]["temperature"]
    # a string is not an object: it is declared as the structured content carries it
    assert by_name["slugify"]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "string"}},
        "required": ["result"],
        "additionalProperties": False,
    }


def test_skill_front_matter_follows_agent_skills_rules(specimens: list[ToolSpec]) -> None:
    text = render("skill", specimens)
    match = re.fullmatch(r"---\n(.*?)\n---\n(.*)", text, re.DOTALL)
    assert match, "SKILL.md must open with YAML front matter"
    front = yaml.safe_load(match.group(1))
    assert set(front) == {"name", "description"}
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", front["name"])
    assert len(front["name"]) <= 64
    assert 0 < len(front["description"]) <= 1024
    body = match.group(2)
    primitives = body.index("## Primitives (8)")
    workflows = body.index("## Workflows (1)")
    assert body.index("### `publish_report`") > workflows > body.index("### `slugify`")
    assert body.index("### `slugify`") > primitives
    assert "9 tools: 8 primitives and 1 workflow, in 4 groups" in body


def test_skill_description_stays_within_limit_for_many_tools() -> None:
    many = [ToolSpec(f"tool_number_{i:03d}", "Does a numbered thing.") for i in range(200)]
    front = yaml.safe_load(render("skill", many).split("---\n")[1])
    assert len(front["description"]) <= 1024
    assert "more" in front["description"]
    assert "200 tools" in front["description"]


def test_describe_counts_are_computed(specimens: list[ToolSpec]) -> None:
    data = describe(specimens)
    commands = [c for g in data["groups"] for c in g["commands"]]
    assert data["tool_count"] == len(commands) == len(specimens)
    assert data["primitive_count"] + data["workflow_count"] == data["tool_count"]
    assert data["group_count"] == len(data["groups"])
    for group in data["groups"]:
        assert group["command_count"] == len(group["commands"])
    for command in commands:
        assert command["parameter_count"] == len(command["parameters"])
        assert command["required_count"] == sum(p["required"] for p in command["parameters"])
    wrap = next(c for c in commands if c["name"] == "wrap_text")
    width = next(p for p in wrap["parameters"] if p["name"] == "width")
    assert width == {
        "name": "width",
        "type": "integer",
        "required": False,
        "enum": [40, 80, 120],
        "default": 80,
    }
    classify = next(c for c in commands if c["name"] == "classify_item")
    names = [p["name"] for p in classify["parameters"]]
    assert names == ["type", "title", "description", "ratings"]


def _order(spec: ToolSpec) -> tuple[str, str]:
    return (spec.group or "", spec.name)


def _by_name(specs: list[ToolSpec], name: str) -> ToolSpec:
    return next(s for s in specs if s.name == name)


@pytest.mark.parametrize("format", ["openai", "responses", "anthropic", "gemini", "mcp", "json"])
def test_projection_data_is_plain_json(format: str, specimens: list[ToolSpec]) -> None:
    import json

    data = project(format, specimens)
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_builtin_tools_render_valid_for_every_vendor() -> None:
    from toolfoundry.foundry.meta_tools import builtin_specs

    specs = builtin_specs()
    assert specs, "the built-in meta-tools are declared"
    for tool in openai_chat_tools(specs):
        assert validated(TypeAdapter(ChatCompletionFunctionToolParam), tool) == tool
        Draft202012Validator.check_schema(tool["function"]["parameters"])
    for tool in openai_responses_tools(specs):
        assert validated(TypeAdapter(FunctionToolParam), tool) == tool
    for tool in anthropic_tools(specs):
        assert validated(TypeAdapter(ToolParam), tool) == tool
        Draft202012Validator.check_schema(tool["input_schema"])
    for declaration in gemini_function_declarations(specs):
        for schema in subschemas(declaration.get("parameters")):
            assert set(schema) <= GEMINI_KEYS, schema
    ListToolsResult.model_validate(project("mcp", specs))


def test_a_tool_that_calls_tools_is_described_by_what_they_reach() -> None:
    """call_tool and run_js need no capability of their own, yet reach what the tools they call
    reach: no projection may call them pure or read-only."""
    from toolfoundry.foundry.meta_tools import builtin_specs

    specs = {s.name: s for s in builtin_specs()}
    skill = render("skill", list(specs.values()))
    entries = {e["name"]: e for e in mcp_tools(list(specs.values()))}
    for name in ("call_tool", "run_js"):
        spec = specs[name]
        assert spec.calls_tools
        assert spec.capabilities.is_pure
        assert spec.to_dict()["calls_tools"] is True
        assert spec.replace(description="Other words.").calls_tools
        hints = entries[name]["annotations"]
        assert (hints["readOnlyHint"], hints["openWorldHint"], hints["destructiveHint"]) == (
            False,
            True,
            True,
        )
        section = skill.split(f"### `{name}`", 1)[1].split("### ", 1)[0]
        assert "access: what the tools it calls reach, each under its own approval" in section
    assert "calls_tools" not in specs["search_tools"].to_dict()
    assert specs["search_tools"].is_read_only
    # a declared tool says so too, and its own capabilities are still listed beside it
    mixed = ToolSpec("relay", "Relay.", capabilities={"network": ["api.example.com"]})
    mixed = mixed.replace(calls_tools=True)
    assert "access: what the tools it calls reach, each under its own approval, network (" in (
        render("skill", [mixed])
    )
