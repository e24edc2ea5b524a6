"""The per-vendor schema transforms on the shapes that need them, and the argument mapping."""

from __future__ import annotations

from typing import Any

import pytest

from toolfoundry.catalog import (
    InvalidSkill,
    SchemaTransformError,
    UnknownFormat,
    gemini_schema,
    render,
    restore_arguments,
    skill_markdown,
    strict_schema,
)
from toolfoundry.spec import ToolSpec


def obj(
    props: dict[str, Any], required: list[str] | None = None, /, **extra: Any
) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required or [], **extra}


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (obj({"m": {"type": "object", "additionalProperties": {"type": "string"}}}), "dictionary"),
        (obj({"m": {"type": "object"}}), "dictionary"),
        (obj({"a": {"type": "string"}}, additionalProperties=True), "undeclared keys"),
        (obj({"p": {"type": "array", "prefixItems": [{"type": "string"}]}}), "prefixItems"),
        (obj({"a": {"allOf": [{"type": "string"}]}}), "allOf"),
        (obj({"a": {"not": {"type": "string"}}}), "not"),
        (obj({"a": True}), "any value"),
        (obj({"a": {"type": "string"}}, anyOf=[{"required": ["a"]}]), "root anyOf"),
        (obj({"a": {"type": "string", "enum": [str(i) for i in range(1001)]}}), "enum values"),
        (obj({}, ["ghost"]), "no property schema"),
    ],
)
def test_strict_falls_back_with_a_reason(schema: dict[str, Any], reason: str) -> None:
    result = strict_schema(schema)
    assert not result.strict
    assert any(reason in r for r in result.reasons), result.reasons
    assert result.schema == schema  # unchanged, to be sent with strict: false


def test_strict_refuses_nesting_deeper_than_ten_levels() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(11):
        schema = obj({"x": schema}, ["x"])
    assert "nested deeper" in strict_schema(schema).reasons[0]
    assert strict_schema(obj({"x": {"type": "string"}}, ["x"])).strict


def test_strict_makes_optional_properties_nullable_in_every_form() -> None:
    schema = obj(
        {
            "c": {"const": "x"},
            "e": {"type": "string", "enum": ["a", "b"]},
            "r": {"$ref": "#/$defs/Part", "description": "A part."},
            "n": {"type": ["integer", "null"]},
        },
        **{"$defs": {"Part": obj({"q": {"type": "integer"}}, ["q"])}},
    )
    props = strict_schema(schema).schema["properties"]
    assert props["c"] == {"anyOf": [{"const": "x"}, {"type": "null"}]}
    assert props["e"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    assert props["r"] == {
        "description": "A part.",
        "anyOf": [{"$ref": "#/$defs/Part"}, {"type": "null"}],
    }
    assert props["n"] == {"type": ["integer", "null"]}  # already nullable: untouched


def test_strict_moves_unsupported_keywords_into_the_description() -> None:
    schema = obj(
        {
            "s": {"type": "string", "minLength": 2, "format": "uri", "description": "Link."},
            "d": {"type": "string", "format": "date-time"},
            "o": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
        ["s", "d", "o"],
    )
    props = strict_schema(schema).schema["properties"]
    assert props["s"] == {"type": "string", "description": 'Link. (minLength: 2; format: "uri")'}
    assert props["d"] == {"type": "string", "format": "date-time"}
    assert props["o"]["anyOf"] == [{"type": "string"}, {"type": "integer"}]
    assert "exactly one" in props["o"]["description"]


def test_restore_drops_null_only_where_the_spec_does_not_accept_it() -> None:
    schema = obj(
        {
            "a": {"type": "string"},
            "b": {"type": ["string", "null"]},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        },
        ["a"],
        **{"$defs": {"Item": obj({"k": {"type": "integer"}, "v": {"type": "string"}}, ["k"])}},
    )
    sent = {"a": None, "b": None, "items": [{"k": 1, "v": None}]}
    restored = restore_arguments("openai", schema, sent)
    # "a" is required: its null is the model's mistake and must reach validation as-is
    assert restored == {"a": None, "b": None, "items": [{"k": 1}]}
    assert sent == {"a": None, "b": None, "items": [{"k": 1, "v": None}]}  # input untouched


def test_restore_maps_gemini_enum_strings_back() -> None:
    schema = obj(
        {
            "width": {"type": "integer", "enum": [40, 80]},
            "flag": {"enum": [True, "auto"]},
            "label": {"type": "string", "enum": ["1", "2"]},
        }
    )
    sent = {"width": "80", "flag": "true", "label": "1"}
    assert restore_arguments("gemini", schema, sent) == {"width": 80, "flag": True, "label": "1"}
    assert restore_arguments("gemini", schema, {"width": "90"}) == {"width": "90"}
    assert restore_arguments("anthropic", schema, sent) == sent


def test_gemini_inlines_refs_and_cuts_recursion() -> None:
    schema = obj(
        {"node": {"$ref": "#/$defs/Node"}},
        ["node"],
        **{"$defs": {"Node": obj({"next": {"$ref": "#/$defs/Node"}, "v": {"type": "integer"}})}},
    )
    out = gemini_schema(schema)
    node = out["properties"]["node"]
    assert node["properties"]["v"] == {"type": "integer"}
    assert node["properties"]["next"]["type"] == "object"
    assert "recursive" in node["properties"]["next"]["description"]
    assert "$defs" not in out
    assert "$ref" not in str(out)


def test_gemini_root_self_reference_is_cut() -> None:
    out = gemini_schema(obj({"child": {"$ref": "#"}, "v": {"type": "string"}}))
    assert "recursive" in out["properties"]["child"]["description"]


def test_gemini_dialect_conversions() -> None:
    out = gemini_schema(
        obj(
            {
                "multi": {"type": ["string", "integer", "null"]},
                "enum_null": {"enum": ["a", None]},
                "const": {"const": 3},
                "merged": {"allOf": [obj({"x": {"type": "string"}}, ["x"]), obj({"y": {}})]},
                "dict": {"type": "object", "additionalProperties": {"type": "integer"}},
                "low": {"type": "number", "exclusiveMinimum": 0, "title": "Low"},
                "uri": {"type": "string", "format": "uri"},
            }
        )
    )
    props = out["properties"]
    assert props["multi"] == {"nullable": True, "anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert props["enum_null"] == {"type": "string", "nullable": True, "enum": ["a"]}
    assert props["const"]["enum"] == ["3"]
    assert props["merged"]["required"] == ["x"]
    assert set(props["merged"]["properties"]) == {"x", "y"}
    assert props["dict"] == {"type": "object", "description": "(values: integer)"}
    assert props["low"] == {"type": "number", "description": "(exclusiveMinimum: 0)"}
    assert props["uri"] == {"type": "string", "description": '(format: "uri")'}


def test_a_dangling_ref_is_a_clear_error() -> None:
    with pytest.raises(SchemaTransformError, match="unresolvable \\$ref '#/\\$defs/Gone'"):
        gemini_schema(obj({"a": {"$ref": "#/$defs/Gone"}}))


@pytest.mark.parametrize("name", ["Tool", "-x", "x-", "a--b", "a_b", "x" * 65, ""])
def test_skill_names_follow_the_agent_skills_rule(name: str) -> None:
    with pytest.raises(InvalidSkill, match="invalid skill name"):
        skill_markdown([], name=name)


def test_skill_description_limits() -> None:
    assert skill_markdown([], name="a-1", description="Tools.").startswith("---\nname: a-1\n")
    with pytest.raises(InvalidSkill):
        skill_markdown([], description="x" * 1025)
    with pytest.raises(InvalidSkill):
        skill_markdown([], description="two\nlines")


def test_unknown_format_names_the_choices() -> None:
    with pytest.raises(UnknownFormat, match="choose one of: json, openai, responses"):
        render("openapi", [ToolSpec("t", "T.")])


def test_restore_follows_recursive_refs_and_survives_ref_cycles() -> None:
    node = obj({"next": {"$ref": "#/$defs/N"}, "v": {"type": "integer"}})
    schema = obj({"n": {"$ref": "#/$defs/N"}}, **{"$defs": {"N": node}})
    sent = {"n": {"next": {"next": {"v": None, "next": None}}, "v": 1}}
    assert restore_arguments("openai", schema, sent) == {"n": {"next": {"next": {}}, "v": 1}}
    cycle = obj({"a": {"$ref": "#/$defs/A"}}, **{"$defs": {"A": {"$ref": "#/$defs/B"}}})
    cycle["$defs"]["B"] = {"$ref": "#/$defs/A"}
    assert restore_arguments("openai", cycle, {"a": {"x": None}}) == {"a": {"x": None}}


def test_strict_closes_an_object_that_only_states_properties() -> None:
    schema = obj({"inner": {"properties": {"x": {"type": "string"}}}})
    inner = strict_schema(schema).schema["properties"]["inner"]
    assert inner["anyOf"][0]["additionalProperties"] is False
    assert inner["anyOf"][0]["required"] == ["x"]


def test_restore_matches_a_hostile_pattern_in_linear_time() -> None:
    # anyOf branches are checked with the one validator of agent-made schemas
    # (base/json_schema.py); Python's re took minutes on ^(a+)+$ against 30 characters.
    import time

    branch = {"type": "string", "pattern": "^(a+)+$"}
    schema = obj({"x": {"anyOf": [branch, {"type": "integer"}]}, "y": {"type": "string"}})
    sent = {"x": "a" * 30 + "!", "y": None}
    started = time.perf_counter()
    assert restore_arguments("openai", schema, sent) == {"x": "a" * 30 + "!"}
    assert time.perf_counter() - started < 1.0
    defs = obj(
        {"x": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]}}, **{"$defs": {"S": branch}}
    )
    assert restore_arguments("gemini", defs, {"x": "aaa"}) == {"x": "aaa"}
