"""The append-only audit log: writing rows inside a transaction, and reading them back."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, DateTime, bindparam, select, text
from sqlalchemy.engine import Connection, Row

from toolfoundry.registry.codecs import as_utc, now
from toolfoundry.registry.records import AuditEntry, AuditEvent
from toolfoundry.registry.schema import audit

_APPEND = text(
    "INSERT INTO tf_audit (at, tool, version, event, actor, detail) "
    "VALUES (:at, :tool, :version, :event, :actor, :detail)"
).bindparams(bindparam("at", type_=DateTime(timezone=True)), bindparam("detail", type_=JSON))


def append(
    conn: Connection,
    tool: str,
    version: int | None,
    event: AuditEvent,
    actor: str,
    detail: dict[str, Any] | None = None,
) -> None:
    """Add one row; it becomes visible when the caller's transaction commits."""
    row = {"at": now(), "tool": tool, "version": version, "event": event.value, "actor": actor}
    conn.execute(_APPEND, {**row, "detail": detail or {}})


def entries(
    conn: Connection,
    tool: str | None = None,
    limit: int | None = None,
    *,
    event: AuditEvent | None = None,
) -> list[AuditEntry]:
    """Rows oldest first (the newest ``limit`` of them when a limit is given), of one tool
    and one kind of event when told."""
    query = select(audit).order_by(audit.c.id.desc())
    if tool is not None:
        query = query.where(audit.c.tool == tool)
    if event is not None:
        query = query.where(audit.c.event == event.value)
    if limit is not None:
        query = query.limit(limit)
    return [_entry(row) for row in reversed(conn.execute(query).all())]


def _entry(row: Row[Any]) -> AuditEntry:
    return AuditEntry(
        id=row.id,
        at=as_utc(row.at),
        tool=row.tool,
        version=row.version,
        event=AuditEvent(row.event),
        actor=row.actor,
        detail=dict(row.detail or {}),
        caller=row.caller,
    )
