"""Anthropic Messages API tools: ``{"name", "description", "input_schema"}``.

Anthropic takes ordinary JSON Schema (``$defs`` and ``$ref`` included) but refuses
``anyOf``/``oneOf``/``allOf`` at the top level of ``input_schema``; such constraints are
removed and stated in the tool description instead. A spec's examples (its tool's passing
tests' arguments, at most three) become ``input_examples``.

The deferred form (:func:`anthropic_deferred_tools`) marks every tool ``defer_loading`` and
puts Anthropic's tool search tool first: the model sees the search tool, finds the tools it
needs by their names and descriptions, and only those are loaded into its context.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolfoundry.catalog.ordering import ordered
from toolfoundry.catalog.schema_transform import (
    JsonSchema,
    move_root_combinators,
    without_dialect,
)
from toolfoundry.spec import ToolSpec


def anthropic_input_schema(parameters: JsonSchema) -> tuple[JsonSchema, list[str]]:
    """The ``input_schema`` for ``parameters`` and the sentences moved into the description."""
    return move_root_combinators(without_dialect(parameters))


# Anthropic's server tool that searches the deferred tools (BM25 over names and descriptions).
TOOL_SEARCH: dict[str, Any] = {
    "type": "tool_search_tool_bm25_20251119",
    "name": "tool_search_tool_bm25",
}


def anthropic_tool(spec: ToolSpec, *, defer_loading: bool = False) -> dict[str, Any]:
    """One Anthropic tool definition (``defer_loading``: loaded only once a search finds it)."""
    schema, moved = anthropic_input_schema(spec.parameters)
    description = " ".join([spec.description, *moved])
    out: dict[str, Any] = {"name": spec.name, "description": description, "input_schema": schema}
    examples = spec.examples
    if examples:
        out["input_examples"] = examples
    if defer_loading:
        out["defer_loading"] = True
    return out


def anthropic_tools(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """The ``tools`` list for ``client.messages.create``, sorted by group then name."""
    return [anthropic_tool(spec) for spec in ordered(specs)]


def anthropic_deferred_tools(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """The tool search tool, then every tool marked ``defer_loading``."""
    return [dict(TOOL_SEARCH), *(anthropic_tool(s, defer_loading=True) for s in ordered(specs))]
