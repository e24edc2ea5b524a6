"""What a periodic review of the registry reads, in a few set queries (no per-tool round trip).

``toolfoundry tools report`` (foundry/report.py) needs, for every tool: its current version's
status and capabilities, when the tool was created, its call and failure counters and last
use; then every version waiting for a human and every ``tests_retired`` audit row. Each is one
query over all tools, so a registry of 10 000 tools costs four queries, not 40 000. The
regression gate's fixtures of the version each current one was made from (what ``tools
verify`` runs earlier tests with) are one self-join too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Text, and_, cast, or_, select
from sqlalchemy.engine import Connection

from toolfoundry.registry import audit as audit_log
from toolfoundry.registry.codecs import as_utc, capabilities_of
from toolfoundry.registry.records import AuditEntry, AuditEvent
from toolfoundry.registry.schema import tools, usage, versions
from toolfoundry.spec import Capabilities, VersionStatus


@dataclass(frozen=True)
class ToolFacts:
    """One tool as a review sees it: its current version and its call counters."""

    name: str
    version: int | None
    status: VersionStatus | None
    created_at: datetime
    capabilities: Capabilities
    calls: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    last_used: datetime | None = None

    @property
    def failed(self) -> int:
        """Failed calls of every kind."""
        return sum(self.failures.values())


@dataclass(frozen=True)
class PendingFacts:
    """A version waiting for a human decision."""

    name: str
    version: int
    created_at: datetime
    author: str
    capabilities: Capabilities


@dataclass(frozen=True)
class ReviewFacts:
    """Everything ``tools report`` aggregates, read in one transaction."""

    tools: tuple[ToolFacts, ...]
    pending: tuple[PendingFacts, ...]
    retirements: tuple[AuditEntry, ...]


def review_facts(conn: Connection) -> ReviewFacts:
    """Every tool's facts, the pending versions and the test retirements."""
    counters = _counters(conn)
    facts = tuple(
        ToolFacts(
            name=name,
            version=version,
            status=status,
            created_at=created,
            capabilities=caps,
            **counters.get(name, {}),
        )
        for name, version, status, created, caps in _current(conn)
    )
    return ReviewFacts(facts, _pending(conn), _retirements(conn))


def _current(
    conn: Connection,
) -> list[tuple[str, int | None, VersionStatus | None, datetime, Capabilities]]:
    """(name, current version, status, tool created at, capabilities) of every tool."""
    query = (
        select(
            tools.c.name,
            tools.c.current_version,
            tools.c.current_status,
            tools.c.created_at,
            # as text on both databases: a registry has few distinct capability sets, each
            # decoded once
            cast(versions.c.capabilities, Text),
        )
        .select_from(tools)
        .outerjoin(
            versions,
            and_(versions.c.tool_id == tools.c.id, versions.c.version == tools.c.current_version),
        )
        .order_by(tools.c.name)
    )
    parsed: dict[str, Capabilities] = {}
    out = []
    for name, number, status, created, stored in conn.execute(query).all():
        out.append(
            (
                str(name),
                None if number is None else int(number),
                None if status is None else VersionStatus(status),
                as_utc(created),
                capabilities_of(stored, parsed),
            )
        )
    return out


def _counters(conn: Connection) -> dict[str, dict[str, Any]]:
    """Calls, failures by kind and last use of every tool ever called (the histogram rows,
    most of the table, are left out)."""
    query = select(usage.c.tool, usage.c.counter, usage.c.n, usage.c.last_at).where(
        or_(usage.c.counter == "calls", usage.c.counter.like("failed:%"))
    )
    out: dict[str, dict[str, Any]] = {}
    for tool, counter, n, last_at in conn.execute(query):
        row = out.setdefault(str(tool), {"failures": {}})
        if counter == "calls":
            row["calls"] = int(n)
            row["last_used"] = as_utc(last_at) if last_at is not None else None
        else:
            row["failures"][str(counter).removeprefix("failed:")] = int(n)
    for row in out.values():
        row["failures"] = dict(sorted(row["failures"].items()))
    return out


def _pending(conn: Connection) -> tuple[PendingFacts, ...]:
    query = (
        select(
            tools.c.name,
            versions.c.version,
            versions.c.created_at,
            versions.c.author,
            cast(versions.c.capabilities, Text),
        )
        .join(tools, tools.c.id == versions.c.tool_id)
        .where(versions.c.status == VersionStatus.PENDING_APPROVAL.value)
        .order_by(versions.c.created_at, versions.c.id)
    )
    parsed: dict[str, Capabilities] = {}
    return tuple(
        PendingFacts(str(name), int(number), as_utc(at), str(author), capabilities_of(caps, parsed))
        for name, number, at, author, caps in conn.execute(query)
    )


def _retirements(conn: Connection) -> tuple[AuditEntry, ...]:
    return tuple(audit_log.entries(conn, event=AuditEvent.TESTS_RETIRED))


def parent_fixtures(conn: Connection, names: Sequence[str]) -> dict[str, list[Any]]:
    """The draft-level fixtures of the version each named tool's current version was made
    from (its ``parent_version``), by tool name; tools without a parent are left out.

    The regression gate ran a version's earlier tests with these layered over its own
    (forge/regression.py), so a re-run of those tests needs them too.
    """
    if not names:
        return {}
    parent = versions.alias("parent")
    current = versions.alias("cur")
    query = (
        select(tools.c.name, parent.c.fixtures)
        .join(
            current,
            and_(current.c.tool_id == tools.c.id, current.c.version == tools.c.current_version),
        )
        .join(
            parent,
            and_(parent.c.tool_id == tools.c.id, parent.c.version == current.c.parent_version),
        )
        .where(tools.c.name.in_(list(names)))
    )
    return {str(name): list(fixtures or []) for name, fixtures in conn.execute(query)}
