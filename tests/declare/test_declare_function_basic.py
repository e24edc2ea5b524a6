"""The everyday path: @tool on a typed function, its spec, and calls through it."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from toolfoundry.declare import FunctionTool, from_function, tool
from toolfoundry.spec import DeclaredTool, ErrorKind, Level


@tool
def posts(board: str, sort: Literal["hot", "new"] = "hot", limit: int = 25) -> list[dict[str, Any]]:
    """Query a public board's feed.

    Args:
        board: Board name, without the leading slash.
        sort: Feed order.
        limit: How many posts to return.
    """
    return [{"board": board, "sort": sort, "n": i} for i in range(limit)]


def test_bare_decorator_builds_spec_and_keeps_function() -> None:
    assert isinstance(posts, FunctionTool)
    assert isinstance(posts, DeclaredTool)
    assert posts.__name__ == "posts"  # type: ignore[attr-defined]
    assert posts.__doc__ is not None
    assert posts.__doc__.startswith("Query")
    assert posts.__wrapped__.__name__ == "posts"
    assert posts("x", limit=1) == [{"board": "x", "sort": "hot", "n": 0}]
    spec = posts.spec
    assert spec.name == "posts"
    assert spec.description == "Query a public board's feed."
    assert spec.level is Level.PRIMITIVE
    assert [p.name for p in spec.params] == ["board", "sort", "limit"]
    assert [p.required for p in spec.params] == [True, False, False]
    assert spec.params[1].enum == ["hot", "new"]
    assert spec.params[2].default == 25
    assert spec.returns == {
        "type": "array",
        "items": {"type": "object", "additionalProperties": True},
    }


def test_decorator_with_arguments() -> None:
    @tool(name="board_digest", level="workflow", group="boards", capabilities={"storage": True})
    def digest(board: str) -> str:
        """Summarise a board."""
        return board.upper()

    assert digest.spec.name == "board_digest"
    assert digest.spec.level is Level.WORKFLOW
    assert digest.spec.group == "boards"
    assert digest.spec.capabilities.to_dict() == {"storage": True}
    assert digest("ab") == "AB"


def test_from_function_description_override() -> None:
    def shout(text: str) -> str:
        return text.upper()

    shouted = from_function(shout, description="Upper-case a text.")
    assert shouted.spec.description == "Upper-case a text."
    assert shouted.call({"text": "hi"}).value == "HI"


def test_call_good_and_bad_arguments() -> None:
    ok = posts.call({"board": "py", "limit": 2})
    assert ok.ok
    assert ok.value == [
        {"board": "py", "sort": "hot", "n": 0},
        {"board": "py", "sort": "hot", "n": 1},
    ]
    assert ok.duration_ms > 0
    bad = posts.call({"board": 1, "limit": "3", "sort": "top", "extra": True})
    assert not bad.ok
    assert bad.error is not None
    assert bad.error.kind is ErrorKind.INVALID_ARGUMENTS
    paths = [p.path for p in bad.error.problems]
    assert paths == ["$.board", "$.sort", "$.limit", "$.extra"]


def test_async_function() -> None:
    @tool
    async def double(n: int) -> int:
        """Double a number."""
        await asyncio.sleep(0)
        return n * 2

    assert double.is_async
    assert double.call({"n": 4}).value == 8
    assert asyncio.run(double.acall({"n": 5})).value == 10


class Shop:
    """A shop with a price list.

    Attributes:
        unit: Price of one item (documented attributes are not parameters).
    """

    def __init__(self, unit: float) -> None:
        self.unit = unit

    def price(self, item: str, qty: int = 1) -> float:
        """Price an item.

        Args:
            item: The item name.
            qty: How many.
        """
        return self.unit * qty

    async def __call__(self, query: str) -> list[str]:
        return [query]


def test_bound_method_and_callable_object() -> None:
    shop = Shop(2.5)
    price = from_function(shop.price)
    assert price.spec.parameters == {
        "type": "object",
        "properties": {
            "item": {"description": "The item name.", "type": "string"},
            "qty": {"default": 1, "description": "How many.", "type": "integer"},
        },
        "required": ["item"],
        "additionalProperties": False,
    }
    assert price.call({"item": "tea", "qty": 2}).value == 5.0
    search = from_function(shop, name="shop_search")
    assert search.spec.description == "A shop with a price list."
    assert search.is_async
    assert search.call({"query": "tea"}).value == ["tea"]


def test_redeclaring_a_tool_and_top_level_import() -> None:
    import toolfoundry

    assert toolfoundry.tool is tool
    assert toolfoundry.from_function is from_function
    renamed = from_function(posts, name="feed", level=Level.WORKFLOW)
    assert renamed.spec.name == "feed"
    assert renamed.spec.parameters == posts.spec.parameters
    assert renamed.call({"board": "b", "limit": 1}).value == [{"board": "b", "sort": "hot", "n": 0}]
