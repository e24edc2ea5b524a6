"""Tool names: the pattern every vendor accepts, and the names the foundry keeps for itself."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from toolfoundry.base.confusables import skeleton

NAME_PATTERN = r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$"
# An upstream MCP server's tool as toolfoundry names it: ``UPSTREAM.TOOL`` (``github.create_issue``,
# reached as ``tools.github.create_issue`` in code mode), each part a portable name, at most 64
# characters in all (so it fits every column and vendor limit a tool name does). A registry
# tool's name never holds the separator, so the two kinds of name never meet.
NAMESPACE_SEPARATOR = "."
QUALIFIED_NAME_PATTERN = r"^[a-zA-Z_][a-zA-Z0-9_-]{0,62}\.[a-zA-Z_][a-zA-Z0-9_-]{0,62}$"
QUALIFIED_NAME_CHARS = 64  # in all (the pattern holds no look-ahead: every regex engine reads it)
# The foundry's own meta-tools, in the order MCP clients see them. Declared in
# toolfoundry.foundry.meta_tools; no draft or declared tool may take one of these names.
META_TOOL_NAMES = (
    "create_tool",
    "search_tools",
    "tool_history",
    "rollback_tool",
    "run_js",
    "show_tool",
    "call_tool",
)
_NAME_RE = re.compile(NAME_PATTERN)
_QUALIFIED_RE = re.compile(QUALIFIED_NAME_PATTERN)


class InvalidName(ValueError):
    """A tool name that some vendor (OpenAI, Anthropic, Gemini, MCP) would refuse."""


def validate_name(name: object) -> str:
    """Return ``name`` unchanged if it is portable, else raise :class:`InvalidName`.

    The pattern is the intersection of what OpenAI, Anthropic, Gemini and MCP accept:
    a letter or underscore, then up to 63 letters, digits, underscores or hyphens.
    """
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise InvalidName(
            f"invalid tool name {name!r}: it must match {NAME_PATTERN} "
            "(start with a letter or '_', then at most 63 letters, digits, '_' or '-')"
        )
    return name


def is_qualified(name: str) -> bool:
    """Whether ``name`` names an upstream server's tool (``UPSTREAM.TOOL``)."""
    return NAMESPACE_SEPARATOR in name


def validate_spec_name(name: object) -> str:
    """A tool's name as a :class:`~toolfoundry.spec.ToolSpec` may carry it: a portable name
    (:func:`validate_name`), or an upstream tool's ``UPSTREAM.TOOL`` (each part portable, 64
    characters at most in all)."""
    if (
        isinstance(name, str)
        and len(name) <= QUALIFIED_NAME_CHARS
        and _QUALIFIED_RE.fullmatch(name)
    ):
        return name
    return validate_name(name)


def _fold(text: str) -> str:
    return text.casefold().replace("-", "_")


def name_keys(name: str) -> frozenset[str]:
    """What ``name`` looks like to a person: NFKC, case folded, ``-`` as ``_``, and confusable
    characters as their UTS #39 prototype (base/confusables.py). Two names that share a key
    pass for each other (``Create-Tool``, ``create_tooI``, ``run_js`` / ``run-js``).

    There are two keys because the skeleton is case-sensitive: folding first makes ``Index``
    meet ``index``, the skeleton first makes ``Iog`` (capital i) meet ``log``.
    """
    text = unicodedata.normalize("NFKC", name)
    return frozenset((_fold(skeleton(_fold(text))), _fold(skeleton(text))))


def looks_like(name: str, others: Iterable[str]) -> str | None:
    """The first of ``others`` that ``name`` passes for (other than ``name`` itself), or None."""
    keys = name_keys(name)
    return next((o for o in others if o != name and keys & name_keys(o)), None)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'word_count'?"`` naming the known names closest to a mistyped one (up
    to three, closest first), or ``""`` when none is close: what an unknown name's message ends
    with, on every surface (CLI, MCP, HTTP, Python)."""
    import difflib  # only an unknown name pays for it

    close = difflib.get_close_matches(name, [n for n in known if n != name], n=3, cutoff=0.6)
    if not close:
        return ""
    return f"; did you mean {' or '.join(repr(n) for n in close)}?"
