"""Table of tricky signatures, each with the full schema it must produce.

This module uses ``from __future__ import annotations``: every annotation below is a string
resolved through the function's globals.
"""

from __future__ import annotations

import datetime
import enum
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import jsonschema
import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolfoundry.declare import from_function


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mode(enum.StrEnum):
    FAST = "fast"
    SAFE = "safe"


class Point(BaseModel):
    """A point on the plane."""

    x: float
    y: float = 0.0


class Segment(BaseModel):
    start: Point
    end: Point
    label: str | None = None


class TreeNode(BaseModel):
    """A node of a tree."""

    name: str
    children: list[TreeNode] = []


class Forest(BaseModel):
    trees: list[TreeNode]


class Address(TypedDict):
    street: str
    zip: int


@dataclass
class Window:
    width: int
    height: int = 10


_MISSING = object()

POINT = {
    "description": "A point on the plane.",
    "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
    "required": ["x"],
    "type": "object",
}
TREE_DEFS = {
    "TreeNode": {
        "description": "A node of a tree.",
        "properties": {
            "name": {"type": "string"},
            "children": {"default": [], "items": {"$ref": "#/$defs/TreeNode"}, "type": "array"},
        },
        "required": ["name"],
        "type": "object",
    }
}
BOARD = {"description": "The board.", "type": "string"}
LIMIT = {"default": 1, "description": "How many.", "type": "integer"}


def obj(props: dict[str, Any], required: list[str] = (), **extra: Any) -> dict[str, Any]:  # type: ignore[assignment]
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = list(required)
    out["additionalProperties"] = False
    out.update(extra)
    return out


def kw_names(
    title: str, type: str, description: str = "d", properties: int = 1, required: bool = False
) -> None:
    """Schema keywords as parameter names.

    Args:
        title: The title.
        type: The type.
        description: The description.
        properties: The properties.
        required: Is it required.
    """


def optional_none(limit: int | None = None) -> None:
    """X | None with None default."""


def optional_typing(limit: Optional[int]) -> None:  # noqa: UP045 - the typing spelling is the case
    """Optional without default."""


def nondefault(sort: str = "hot", count: int = 3, ratio: float = 0.5, flag: bool = True) -> None:
    """Non-None defaults."""


def lit_str(sort: Literal["hot", "new", "top"]) -> None:
    """Literal strings."""


def lit_int(level: Literal[1, 2, 3] = 2) -> None:
    """Literal ints."""


def lit_mixed(v: Literal["auto", 0, 1]) -> None:
    """Mixed literal."""


def lit_single(kind: Literal["only"] = "only") -> None:
    """Single literal."""


def optional_literal(sort: Literal["a", "b"] | None = None) -> None:
    """Optional literal."""


def enums(color: Color, prio: Priority = Priority.LOW, mode: Mode = Mode.FAST) -> None:
    """Enums."""


def single_model(point: Point) -> None:
    """One model argument."""


def list_of_models(points: list[Point]) -> None:
    """Many models."""


def nested_model(seg: Segment) -> None:
    """Nested models."""


def recursive_model(root: TreeNode) -> None:
    """Recursive."""


def recursive_inside(forest: Forest) -> None:
    """Recursive inside non-recursive."""


def dicts(headers: dict[str, str], extra: dict) -> None:  # type: ignore[type-arg]
    """Dicts."""


def lists(items: list, ids: list[int], tags: set[str]) -> None:  # type: ignore[type-arg]
    """Lists."""


def tuples(pair: tuple[int, int], many: tuple[int, ...]) -> None:
    """Tuples."""


def union(value: int | str) -> None:
    """Union."""


def typed_dict(addr: Address) -> None:
    """TypedDict."""


def dataclass_arg(win: Window) -> None:
    """Dataclass."""


def annotated_vs_doc(
    n: Annotated[int, Field(ge=1, le=10, description="From Field.")] = 5,
    m: Annotated[str, Field(min_length=2)] = "ab",
) -> None:
    """Annotated.

    Args:
        n: From docstring.
        m: From docstring too.
    """


def non_json_defaults(
    when: datetime.datetime = datetime.datetime(2024, 1, 2, 3, 4, 5),
    where: Path = Path("/tmp/x"),
    ratio: float = math.nan,
    token: Any = _MISSING,
) -> None:
    """Non-JSON defaults."""


def no_summary(board: str) -> None:
    """Args:
    board: The board.
    """


def no_blank_before_args(board: str) -> None:
    """Query a board.
    Args:
        board: The board.
    """


def blank_after_args(board: str, limit: int = 1) -> None:
    """Query a board.

    Args:

        board: The board.

        limit: How many.
    """


def keyword_args(*, board: str, limit: int = 1) -> None:
    """Query a board.

    Keyword Args:
        board: The board.
        limit: How many.
    """


def numpy_doc(board: str, limit: int = 1) -> None:
    """Query a board.

    Parameters
    ----------
    board : str
        The board.
    limit : int, optional
        How many.
    """


def sphinx_doc(board: str, limit: int = 1) -> None:
    """Query a board.

    :param board: The board.
    :param int limit: How many.
    :returns: nothing.
    """


def typed_google(board: str, limit: int = 1) -> None:
    """Query a board.

    Args:
        board (str): The board.
        limit (int, optional): How
            many.
    """


def multi_paragraph(board: str) -> None:
    """Query a board
    across two lines.

    Use it when the user names a board.

    Args:
        board: The board.
    """


def returns_raises() -> int:
    """Ping the service.

    Returns:
        The latency in ms.

    Raises:
        ValueError: never.
    """
    return 1


def returns_model(x: float) -> Point:
    """Make a point."""
    return Point(x=x)


def no_return_annotation(x: float):  # type: ignore[no-untyped-def]
    """Unknown return."""


async def async_fetch(url: str, timeout: float = 10.0) -> str:
    """Fetch a page.

    Args:
        url: Absolute URL.
        timeout: Seconds.
    """
    return url


Case = tuple[Callable[..., Any], str, dict[str, Any], Any]
ABSENT = object()

CASES: list[Case] = [
    (
        kw_names,
        "Schema keywords as parameter names.",
        obj(
            {
                "title": {"description": "The title.", "type": "string"},
                "type": {"description": "The type.", "type": "string"},
                "description": {
                    "default": "d",
                    "description": "The description.",
                    "type": "string",
                },
                "properties": {"type": "integer", "default": 1, "description": "The properties."},
                "required": {"default": False, "description": "Is it required.", "type": "boolean"},
            },
            ["title", "type"],
        ),
        {"type": "null"},
    ),
    (
        optional_none,
        "X | None with None default.",
        obj({"limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}}),
        {"type": "null"},
    ),
    (
        optional_typing,
        "Optional without default.",
        obj({"limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}, ["limit"]),
        {"type": "null"},
    ),
    (
        nondefault,
        "Non-None defaults.",
        obj(
            {
                "sort": {"default": "hot", "type": "string"},
                "count": {"default": 3, "type": "integer"},
                "ratio": {"default": 0.5, "type": "number"},
                "flag": {"default": True, "type": "boolean"},
            }
        ),
        {"type": "null"},
    ),
    (
        lit_str,
        "Literal strings.",
        obj({"sort": {"enum": ["hot", "new", "top"], "type": "string"}}, ["sort"]),
        {"type": "null"},
    ),
    (
        lit_int,
        "Literal ints.",
        obj({"level": {"default": 2, "enum": [1, 2, 3], "type": "integer"}}),
        {"type": "null"},
    ),
    (
        lit_mixed,
        "Mixed literal.",
        obj({"v": {"enum": ["auto", 0, 1]}}, ["v"]),
        {"type": "null"},
    ),
    (
        lit_single,
        "Single literal.",
        obj({"kind": {"const": "only", "default": "only", "type": "string"}}),
        {"type": "null"},
    ),
    (
        optional_literal,
        "Optional literal.",
        obj(
            {
                "sort": {
                    "anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}],
                    "default": None,
                }
            }
        ),
        {"type": "null"},
    ),
    (
        enums,
        "Enums.",
        obj(
            {
                "color": {"enum": ["red", "blue"], "type": "string"},
                "prio": {"enum": [1, 2], "type": "integer", "default": 1},
                "mode": {"enum": ["fast", "safe"], "type": "string", "default": "fast"},
            },
            ["color"],
        ),
        {"type": "null"},
    ),
    (single_model, "One model argument.", obj({"point": POINT}, ["point"]), {"type": "null"}),
    (
        list_of_models,
        "Many models.",
        obj({"points": {"items": POINT, "type": "array"}}, ["points"]),
        {"type": "null"},
    ),
    (
        nested_model,
        "Nested models.",
        obj(
            {
                "seg": {
                    "properties": {
                        "start": POINT,
                        "end": POINT,
                        "label": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                    },
                    "required": ["start", "end"],
                    "type": "object",
                }
            },
            ["seg"],
        ),
        {"type": "null"},
    ),
    (
        recursive_model,
        "Recursive.",
        obj({"root": {"$ref": "#/$defs/TreeNode"}}, ["root"], **{"$defs": TREE_DEFS}),
        {"type": "null"},
    ),
    (
        recursive_inside,
        "Recursive inside non-recursive.",
        obj(
            {
                "forest": {
                    "properties": {
                        "trees": {"items": {"$ref": "#/$defs/TreeNode"}, "type": "array"}
                    },
                    "required": ["trees"],
                    "type": "object",
                }
            },
            ["forest"],
            **{"$defs": TREE_DEFS},
        ),
        {"type": "null"},
    ),
    (
        dicts,
        "Dicts.",
        obj(
            {
                "headers": {"additionalProperties": {"type": "string"}, "type": "object"},
                "extra": {"additionalProperties": True, "type": "object"},
            },
            ["headers", "extra"],
        ),
        {"type": "null"},
    ),
    (
        lists,
        "Lists.",
        obj(
            {
                "items": {"items": {}, "type": "array"},
                "ids": {"items": {"type": "integer"}, "type": "array"},
                "tags": {"items": {"type": "string"}, "type": "array", "uniqueItems": True},
            },
            ["items", "ids", "tags"],
        ),
        {"type": "null"},
    ),
    (
        tuples,
        "Tuples.",
        obj(
            {
                "pair": {
                    "maxItems": 2,
                    "minItems": 2,
                    "prefixItems": [{"type": "integer"}, {"type": "integer"}],
                    "type": "array",
                },
                "many": {"items": {"type": "integer"}, "type": "array"},
            },
            ["pair", "many"],
        ),
        {"type": "null"},
    ),
    (
        union,
        "Union.",
        obj({"value": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}, ["value"]),
        {"type": "null"},
    ),
    (
        typed_dict,
        "TypedDict.",
        obj(
            {
                "addr": {
                    "additionalProperties": False,
                    "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
                    "required": ["street", "zip"],
                    "type": "object",
                }
            },
            ["addr"],
        ),
        {"type": "null"},
    ),
    (
        dataclass_arg,
        "Dataclass.",
        obj(
            {
                "win": {
                    "additionalProperties": False,
                    "properties": {
                        "width": {"type": "integer"},
                        "height": {"default": 10, "type": "integer"},
                    },
                    "required": ["width"],
                    "type": "object",
                }
            },
            ["win"],
        ),
        {"type": "null"},
    ),
    (
        annotated_vs_doc,
        "Annotated.",
        obj(
            {
                # Field(description=...) wins over the docstring; the docstring fills the gap.
                "n": {
                    "default": 5,
                    "description": "From Field.",
                    "maximum": 10,
                    "minimum": 1,
                    "type": "integer",
                },
                "m": {
                    "default": "ab",
                    "description": "From docstring too.",
                    "minLength": 2,
                    "type": "string",
                },
            }
        ),
        {"type": "null"},
    ),
    (
        non_json_defaults,
        "Non-JSON defaults.",
        obj(
            {
                "when": {"default": "2024-01-02T03:04:05", "format": "date-time", "type": "string"},
                "where": {"default": "/tmp/x", "format": "path", "type": "string"},
                "ratio": {"type": "number"},
                "token": {},
            }
        ),
        {"type": "null"},
    ),
    (no_blank_before_args, "Query a board.", obj({"board": BOARD}, ["board"]), {"type": "null"}),
    (
        blank_after_args,
        "Query a board.",
        obj({"board": BOARD, "limit": LIMIT}, ["board"]),
        {"type": "null"},
    ),
    (
        keyword_args,
        "Query a board.",
        obj({"board": BOARD, "limit": LIMIT}, ["board"]),
        {"type": "null"},
    ),
    (
        numpy_doc,
        "Query a board.",
        obj({"board": BOARD, "limit": LIMIT}, ["board"]),
        {"type": "null"},
    ),
    (
        sphinx_doc,
        "Query a board.",
        obj({"board": BOARD, "limit": LIMIT}, ["board"]),
        {"description": "nothing.", "type": "null"},
    ),
    (
        typed_google,
        "Query a board.",
        obj({"board": BOARD, "limit": LIMIT}, ["board"]),
        {"type": "null"},
    ),
    (
        multi_paragraph,
        "Query a board across two lines.\n\nUse it when the user names a board.",
        obj({"board": BOARD}, ["board"]),
        {"type": "null"},
    ),
    (
        returns_raises,
        "Ping the service.",
        obj({}),
        {"description": "The latency in ms.", "type": "integer"},
    ),
    (returns_model, "Make a point.", obj({"x": {"type": "number"}}, ["x"]), POINT),
    (no_return_annotation, "Unknown return.", obj({"x": {"type": "number"}}, ["x"]), ABSENT),
    (
        async_fetch,
        "Fetch a page.",
        obj(
            {
                "url": {"description": "Absolute URL.", "type": "string"},
                "timeout": {"default": 10.0, "description": "Seconds.", "type": "number"},
            },
            ["url"],
        ),
        {"type": "string"},
    ),
]


def test_table_is_big_enough() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize(
    ("fn", "description", "parameters", "returns"), CASES, ids=[c[0].__name__ for c in CASES]
)
def test_signature_schema(
    fn: Callable[..., Any], description: str, parameters: dict[str, Any], returns: Any
) -> None:
    spec = from_function(fn).spec
    assert spec.name == fn.__name__
    assert spec.description == description
    assert spec.parameters == parameters
    # Key order is part of what a model sees: properties keep declaration order.
    assert list(spec.parameters["properties"]) == list(parameters["properties"])
    if returns is ABSENT:
        assert spec.returns is None
    else:
        assert spec.returns == returns


@pytest.mark.parametrize("fn", [case[0] for case in CASES], ids=lambda f: f.__name__)
def test_every_schema_is_valid_2020_12(fn: Callable[..., Any]) -> None:
    spec = from_function(fn).spec
    jsonschema.Draft202012Validator.check_schema(spec.parameters)
    if spec.returns is not None:
        jsonschema.Draft202012Validator.check_schema(spec.returns)


def test_no_summary_needs_an_explicit_description() -> None:
    from toolfoundry.declare import DeclarationError

    with pytest.raises(DeclarationError, match="no_summary: a tool needs a description"):
        from_function(no_summary)
    spec = from_function(no_summary, description="Look up a board.").spec
    assert spec.description == "Look up a board."
    assert spec.parameters == obj({"board": BOARD}, ["board"])


def test_parameter_keywords_keep_their_values_in_defaults() -> None:
    """A default that looks like a schema must not be touched by the title/$defs cleaning."""

    def shaped(
        config: dict[str, str] = {"title": "T", "type": "x"},  # noqa: B006 - never mutated
    ) -> None:
        """Take a config."""

    spec = from_function(shaped).spec
    assert spec.parameters["properties"]["config"]["default"] == {"title": "T", "type": "x"}
