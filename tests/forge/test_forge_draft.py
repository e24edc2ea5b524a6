"""Drafts: every malformed kind gets the right located problem; good drafts round-trip."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolfoundry.forge import Draft, DraftError, DraftLimits, Language, parse_draft
from toolfoundry.spec import Capabilities, StorageScope


def good(**changes: Any) -> dict[str, Any]:
    draft: dict[str, Any] = {
        "name": "slugify",
        "description": "Turn text into a URL slug.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "width": {"type": "integer", "minimum": 1}},
            "required": ["text"],
        },
        "code": "export function handler({text, width = 80}) { return text.slice(0, width) }",
        "tests": [{"input": {"text": "Hi"}, "expected": "Hi"}],
    }
    draft.update(changes)
    return {k: v for k, v in draft.items() if v is not None}


def problems_of(data: Any, **kwargs: Any) -> dict[str, str]:
    with pytest.raises(DraftError) as info:
        parse_draft(data, **kwargs)
    return {p.path: p.message for p in info.value.problems}


def test_good_draft_parses_and_round_trips() -> None:
    draft = parse_draft(good(capabilities={"storage": True}, author="agent-7"))
    assert isinstance(draft, Draft)
    assert draft.language is Language.JAVASCRIPT
    assert draft.capabilities == Capabilities(storage=StorageScope.TOOL)
    assert draft.tests[0].name == "#0"
    assert draft.tests[0].input == {"text": "Hi"}
    assert parse_draft(draft.to_dict()) == draft
    assert parse_draft(json.dumps(good())) == parse_draft(json.dumps(good()).encode())


def test_draft_is_immutable_and_hands_out_copies() -> None:
    draft = parse_draft(good())
    draft.parameters["properties"].clear()
    assert "text" in draft.parameters["properties"]
    with pytest.raises(AttributeError):
        draft.name = "other"  # type: ignore[misc]


def test_spec_carries_name_schema_and_capabilities() -> None:
    draft = parse_draft(good(capabilities={"network": ["api.example.com"]}))
    spec = draft.spec(3)
    assert (spec.name, spec.version) == ("slugify", 3)
    assert spec.capabilities.network == ("api.example.com",)
    assert spec.parameters == draft.parameters


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"\xff\xfe{}", "not valid UTF-8"),
        ('{"name": ', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ("null", "must be a JSON object"),
    ],
)
def test_unreadable_drafts(raw: Any, fragment: str) -> None:
    assert fragment in problems_of(raw)["$"]


def test_every_problem_is_reported_at_once() -> None:
    found = problems_of(
        {
            "name": "has space",
            "description": "",
            "parameters": {"type": "array"},
            "code": 42,
            "language": "rust",
            "tests": [],
            "capabilities": {"teleport": True},
            "colour": "blue",
        }
    )
    assert set(found) >= {
        "$.name",
        "$.description",
        "$.parameters",
        "$.code",
        "$.language",
        "$.tests",
        "$.capabilities.teleport",
        "$.colour",
    }
    assert "unknown field" in found["$.colour"]
    assert "unknown language 'rust'" in found["$.language"]
    assert "at least one test" in found["$.tests"]


@pytest.mark.parametrize(
    ("changes", "path", "fragment"),
    [
        ({"name": None}, "$.name", "missing"),
        ({"name": 7}, "$.name", "invalid tool name"),
        ({"name": "9lives"}, "$.name", "invalid tool name"),
        ({"name": "x" * 65}, "$.name", "invalid tool name"),
        ({"name": "create_tool"}, "$.name", "meta-tool"),
        ({"name": "Run_JS"}, "$.name", "meta-tool"),
        ({"name": "search_tools"}, "$.name", "meta-tool"),
        ({"name": "tf_helper"}, "$.name", "reserved"),
        ({"name": "toolfoundry_x"}, "$.name", "reserved"),
        ({"description": None}, "$.description", "missing"),
        ({"description": "   "}, "$.description", "non-empty"),
        ({"description": ["a"]}, "$.description", "non-empty"),
        ({"parameters": "object"}, "$.parameters", "JSON Schema object"),
        ({"parameters": {"type": "array"}}, "$.parameters", 'type": "object"'),
        ({"parameters": {"properties": {}}}, "$.parameters", 'type": "object"'),
        (
            {"parameters": {"type": "object", "properties": []}},
            "$.parameters.properties",
            "not of type",
        ),
        (
            {"parameters": {"type": "object", "properties": {"a": {"type": "strng"}}}},
            "$.parameters.properties.a.type",
            "is not valid",
        ),
        (
            {
                "parameters": {
                    "type": "object",
                    "$schema": "http://json-schema.org/draft-07/schema#",
                }
            },
            "$.parameters.$schema",
            "2020-12",
        ),
        (
            {"parameters": {"type": "object", "properties": {"a": {"$ref": "https://evil/x"}}}},
            "$.parameters.properties.a.$ref",
            "local references",
        ),
        ({"returns": 5}, "$.returns", "JSON Schema object"),
        ({"code": None}, "$.code", "missing"),
        ({"code": ""}, "$.code", "non-empty"),
        ({"code": ["x"]}, "$.code", "non-empty"),
        ({"language": "typescript"}, "$.language", "unknown language"),
        ({"tests": None}, "$.tests", "at least one test"),
        ({"tests": {"input": {}}}, "$.tests", "must be a list"),
        ({"tests": ["x"]}, "$.tests[0]", "must be an object"),
        ({"tests": [{"input": {"text": "a"}}]}, "$.tests[0]", "exactly one of"),
        (
            {"tests": [{"input": {"text": "a"}, "expected": 1, "error": "x"}]},
            "$.tests[0]",
            "exactly one",
        ),
        ({"tests": [{"input": [1], "expected": 1}]}, "$.tests[0].input", "object of arguments"),
        (
            {"tests": [{"input": {}, "expected": 1}]},
            "$.tests[0].input",
            "'text' is a required property",
        ),
        (
            {"tests": [{"input": {"text": 5}, "expected": 1}]},
            "$.tests[0].input.text",
            "not of type",
        ),
        (
            {"tests": [{"input": {"text": "a", "width": 0}, "expected": 1}]},
            "$.tests[0].input.width",
            "minimum",
        ),
        ({"tests": [{"input": {"text": "a"}, "error": ""}]}, "$.tests[0].error", "non-empty"),
        (
            {"tests": [{"input": {"text": "a"}, "error": "x", "error_kind": "oops"}]},
            "$.tests[0].error_kind",
            "unknown kind",
        ),
        (
            {"tests": [{"input": {"text": "a"}, "expected": 1, "why": 1}]},
            "$.tests[0].why",
            "unknown field",
        ),
        (
            {
                "tests": [
                    {"name": "a", "input": {"text": "a"}, "expected": 1},
                    {"name": "a", "input": {"text": "b"}, "expected": 1},
                ]
            },
            "$.tests[1].name",
            "duplicate",
        ),
        ({"capabilities": ["network"]}, "$.capabilities", "must be an object"),
        ({"capabilities": {"filesystem": True}}, "$.capabilities.filesystem", "unknown capability"),
        (
            {"capabilities": {"network": "api.example.com"}},
            "$.capabilities.network",
            "list of host",
        ),
        (
            {"capabilities": {"network": ["https://api.example.com/v1"]}},
            "$.capabilities.network[0]",
            "not a host pattern",
        ),
        ({"capabilities": {"network": ["*"]}}, "$.capabilities.network[0]", "not a host"),
        (
            {"capabilities": {"storage": "everywhere"}},
            "$.capabilities.storage",
            "must be true, false",
        ),
        ({"capabilities": {"storage": []}}, "$.capabilities.storage", "must be true, false"),
        (
            {"tests": [{"input": {}, "error": "x", "error_kind": []}]},
            "$.tests[0].error_kind",
            "unknown kind",
        ),
        ({"capabilities": {"system": "yes"}}, "$.capabilities.system", "true or false"),
        (
            {"capabilities": {"network": ["a.example"], "credentials": ["b.example"]}},
            "$.capabilities.credentials[0]",
            "not in capabilities.network",
        ),
        ({"fixtures": {"url": "x"}}, "$.fixtures", "must be a list"),
        ({"fixtures": [{"url": "ftp://x/y"}]}, "$.fixtures[0].url", "http(s) URL"),
        (
            {"fixtures": [{"url": "https://api.example.com/", "method": "TRACE"}]},
            "$.fixtures[0].method",
            "one of",
        ),
        (
            {"fixtures": [{"url": "https://api.example.com/", "status": 99}]},
            "$.fixtures[0].status",
            "status code",
        ),
        (
            {"fixtures": [{"url": "https://api.example.com/", "headers": {"a": 1}}]},
            "$.fixtures[0].headers",
            "string",
        ),
        (
            {"fixtures": [{"url": "https://other.example.org/"}]},
            "$.fixtures[0].url",
            "capabilities.network",
        ),
        ({"changes_tests": "all"}, "$.changes_tests", "list"),
        ({"changes_tests": [-1]}, "$.changes_tests[0]", "0-based"),
        ({"changes_tests": [True]}, "$.changes_tests[0]", "0-based"),
        ({"author": 5}, "$.author", "string"),
    ],
)
def test_each_malformed_field_gets_a_located_problem(
    changes: dict[str, Any], path: str, fragment: str
) -> None:
    base = good(capabilities={"network": ["api.example.com"]}) if "fixtures" in changes else good()
    base.update(changes)
    draft = {k: v for k, v in base.items() if v is not None}
    found = problems_of(draft)
    assert path in found, found
    assert fragment in found[path]


def test_code_size_cap_is_configurable() -> None:
    huge = "export function handler() { return 1 }\n" + "// padding\n" * 30_000
    assert "cap is 262144 bytes" in problems_of(good(code=huge))["$.code"]
    small = DraftLimits(max_code_bytes=100)
    assert parse_draft(good(code="export const handler = () => 1"), limits=small)
    assert "cap is 100 bytes" in problems_of(good(code="x" * 101), limits=small)["$.code"]
    # the cap counts UTF-8 bytes, not characters
    assert "is 102 bytes" in problems_of(good(code="é" * 51), limits=small)["$.code"]


def test_whole_draft_size_cap_applies_to_text() -> None:
    text = json.dumps(good(description="d" * 2000))
    assert "cap" in problems_of(text, limits=DraftLimits(max_draft_bytes=1000))["$"]


def test_too_many_tests() -> None:
    tests = [{"input": {"text": str(i)}, "expected": str(i)} for i in range(5)]
    assert "cap is 3" in problems_of(good(tests=tests), limits=DraftLimits(max_tests=3))["$.tests"]


def test_expected_must_fit_the_returns_schema() -> None:
    found = problems_of(good(returns={"type": "integer"}))
    assert "not of type 'integer'" in found["$.tests[0].expected"]


def test_fixture_body_may_be_json_and_gets_a_content_type() -> None:
    draft = parse_draft(
        good(
            capabilities={"network": ["*.example.com"]},
            fixtures=[{"url": "https://api.example.com/v1?q=1", "body": {"ok": True}}],
        )
    )
    fixture = draft.fixtures[0]
    assert json.loads(fixture.body) == {"ok": True}
    assert ("content-type", "application/json") in fixture.headers
    assert fixture.to_dict()["method"] == "GET"


def test_fixture_port_must_match_the_capability() -> None:
    caps = {"network": ["api.example.com:8443"]}
    ok = good(capabilities=caps, fixtures=[{"url": "https://api.example.com:8443/x"}])
    assert parse_draft(ok).fixtures
    bad = good(capabilities=caps, fixtures=[{"url": "https://api.example.com/x"}])
    assert "capabilities.network" in problems_of(bad)["$.fixtures[0].url"]


def test_python_drafts_parse() -> None:
    draft = parse_draft(good(language="python", code="def handler(text):\n    return text\n"))
    assert draft.language is Language.PYTHON


def test_error_test_cases_keep_kind() -> None:
    draft = parse_draft(
        good(
            tests=[
                {
                    "name": "empty",
                    "input": {"text": ""},
                    "error": "empty",
                    "error_kind": "runtime_error",
                }
            ]
        )
    )
    case = draft.tests[0]
    assert case.expects_error
    assert case.expected is None
    assert case.to_dict() == {
        "name": "empty",
        "input": {"text": ""},
        "error": "empty",
        "error_kind": "runtime_error",
    }


def test_draft_error_message_lists_problems() -> None:
    with pytest.raises(DraftError) as info:
        parse_draft({"name": "run_js"})
    text = str(info.value)
    assert "$.name" in text
    assert "$.code" in text
    assert info.value.to_dict()["problems"]


def _deep(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    current = root
    for _ in range(levels):
        current["a"] = {}
        current = current["a"]
    return root


@pytest.mark.parametrize(
    ("data", "path", "fragment"),
    [
        ("[" * 100_000, "$", "nests too deeply"),
        (
            good(tests=[{"input": {"text": "x", "deep": _deep(5000)}, "expected": 1}]),
            "$",
            "nests too deeply",
        ),
        (good(parameters={"type": "object", "$schema": 5}), "$.parameters.$schema", ""),
        (good(parameters={"type": "object", 1: "x"}), "$.parameters", "string keys"),
        (
            good(tests=[{"input": {"text": float("nan")}, "expected": 1}]),
            "$.tests[0].input.text",
            "",
        ),
    ],
)
def test_hostile_structures_give_problems_not_crashes(data: Any, path: str, fragment: str) -> None:
    found = problems_of(data)
    assert path in found, found
    assert fragment in found[path]
