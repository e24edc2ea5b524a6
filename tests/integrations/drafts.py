"""The pure draft every adapter test makes with ``create_tool``, and arguments it refuses."""

from __future__ import annotations

from typing import Any

from tests.shared_drafts import word_count_draft as plain_word_count


def word_count_draft() -> dict[str, Any]:
    """The shared word-count draft, its text at least one character long (so a schema-only
    violation reaches the foundry: smolagents checks top-level types itself)."""
    draft = plain_word_count()
    draft["parameters"]["properties"]["text"]["minLength"] = 1
    return draft


WORD_COUNT: dict[str, Any] = word_count_draft()
# A number where the schema wants a string: the foundry answers invalid_arguments at $.text.
BAD_ARGUMENTS: dict[str, Any] = {"text": 42}
# The right type, but too short: only a JSON Schema validator sees it (smolagents checks types).
TOO_SHORT: dict[str, Any] = {"text": ""}


def user_says(text: str) -> Any:
    """A LangChain agent's input of one user message (``Any``: the state it fills is the
    agent's, typed by its middleware)."""
    return {"messages": [("user", text)]}
