"""Anthropic Messages API tools: ``{"name", "description", "input_schema"}``.

Anthropic takes ordinary JSON Schema (``$defs`` and ``$ref`` included) but refuses
``anyOf``/``oneOf``/``allOf`` at the top level of ``input_schema``; such constraints are
removed and stated in the tool description instead.
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


def anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    """One Anthropic tool definition."""
    schema, moved = anthropic_input_schema(spec.parameters)
    description = " ".join([spec.description, *moved])
    return {"name": spec.name, "description": description, "input_schema": schema}


def anthropic_tools(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """The ``tools`` list for ``client.messages.create``, sorted by group then name."""
    return [anthropic_tool(spec) for spec in ordered(specs)]
