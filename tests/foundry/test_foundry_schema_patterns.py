"""Agent-made schemas through the public API: hostile patterns and $ref loops, create and call.

Every schema a draft brings is compiled at create time by the one validator
(base/json_schema.py); what cannot be compiled is a located problem and nothing is stored.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.factories import error_of

from toolfoundry import Foundry


def _with_text_schema(kit: Any, **text: Any) -> dict[str, Any]:
    draft: dict[str, Any] = kit.slugify(
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string", **text}},
            "required": ["text"],
        }
    )
    return draft


@pytest.mark.parametrize(
    ("parameters", "path", "words"),
    [
        (
            {"type": "object", "properties": {"text": {"type": "string", "pattern": "(?=.*\\d)"}}},
            "$.parameters.properties.text.pattern",
            "lookaround",
        ),
        (
            {"type": "object", "properties": {"text": {"type": "string", "pattern": "[z-a]"}}},
            "$.parameters.properties.text.pattern",
            "ECMA-262",
        ),
        (
            {"type": "object", "patternProperties": {"(": {"type": "string"}}},
            '$.parameters.patternProperties["("]',
            "ECMA-262",
        ),
        (
            {"type": "object", "$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}},
            "$.parameters.$defs.a.$ref",
            "leads back to itself",
        ),
        (
            {"type": "object", "properties": {"text": {"$ref": "#/$defs/nowhere"}}},
            "$.parameters",
            "does not exist",
        ),
    ],
)
def test_a_schema_that_cannot_be_compiled_is_refused_located(
    fd: Foundry, kit: Any, parameters: dict[str, Any], path: str, words: str
) -> None:
    before = kit.snapshot(fd)
    result = fd.create_tool(kit.slugify(parameters=parameters))
    assert result.status == "rejected"
    assert result.test_results == ()  # refused before any test ran
    assert any(f.path == path and words in f.message for f in result.findings), result.findings
    assert kit.snapshot(fd) == before


def test_a_javascript_only_pattern_works_at_create_and_call(fd: Foundry, kit: Any) -> None:
    draft = _with_text_schema(kit, pattern="^[\\p{L} ]+$")
    draft["tests"] = [{"input": {"text": "Héllo Wörld"}, "expected": "h-llo-w-rld"}]
    assert fd.create_tool(draft).status == "active"
    assert fd.call("slugify", {"text": "Ünïcode"}).ok
    refused = fd.call("slugify", {"text": "digits 123"})
    assert refused.error is not None
    assert error_of(refused).kind.value == "invalid_arguments"
    assert [p.path for p in error_of(refused).problems] == ["$.text"]


def test_a_test_input_is_checked_by_the_same_validator(fd: Foundry, kit: Any) -> None:
    draft = _with_text_schema(kit, pattern="^\\d+$")
    draft["tests"] = [{"input": {"text": "١٢٣"}, "expected": "x"}]  # not \d in JavaScript
    result = fd.create_tool(draft)
    assert result.status == "rejected"
    assert [f.path for f in result.findings] == ["$.tests[0].input.text"]


def test_a_catastrophic_pattern_answers_in_milliseconds(fd: Foundry, kit: Any) -> None:
    draft = _with_text_schema(kit, pattern="^(a+)+$")
    draft["tests"] = [{"input": {"text": "aaa"}, "expected": "aaa"}]
    assert fd.create_tool(draft).status == "active"
    started = time.perf_counter()
    out = fd.call("slugify", {"text": "a" * 30 + "!"})  # Python's re: minutes
    elapsed = time.perf_counter() - started
    assert out.error is not None
    assert error_of(out).kind.value == "invalid_arguments"
    assert error_of(out).problems[0].path == "$.text"
    assert elapsed < 1.0, elapsed
    big = fd.call("slugify", {"text": "a" * 1_000_000 + "!"})
    assert big.error is not None
    assert error_of(big).kind.value == "invalid_arguments"
