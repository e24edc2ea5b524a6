"""Drafts several test areas submit (imported as ``tests.shared_drafts``)."""

from __future__ import annotations

import copy
from typing import Any


def network_draft(
    name: str,
    host: str,
    *,
    scheme: str = "https",
    description: str | None = None,
    test_name: str | None = "oslo",
) -> dict[str, Any]:
    """A tool fetching a city's temperature from ``host``: the policy holds it for approval.

    Its test answers from a fixture (``{"temp": -3}`` for Oslo), so the forge never touches the
    network; a call after approval reaches ``host`` (a loopback server in most tests).
    """
    test: dict[str, Any] = {"input": {"city": "Oslo"}, "expected": -3}
    if test_name is not None:
        test["name"] = test_name
    return {
        "name": name,
        "description": description or f"Current temperature for a city, from {host}",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "city name"}},
            "required": ["city"],
        },
        "code": (
            "export async function handler({ city }) {\n"
            f"  const r = await fetch('{scheme}://{host}/w?city=' + encodeURIComponent(city));\n"
            "  return (await r.json()).temp;\n"
            "}\n"
        ),
        "capabilities": {"network": [host]},
        "fixtures": [{"url": f"{scheme}://{host}/w?city=Oslo", "body": '{"temp": -3}'}],
        "tests": [test],
    }


WORD_COUNT: dict[str, Any] = {
    "name": "word_count",
    "description": "Count the words of a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "the text"}},
        "required": ["text"],
    },
    "code": (
        "export function handler({ text }) { return text.split(/\\s+/).filter(Boolean).length; }"
    ),
    "tests": [{"input": {"text": "one two  three"}, "expected": 3}],
}


def word_count_draft() -> dict[str, Any]:
    """A fresh copy of the pure word-count draft (the tests' everyday pure tool)."""
    return copy.deepcopy(WORD_COUNT)
