"""Property: the JSON Schema shown to a model and the validator behind a call agree.

For each declared function, hypothesis generates argument objects, valid and invalid, from a
vocabulary that matches the parameters' names and shapes; the pydantic model built from the
signature must accept exactly those the JSON Schema (jsonschema, draft 2020-12) accepts.

Known, deliberate gap kept out of the generator: an integral float such as ``3.0`` is an
integer to JSON Schema but not to strict validation.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolfoundry.declare import FunctionTool, from_function


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


class Point(BaseModel):
    x: float
    y: float = 0.0


class Segment(BaseModel):
    start: Point
    end: Point
    label: str | None = None


class TreeNode(BaseModel):
    name: str
    children: list[TreeNode] = []


class Address(TypedDict):
    street: str
    zip: int


@dataclass
class Window:
    width: int
    height: int = 10


def posts(
    board: str,
    sort: Literal["hot", "new"] = "hot",
    limit: Annotated[int, Field(ge=1, le=100)] = 25,
    tags: set[str] = set(),  # noqa: B006 - never mutated
    flag: bool = False,
) -> None:
    """Query a board."""


def shapes(seg: Segment, points: list[Point] = [], pair: tuple[int, int] | None = None) -> None:  # noqa: B006
    """Draw shapes."""


def tree(
    root: TreeNode,
    shade: Shade = Shade.LIGHT,
    code: int | list[str] = 0,
    meta: dict[str, int] = {},  # noqa: B006 - never mutated
) -> None:
    """Walk a tree."""


def mail(addr: Address, win: Window | None = None, many: tuple[int, ...] = ()) -> None:
    """Send mail."""


KEYS = [
    "board", "sort", "limit", "tags", "flag", "seg", "points", "pair", "root", "shade", "code",
    "meta", "addr", "win", "many", "start", "end", "label", "x", "y", "name", "children",
    "street", "zip", "width", "height", "bogus",
]  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([150, 0.5, -2.25])
    | st.sampled_from(["hot", "new", "top", "light", "dark", "a", "b", ""])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
    ),
    max_leaves=10,
)


def from_schema(
    schema: dict[str, Any], defs: dict[str, Any], depth: int = 0
) -> st.SearchStrategy[Any]:
    """Values that (mostly) satisfy ``schema``: enough to reach the accepting side often."""
    if "$ref" in schema:
        if depth > 3:
            return JSON
        return from_schema(defs[schema["$ref"].split("/")[-1]], defs, depth + 1)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([from_schema(s, defs, depth) for s in schema["anyOf"]])
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        if not props:
            return st.dictionaries(st.sampled_from(["k", "v"]), st.integers(0, 3), max_size=2)
        required = set(schema.get("required", ()))
        return st.fixed_dictionaries(
            {k: from_schema(v, defs, depth + 1) for k, v in props.items() if k in required},
            optional={
                k: from_schema(v, defs, depth + 1) for k, v in props.items() if k not in required
            },
        )
    if kind == "array":
        if "prefixItems" in schema:
            return st.tuples(*(from_schema(s, defs, depth) for s in schema["prefixItems"])).map(
                list
            )
        return st.lists(
            from_schema(schema.get("items", {}), defs, depth + 1),
            max_size=3,
            unique=bool(schema.get("uniqueItems")),
        )
    if kind == "integer":
        return st.integers(schema.get("minimum", -3), schema.get("maximum", 200))
    return {
        "string": st.sampled_from(["a", "b", ""]),
        "number": st.sampled_from([0, 1.5, -2.25]),
        "boolean": st.booleans(),
        "null": st.none(),
    }.get(str(kind), JSON)


def arguments_for(declared: FunctionTool[..., Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Mostly well-shaped argument objects, with random values, omissions and extras mixed in."""
    schema = declared.spec.parameters
    defs = schema.get("$defs", {})
    values = {
        name: st.one_of(from_schema(prop, defs), from_schema(prop, defs), JSON)
        for name, prop in schema["properties"].items()
    }
    return st.fixed_dictionaries({}, optional={**values, "bogus": JSON})


TOOLS: list[FunctionTool[..., Any]] = [from_function(f) for f in (posts, shapes, tree, mail)]


def _agree(declared: FunctionTool[..., Any], args: dict[str, Any], seen: dict[bool, int]) -> None:
    schema_ok = jsonschema.Draft202012Validator(declared.spec.parameters).is_valid(args)
    model_ok = isinstance(declared.arguments.validate(args), dict)
    assert model_ok == schema_ok, (args, model_ok, schema_ok)
    seen[model_ok] += 1


@pytest.mark.parametrize("declared", TOOLS, ids=[t.spec.name for t in TOOLS])
def test_schema_and_validator_agree(declared: FunctionTool[..., Any]) -> None:
    seen = {True: 0, False: 0}

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(arguments_for(declared))
    def check(args: dict[str, Any]) -> None:
        _agree(declared, args, seen)

    check()
    # Both sides were really exercised: some generated arguments pass, some fail.
    assert seen[True] > 0
    assert seen[False] > 0


VALID: list[tuple[Callable[..., Any], dict[str, Any]]] = [
    (posts, {"board": "py", "sort": "new", "limit": 100, "tags": ["a", "b"], "flag": True}),
    (shapes, {"seg": {"start": {"x": 1}, "end": {"x": 0.5, "y": 2}}, "pair": [1, 2]}),
    (tree, {"root": {"name": "r", "children": [{"name": "c"}]}, "code": ["a"], "meta": {"k": 1}}),
    (mail, {"addr": {"street": "s", "zip": 1}, "win": {"width": 2}, "many": [1, 2, 3]}),
]


@pytest.mark.parametrize(("fn", "args"), VALID, ids=[f.__name__ for f, _ in VALID])
def test_known_valid_arguments_pass_both(fn: Callable[..., Any], args: dict[str, Any]) -> None:
    declared = from_function(fn)
    seen = {True: 0, False: 0}
    _agree(declared, args, seen)
    assert seen[True] == 1
