"""Gemini function declarations (``{"functionDeclarations": [...]}``) for the Gemini API."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolfoundry.catalog.gemini_schema import gemini_schema
from toolfoundry.catalog.ordering import ordered
from toolfoundry.spec import ToolSpec


def gemini_function_declaration(spec: ToolSpec) -> dict[str, Any]:
    """One function declaration; ``parameters`` is left out when the tool takes none."""
    declaration: dict[str, Any] = {"name": spec.name, "description": spec.description}
    schema = gemini_schema(spec.parameters)
    if schema.get("properties"):
        declaration["parameters"] = schema
    return declaration


def gemini_function_declarations(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """Function declarations for a Gemini ``Tool``, sorted by group then name."""
    return [gemini_function_declaration(spec) for spec in ordered(specs)]
