"""MCP ``outputSchema`` from a spec's ``returns``: it describes the structured content a call
answers with (the value itself when it is an object, else ``{"result": value}``)."""

from __future__ import annotations

from typing import Any

import pytest

from toolfoundry.base.json_schema import compile_schema
from toolfoundry.catalog.mcp import output_schema


def structured(value: Any) -> Any:
    """What server/mcp/results.py sends as structuredContent for a value."""
    return value if isinstance(value, dict) else {"result": value}


@pytest.mark.parametrize(
    ("returns", "good", "bad"),
    [
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 1}, {"n": "x"}),
        ({"type": "string"}, "hi", 3),
        ({"type": ["string", "null"]}, None, {"a": 1}),
        (
            {"type": "array", "items": {"$ref": "#/$defs/N"}, "$defs": {"N": {"type": "integer"}}},
            [1, 2],
            [1, "x"],
        ),
        (
            {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"$ref": "#"}]}},
            [1, [2]],
            ["x"],
        ),
    ],
)
def test_the_schema_holds_exactly_for_the_structured_content(
    returns: dict[str, Any], good: Any, bad: Any
) -> None:
    schema = output_schema(returns)
    assert schema is not None
    assert schema["type"] == "object"
    validator = compile_schema(schema)
    assert validator.problems(structured(good)) == []
    assert validator.problems(structured(bad)) != []


@pytest.mark.parametrize(
    "returns",
    [None, {}, {"anyOf": [{"type": "string"}, {"type": "object"}]}, {"type": ["object", "null"]}],
)
def test_no_schema_when_a_value_may_be_sent_either_way(returns: dict[str, Any] | None) -> None:
    """An object value is sent as itself, anything else wrapped: a schema admitting both has no
    one form that describes every call's content."""
    assert output_schema(returns) is None
