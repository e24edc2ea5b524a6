"""Property tests: rendering is deterministic, and every projection accepts exactly what the
ToolSpec's own schema accepts, once the projection's argument mapping is applied.

Two projections change the argument space, and the mapping is part of their contract:

- OpenAI strict mode (chat and responses): ``encode`` fills every left-out optional property
  with ``null`` and drops undeclared keys (strict objects are closed); ``restore_arguments``
  drops ``null`` for optional properties that do not themselves accept ``null``.
- Gemini: ``encode`` sends non-string enum values as their JSON text; ``restore_arguments``
  maps them back. Gemini's ``nullable: true`` is read as "or null".

For a projection P of a spec S, with V_X meaning "valid for X":
  completeness: V_S(a)  =>  V_P(encode(a)) and V_S(restore(encode(a)))
  soundness:    V_P(b)  =>  V_S(restore(b))          (the tool never sees an invalid call)
Anthropic and MCP carry the schema unchanged, so there V_P(a) == V_S(a) exactly.
"""

from __future__ import annotations

import functools
import json
import string
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from toolfoundry.catalog import (
    FORMATS,
    anthropic_tool,
    gemini_function_declaration,
    mcp_tool,
    openai_chat_tool,
    openai_responses_tool,
    render,
    restore_arguments,
)
from toolfoundry.catalog.gemini_schema import enum_string
from toolfoundry.spec import ToolSpec

NAMES = st.sampled_from(["a", "b", "text", "type", "title", "description", "enum", "items"])
WORDS = st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=4)

SCALARS = st.one_of(
    st.sampled_from(
        [{"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}]
    ),
    st.lists(WORDS, min_size=1, max_size=4, unique=True).map(
        lambda v: {"type": "string", "enum": v}
    ),
    st.lists(st.integers(-5, 5), min_size=1, max_size=4, unique=True).map(
        lambda v: {"type": "integer", "enum": v}
    ),
    st.lists(
        st.one_of(WORDS, st.integers(-3, 3), st.booleans()),
        min_size=1,
        max_size=4,
        unique_by=lambda x: (type(x).__name__, x),
    ).map(lambda v: {"enum": v}),
)


def with_null(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    forms: list[dict[str, Any]] = [{"anyOf": [schema, {"type": "null"}]}]
    if isinstance(schema.get("type"), str) and "enum" not in schema:
        forms.append({**schema, "type": [schema["type"], "null"]})
    return st.sampled_from(forms)


def objects(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    def close(props: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
        return st.sets(st.sampled_from(sorted(props))).map(
            lambda req: {"type": "object", "properties": props, "required": sorted(req)}
        )

    return st.dictionaries(NAMES, inner, min_size=1, max_size=3).flatmap(close)


SCHEMAS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        inner.map(lambda s: {"type": "array", "items": s}),
        objects(inner),
        inner.flatmap(with_null),
    ),
    max_leaves=6,
)


@st.composite
def tool_specs(draw: st.DrawFn) -> ToolSpec:
    props = draw(st.dictionaries(NAMES, SCHEMAS, max_size=4))
    required = sorted(draw(st.sets(st.sampled_from(sorted(props)))) if props else set())
    parameters: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    nested = [n for n, s in props.items() if s.get("type") == "object"]
    move: bool = bool(nested) and draw(st.booleans())
    if move:
        # move one nested object into $defs, as pydantic does for models
        parameters["$defs"] = {"Part": props[nested[0]]}
        props[nested[0]] = {"$ref": "#/$defs/Part"}
    name = draw(st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True))
    group = draw(st.one_of(st.none(), st.sampled_from(["alpha", "beta"])))
    level = draw(st.sampled_from(["primitive", "workflow"]))
    return ToolSpec(name, "A generated tool.", parameters, group=group, level=level)


def resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    if "$ref" in schema:
        target: Mapping[str, Any] = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
        return target
    return schema


def valid_values(schema: Mapping[str, Any], root: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    schema = resolve(schema, root)
    if "anyOf" in schema:
        return st.one_of([valid_values(b, root) for b in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    return st.one_of([_typed(t, schema, root) for t in types])


def _typed(type_: str, schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    if type_ == "array":
        return st.lists(valid_values(schema["items"], root), max_size=3)
    if type_ == "object":
        props = schema["properties"]
        required = set(schema.get("required", ()))
        return st.fixed_dictionaries(
            {n: valid_values(s, root) for n, s in props.items() if n in required},
            optional={n: valid_values(s, root) for n, s in props.items() if n not in required},
        )
    simple: dict[str, st.SearchStrategy[Any]] = {
        "string": st.text(max_size=4),
        "integer": st.integers(-10, 10),
        "number": st.floats(-10, 10, allow_nan=False, allow_infinity=False),
        "boolean": st.booleans(),
        "null": st.none(),
    }
    return simple[type_]


NOISE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3), st.text(max_size=3)),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(NAMES, c, max_size=3)),
    max_leaves=5,
)


@st.composite
def arguments(draw: st.DrawFn, spec: ToolSpec) -> dict[str, Any]:
    root = spec.parameters
    value: dict[str, Any] = draw(valid_values(root, root))
    mutation = draw(st.sampled_from(["none", "replace", "delete", "null", "extra"]))
    if mutation == "none" or (not value and mutation != "extra"):
        return value
    key = draw(st.sampled_from(sorted(value))) if value else None
    if mutation == "replace" and key:
        value[key] = draw(NOISE)
    elif mutation == "delete" and key:
        del value[key]
    elif mutation == "null" and key:
        value[key] = None
    elif mutation == "extra":
        value[draw(NAMES)] = draw(NOISE)
    return value


def encode_strict(schema: Any, value: Any, root: Mapping[str, Any]) -> Any:
    schema = resolve(schema, root)
    if "anyOf" in schema:
        for branch in schema["anyOf"]:
            if _validator(root, branch).is_valid(value):
                return encode_strict(branch, value, root)
        return value
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        out = {k: encode_strict(props[k], v, root) for k, v in value.items() if k in props}
        return {**out, **{k: None for k in props if k not in value}}
    if isinstance(value, list) and "items" in schema:
        return [encode_strict(schema["items"], v, root) for v in value]
    return value


def encode_gemini(schema: Any, value: Any, root: Mapping[str, Any]) -> Any:
    schema = resolve(schema, root)
    if "anyOf" in schema:
        for branch in schema["anyOf"]:
            if _validator(root, branch).is_valid(value):
                return encode_gemini(branch, value, root)
        return value
    if "enum" in schema and value is not None and not isinstance(value, str):
        return enum_string(value)
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        return {k: encode_gemini(props[k], v, root) if k in props else v for k, v in value.items()}
    if isinstance(value, list) and "items" in schema:
        return [encode_gemini(schema["items"], v, root) for v in value]
    return value


def gemini_as_json_schema(schema: Any) -> Any:
    """Read Gemini's dialect as JSON Schema: ``nullable: true`` means "or null"."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    nullable = out.pop("nullable", False)
    if "properties" in out:
        out["properties"] = {k: gemini_as_json_schema(v) for k, v in out["properties"].items()}
    if "items" in out:
        out["items"] = gemini_as_json_schema(out["items"])
    if "anyOf" in out:
        out["anyOf"] = [gemini_as_json_schema(b) for b in out["anyOf"]]
    return {"anyOf": [out, {"type": "null"}]} if nullable else out


@functools.lru_cache(maxsize=4096)
def meta_validate(schema_text: str) -> None:
    Draft202012Validator.check_schema(json.loads(schema_text))


def _validator(root: Mapping[str, Any], schema: Any = None) -> Draft202012Validator:
    base = Draft202012Validator(dict(root))
    return base if schema is None else base.evolve(schema=schema)  # type: ignore[return-value]


def projections(spec: ToolSpec) -> dict[str, tuple[dict[str, Any], Any]]:
    """format -> (projected JSON Schema, encode function)"""
    root = spec.parameters
    chat = openai_chat_tool(spec)["function"]
    responses = openai_responses_tool(spec)
    assert chat["strict"], "generated specs stay strict-expressible"
    assert responses["strict"]
    declaration = gemini_function_declaration(spec)
    gemini = declaration.get("parameters", {"type": "object", "properties": {}})
    return {
        "openai": (chat["parameters"], lambda a: encode_strict(root, a, root)),
        "responses": (responses["parameters"], lambda a: encode_strict(root, a, root)),
        "anthropic": (anthropic_tool(spec)["input_schema"], lambda a: a),
        "gemini": (gemini_as_json_schema(gemini), lambda a: encode_gemini(root, a, root)),
        "mcp": (mcp_tool(spec)["inputSchema"], lambda a: a),
    }


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_projections_accept_exactly_what_the_spec_accepts(data: st.DataObject) -> None:
    check_round_trip(data)


@pytest.mark.slow
@pytest.mark.timeout(900)
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_projections_accept_exactly_what_the_spec_accepts_long(data: st.DataObject) -> None:
    check_round_trip(data)


def check_round_trip(data: st.DataObject) -> None:
    spec = data.draw(tool_specs())
    args = data.draw(arguments(spec))
    original = _validator(spec.parameters)
    valid = original.is_valid(args)
    for format, (schema, encode) in projections(spec).items():
        meta_validate(json.dumps(schema, sort_keys=True))
        projected = _validator(schema)
        encoded = encode(args)
        if valid:
            assert projected.is_valid(encoded), (format, schema, encoded)
            assert original.is_valid(restore_arguments(format, spec.parameters, encoded)), format
        for sent in (args, encoded):
            if projected.is_valid(sent):
                restored = restore_arguments(format, spec.parameters, sent)
                assert original.is_valid(restored), (format, schema, sent, restored)
        if format in ("anthropic", "mcp"):
            assert projected.is_valid(args) == valid


@settings(max_examples=40, deadline=None)
@given(st.lists(tool_specs(), min_size=1, max_size=4, unique_by=lambda s: s.name), st.randoms())
def test_rendering_is_deterministic(specs: list[ToolSpec], rnd: Any) -> None:
    shuffled = specs[:]
    rnd.shuffle(shuffled)
    for format in FORMATS:
        first = render(format, specs)
        assert render(format, shuffled) == first
        assert render(format, specs) == first
        if format not in ("skill", "typescript"):
            json.loads(first)
