"""The performance guards: what a process loads, how many collections a read starts, which
query plans the registry's statements get. Counted, never timed (bench/ times). Every test
here carries the ``performance`` marker (``pytest -m performance`` runs them alone)."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.performance)
