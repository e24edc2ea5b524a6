"""One entry point for every catalogue format: ``render(format, specs) -> str``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from toolfoundry.catalog.anthropic import anthropic_tools
from toolfoundry.catalog.describe_json import describe
from toolfoundry.catalog.gemini import gemini_function_declarations
from toolfoundry.catalog.mcp import mcp_tools
from toolfoundry.catalog.openai_chat import openai_chat_tools
from toolfoundry.catalog.openai_responses import openai_responses_tools
from toolfoundry.catalog.skill import skill_markdown
from toolfoundry.spec import ToolSpec
from toolfoundry.spec.json_gate import encode

_DATA: dict[str, Callable[[Sequence[ToolSpec]], Any]] = {
    "json": describe,
    "openai": openai_chat_tools,
    "responses": openai_responses_tools,
    "anthropic": anthropic_tools,
    "gemini": lambda specs: {"functionDeclarations": gemini_function_declarations(specs)},
    "mcp": lambda specs: {"tools": mcp_tools(specs)},
}
FORMATS: tuple[str, ...] = (*_DATA, "skill")


class UnknownFormat(ValueError):
    """A format name that is not one of :data:`FORMATS`."""


def project(format: str, specs: Iterable[ToolSpec]) -> Any:
    """The JSON-ready data of a JSON format (every format except ``skill``)."""
    if format not in _DATA:
        raise UnknownFormat(_unknown(format, tuple(_DATA)))
    return _DATA[format](list(specs))


def render(format: str, specs: Iterable[ToolSpec], *, skill_name: str | None = None) -> str:
    """Render a catalogue as text: pretty JSON (ending in a newline), or Markdown for ``skill``.

    The JSON is written by the one encoder (``spec/json_gate.encode``: control, C1 and bidi
    characters in a tool's text are ``\\u`` escapes), the Markdown through
    ``spec/display.visible``, so neither a terminal nor a reader obeys what a model wrote.

    Args:
        format: one of ``json``, ``openai``, ``responses``, ``anthropic``, ``gemini``, ``mcp``,
            ``skill``.
        specs: the tools, in any order (output is sorted by group then name).
        skill_name: the skill's name for ``skill`` (defaults to ``toolfoundry``).

    Raises:
        UnknownFormat: ``format`` is not known.
    """
    if format == "skill":
        return skill_markdown(specs, **({"name": skill_name} if skill_name else {}))
    if format not in _DATA:
        raise UnknownFormat(_unknown(format, FORMATS))
    data = project(format, specs)
    return encode(data, indent=2) + "\n"


def _unknown(format: str, known: tuple[str, ...]) -> str:
    return f"unknown catalogue format {format!r}; choose one of: {', '.join(known)}"
