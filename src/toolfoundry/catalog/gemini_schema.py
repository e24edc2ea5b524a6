"""Gemini's schema dialect: the OpenAPI 3.0 subset its function declarations accept.

Gemini has no ``$ref``: references are inlined, and a recursive reference is expanded once and
then cut to a described ``object``. Null is ``nullable: true``, never a type. Enums are
string-only, so other enum values are sent as strings (``1`` -> ``"1"``, ``true`` -> ``"true"``)
and mapped back by :func:`toolfoundry.catalog.arguments.restore_arguments`. Keywords outside the
subset are moved into the description.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolfoundry.catalog.schema_transform import (
    JsonSchema,
    definitions,
    keyword_note,
    move_root_combinators,
    ref_name,
    resolve_ref,
    type_label,
    with_notes,
    without_dialect,
)

KEPT = frozenset(
    {
        "description",
        "default",
        "required",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
    }
)
DROPPED = frozenset({"title", "$defs", "definitions", "$comment"})
FORMATS = {
    "string": {"enum", "date-time"},
    "integer": {"int32", "int64"},
    "number": {"float", "double"},
}
ORDER = ("type", "format", "description", "nullable", "enum", "properties", "required", "items")


def enum_string(value: Any) -> str:
    """How a non-string enum value is sent to Gemini (its compact JSON text)."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def gemini_schema(parameters: Mapping[str, Any]) -> JsonSchema:
    """Convert a tool's parameters JSON Schema to Gemini's schema subset.

    Args:
        parameters: a JSON Schema of ``type: object``.

    Returns:
        A schema with no ``$ref``, no ``$defs``, no ``null`` type and string-only enums.
    """
    root, moved = move_root_combinators(without_dialect(parameters))
    return with_notes(_GeminiWalker(definitions(root)).walk(root, ("#",)), moved)


class _GeminiWalker:
    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs

    def walk(self, node: Any, stack: tuple[str, ...]) -> JsonSchema:
        if not isinstance(node, Mapping):
            return {"description": "(any JSON value)"} if node is not False else {}
        if "$ref" in node:
            return self._reference(node, stack)
        node = dict(node)
        if isinstance(node.get("allOf"), list):
            node = self._merge_all_of(node, stack)
        out: JsonSchema = {}
        notes: list[str] = []
        nullable = False
        for key, value in node.items():
            if key == "type":
                nullable |= self._type(value, out)
            elif key in ("anyOf", "oneOf") and isinstance(value, list):
                nullable |= self._alternatives(value, out, stack)
                if key == "oneOf":
                    notes.append("exactly one of the alternatives applies")
            elif key in ("enum", "const"):
                values = list(value) if key == "enum" else [value]
                nullable |= None in values
                out["enum"] = [enum_string(v) for v in values if v is not None]
                if any(not isinstance(v, str) for v in values if v is not None):
                    notes.append("send the value as a string")
            elif key == "properties" and isinstance(value, Mapping):
                out["properties"] = {n: self.walk(s, stack) for n, s in value.items()}
            elif key == "items":
                if "prefixItems" not in node:  # a tuple's items are handled with prefixItems
                    out["items"] = self.walk(value, stack)
            elif key == "prefixItems" and isinstance(value, list):
                self._tuple(node, value, out, notes, stack)
            elif key == "additionalProperties":
                if isinstance(value, Mapping) and value:
                    notes.append(f"values: {type_label(value)}")
                elif value is not False and not node.get("properties"):
                    notes.append("any keys allowed")
            elif key == "format":
                out["format"] = value
            elif key in KEPT:
                out[key] = value
            elif key not in DROPPED:
                notes.append(keyword_note(key, value))
        if "enum" in out:
            out["type"] = "string"  # Gemini accepts enums on strings only
            out.pop("anyOf", None)
            if out.get("default") is not None:
                out["default"] = enum_string(out["default"])
        self._check_format(out, notes)
        if nullable:
            out["nullable"] = True
        return _reorder(with_notes(out, notes))

    def _reference(self, node: Mapping[str, Any], stack: tuple[str, ...]) -> JsonSchema:
        ref = str(node["$ref"])
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if ref in stack:
            cut: JsonSchema = {"type": "object", **siblings}
            note = f"a nested {ref_name(ref)}, recursive: its structure is not expanded further"
            return _reorder(with_notes(cut, [note]))
        target = resolve_ref(ref, self.defs)
        merged = {**target, **siblings} if isinstance(target, Mapping) else target
        if isinstance(merged, Mapping) and ref == "#":
            merged = {k: v for k, v in merged.items() if k not in ("$defs", "definitions")}
        return self.walk(merged, (*stack, ref))

    def _merge_all_of(self, node: JsonSchema, stack: tuple[str, ...]) -> JsonSchema:
        merged = {k: v for k, v in node.items() if k != "allOf"}
        for part in node["allOf"]:
            if isinstance(part, Mapping) and "$ref" in part and part["$ref"] not in stack:
                part = resolve_ref(str(part["$ref"]), self.defs)
            if not isinstance(part, Mapping):
                continue
            for key, value in part.items():
                if key == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **value}
                elif key == "required":
                    merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
                else:
                    merged.setdefault(key, value)
        return merged

    def _type(self, value: Any, out: JsonSchema) -> bool:
        types = [value] if isinstance(value, str) else list(value)
        concrete = [t for t in types if t != "null"]
        if len(concrete) == 1:
            out["type"] = concrete[0]
        elif concrete:
            out["anyOf"] = [{"type": t} for t in concrete]
        return "null" in types

    def _alternatives(self, branches: list[Any], out: JsonSchema, stack: tuple[str, ...]) -> bool:
        is_null = [
            isinstance(b, Mapping) and b.get("type") == "null" and len(b) == 1 for b in branches
        ]
        rest = [self.walk(b, stack) for b, null in zip(branches, is_null, strict=True) if not null]
        if len(rest) == 1:
            for key, value in rest[0].items():
                if key == "description" and "description" in out:
                    continue
                out[key] = value
        elif rest:
            out["anyOf"] = rest
        nested_null = [b.pop("nullable", False) for b in rest] if len(rest) > 1 else []
        return any(is_null) or any(nested_null)

    def _tuple(
        self,
        node: Mapping[str, Any],
        positions: list[Any],
        out: JsonSchema,
        notes: list[str],
        stack: tuple[str, ...],
    ) -> None:
        converted: list[JsonSchema] = []
        for schema in positions:
            walked = self.walk(schema, stack)
            if walked not in converted:
                converted.append(walked)
        out["items"] = converted[0] if len(converted) == 1 else {"anyOf": converted}
        out["minItems"] = len(positions)
        if node.get("items") is False or "items" not in node:
            out["maxItems"] = len(positions)
        notes.append("positions: " + ", ".join(type_label(s) for s in positions))

    def _check_format(self, out: JsonSchema, notes: list[str]) -> None:
        fmt = out.get("format")
        if fmt is None:
            return
        if fmt not in FORMATS.get(str(out.get("type")), set()):
            del out["format"]
            notes.append(keyword_note("format", fmt))


def _reorder(schema: JsonSchema) -> JsonSchema:
    first = {k: schema[k] for k in ORDER if k in schema}
    return {**first, **{k: v for k, v in schema.items() if k not in first}}
