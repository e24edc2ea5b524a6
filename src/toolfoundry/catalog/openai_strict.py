"""OpenAI strict mode: turn a tool's JSON Schema into the subset strict mode accepts.

Strict mode (Structured Outputs) needs every object closed (``additionalProperties: false``)
and every property listed in ``required``; optional properties become nullable, and a model's
``null`` means "omitted" (see :func:`toolfoundry.catalog.arguments.restore_arguments`).
Keywords that only narrow a value and that strict mode does not support are moved into the
description. Structures strict mode cannot express at all (open dictionaries, tuples,
``allOf``/``not``/conditionals) make the tool fall back to non-strict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolfoundry.catalog.schema_transform import (
    DEFS_KEYS,
    JsonSchema,
    accepts_null,
    definitions,
    keyword_note,
    with_notes,
    without_dialect,
)

# What strict mode keeps as-is.
KEPT = frozenset(
    {
        "type",
        "description",
        "title",
        "enum",
        "const",
        "$ref",
        "pattern",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "required",
    }
)
FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
# Keywords whose meaning cannot survive being written into a description.
STRUCTURAL = frozenset(
    {
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "prefixItems",
        "patternProperties",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)
MAX_DEPTH = 10
MAX_PROPERTIES = 5000
MAX_ENUM_VALUES = 1000


@dataclass(frozen=True)
class StrictSchema:
    """Result of :func:`strict_schema`.

    Attributes:
        schema: the strict schema when ``strict`` is true, else the original schema (minus
            ``$schema``) to send with ``strict: false``.
        strict: whether the schema can be sent in strict mode.
        reasons: why it cannot (empty when strict), each naming a JSON pointer.
    """

    schema: JsonSchema
    strict: bool
    reasons: tuple[str, ...]


def strict_schema(parameters: Mapping[str, Any]) -> StrictSchema:
    """Make ``parameters`` strict-mode ready, or explain why it cannot be.

    Args:
        parameters: a tool's parameters JSON Schema (``type: object``).

    Returns:
        The strict schema, or the original schema with the reasons strict mode is impossible.
    """
    root = without_dialect(parameters)
    walker = _StrictWalker(definitions(root))
    if any(k in root for k in ("anyOf", "oneOf")):
        walker.reasons.append("#: a root anyOf/oneOf is not allowed in strict mode")
    converted = walker.walk(root, "#", 0)
    if walker.properties > MAX_PROPERTIES:
        walker.reasons.append(f"#: more than {MAX_PROPERTIES} properties")
    if walker.enum_values > MAX_ENUM_VALUES:
        walker.reasons.append(f"#: more than {MAX_ENUM_VALUES} enum values")
    if walker.reasons:
        return StrictSchema(root, False, tuple(walker.reasons))
    return StrictSchema(converted, True, ())


class _StrictWalker:
    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.reasons: list[str] = []
        self.properties = 0
        self.enum_values = 0

    def walk(self, node: Any, path: str, depth: int) -> Any:
        if not isinstance(node, Mapping):
            if node is True:
                self.reasons.append(f"{path}: 'any value' cannot be expressed in strict mode")
            return node
        if depth > MAX_DEPTH:
            self.reasons.append(f"{path}: nested deeper than {MAX_DEPTH} objects")
            return dict(node)
        out: JsonSchema = {}
        notes: list[str] = []
        for key, value in node.items():
            where = f"{path}/{key}"
            if key in STRUCTURAL:
                self.reasons.append(f"{where}: '{key}' is not supported in strict mode")
            elif key in DEFS_KEYS and isinstance(value, Mapping):
                out[key] = {n: self.walk(s, f"{where}/{n}", depth) for n, s in value.items()}
            elif key == "properties" and isinstance(value, Mapping):
                out[key] = self._properties(node, value, where, depth)
            elif key == "items":
                out[key] = self.walk(value, where, depth)
            elif key in ("anyOf", "oneOf") and isinstance(value, list):
                if "anyOf" in out:
                    self.reasons.append(f"{where}: both anyOf and oneOf on one schema")
                out["anyOf"] = [self.walk(b, f"{where}/{i}", depth) for i, b in enumerate(value)]
                if key == "oneOf":
                    notes.append("exactly one of the alternatives applies")
            elif key == "additionalProperties":
                # without declared properties, _close reports the open dictionary once
                if value is not False and isinstance(node.get("properties"), Mapping):
                    self.reasons.append(
                        f"{where}: undeclared keys cannot be allowed in strict mode"
                    )
            elif key == "format":
                if value in FORMATS:
                    out[key] = value
                else:
                    notes.append(keyword_note(key, value))
            elif key in KEPT:
                out[key] = value
                if key == "enum" and isinstance(value, list):
                    self.enum_values += len(value)
            else:
                notes.append(keyword_note(key, value))
        if _is_object(node):
            self._close(node, out, path)
        return with_notes(out, notes)

    def _properties(
        self, node: Mapping[str, Any], props: Mapping[str, Any], path: str, depth: int
    ) -> JsonSchema:
        required = set(node.get("required", ()))
        self.properties += len(props)
        out: JsonSchema = {}
        for name, schema in props.items():
            converted = self.walk(schema, f"{path}/{name}", depth + 1)
            if name not in required:
                converted = nullable(converted, self.defs)
            out[name] = converted
        return out

    def _close(self, node: Mapping[str, Any], out: JsonSchema, path: str) -> None:
        props = node.get("properties")
        if not isinstance(props, Mapping):
            # no "properties" at all is a dictionary of anything; "properties": {} takes none
            if node.get("additionalProperties") is not False:
                self.reasons.append(
                    f"{path}: a dictionary (no declared properties) cannot be strict"
                )
            props = {}
        missing = [n for n in node.get("required", ()) if n not in props]
        if missing:
            self.reasons.append(f"{path}: required {missing} have no property schema")
        out["required"] = list(props)
        out["additionalProperties"] = False


def _is_object(node: Mapping[str, Any]) -> bool:
    types = node.get("type")
    if types is None:
        return "properties" in node
    return types == "object" or (isinstance(types, list) and "object" in types)


def nullable(schema: Any, defs: Mapping[str, Any]) -> Any:
    """``schema`` widened to also accept ``null``, in the form strict mode understands."""
    if accepts_null(schema, defs) or not isinstance(schema, Mapping):
        return schema
    out = dict(schema)
    types = out.get("type")
    if isinstance(types, str | list) and "$ref" not in out and "anyOf" not in out:
        out["type"] = [*([types] if isinstance(types, str) else types), "null"]
        if isinstance(out.get("enum"), list):
            out["enum"] = [*out["enum"], None]
        if "const" in out:
            out["enum"] = [out.pop("const"), None]
        return out
    wrapper: JsonSchema = {}
    for key in ("title", "description"):
        if key in out:
            wrapper[key] = out.pop(key)
    wrapper["anyOf"] = [out, {"type": "null"}]
    return wrapper
