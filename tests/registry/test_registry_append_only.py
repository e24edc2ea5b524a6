"""The audit log and the approvals are append-only against every write SQL offers.

Each statement below is one a compromised or careless writer could run through the registry's
own connection; the database itself refuses it, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from toolfoundry.registry import NewVersion, Registry, VersionStatus

AUDIT_REWRITES = [
    "UPDATE tf_audit SET actor = 'mallory'",
    "DELETE FROM tf_audit",
]
SQLITE_AUDIT_REWRITES = [
    "INSERT OR REPLACE INTO tf_audit (id, at, tool, version, event, actor, detail) "
    "SELECT id, at, tool, version, event, 'mallory', detail FROM tf_audit",
    "REPLACE INTO tf_audit (id, at, tool, version, event, actor, detail) "
    "SELECT id, at, tool, version, event, 'mallory', detail FROM tf_audit",
    "INSERT INTO tf_audit (id, at, tool, version, event, actor, detail) "
    "SELECT id, at, tool, version, event, actor, detail FROM tf_audit WHERE true "
    "ON CONFLICT (id) DO UPDATE SET actor = 'mallory'",
]
POSTGRES_AUDIT_REWRITES = [
    "INSERT INTO tf_audit (id, at, tool, version, event, actor, detail) "
    "SELECT id, at, tool, version, event, actor, detail FROM tf_audit "
    "ON CONFLICT (id) DO UPDATE SET actor = 'mallory'",
    "TRUNCATE tf_audit",
]
APPROVAL_REWRITES = [
    "UPDATE tf_approvals SET approver = 'mallory'",
    "DELETE FROM tf_approvals",
]
SQLITE_APPROVAL_REWRITES = [
    "INSERT OR REPLACE INTO tf_approvals (id, version_id, approver, decided_at, decision, "
    "reason, code_sha256, capability_hash) SELECT id, version_id, 'mallory', decided_at, "
    "decision, reason, code_sha256, capability_hash FROM tf_approvals",
]
POSTGRES_APPROVAL_REWRITES = [
    "INSERT INTO tf_approvals (id, version_id, approver, decided_at, decision, reason, "
    "code_sha256, capability_hash) SELECT id, version_id, 'mallory', decided_at, decision, "
    "reason, code_sha256, capability_hash FROM tf_approvals "
    "ON CONFLICT (id) DO UPDATE SET approver = 'mallory'",
    "TRUNCATE tf_approvals CASCADE",
]


@pytest.fixture
def reviewed(db_url: str) -> Iterator[Registry]:
    """A registry holding one approved network tool: audit rows and one approval row."""
    registry = Registry.open(db_url)
    registry.add_version(
        NewVersion(
            name="weather",
            code="export async function handler() { return (await fetch('https://a.test')).ok; }",
            description="Read the weather",
            parameters={"type": "object", "properties": {}},
            status=VersionStatus.PENDING_APPROVAL,
            test_results=[{"name": "#0", "passed": True}],
        )
    )
    registry.decide("weather", 1, approve=True, by="alice", reason="looked at it")
    yield registry
    registry.close()


def _snapshot(reg: Registry) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with reg.engine.connect() as conn:
        audit = [tuple(r) for r in conn.execute(text("SELECT * FROM tf_audit ORDER BY id"))]
        approvals = [tuple(r) for r in conn.execute(text("SELECT * FROM tf_approvals"))]
    return audit, approvals


def test_no_write_rewrites_the_audit_or_the_approvals(reviewed: Registry) -> None:
    postgres = reviewed.engine.dialect.name == "postgresql"
    statements = [
        *AUDIT_REWRITES,
        *(POSTGRES_AUDIT_REWRITES if postgres else SQLITE_AUDIT_REWRITES),
        *APPROVAL_REWRITES,
        *(POSTGRES_APPROVAL_REWRITES if postgres else SQLITE_APPROVAL_REWRITES),
    ]
    before = _snapshot(reviewed)
    assert before[0]
    assert len(before[1]) == 1
    for sql in statements:
        with pytest.raises(DBAPIError, match="append-only"), reviewed.engine.begin() as conn:
            conn.execute(text(sql))
    assert _snapshot(reviewed) == before
    assert [a.approver for a in reviewed.approvals("weather")] == ["alice"]


def test_appending_still_works(reviewed: Registry) -> None:
    audit_rows = len(_snapshot(reviewed)[0])
    reviewed.set_enabled("weather", False, by="bob")
    assert len(_snapshot(reviewed)[0]) == audit_rows + 1
