"""Golden files: every format rendered from the representative specs, byte for byte.

Regenerate after an intended change with ``TOOLFOUNDRY_UPDATE_GOLDEN=1 pytest tests/catalog``
and review the diff.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from toolfoundry.catalog import FORMATS, render
from toolfoundry.spec import ToolSpec

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("TOOLFOUNDRY_UPDATE_GOLDEN") == "1"


SUFFIXES = {"skill": "md", "typescript": "d.ts"}


def golden_path(format: str) -> Path:
    return GOLDEN / f"catalog.{format}.{SUFFIXES.get(format, 'json')}"


@pytest.mark.parametrize("format", FORMATS)
def test_rendering_matches_golden_file(format: str, specimens: list[ToolSpec]) -> None:
    text = render(format, specimens)
    path = golden_path(format)
    if UPDATE:
        path.write_text(text, encoding="utf-8", newline="")
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("format", FORMATS)
def test_rendering_ignores_input_order(format: str, specimens: list[ToolSpec]) -> None:
    shuffled = specimens[:]
    random.Random(7).shuffle(shuffled)
    assert render(format, shuffled) == render(format, specimens)
    assert render(format, list(reversed(specimens))) == render(format, specimens)


def test_every_format_has_a_golden_file() -> None:
    assert sorted(p.name for p in GOLDEN.glob("catalog.*")) == sorted(
        golden_path(f).name for f in FORMATS
    )
