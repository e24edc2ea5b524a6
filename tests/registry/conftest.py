"""The registry suites' fixtures (``db_url``, ``pg_url``: tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolfoundry.registry import Registry


@pytest.fixture
def reg(db_url: str) -> Iterator[Registry]:
    """An open registry over an empty database on each backend (search on BM25 alone: the
    hybrid ranking has its own suite, test_registry_search_hybrid.py)."""
    registry = Registry.open(db_url, embeddings=False)
    yield registry
    registry.close()
