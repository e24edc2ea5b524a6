"""visible_lines: the one-scan form of visible_line for a listing's columns."""

from __future__ import annotations

import pytest

from toolfoundry.base.display import visible_line, visible_lines

HOSTILE = [
    "plain",
    "erase\x1b[2K",
    "two\nlines",
    "bidi \u202e reversed",
    "lone \ud800 surrogate",
    "tab\tkept",
    "c1 \x9b",
    "",
]


def test_clean_texts_come_back_as_they_are() -> None:
    texts = ["alpha", "beta gamma", "\U0001f600 ok", "tab\tkept", ""]
    assert visible_lines(texts) is texts


@pytest.mark.parametrize("bad", HOSTILE[1:])
def test_one_unsafe_text_escapes_each_text_as_visible_line_does(bad: str) -> None:
    texts = ["clean", bad, "also clean"]
    assert visible_lines(texts) == [visible_line(t) for t in texts]


def test_every_hostile_text_together() -> None:
    got = visible_lines(HOSTILE)
    assert got == [visible_line(t) for t in HOSTILE]
    assert all("\x1b" not in t and "\n" not in t and "\u202e" not in t for t in got)
    assert visible_lines([]) == []
