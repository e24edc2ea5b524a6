"""A representative set of hand-built ToolSpecs, one per tricky shape a catalogue must render."""

from __future__ import annotations

import pytest

from toolfoundry.spec import ToolSpec


def representative_specs() -> list[ToolSpec]:
    """Primitives and workflows, groups, enums, defaults, nullable and optional parameters,
    nested objects, arrays, a recursive $defs, a network tool, a parameter named ``type``."""
    slugify = ToolSpec(
        "slugify",
        "Turn text into a URL slug.",
        {
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "Text to convert.", "minLength": 1},
                "separator": {"type": "string", "default": "-", "maxLength": 3},
                "max_length": {
                    "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                    "default": None,
                    "description": "Cut the slug to this many characters.",
                },
                "lowercase": {"type": "boolean", "default": True},
            },
            "required": ["text"],
        },
        group="text",
        version=3,
        returns={"type": "string"},
        examples=[{"text": "Hello, World!"}, {"text": "a b", "separator": "_", "max_length": 8}],
    )
    wrap = ToolSpec(
        "wrap_text",
        "Wrap text to a fixed width.",
        {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "width": {"type": "integer", "enum": [40, 80, 120], "default": 80},
                "mode": {"type": "string", "enum": ["word", "char"], "default": "word"},
                "indent": {"const": "  ", "description": "Only two spaces are supported."},
            },
            "required": ["text"],
        },
        group="text",
    )
    record = ToolSpec(
        "create_record",
        "Create a contact record with an address, tags and free-form metadata.",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "address": {
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                    },
                    "required": ["street"],
                    "additionalProperties": False,
                },
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "required": ["name", "address"],
        },
        group="data",
        capabilities={"storage": True},
    )
    tree = ToolSpec(
        "tree_sum",
        "Sum the values of a tree of nodes.",
        {
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "required": ["root"],
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    },
                    "required": ["value"],
                }
            },
        },
        group="data",
        returns={"type": "number"},
    )
    weather = ToolSpec(
        "fetch_weather",
        "Fetch the current weather for a city.",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Lisbon."},
                "units": {
                    "anyOf": [{"type": "string", "enum": ["metric", "imperial"]}, {"type": "null"}],
                    "default": None,
                },
                "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 1},
            },
            "required": ["city"],
        },
        group="web",
        capabilities={"network": ["api.weather.example"]},
        returns={
            "type": "object",
            "properties": {"temperature": {"type": "number"}, "summary": {"type": "string"}},
            "required": ["temperature"],
        },
    )
    classify = ToolSpec(
        "classify_item",
        "Classify an item; its parameters are named like JSON Schema keywords.",
        {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["book", "film"]},
                "title": {"type": "string", "title": "Title"},
                "description": {"type": ["string", "null"], "default": None},
                "ratings": {"type": "array", "items": {"type": "number"}, "maxItems": 5},
            },
            "required": ["type", "title"],
        },
    )
    report = ToolSpec(
        "publish_report",
        "Collect figures for a date range, render a report and publish it.",
        {
            "type": "object",
            "properties": {
                "period": {
                    "type": "array",
                    "prefixItems": [
                        {"type": "string", "format": "date"},
                        {"type": "string", "format": "date"},
                    ],
                    "items": False,
                    "description": "Start and end dates.",
                },
                "dry_run": {"type": "boolean", "default": False},
            },
            "required": ["period"],
        },
        level="workflow",
        group="reports",
        capabilities={"network": ["reports.example.com"], "storage": True},
    )
    lookup = ToolSpec(
        "lookup_user",
        "Find a user by id or by email.",
        {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "email": {"type": "string", "format": "email"},
            },
            "anyOf": [{"required": ["id"]}, {"required": ["email"]}],
        },
        group="data",
    )
    boards = ToolSpec("list_boards", "List the boards this instance knows.", group="web")
    return [slugify, wrap, record, tree, weather, classify, report, lookup, boards]


@pytest.fixture
def specimens() -> list[ToolSpec]:
    """The representative specs, in the order they were declared (not the catalogue order)."""
    return representative_specs()
