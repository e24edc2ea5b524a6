"""OpenAI Responses API tools: the flat ``{"type": "function", "name": ...}`` form.

The deferred form (:func:`openai_responses_deferred_tools`) puts the hosted ``tool_search``
tool first and marks every function ``defer_loading``: the model starts with the names and
descriptions and loads a function's parameters only once its search finds it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolfoundry.catalog.openai_strict import strict_schema
from toolfoundry.catalog.ordering import ordered
from toolfoundry.catalog.schema_transform import without_dialect
from toolfoundry.spec import ToolSpec

TOOL_SEARCH: dict[str, Any] = {"type": "tool_search"}


def openai_responses_tool(
    spec: ToolSpec, *, strict: bool = True, defer_loading: bool = False
) -> dict[str, Any]:
    """One Responses API function tool (same schema rules as Chat Completions)."""
    converted = strict_schema(spec.parameters)
    use_strict = strict and converted.strict
    schema = converted.schema if use_strict else without_dialect(spec.parameters)
    out: dict[str, Any] = {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": schema,
        "strict": use_strict,
    }
    if defer_loading:
        out["defer_loading"] = True
    return out


def openai_responses_tools(
    specs: Iterable[ToolSpec], *, strict: bool = True
) -> list[dict[str, Any]]:
    """The ``tools`` list for ``client.responses.create``, sorted by group then name."""
    return [openai_responses_tool(spec, strict=strict) for spec in ordered(specs)]


def openai_responses_deferred_tools(
    specs: Iterable[ToolSpec], *, strict: bool = True
) -> list[dict[str, Any]]:
    """``tool_search``, then every function marked ``defer_loading``."""
    deferred = (openai_responses_tool(s, strict=strict, defer_loading=True) for s in ordered(specs))
    return [dict(TOOL_SEARCH), *deferred]
