"""Real parts for the adapter tests: a registry on SQLite, a pure draft and a risky one.

Each framework's own agent loop runs with that framework's offline test model, scripted to
make a tool with ``create_tool``, call it in the same run, and send it bad arguments.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolfoundry import Foundry

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
# A number where the schema wants a string: the foundry answers invalid_arguments at $.text.
BAD_ARGUMENTS: dict[str, Any] = {"text": 42}


def word_count_draft() -> dict[str, Any]:
    """A fresh copy of the pure draft every adapter test creates."""
    return copy.deepcopy(WORD_COUNT)


@pytest.fixture
def fd(tmp_path: Path) -> Iterator[Foundry]:
    """A foundry on a file SQLite database (adapters call it from worker threads)."""
    foundry = Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}")
    yield foundry
    foundry.close()
