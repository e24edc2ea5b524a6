"""Schema operations shared by the vendor projections.

Every function here is pure: it takes JSON Schema as plain dicts and returns new dicts, never
mutating its input. Only local references (``#``, ``#/$defs/X``, ``#/definitions/X``) are
understood; a ToolSpec never carries remote references.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

JsonSchema = dict[str, Any]

DEFS_KEYS = ("$defs", "definitions")


class SchemaTransformError(ValueError):
    """A schema that a projection cannot render (for example a dangling ``$ref``)."""


def definitions(root: Mapping[str, Any]) -> dict[str, Any]:
    """All ``$defs``/``definitions`` of a root schema, keyed by their ``$ref`` string."""
    found: dict[str, Any] = {}
    for key in DEFS_KEYS:
        block = root.get(key)
        if isinstance(block, Mapping):
            for name in sorted(block):
                found[f"#/{key}/{name}"] = block[name]
    found["#"] = dict(root)
    return found


def resolve_ref(ref: str, defs: Mapping[str, Any]) -> Any:
    """The schema a local ``$ref`` points to, or raise :class:`SchemaTransformError`."""
    target = defs.get(ref)
    if target is None:
        raise SchemaTransformError(
            f"unresolvable $ref {ref!r}: only local references into $defs/definitions or '#' "
            "are supported"
        )
    return target


def ref_name(ref: str) -> str:
    """A readable name for a reference: ``#/$defs/Node`` -> ``Node``, ``#`` -> ``root``."""
    return "root" if ref == "#" else ref.rsplit("/", 1)[-1]


def compact(value: Any) -> str:
    """Deterministic compact JSON, used when a value is written into a description."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=False)


def with_notes(schema: Mapping[str, Any], notes: list[str]) -> JsonSchema:
    """Append notes (keywords a vendor cannot express) to a schema's description."""
    out = dict(schema)
    if not notes:
        return out
    text = "; ".join(notes)
    current = out.get("description")
    if isinstance(current, str) and current.strip():
        sep = " " if current.rstrip().endswith((".", "!", "?", ")")) else ". "
        out["description"] = f"{current.rstrip()}{sep}({text})"
    else:
        out["description"] = f"({text})"
    return out


def keyword_note(keyword: str, value: Any) -> str:
    """How one moved keyword reads in a description, e.g. ``minLength: 3``."""
    return f"{keyword}: {compact(value)}"


def accepts_null(schema: Any, defs: Mapping[str, Any], _seen: frozenset[str] = frozenset()) -> bool:
    """True when ``null`` is certainly valid for ``schema`` (checked shallowly through refs)."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, Mapping):
        return False
    if "$ref" in schema:
        ref = schema["$ref"]
        if ref in _seen:
            return False
        return accepts_null(resolve_ref(ref, defs), defs, _seen | {ref})
    types = schema.get("type")
    if "enum" in schema:
        return None in schema["enum"]
    if "const" in schema:
        return schema["const"] is None
    if types == "null" or (isinstance(types, list) and "null" in types):
        return True
    if types is None:
        branches = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(branches, list):
            return any(accepts_null(b, defs, _seen) for b in branches)
    return False


def type_label(schema: Any) -> str:
    """A short human type: ``string``, ``array<integer>``, ``string|null``, ``Node``."""
    if schema is True or schema == {} or not isinstance(schema, Mapping):
        return "any"
    if "$ref" in schema:
        return ref_name(str(schema["$ref"]))
    types = schema.get("type")
    if isinstance(types, str):
        return _single_label(types, schema)
    if isinstance(types, list):
        return "|".join(_single_label(str(t), schema) for t in types)
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            labels: list[str] = []
            for branch in branches:
                label = type_label(branch)
                if label not in labels:
                    labels.append(label)
            return "|".join(labels)
    if "const" in schema:
        return _json_type(schema["const"])
    if isinstance(schema.get("enum"), list):
        labels = []
        for value in schema["enum"]:
            label = _json_type(value)
            if label not in labels:
                labels.append(label)
        return "|".join(labels)
    return "any"


def _single_label(type_name: str, schema: Mapping[str, Any]) -> str:
    if type_name == "array":
        if "prefixItems" in schema:
            inner = ", ".join(type_label(s) for s in schema["prefixItems"])
            return f"array[{inner}]"
        if "items" in schema:
            return f"array<{type_label(schema['items'])}>"
    if type_name == "object" and not schema.get("properties"):
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and extra:
            return f"object<string, {type_label(extra)}>"
    return type_name


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def without_dialect(schema: Mapping[str, Any]) -> JsonSchema:
    """A copy without ``$schema``/``$id`` (vendors reject or ignore them inside tool schemas)."""
    return {k: v for k, v in schema.items() if k not in ("$schema", "$id")}


ROOT_COMBINATORS = ("anyOf", "oneOf", "allOf")
_COMBINATOR_WORDS = {"anyOf": "at least one of", "oneOf": "exactly one of", "allOf": "all of"}


def move_root_combinators(schema: Mapping[str, Any]) -> tuple[JsonSchema, list[str]]:
    """Remove root ``anyOf``/``oneOf``/``allOf`` and say in sentences what they required.

    Returns:
        The schema without them, and one sentence per removed keyword.
    """
    out = dict(schema)
    moved: list[str] = []
    for key in ROOT_COMBINATORS:
        if key in out:
            branches = out.pop(key)
            moved.append(f"Arguments must match {_COMBINATOR_WORDS[key]}: {compact(branches)}.")
    return out, moved
