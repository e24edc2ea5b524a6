"""Reading every tool's current version sorts nothing on SQLite: ``ORDER BY name`` is served by
the index (EXPLAIN QUERY PLAN has no ``USE TEMP B-TREE``), and versions are found by index
(``SEARCH tf_versions``), so the read grows with the rows and no faster.

The statements are the ones the registry runs (caught with SQLAlchemy's cursor event), each
explained on the same connection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from toolfoundry.registry import NewVersion, Registry, VersionStatus

TOOLS = 40


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    registry = Registry.open(f"sqlite:///{tmp_path / 'registry.db'}")
    for i in range(TOOLS):
        registry.add_version(
            NewVersion(
                name=f"tool_{i:03d}",
                code=f"export function handler() {{ return {i}; }}",
                description=f"Tool {i}",
                parameters={"type": "object", "properties": {}},
                status=VersionStatus.ACTIVE if i % 3 else VersionStatus.PENDING_APPROVAL,
            )
        )
    yield registry
    registry.close()


def plans_of(registry: Registry, act: Callable[[], Any]) -> list[list[str]]:
    """The query plan of each SELECT ``act()`` runs."""
    plans: list[list[str]] = []

    def explain(conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            raw = conn.connection.driver_connection  # the sqlite3 connection: no event of ours
            rows = raw.execute(f"EXPLAIN QUERY PLAN {statement}", params).fetchall()
            plans.append([str(row[-1]) for row in rows])

    event.listen(registry.engine, "after_cursor_execute", explain)
    try:
        act()
    finally:
        event.remove(registry.engine, "after_cursor_execute", explain)
    return plans


@pytest.mark.parametrize("status", [None, VersionStatus.ACTIVE])
def test_reading_every_current_version_sorts_nothing(
    reg: Registry, status: VersionStatus | None
) -> None:
    plans = plans_of(reg, lambda: reg.current_versions(status=status))
    versions = [plan for plan in plans if any("tf_versions" in step for step in plan)]
    assert versions, plans
    for plan in versions:
        assert not any("TEMP B-TREE" in step for step in plan), plan
        assert any(step.startswith("SEARCH tf_versions") for step in plan), plan
