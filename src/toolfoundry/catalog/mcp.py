"""MCP ``tools/list`` entries: name, title, description, inputSchema, outputSchema, annotations.

Annotations come from the declaration: ``readOnlyHint`` is the spec's ``read_only`` when the
code states it (the meta-tools that change the registry do), else true exactly for a pure
sandboxed tool (no network, credentials, storage or system access); a tool that may fetch is
``openWorldHint``. MCP takes full JSON Schema, so schemas pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolfoundry.catalog.ordering import ordered
from toolfoundry.catalog.schema_transform import without_dialect
from toolfoundry.spec import ToolSpec


def tool_title(name: str) -> str:
    """A human title from a tool name: ``search_tools`` -> ``Search tools``."""
    words = name.replace("-", " ").replace("_", " ").split()
    text = " ".join(words) or name
    return text[:1].upper() + text[1:]


def mcp_annotations(spec: ToolSpec) -> dict[str, Any]:
    """Behaviour hints: the spec's explicit read_only, else derived from its capabilities."""
    return {
        "title": tool_title(spec.name),
        "readOnlyHint": spec.is_read_only,
        "openWorldHint": bool(spec.capabilities.network),
    }


def mcp_tool(spec: ToolSpec) -> dict[str, Any]:
    """One entry of an MCP ``tools/list`` result."""
    entry: dict[str, Any] = {
        "name": spec.name,
        "title": tool_title(spec.name),
        "description": spec.description,
        "inputSchema": spec.parameters,
    }
    returns = spec.returns
    if returns is not None and returns.get("type") == "object":
        entry["outputSchema"] = without_dialect(returns)
    entry["annotations"] = mcp_annotations(spec)
    return entry


def mcp_tools(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """All entries of an MCP ``tools/list`` result, sorted by group then name."""
    return [mcp_tool(spec) for spec in ordered(specs)]
