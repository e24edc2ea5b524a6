"""One entry point for every catalogue format: ``render(format, specs) -> str``."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from toolfoundry.spec import ToolSpec

# format -> (module, function of a list of specs, the key its list goes under or None): each
# projection, like the encoder, is imported when its format is first rendered (the
# configuration checks format names only)
_DATA: dict[str, tuple[str, str, str | None]] = {
    "json": ("describe_json", "describe", None),
    "openai": ("openai_chat", "openai_chat_tools", None),
    "responses": ("openai_responses", "openai_responses_tools", None),
    "anthropic": ("anthropic", "anthropic_tools", None),
    "anthropic-deferred": ("anthropic", "anthropic_deferred_tools", None),
    "responses-deferred": ("openai_responses", "openai_responses_deferred_tools", None),
    "gemini": ("gemini", "gemini_function_declarations", "functionDeclarations"),
    "mcp": ("mcp", "mcp_tools", "tools"),
}
FORMATS: tuple[str, ...] = (*_DATA, "skill", "typescript")
# the formats that show a spec's examples (``input_examples``): their specs carry them
EXAMPLE_FORMATS = frozenset({"anthropic", "anthropic-deferred"})
# what a catalogue file's name says it holds (``catalog write --out``, ``[catalog] out``)
SUFFIX_FORMATS = {".md": "skill", ".json": "json", ".ts": "typescript"}


class UnknownFormat(ValueError):
    """A format name that is not one of :data:`FORMATS`."""


def project(format: str, specs: Iterable[ToolSpec]) -> Any:
    """The JSON-ready data of a JSON format (every format except ``skill`` and
    ``typescript``)."""
    if format not in _DATA:
        raise UnknownFormat(_unknown(format, tuple(_DATA)))
    module, function, key = _DATA[format]
    data = getattr(importlib.import_module(f"toolfoundry.catalog.{module}"), function)(list(specs))
    return data if key is None else {key: data}


def render(format: str, specs: Iterable[ToolSpec], *, skill_name: str | None = None) -> str:
    """Render a catalogue as text: pretty JSON (ending in a newline), Markdown for ``skill``,
    a TypeScript declaration file for ``typescript``.

    The JSON is written by the one encoder (``base/json_gate.encode``: control, C1 and bidi
    characters in a tool's text are ``\\u`` escapes), the Markdown through
    ``base/display.visible``, so neither a terminal nor a reader obeys what a model wrote.

    Args:
        format: one of ``json``, ``openai``, ``responses``, ``anthropic``, ``gemini``, ``mcp``,
            ``skill``, ``typescript``.
        specs: the tools, in any order (output is sorted by group then name).
        skill_name: the skill's name for ``skill`` (defaults to ``toolfoundry``).

    Raises:
        UnknownFormat: ``format`` is not known.
    """
    if format == "skill":
        from toolfoundry.catalog.skill import skill_markdown

        return skill_markdown(specs, **({"name": skill_name} if skill_name else {}))
    if format == "typescript":
        from toolfoundry.catalog.typescript import typescript_declarations

        return typescript_declarations(specs)
    if format not in _DATA:
        raise UnknownFormat(_unknown(format, FORMATS))
    from toolfoundry.base.json_gate import encode

    return encode(project(format, specs), indent=2) + "\n"


def _unknown(format: str, known: tuple[str, ...]) -> str:
    return f"unknown catalogue format {format!r}; choose one of: {', '.join(known)}"
