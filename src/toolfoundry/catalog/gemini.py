"""Gemini function declarations (``{"functionDeclarations": [...]}``) for the Gemini API."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolfoundry.catalog.gemini_schema import gemini_schema
from toolfoundry.catalog.ordering import ordered
from toolfoundry.catalog.schema_transform import move_root_combinators
from toolfoundry.spec import ToolSpec


def gemini_function_declaration(spec: ToolSpec) -> dict[str, Any]:
    """One function declaration; ``parameters`` is left out when the tool takes none."""
    parameters, moved = move_root_combinators(spec.parameters)
    description = " ".join([spec.description, *moved])
    declaration: dict[str, Any] = {"name": spec.name, "description": description}
    schema = gemini_schema(parameters)
    if schema.get("properties"):
        declaration["parameters"] = schema
    return declaration


def gemini_function_declarations(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """Function declarations for a Gemini ``Tool``, sorted by group then name."""
    return [gemini_function_declaration(spec) for spec in ordered(specs)]
