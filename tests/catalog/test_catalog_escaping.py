"""Every catalogue format shows what a tool's text holds and obeys none of it.

A model writes a registry tool's description and parameter descriptions; ``describe`` prints
them to a terminal and ``catalog write`` puts them in committed files. JSON formats go through
the one encoder (control, C1 and bidi characters as lossless ``\\u`` escapes), the Markdown
skill through ``base/display.visible``.
"""

from __future__ import annotations

import json

import pytest

from toolfoundry.catalog.formats import FORMATS, render
from toolfoundry.spec import ToolSpec

# erase a line, OSC 52 clipboard write with BEL, a C1 CSI, a bidi override and an isolate
HOSTILE = "\x1b[1A\x1b[2K \x1b]52;c;ZXZpbA==\x07 \x9b2J \u202e\u2066 \u2028 end"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u2028")


def hostile_spec() -> ToolSpec:
    return ToolSpec(
        "shout",
        f"Says it loud. {HOSTILE}",
        {
            "type": "object",
            "properties": {"word": {"type": "string", "description": f"word {HOSTILE}"}},
            "required": ["word"],
        },
        version=1,
    )


@pytest.mark.parametrize("format_", FORMATS)
def test_no_format_writes_a_control_character_raw(format_: str) -> None:
    text = render(format_, [hostile_spec()])
    assert not [raw for raw in RAW if raw in text], text
    if format_ in ("skill", "typescript"):  # comments shown visibly, as Markdown is
        for shown in ("\\x1b[1A", "\\x1b]52;c;ZXZpbA==\\x07", "\\x9b2J", "\\u202e\\u2066"):
            assert shown in text
    else:  # lossless: the decoded catalogue holds the description exactly
        assert f"Says it loud. {HOSTILE}" in strings(json.loads(text))


def strings(value: object) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def test_plain_catalogues_are_unchanged_by_the_encoder() -> None:
    plain = ToolSpec("echo", "Echo — with “quotes”, é and 中文.", {"type": "object"})
    text = render("json", [plain])
    assert "Echo — with “quotes”, é and 中文." in text  # non-ASCII stays as is
    assert json.loads(text)["tool_count"] == 1
