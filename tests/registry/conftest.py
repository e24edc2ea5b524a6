"""Real databases for the registry tests: a temporary SQLite file, or a fresh PostgreSQL schema."""

from __future__ import annotations

from pathlib import Path

import pytest

BACKENDS = [
    "sqlite",
    pytest.param("postgresql", marks=[pytest.mark.slow, pytest.mark.postgres]),
]


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL to an empty database on each backend (PostgreSQL only under ``-m slow``)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'registry.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url
