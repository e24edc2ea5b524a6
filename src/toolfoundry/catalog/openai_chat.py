"""OpenAI Chat Completions tools: ``{"type": "function", "function": {...}}``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolfoundry.catalog.openai_strict import strict_schema
from toolfoundry.catalog.ordering import ordered
from toolfoundry.catalog.schema_transform import without_dialect
from toolfoundry.spec import ToolSpec


def openai_chat_tool(spec: ToolSpec, *, strict: bool = True) -> dict[str, Any]:
    """One Chat Completions tool; strict when asked for and the schema allows it.

    Args:
        spec: the tool.
        strict: request strict mode; tools whose schema cannot be strict fall back to
            ``strict: false`` with their schema unchanged.
    """
    converted = strict_schema(spec.parameters)
    use_strict = strict and converted.strict
    schema = converted.schema if use_strict else without_dialect(spec.parameters)
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "parameters": schema,
        "strict": use_strict,
    }
    return {"type": "function", "function": function}


def openai_chat_tools(specs: Iterable[ToolSpec], *, strict: bool = True) -> list[dict[str, Any]]:
    """The ``tools`` list for ``client.chat.completions.create``, sorted by group then name."""
    return [openai_chat_tool(spec, strict=strict) for spec in ordered(specs)]
