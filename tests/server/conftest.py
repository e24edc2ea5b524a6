"""The registry the review page and its API are tested against."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from toolfoundry import Foundry

from .test_server_web_support import seed


@pytest.fixture
def fd(tmp_path: Path) -> Iterator[Foundry]:
    """A SQLite registry seeded by :func:`seed` (shout v1/v2 active, weather and news pending)."""
    foundry = Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}")
    seed(foundry)
    yield foundry
    foundry.close()
