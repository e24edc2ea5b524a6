"""Calling declared functions: validation through the signature's model, errors as values.

No ``from __future__ import annotations`` here, so these annotations are real objects.
"""

import asyncio
import datetime
import enum
import json
import math
import time
from typing import Any, Literal

from pydantic import BaseModel

from toolfoundry.declare import tool
from toolfoundry.spec import CallResult, ErrorKind


class Item(BaseModel):
    id: int
    name: str


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


_UNSET = object()
seen: dict[str, Any] = {}


@tool
def order(
    items: list[Item],
    note: str | None = None,
    pair: tuple[int, int] = (1, 2),
    shade: Shade = Shade.LIGHT,
    code: int | list[str] = 0,
    token: Any = _UNSET,
) -> dict[str, Any]:
    """Place an order.

    Args:
        items: What to order.
        note: A note for the shop.
        pair: Two numbers.
        shade: Colour shade.
        code: A code or code words.
        token: Opaque token (left out of the schema: its default has no JSON form).
    """
    seen.update(items=items, pair=pair, shade=shade, token=token)
    return {"count": len(items), "first": items[0] if items else None, "shade": shade}


def problems(result: CallResult) -> list[tuple[str, str]]:
    assert not result.ok
    assert result.error is not None
    assert result.error.kind is ErrorKind.INVALID_ARGUMENTS
    return [(p.path, p.message) for p in result.error.problems]


def test_good_call_converts_arguments_and_result() -> None:
    result = order.call({"items": [{"id": 1, "name": "tea"}], "pair": [3, 4], "shade": "dark"})
    assert result.ok, result.error
    assert result.value == {"count": 1, "first": {"id": 1, "name": "tea"}, "shade": "dark"}
    assert seen["items"] == [Item(id=1, name="tea")]
    assert seen["pair"] == (3, 4)
    assert seen["shade"] is Shade.DARK
    # Omitted arguments are not passed: the function's own default (a sentinel) applies.
    assert seen["token"] is _UNSET
    json.dumps(result.to_dict())


def test_every_problem_is_listed_with_its_path() -> None:
    result = order.call(
        {
            "items": [{"id": 1, "name": "a"}, {"id": 2}, {"id": "3", "name": "c", "size": 9}],
            "note": 5,
            "pair": [1],
            "shade": "pink",
            "extra": True,
        }
    )
    assert problems(result) == [
        ("$.items[1].name", "required field is missing"),
        ("$.items[2].id", "Input should be a valid integer"),
        ("$.note", "Input should be a valid string"),
        ("$.pair[1]", "item is missing"),
        ("$.shade", "Input should be 'light' or 'dark'"),
        (
            "$.extra",
            "unknown argument; this tool takes: items, note, pair, shade, code, token",
        ),
    ]
    assert result.error is not None
    assert result.error.message.startswith("6 problems with the arguments: $.items[1].name")


def test_union_alternatives_are_one_problem_at_the_data_path() -> None:
    # pydantic locates union failures under member names (int, list[str]); the path is the data's.
    result = order.call({"items": [], "code": [1, "x"]})
    assert problems(result) == [
        ("$.code", "Input should be a valid integer"),
        ("$.code[0]", "Input should be a valid string"),
    ]
    result = order.call({"items": [], "code": {"a": 1}})
    assert problems(result) == [
        ("$.code", "Input should be a valid integer; or Input should be a valid array")
    ]


def test_missing_required_and_non_object_arguments() -> None:
    assert problems(order.call({})) == [("$.items", "required argument is missing")]
    assert problems(order.call([1, 2])) == [  # type: ignore[arg-type]
        ("$", "arguments must be a JSON object, not an array")
    ]


def test_validation_is_as_strict_as_the_schema() -> None:
    @tool
    def settings(limit: int, verbose: bool, ratio: float, name: str) -> None:
        """Apply settings."""

    assert settings.call({"limit": 1, "verbose": True, "ratio": 2, "name": "x"}).ok
    assert problems(settings.call({"limit": "25", "verbose": 1, "ratio": "0.5", "name": 7})) == [
        ("$.limit", "Input should be a valid integer"),
        ("$.verbose", "Input should be a valid boolean"),
        ("$.ratio", "Input should be a valid number"),
        ("$.name", "Input should be a valid string"),
    ]


def test_unusual_keys_get_bracketed_paths() -> None:
    @tool
    def headers(values: dict[str, int]) -> int:
        """Count headers."""
        return len(values)

    assert problems(headers.call({"values": {"X-Trace Id": "no"}})) == [
        ('$.values["X-Trace Id"]', "Input should be a valid integer")
    ]


def test_set_parameters_reject_duplicates_like_unique_items() -> None:
    @tool
    def tag(tags: set[Shade], words: frozenset[str] = frozenset()) -> list[str]:
        """Tag things."""
        return sorted(t.value for t in tags) + sorted(words)

    assert tag.call({"tags": ["light", "dark"], "words": ["b", "a"]}).value == [
        "dark",
        "light",
        "a",
        "b",
    ]
    assert problems(tag.call({"tags": ["dark"], "words": ["a", "a"], "x": 1}))[0] == (
        "$.words",
        "items must be unique (this is a set)",
    )
    assert problems(tag.call({"tags": ["dark", "dark"]})) == [
        ("$.tags", "items must be unique (this is a set)")
    ]


def test_function_exception_becomes_runtime_error_without_traceback() -> None:
    @tool
    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        return a / b

    result = divide.call({"a": 1, "b": 0})
    assert not result.ok
    assert result.error is not None
    assert result.error.kind is ErrorKind.RUNTIME_ERROR
    assert result.error.message == "ZeroDivisionError: float division by zero"
    assert "Traceback" not in json.dumps(result.to_dict())


def test_return_values_are_made_json_ready_or_refused() -> None:
    @tool
    def stamp(kind: Literal["date", "set", "object", "nan"]) -> Any:
        """Return something of the given kind."""
        return {
            "date": datetime.date(2024, 5, 6),
            "set": {3},
            "object": object(),
            "nan": math.nan,
        }[kind]

    assert stamp.call({"kind": "date"}).value == "2024-05-06"
    assert stamp.call({"kind": "set"}).value == [3]
    for kind in ("object", "nan"):
        result = stamp.call({"kind": kind})
        assert not result.ok
        assert result.error is not None
        assert result.error.kind is ErrorKind.RUNTIME_ERROR
        assert "cannot be made JSON" in result.error.message


def test_duration_is_measured() -> None:
    @tool
    def nap(ms: int) -> int:
        """Sleep a little."""
        time.sleep(ms / 1000)
        return ms

    result = nap.call({"ms": 30})
    assert result.ok
    assert 30 <= result.duration_ms < 2000


@tool
async def fetch(url: str, delay_ms: int = 0) -> str:
    """Fetch a page (pretend).

    Args:
        url: Absolute URL.
        delay_ms: Artificial delay.
    """
    await asyncio.sleep(delay_ms / 1000)
    if url == "boom":
        raise ConnectionError("host unreachable")
    return url.upper()


def test_async_call_outside_a_loop_uses_asyncio_run() -> None:
    assert fetch.is_async
    result = fetch.call({"url": "a", "delay_ms": 20})
    assert result.ok
    assert result.value == "A"
    assert result.duration_ms >= 20
    assert problems(fetch.call({"url": 1})) == [("$.url", "Input should be a valid string")]


def test_async_acall_and_errors() -> None:
    async def main() -> tuple[CallResult, CallResult, CallResult]:
        return (
            await fetch.acall({"url": "b"}),
            await fetch.acall({"url": "boom"}),
            fetch.call({"url": "c"}),
        )

    good, failed, inside = asyncio.run(main())
    assert good.value == "B"
    assert failed.error is not None
    assert failed.error.kind is ErrorKind.RUNTIME_ERROR
    assert failed.error.message == "ConnectionError: host unreachable"
    assert inside.error is not None
    assert inside.error.kind is ErrorKind.RUNTIME_ERROR
    assert "inside a running event loop" in inside.error.message
    assert "acall" in inside.error.message


def test_sync_function_through_acall() -> None:
    result = asyncio.run(order.acall({"items": [{"id": 7, "name": "x"}]}))
    assert result.ok
    assert result.value["count"] == 1


def test_direct_calls_still_work() -> None:
    assert order([Item(id=1, name="x")])["count"] == 1
    assert asyncio.run(fetch("q")) == "Q"
    assert fetch.__wrapped__.__name__ == "fetch"


def test_names_pydantic_reserves_are_ordinary_parameters() -> None:
    @tool
    def reserved(
        model_config: str, json: int, _hidden: str = "x", model_fields: int = 0, copy: bool = False
    ) -> str:
        """Take names that clash with pydantic's own attributes."""
        return f"{model_config}{json}{_hidden}{model_fields}{copy}"

    assert list(reserved.spec.parameters["properties"]) == [
        "model_config",
        "json",
        "_hidden",
        "model_fields",
        "copy",
    ]
    args = {"model_config": "a", "json": 1, "_hidden": "y", "model_fields": 2, "copy": True}
    assert reserved.call(args).value == "a1y2True"
    assert problems(reserved.call({"model_config": 1})) == [
        ("$.model_config", "Input should be a valid string"),
        ("$.json", "required argument is missing"),
    ]
