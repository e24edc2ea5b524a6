"""Property tests of the ``typescript`` format with the real compiler.

For generated schemas (hostile names and text, ``$defs`` with recursion, combinators, tuples,
open and closed objects, patterns and formats) the declaration file compiles under
``tsc --strict``, and every value the JSON Schema validator accepts is accepted by the type
(the format's one rule: the type accepts every value the schema accepts). For the part of JSON
Schema that TypeScript can say exactly (no bounds, no integers, no unions of objects), every
value the validator refuses is also refused: written under ``// @ts-expect-error``, so a
type that accepts it fails the compile.

Each example is one compile of many tools, so a run stays a few seconds.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from tests.catalog.tsc import typecheck

from toolfoundry.catalog import render
from toolfoundry.spec import ToolSpec

HOSTILE_TEXT = ["*/ declare const x: 1; /*", "@deprecated", "\ud800", "\u202e", "`${a}`", "\\"]
NAMES = st.sampled_from(
    ["a", "b", "type", "a b", "*/x", "1", "constructor", "é", "\ud800", "$x", "class", "-"]
)
STRINGS = st.one_of(
    st.text(alphabet=string.ascii_letters + " \"'\\/*`$", max_size=4),
    st.sampled_from(HOSTILE_TEXT),
)
SCALAR_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([1.5, -0.25]), STRINGS
)
JSON_VALUES = st.recursive(
    SCALAR_VALUES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(NAMES, inner, max_size=3)),
    max_leaves=6,
)
# (no "/" or "~": a $ref names a definition by a JSON pointer, which would escape them)
DEF_NAMES = st.sampled_from(["Node", "class", "a b", "1x", "Promise", "string", "*", "ToolError"])


def exact_schemas() -> st.SearchStrategy[dict[str, Any]]:
    """Schemas TypeScript types exactly: a value is valid iff it type-checks."""
    scalars = st.one_of(
        st.sampled_from(
            [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}]
        ),
        st.lists(SCALAR_VALUES, min_size=1, max_size=4).map(lambda v: {"enum": v}),
        JSON_VALUES.map(lambda v: {"const": v}),
        st.just({"type": ["string", "null"]}),
    )

    def composite(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        return st.one_of(
            inner.map(lambda s: {"type": "array", "items": s}),
            st.tuples(st.lists(inner, min_size=1, max_size=3), st.integers(0, 3)).map(
                lambda t: {"type": "array", "prefixItems": t[0], "items": False, "minItems": t[1]}
            ),
            st.tuples(st.dictionaries(NAMES, inner, max_size=3), st.booleans()).flatmap(
                lambda t: _object(t[0], closed=t[1])
            ),
            inner.map(lambda s: {"type": "object", "additionalProperties": s}),
        )

    return st.recursive(scalars, composite, max_leaves=5)


def _object(props: dict[str, Any], *, closed: bool) -> st.SearchStrategy[dict[str, Any]]:
    def build(required: set[str]) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": props,
            "required": sorted(required),
        }
        if closed:
            schema["additionalProperties"] = False
        return schema

    return st.sets(st.sampled_from(sorted(props))).map(build) if props else st.just(build(set()))


def wide_schemas() -> st.SearchStrategy[dict[str, Any]]:
    """Anything the format must render without losing a valid value: bounds, patterns,
    formats, integers, combinators, nullable, hostile descriptions and ``$ref``."""
    annotated = st.fixed_dictionaries(
        {},
        optional={
            "description": STRINGS,
            "title": STRINGS,
            "pattern": st.sampled_from(["^a*/b$", "[0-9]+", "a*/"]),
            "format": st.sampled_from(["email", "date-time", "*/"]),
            "minimum": st.integers(-3, 3),
            "default": JSON_VALUES,
        },
    )
    base = st.one_of(
        exact_schemas(),
        st.sampled_from(
            [{"type": "integer"}, {"type": "string", "nullable": True}, {}, True, {"not": {}}]
        ),
        st.just({"$ref": "#/$defs/Node"}),
    )

    def composite(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(inner, min_size=1, max_size=3).map(lambda b: {"anyOf": b}),
            st.lists(inner, min_size=1, max_size=3).map(lambda b: {"oneOf": b}),
            st.lists(inner, min_size=1, max_size=2).map(lambda b: {"allOf": b}),
            st.tuples(st.dictionaries(NAMES, inner, max_size=3), st.booleans()).flatmap(
                lambda t: _object(t[0], closed=t[1])
            ),
            inner.map(lambda s: {"type": "array", "items": s, "uniqueItems": True}),
            st.tuples(inner, inner).map(
                lambda t: {
                    "type": "object",
                    "patternProperties": {"^x": t[0]},
                    "properties": {"a": t[1]},
                }
            ),
        )

    schemas = st.recursive(base, composite, max_leaves=5)
    return st.tuples(schemas, annotated).map(
        lambda t: {**t[1], **t[0]} if isinstance(t[0], dict) else t[0]
    )


def node_def(draw: st.DrawFn) -> dict[str, Any]:
    """A recursive definition under a drawn (possibly hostile) name."""
    name = draw(DEF_NAMES)
    return {
        "name": name,
        "schema": {
            "type": "object",
            "properties": {
                "value": {"type": "number"},
                "children": {"type": "array", "items": {"$ref": f"#/$defs/{name}"}},
            },
        },
    }


@st.composite
def cases(draw: st.DrawFn, schemas: st.SearchStrategy[Any]) -> list[tuple[ToolSpec, list[Any]]]:
    """Tools whose one required parameter ``v`` has a drawn schema, each with values to try
    (valid or not: the validator decides)."""
    out = []
    for i in range(draw(st.integers(1, 5))):
        schema = draw(schemas)
        node = node_def(draw)
        text = json.dumps(schema).replace('"#/$defs/Node"', json.dumps(f"#/$defs/{node['name']}"))
        parameters = {
            "type": "object",
            "properties": {"v": json.loads(text)},
            "required": ["v"],
            "$defs": {node["name"]: node["schema"]},
        }
        description = draw(STRINGS.filter(lambda s: s.strip())) if draw(st.booleans()) else "T."
        spec = ToolSpec(f"t{i}", description, parameters)
        values = draw(st.lists(values_for(schema), min_size=1, max_size=4))
        out.append((spec, values))
    return out


def values_for(schema: Any, depth: int = 3) -> st.SearchStrategy[Any]:
    """Values near the schema (many valid, some not): its consts and enums, arrays and
    objects of values near its first child, and any JSON."""
    near: list[Any] = []
    if isinstance(schema, dict):
        if "const" in schema:
            near.append(schema["const"])
        near += schema.get("enum", [])
    options = [st.sampled_from(near)] if near else []
    if depth and isinstance(schema, dict):
        options += _shaped_like(schema, depth)
    if depth:
        children = values_for(_first_child(schema), depth - 1)
        options.append(st.lists(children, max_size=3))
        options.append(st.dictionaries(st.sampled_from(_keys(schema)), children, max_size=3))
    return st.one_of(*options, SCALAR_VALUES, JSON_VALUES)


def _shaped_like(schema: dict[str, Any], depth: int) -> list[st.SearchStrategy[Any]]:
    """Values of the schema's own shape: its type's values, its properties filled in."""
    types = schema.get("type")
    simple: dict[str, st.SearchStrategy[Any]] = {
        "string": STRINGS,
        "number": st.sampled_from([0, 1.5, -3]),
        "integer": st.integers(-3, 3),
        "boolean": st.booleans(),
        "null": st.none(),
    }
    out = [simple[t] for t in (types if isinstance(types, list) else [types]) if t in simple]
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        required = set(schema.get("required", []))
        fields = {k: values_for(v, depth - 1) for k, v in props.items()}
        out.append(
            st.fixed_dictionaries(
                {k: f for k, f in fields.items() if k in required},
                optional={k: f for k, f in fields.items() if k not in required},
            )
        )
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        out.append(st.tuples(*(values_for(p, depth - 1) for p in prefix)).map(list))
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key, []):
            out.append(values_for(branch, depth - 1))
    return out


def _keys(schema: Any) -> list[str]:
    keys = ["v", "x1"]
    if isinstance(schema, dict):
        keys += list(schema.get("properties", {}))
    return keys


def _first_child(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return {}
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            return schema[key]
    props = schema.get("properties") or {}
    if props:
        return next(iter(props.values()))
    prefix = schema.get("prefixItems")
    return prefix[0] if prefix else {}


def ts_value(value: Any) -> str:
    """A JSON value as a TypeScript expression (JSON is one, with every non-ASCII escaped)."""
    return json.dumps(value, ensure_ascii=True)


def check_cases(tmp_path: Path, drawn: list[tuple[ToolSpec, list[Any]]], *, exact: bool) -> None:
    lines = ["export async function f(): Promise<void> {"]
    valid_count = 0
    for spec, values in drawn:
        validator = Draft202012Validator(spec.parameters)
        for value in values:
            args = {"v": value}
            if validator.is_valid(args):
                valid_count += 1
            elif exact:
                lines.append("  // @ts-expect-error: the schema refuses this value")
            else:
                continue
            lines.append(f"  await tools.{spec.name}({ts_value(args)});")
    lines.append("}")
    snippet = "\n".join(lines) + "\n"
    declarations = render("typescript", [spec for spec, _ in drawn])
    checked = typecheck(tmp_path, {"tools.d.ts": declarations, "s.ts": snippet})
    assert checked.ok, f"{checked.output}\n--- s.ts\n{snippet}\n--- tools.d.ts\n{declarations}"


# No shrinking: each step is a compile, and the failure message holds both files already.
_SETTINGS = settings(
    max_examples=12,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@_SETTINGS
@given(cases(wide_schemas()))
def test_every_valid_value_type_checks(
    tmp_path_factory: pytest.TempPathFactory, drawn: list[tuple[ToolSpec, list[Any]]]
) -> None:
    check_cases(tmp_path_factory.mktemp("wide"), drawn, exact=False)


@_SETTINGS
@given(cases(exact_schemas()))
def test_exact_schemas_type_check_exactly_their_values(
    tmp_path_factory: pytest.TempPathFactory, drawn: list[tuple[ToolSpec, list[Any]]]
) -> None:
    check_cases(tmp_path_factory.mktemp("exact"), drawn, exact=True)


@pytest.mark.slow
@pytest.mark.timeout(900)
@settings(
    max_examples=150,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(cases(wide_schemas()), cases(exact_schemas()))
def test_many_schemas_long(
    tmp_path_factory: pytest.TempPathFactory,
    wide: list[tuple[ToolSpec, list[Any]]],
    exact: list[tuple[ToolSpec, list[Any]]],
) -> None:
    check_cases(tmp_path_factory.mktemp("wide"), wide, exact=False)
    check_cases(tmp_path_factory.mktemp("exact"), exact, exact=True)
