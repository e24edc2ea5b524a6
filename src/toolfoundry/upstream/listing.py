"""An upstream server's tool as toolfoundry keeps it: :class:`UpstreamTool`.

What ``tools/list`` gave is checked once, when it arrives: the qualified name
(``UPSTREAM.TOOL``, spec/names.py), the input schema (a JSON object schema that passes the JSON
gate and compiles with the one validator), the description and annotations. A tool that fails a
check is left out and reported with the reason (``doctor``, the review page): it is never
callable, listed or typed.

The input schema's hash (:func:`schema_hash`) is what an approval and a dependent tool are bound
to: a changed schema is a different tool as far as a person's approval goes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolfoundry.base.json_gate import InvalidJson, JsonLimits, check, encode
from toolfoundry.base.json_schema import CompiledSchema, InvalidSchema, canonical, compile_schema
from toolfoundry.spec import ToolSpec
from toolfoundry.spec.names import NAMESPACE_SEPARATOR, validate_spec_name

# What one listed tool may bring: its schemas and texts together
TOOL_LIMITS = JsonLimits(max_bytes=1024 * 1024, max_depth=64)
MAX_DESCRIPTION_CHARS = 8000
ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def schema_hash(schema: Mapping[str, Any]) -> str:
    """The SHA-256 of an input schema's canonical JSON (sorted keys): what approvals and
    dependents record."""
    return hashlib.sha256(canonical(schema).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class UpstreamTool:
    """One tool of one upstream, as listed.

    Attributes:
        upstream: the upstream's name (``[[upstream]] name``).
        tool: the tool's own name on that server.
        description: its description (cut at :data:`MAX_DESCRIPTION_CHARS`).
        input_schema: its JSON Schema (type object).
        output_schema: its declared result schema, when it gives one.
        annotations: the hints it declares (``readOnlyHint``, ``destructiveHint``,
            ``idempotentHint``, ``openWorldHint``; booleans only) and its ``title``.
        schema_hash: :func:`schema_hash` of ``input_schema``.
    """

    upstream: str
    tool: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]
    schema_hash: str
    validator: CompiledSchema = field(repr=False, compare=False)

    @property
    def name(self) -> str:
        """The qualified name: ``UPSTREAM.TOOL``."""
        return f"{self.upstream}{NAMESPACE_SEPARATOR}{self.tool}"

    def hint(self, key: str) -> bool | None:
        """An annotation hint, or None when the server did not give it."""
        value = self.annotations.get(key)
        return value if isinstance(value, bool) else None

    def spec(self) -> ToolSpec:
        """The tool as a ToolSpec (for the TypeScript projection, search and MCP), its
        description saying where it comes from."""
        described = f"[upstream {self.upstream}] {self.description or self.tool}"
        return ToolSpec(
            self.name,
            described,
            self.input_schema,
            returns=self.output_schema,
            read_only=self.hint("readOnlyHint"),
        )


def listed_tool(upstream: str, raw: Mapping[str, Any]) -> UpstreamTool | str:
    """The tool ``tools/list`` gave (its JSON form), or why it is left out."""
    name = raw.get("name")
    if not isinstance(name, str):
        return "a tool without a name"
    try:
        qualified = validate_spec_name(f"{upstream}{NAMESPACE_SEPARATOR}{name}")
    except ValueError:
        return (
            f"{encode(name)[:80]}: not a portable tool name (letters, digits, '_', '-'; "
            f"{upstream}.NAME at most 64 characters)"
        )
    try:
        check(dict(raw), TOOL_LIMITS)
    except InvalidJson as exc:
        return f"{qualified}: its listing is refused ({exc})"
    schema = raw.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return f"{qualified}: its inputSchema is not a JSON Schema of type object"
    try:
        validator = compile_schema(schema)
    except InvalidSchema as exc:
        return f"{qualified}: its inputSchema does not compile ({exc})"
    output = raw.get("outputSchema")
    if output is not None and not isinstance(output, dict):
        output = None
    description = raw.get("description")
    if not isinstance(description, str):
        description = ""
    annotations: dict[str, Any] = {}
    given = raw.get("annotations")
    if isinstance(given, dict):
        annotations = {
            k: v for k, v in given.items() if k in ANNOTATION_HINTS and isinstance(v, bool)
        }
        if isinstance(given.get("title"), str):
            annotations["title"] = given["title"][:200]
    return UpstreamTool(
        upstream=upstream,
        tool=name,
        description=description.strip()[:MAX_DESCRIPTION_CHARS],
        input_schema=schema,
        output_schema=output,
        annotations=annotations,
        schema_hash=schema_hash(schema),
        validator=validator,
    )
