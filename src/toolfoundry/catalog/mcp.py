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
from toolfoundry.spec.tool import JsonSchema


def tool_title(name: str) -> str:
    """A human title from a tool name: ``search_tools`` -> ``Search tools``."""
    words = name.replace("-", " ").replace("_", " ").split()
    text = " ".join(words) or name
    return text[:1].upper() + text[1:]


def mcp_annotations(spec: ToolSpec) -> dict[str, Any]:
    """Behaviour hints: the spec's explicit read_only, else derived from its capabilities; a
    tool that calls other tools does what they do (maybe fetch, maybe overwrite storage)."""
    hints: dict[str, Any] = {
        "title": tool_title(spec.name),
        "readOnlyHint": spec.is_read_only,
        "openWorldHint": bool(spec.capabilities.network) or spec.calls_tools,
    }
    if spec.calls_tools:
        hints["destructiveHint"] = True
    return hints


def output_schema(returns: JsonSchema | None) -> JsonSchema | None:
    """The ``outputSchema`` of a tool whose value matches ``returns``: an object schema as it
    is; one whose ``type`` rules objects out wrapped as ``{"result": value}``, the shape of
    the structured content a call answers with for a value that is not an object (MCP takes
    only object schemas there); none for a schema that allows objects among other values."""
    if returns is None:
        return None
    schema = without_dialect(returns)
    kind = schema.get("type")
    if kind == "object":
        return schema
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else None
    if kinds is None or "object" in kinds:
        # the value may be an object, which is sent unwrapped: no one schema describes both
        return None
    defs = schema.pop("$defs", None)
    wrapped: JsonSchema = {
        "type": "object",
        "properties": {"result": _rebased(schema)},
        "required": ["result"],
        "additionalProperties": False,
    }
    if defs is not None:  # at the root still, so "#/$defs/..." resolves as before
        wrapped["$defs"] = _rebased(defs)
    return wrapped


def _rebased(schema: Any) -> Any:
    """A schema's local references (``#``, ``#/items``...) moved under ``properties.result``;
    those into ``$defs`` stay, as the definitions stay at the root."""
    if isinstance(schema, list):
        return [_rebased(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _rebased(v) for k, v in schema.items()}
    ref = out.get("$ref")
    if (
        isinstance(ref, str)
        and (ref == "#" or ref.startswith("#/"))
        and not ref.startswith("#/$defs/")
    ):
        out["$ref"] = "#/properties/result" + ref[1:]
    return out


def mcp_tool(spec: ToolSpec) -> dict[str, Any]:
    """One entry of an MCP ``tools/list`` result."""
    entry: dict[str, Any] = {
        "name": spec.name,
        "title": tool_title(spec.name),
        "description": spec.description,
        "inputSchema": spec.parameters,
    }
    output = output_schema(spec.returns)
    if output is not None:
        entry["outputSchema"] = output
    entry["annotations"] = mcp_annotations(spec)
    return entry


def mcp_tools(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """All entries of an MCP ``tools/list`` result, sorted by group then name."""
    return [mcp_tool(spec) for spec in ordered(specs)]
