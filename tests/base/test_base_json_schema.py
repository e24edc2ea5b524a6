"""The one validator for agent-made schemas: ECMA-262 patterns in linear time, located refusals.

The pattern table is checked against JavaScript's own RegExp (with the u flag, as JSON Schema
means it), run in the project's real QuickJS sandbox, so "ECMAScript semantics" is tested
against an ECMAScript engine rather than against expectations written down by hand.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from toolfoundry.base.json_gate import JSON_LIMITS
from toolfoundry.base.json_schema import (
    _CACHE,
    CACHE_BYTES,
    CACHE_ENTRIES,
    InvalidSchema,
    compile_schema,
    schema_problems,
)
from toolfoundry.sandbox import run_js
from toolfoundry.spec import Problem

# Patterns models write, each with texts where JS and Python's re (or Rust's defaults) differ.
TABLE: list[tuple[str, list[str]]] = [
    (r"^\p{L}+$", ["héllo", "abc1", "日本"]),
    (r"^\p{Lu}", ["École", "école"]),
    (r"^\d+$", ["123", "١٢٣"]),  # \d is ASCII in JS, Unicode in Python's re
    (r"^\w+$", ["abc_1", "é"]),
    (r"^\s$", ["\ufeff", "\x85", " "]),  # JS \s has U+FEFF, not U+0085
    (r"^.$", ["\r", "\u2028", "😀", "a"]),  # . skips every line terminator; one code point
    (r"a$", ["a\n", "a"]),  # $ is the very end (Python's re also matches before a final \n)
    (r"^a", ["ba", "ab"]),
    (r"^(?<year>\d{4})-(?<month>\d{2})$", ["2024-05", "2024-5"]),
    (r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", ["a.b@c.io", "a@b"]),
    (r"^#[0-9a-fA-F]{6}$", ["#a0B1c2", "#a0B1c"]),
    (r"^\u{1F600}$", ["😀", "x"]),
    (r"^[\s\S]{1,3}$", ["a\nb", "abcd"]),
    (r"^https?://[^/]+/", ["https://x.io/a", "ftp://x/"]),
    (r"^\p{Script=Greek}+$", ["αβγ", "abc"]),
    (r"^[a-z][a-z0-9-]*$", ["my-tool", "My-tool"]),
    (r"(a+)+$", ["a" * 12 + "!", "aaa"]),  # 30 characters: JavaScript itself runs past 2 s
]


def _js_matches(pattern: str, texts: list[str]) -> list[bool]:
    code = (
        "export function handler({p, t}) {"
        " const r = new RegExp(p, 'u'); return t.map(s => r.test(s)); }"
    )
    result = run_js(code, {"p": pattern, "t": texts})
    assert result.ok, result.error
    return list(result.value)


@pytest.mark.parametrize(("pattern", "texts"), TABLE)
def test_patterns_mean_what_they_mean_in_javascript(pattern: str, texts: list[str]) -> None:
    compiled = compile_schema({"type": "string", "pattern": pattern})
    assert [compiled.is_valid(t) for t in texts] == _js_matches(pattern, texts)


def test_a_catastrophic_pattern_answers_in_milliseconds() -> None:
    compiled = compile_schema({"type": "array", "items": {"type": "string", "pattern": "(a+)+$"}})
    hostile = ["a" * 30 + "!"] * 1000 + ["a" * 100_000 + "!"]
    started = time.perf_counter()
    problems = compiled.problems(hostile)
    elapsed = time.perf_counter() - started
    assert len(problems) == 1001
    assert problems[0].path == "$[0]"
    assert elapsed < 1.0, elapsed  # Python's re: 11 s for 25 characters, doubling per character


@pytest.mark.parametrize(
    ("schema", "path", "words"),
    [
        ({"properties": {"x": {"pattern": "(?=.*\\d)a"}}}, "$.properties.x.pattern", "lookaround"),
        ({"properties": {"x": {"pattern": "^(a)\\1$"}}}, "$.properties.x.pattern", "backreference"),
        ({"properties": {"x": {"pattern": "[z-a]"}}}, "$.properties.x.pattern", "ECMA-262"),
        ({"patternProperties": {"(": {}}}, '$.patternProperties["("]', "ECMA-262"),
        ({"properties": {"x": {"pattern": "a{1000}{1000}"}}}, "$.properties.x.pattern", "MiB"),
        ({"$ref": "#"}, "$.$ref", "leads back to itself"),
        (
            {"allOf": [{"$ref": "#/$defs/a"}], "$defs": {"a": {"anyOf": [{"$ref": "#"}]}}},
            "$",
            "itself",
        ),
        ({"$ref": "#/$defs/missing"}, "$", "does not exist"),
        ({"$ref": "https://example.com/schema.json"}, "$", "Retrieval is disabled"),
        ({"type": "nonsense"}, "$.type", "nonsense"),
    ],
)
def test_schemas_that_cannot_be_used_are_located(
    schema: dict[str, Any], path: str, words: str
) -> None:
    problems = schema_problems(schema)
    assert problems, schema
    assert any(p.path.startswith(path) and words in p.message for p in problems), problems
    with pytest.raises(InvalidSchema):
        compile_schema(schema)


def test_every_bad_pattern_is_reported_not_only_the_first() -> None:
    schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "pattern": "("},  # a property named "pattern"
            "b": {"type": "string", "pattern": "(?<=x)b"},
            "c": {"type": "string", "pattern": "^ok$"},
        },
    }
    paths = sorted(p.path for p in schema_problems(schema, "$.parameters"))
    assert paths == ["$.parameters.properties.b.pattern", "$.parameters.properties.pattern.pattern"]


def test_recursive_schemas_that_descend_are_fine() -> None:
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
        "required": ["name"],
    }
    compiled = compile_schema(tree)
    value = {"name": "a", "children": [{"name": "b", "children": [{"children": []}]}]}
    assert [p.to_dict() for p in compiled.problems(value)] == [
        {"path": "$.children[0].children[0]", "message": "'name' is a required property"}
    ]


def test_problems_are_located_and_read_as_before() -> None:
    compiled = compile_schema(
        {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "items": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                "odd key": {"type": "boolean"},
            },
            "required": ["text"],
            "additionalProperties": False,
        }
    )
    problems = compiled.problems({"items": [1, -2, "x"], "odd key": 1, "extra": True}, at="$.input")
    assert [p.to_dict() for p in problems] == [
        {"path": "$.input", "message": "'text' is a required property"},
        {
            "path": "$.input",
            "message": "Additional properties are not allowed ('extra' was unexpected)",
        },
        {"path": "$.input.items[1]", "message": "-2 is less than the minimum of 0"},
        {"path": "$.input.items[2]", "message": "'x' is not of type 'integer'"},
        {"path": '$.input["odd key"]', "message": "1 is not of type 'boolean'"},
    ]
    assert compiled.problems({"text": "ok"}) == []


def test_a_long_value_is_not_repeated_in_full() -> None:
    compiled = compile_schema({"type": "string", "maxLength": 3})
    (problem,) = compiled.problems("x" * 1_000_000)
    assert len(problem.message) <= 500


def test_compiled_once_and_the_cache_is_bounded() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    first = compile_schema(schema)
    assert compile_schema(json.loads(json.dumps(schema))) is first
    assert _CACHE.max_entries == CACHE_ENTRIES
    assert _CACHE.max_bytes == CACHE_BYTES  # the one SizedLRU (tests/spec/test_spec_lru.py)
    big = {"const": "x" * 300_000}
    for i in range(60):  # 60 distinct ~1.2 MB costs: the cache keeps what 64 MiB holds
        compile_schema({**big, "title": str(i)})
    assert _CACHE.size <= CACHE_BYTES
    assert compile_schema({**big, "title": "59"}) is compile_schema({**big, "title": "59"})


def test_a_deep_value_against_a_recursive_schema_is_refused_not_a_crash() -> None:
    # jsonschema-rs follows "$ref": "#" down the value in native code: 100 000 levels
    # overflowed its stack and ended the process (SIGSEGV) before this check.
    compiled = compile_schema({"type": "array", "items": {"$ref": "#"}})
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert compiled.problems(deep, at="$.x") == [
        Problem("$.x", f"nests deeper than {JSON_LIMITS.max_depth} levels")
    ]
    assert compiled.is_valid(deep) is False
    shallow: list[Any] = []
    for _ in range(JSON_LIMITS.max_depth - 1):
        shallow = [shallow]
    assert compiled.is_valid(shallow)


def test_values_that_are_not_json_are_problems_not_exceptions() -> None:
    compiled = compile_schema({"type": "object"})
    for value in ({1, 2}, b"x", {1: "a"}, "\ud800"):
        (problem,) = compiled.problems(value)
        assert problem.path == "$"
        assert "not a JSON value" in problem.message
        assert compiled.is_valid(value) is False


def test_a_schema_of_very_many_references_is_refused_quickly() -> None:
    n = 20_000  # compiled, 3 s of native code holding the GIL
    defs = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(n)}
    defs[f"d{n}"] = {"type": "string"}
    started = time.perf_counter()
    problems = schema_problems({"$defs": defs, "$ref": "#/$defs/d0"})
    assert time.perf_counter() - started < 2.0
    assert problems == [Problem("$", f"has {n + 1} references; at most 1000 are allowed")]
    chain = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(900)}
    chain["d900"] = {"type": "string"}
    assert schema_problems({"$defs": chain, "$ref": "#/$defs/d0"}) == []
