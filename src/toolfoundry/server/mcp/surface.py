"""What ``serve`` lists: the ``full`` surface (the default: the meta-tools, the project's
declared tools and every active registry tool) or the ``compact`` one.

The compact surface lists the meta-tools only, so ``tools/list`` costs the same whatever the
library holds: a model finds the library's tools with ``search_tools`` (whose first hit
carries its parameters), calls them with ``call_tool`` or from code with ``run_js``'s
``tools`` global, and reads one with ``show_tool``. Each entry keeps its description (what
the model must know to write a tool) and its parameters to two levels, each described by its
first sentence: a nested object is named by its type, and its shape is told by that sentence
(the server still validates the whole schema); create_tool's line naming every global is
left out (its code parameter names the ones that matter). No output schema or title, and
of the annotations only the hints that differ from MCP's defaults (the same meaning: a client
reads a missing hint as its default). The whole answer stays under :data:`COMPACT_TOKENS`
(characters / 4; tests/server/mcp/test_mcp_surface.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

SURFACES = ("full", "compact")
COMPACT_TOKENS = 2500
# what an entry of the compact surface keeps; what a parameter's schema keeps
_ENTRY_KEYS = ("name", "description", "inputSchema", "annotations")
_PARAMETER_KEYS = ("type", "description", "enum", "default", "minimum", "maximum")
# a sentence ends at ". " or "; " (not after "e.g" or "i.e")
_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)[.;] ")
# what MCP's specification says a tool's behaviour hints are when left out
HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}


def compact_entries(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The compact form of the meta-tools' ``tools/list`` entries."""
    return [compact_entry(entry) for entry in entries]


def compact_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """One entry without its title and output schema, its parameters to two levels."""
    # loaded with the first compact entry: serve's option list imports SURFACES from here
    from toolfoundry.foundry.create_tool_text import GLOBALS_LINE

    out = {key: entry[key] for key in _ENTRY_KEYS if key in entry}
    if isinstance(out.get("description"), str):
        lines = out["description"].split("\n")
        out["description"] = "\n".join(x for x in lines if not x.startswith(GLOBALS_LINE))
    schema = out.get("inputSchema")
    if isinstance(schema, dict):
        out["inputSchema"] = _root(schema)
    hints = out.pop("annotations", None)
    if isinstance(hints, dict):
        said = {
            key: value
            for key, value in hints.items()
            if key != "title" and (key not in HINT_DEFAULTS or HINT_DEFAULTS[key] != value)
        }
        if said:
            out["annotations"] = said
    return out


def _root(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object"}
    properties = schema.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {name: _parameter(sub) for name, sub in properties.items()}
    for key in ("required", "additionalProperties"):
        if key in schema:
            out[key] = schema[key]
    return out


def _parameter(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    inner = _without_null(schema)
    out = {key: inner[key] for key in _PARAMETER_KEYS if key in inner}
    for key in ("description", "default"):  # the outer schema's, when it is an Optional
        if key in schema:
            out[key] = schema[key]
    if out.get("default", 0) is None:  # an optional parameter: not required says as much
        del out["default"]
    if isinstance(out.get("description"), str):
        out["description"] = _first_sentence(out["description"])
    if "type" not in out:
        kind = _kind(inner)
        if kind is not None:
            out["type"] = kind
    if out.get("type") == "array" and isinstance(inner.get("items"), dict):
        kind = _kind(inner["items"])
        out["items"] = {"type": kind} if kind is not None else {}
    return out


def _first_sentence(text: str) -> str:
    """A parameter's description up to its first sentence's end (the rest is detail the
    server's validation and errors give when it matters)."""
    match = _SENTENCE_END.search(text)
    return text if match is None else text[: match.start()] + "."


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``X`` of an ``anyOf: [X, null]`` (an optional parameter), else the schema itself."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(kept) == 1 and isinstance(kept[0], dict):
            return kept[0]
    return schema


def _kind(schema: dict[str, Any]) -> str | list[str] | None:
    kind = schema.get("type")
    if isinstance(kind, str | list):
        return kind
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None
