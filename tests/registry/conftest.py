"""The registry suites' fixtures (``db_url``, ``pg_url``: tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolfoundry.registry import Registry


@pytest.fixture
def reg(db_url: str) -> Iterator[Registry]:
    """An open registry over an empty database on each backend."""
    registry = Registry.open(db_url)
    yield registry
    registry.close()
