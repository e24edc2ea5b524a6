"""Reading versions: one query shape (a version joined to its tool) and its record mapping."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.engine import Connection, Row

from toolfoundry.registry.audit import as_utc
from toolfoundry.registry.records import RegistryError, ToolVersion
from toolfoundry.registry.schema import tools, versions
from toolfoundry.spec import Capabilities, VersionStatus


def _versions() -> Select[Any]:
    return select(*versions.c, tools.c.name, tools.c.current_version).join(
        tools, tools.c.id == versions.c.tool_id
    )


def one(conn: Connection, name: str, number: int | None) -> ToolVersion:
    """The named version, or the current one; raises ``RegistryError('not_found')``."""
    query = _versions().where(tools.c.name == name)
    if number is None:
        query = query.where(versions.c.version == tools.c.current_version)
    else:
        query = query.where(versions.c.version == number)
    row = conn.execute(query).first()
    if row is None:
        what = f"{name!r}" if number is None else f"{name!r} version {number}"
        raise RegistryError("not_found", f"no tool {what}")
    return to_version(row)


def history(conn: Connection, name: str) -> list[ToolVersion]:
    """Every version of a tool, oldest first (``not_found`` for unknown tools)."""
    query = _versions().where(tools.c.name == name).order_by(versions.c.version)
    rows = conn.execute(query).all()
    if not rows:
        raise RegistryError("not_found", f"no tool named {name!r}")
    return [to_version(r) for r in rows]


def current(
    conn: Connection, *, status: VersionStatus | None = None, names: Sequence[str] | None = None
) -> list[ToolVersion]:
    """The current version of every tool (optionally only with ``status``, or only ``names``)."""
    query = _versions().where(versions.c.version == tools.c.current_version)
    if status is not None:
        query = query.where(tools.c.current_status == status.value)
    if names is not None:
        query = query.where(tools.c.name.in_(list(names)))
    return [to_version(r) for r in conn.execute(query.order_by(tools.c.name)).all()]


def pending(conn: Connection) -> list[ToolVersion]:
    """Versions waiting for a human decision, oldest first."""
    query = _versions().where(versions.c.status == VersionStatus.PENDING_APPROVAL.value)
    rows = conn.execute(query.order_by(versions.c.created_at, versions.c.id)).all()
    return [to_version(r) for r in rows]


def active_with_sha(conn: Connection, sha256: str, exclude: str | None) -> ToolVersion | None:
    """A current, active tool whose code has this hash."""
    query = _versions().where(
        versions.c.sha256 == sha256,
        versions.c.version == tools.c.current_version,
        tools.c.current_status == VersionStatus.ACTIVE.value,
    )
    if exclude is not None:
        query = query.where(tools.c.name != exclude)
    row = conn.execute(query.order_by(tools.c.name)).first()
    return None if row is None else to_version(row)


def active_set(conn: Connection) -> list[tuple[str, int]]:
    """(name, current version) of every tool whose current version is active, by name.

    One narrow row per tool from the tools table (no versions, no JSON): cheap to poll.
    """
    query = (
        select(tools.c.name, tools.c.current_version)
        .where(tools.c.current_status == VersionStatus.ACTIVE.value)
        .order_by(tools.c.name)
    )
    return [(str(name), int(number)) for name, number in conn.execute(query)]


def to_version(row: Row[Any]) -> ToolVersion:
    """The record of one joined row."""
    return ToolVersion(
        id=row.id,
        name=row.name,
        version=row.version,
        language=row.language,
        code=row.code,
        sha256=row.sha256,
        description=row.description,
        parameters=dict(row.parameters),
        returns=dict(row.returns) if row.returns is not None else None,
        tests=list(row.tests),
        fixtures=list(row.fixtures),
        capabilities=Capabilities.from_dict(row.capabilities),
        capability_hash=row.capability_hash,
        level=row.level,
        status=VersionStatus(row.status),
        author=row.author,
        created_at=as_utc(row.created_at),
        parent_version=row.parent_version,
        findings=list(row.findings),
        test_results=list(row.test_results),
        extra=dict(row.extra),
        current=row.current_version == row.version,
    )
