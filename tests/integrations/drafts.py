"""The pure draft every adapter test makes with ``create_tool``, and arguments it refuses."""

from __future__ import annotations

import copy
from typing import Any

WORD_COUNT: dict[str, Any] = {
    "name": "word_count",
    "description": "Count the words of a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1, "description": "the text"}},
        "required": ["text"],
    },
    "code": (
        "export function handler({ text }) { return text.split(/\\s+/).filter(Boolean).length; }"
    ),
    "tests": [{"input": {"text": "one two  three"}, "expected": 3}],
}
# A number where the schema wants a string: the foundry answers invalid_arguments at $.text.
BAD_ARGUMENTS: dict[str, Any] = {"text": 42}
# The right type, but too short: only a JSON Schema validator sees it (smolagents checks types).
TOO_SHORT: dict[str, Any] = {"text": ""}


def word_count_draft() -> dict[str, Any]:
    """A fresh copy of the pure draft."""
    return copy.deepcopy(WORD_COUNT)
