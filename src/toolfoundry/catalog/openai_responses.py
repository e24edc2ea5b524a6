"""OpenAI Responses API tools: the flat ``{"type": "function", "name": ...}`` form."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolfoundry.catalog.openai_strict import strict_schema
from toolfoundry.catalog.ordering import ordered
from toolfoundry.catalog.schema_transform import without_dialect
from toolfoundry.spec import ToolSpec


def openai_responses_tool(spec: ToolSpec, *, strict: bool = True) -> dict[str, Any]:
    """One Responses API function tool (same schema rules as Chat Completions)."""
    converted = strict_schema(spec.parameters)
    use_strict = strict and converted.strict
    schema = converted.schema if use_strict else without_dialect(spec.parameters)
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": schema,
        "strict": use_strict,
    }


def openai_responses_tools(
    specs: Iterable[ToolSpec], *, strict: bool = True
) -> list[dict[str, Any]]:
    """The ``tools`` list for ``client.responses.create``, sorted by group then name."""
    return [openai_responses_tool(spec, strict=strict) for spec in ordered(specs)]
