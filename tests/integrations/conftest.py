"""Real parts for the adapter tests: a registry on a SQLite file.

Each framework's own agent loop runs with that framework's offline test model, scripted to
make a tool with ``create_tool`` (``drafts.py``), call it in the same run, and send it bad
arguments.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from toolfoundry import Foundry


@pytest.fixture
def fd(tmp_path: Path) -> Iterator[Foundry]:
    """A foundry on a file SQLite database (adapters call it from worker threads)."""
    foundry = Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}")
    yield foundry
    foundry.close()
