"""Turn pydantic's JSON Schema into the schema a model is shown.

pydantic already speaks JSON Schema 2020-12; what it adds for its own purposes is removed:

- ``title`` annotations go (``{"title": "Limit"}`` on every field is noise to a model). Only
  schema keywords are touched: a *property* named ``title``, ``type``, ``description``,
  ``properties`` or ``required`` is a key of ``properties`` and is never renamed or dropped,
  and nothing inside ``default``, ``enum``, ``const`` or ``examples`` is changed.
- ``$defs`` are inlined wherever the definition is not recursive; only definitions that
  reach themselves (a tree node with children of its own type) stay in ``$defs``, referenced
  as ``#/$defs/Name``. A ``$ref`` with sibling keywords (a field description or default)
  keeps them: the sibling wins over the inlined definition's own.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter
from pydantic.errors import PydanticUserError

# Keywords whose value is one subschema, a list of subschemas, or a name -> subschema map.
_ONE = (
    "items",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
)
_MANY = ("prefixItems", "anyOf", "oneOf", "allOf")
_MAP = ("properties", "patternProperties", "$defs", "dependentSchemas")
_REF_PREFIX = "#/$defs/"


def clean_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Strip titles and inline non-recursive ``$defs`` of a pydantic JSON Schema.

    Args:
        schema: a schema as produced by pydantic's ``model_json_schema``/``json_schema``.

    Returns:
        A new schema; ``$defs`` is present only when a recursive definition needs it.
    """
    work = copy.deepcopy(dict(schema))
    defs: dict[str, Any] = work.pop("$defs", {})
    recursive = _recursive_names(defs)
    kept = {
        name: _strip(_inline(body, defs, recursive, ()))
        for name, body in defs.items()
        if name in recursive
    }
    out = _strip(_inline(work, defs, recursive, ()))
    used = _referenced(out) | {n for body in kept.values() for n in _referenced(body)}
    kept = {name: body for name, body in kept.items() if name in used}
    if kept:
        out["$defs"] = kept
    return out


def _children(schema: Mapping[str, Any]) -> list[Any]:
    found: list[Any] = []
    for key, value in schema.items():
        if key in _ONE and isinstance(value, Mapping):
            found.append(value)
        elif key in _MANY and isinstance(value, list):
            found.extend(v for v in value if isinstance(v, Mapping))
        elif key in _MAP and isinstance(value, Mapping):
            found.extend(v for v in value.values() if isinstance(v, Mapping))
    return found


def _map_children(schema: dict[str, Any], fn: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _ONE and isinstance(value, Mapping):
            out[key] = fn(dict(value))
        elif key in _MANY and isinstance(value, list):
            out[key] = [fn(dict(v)) if isinstance(v, Mapping) else v for v in value]
        elif key in _MAP and isinstance(value, Mapping):
            out[key] = {k: fn(dict(v)) if isinstance(v, Mapping) else v for k, v in value.items()}
        else:
            out[key] = value
    return out


def _ref_name(schema: Mapping[str, Any]) -> str | None:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        return ref[len(_REF_PREFIX) :]
    return None


def _referenced(schema: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        name = _ref_name(node)
        if name is not None:
            names.add(name)
        stack.extend(_children(node))
    return names


def _recursive_names(defs: Mapping[str, Any]) -> set[str]:
    """Definitions that can reach themselves through references."""
    edges = {name: _referenced(body) for name, body in defs.items()}
    recursive: set[str] = set()
    for start in defs:
        seen: set[str] = set()
        stack = list(edges.get(start, ()))
        while stack:
            name = stack.pop()
            if name == start:
                recursive.add(start)
                break
            if name not in seen:
                seen.add(name)
                stack.extend(edges.get(name, ()))
    return recursive


def _inline(
    schema: dict[str, Any],
    defs: Mapping[str, Any],
    recursive: set[str],
    trail: tuple[str, ...],
) -> dict[str, Any]:
    name = _ref_name(schema)
    if name is not None and name not in recursive and name in defs and name not in trail:
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        body = _inline(copy.deepcopy(defs[name]), defs, recursive, (*trail, name))
        return {**body, **siblings}
    return _map_children(schema, lambda child: _inline(child, defs, recursive, trail))


def _strip(schema: dict[str, Any]) -> dict[str, Any]:
    schema = {k: v for k, v in schema.items() if k != "title"}
    return _map_children(schema, _strip)


def returns_schema(annotation: Any, description: str | None = None) -> dict[str, Any] | None:
    """The JSON Schema of a return annotation, or None when it cannot be described.

    Args:
        annotation: the resolved return annotation.
        description: the docstring's ``Returns`` text, added as the schema's description.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = TypeAdapter(annotation).json_schema(mode="serialization")
    except (PydanticUserError, TypeError, NameError):
        return None
    schema = clean_schema(raw)
    if description and "description" not in schema:
        schema = {"description": description, **schema}
    return schema
