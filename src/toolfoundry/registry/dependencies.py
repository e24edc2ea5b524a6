"""Which tools a version's code calls, and which versions call a tool (``tf_dependencies``).

A version's dependencies are written with it (``Registry.add_version``) and never change: each
names the callee and the version of it the dependent's tests ran against. Reads go by the
dependent's version row (its primary key) or by the callee (``ix_tf_dependencies_callee``):
no read passes over the whole table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import insert, or_, select
from sqlalchemy.engine import Connection

from toolfoundry.registry.codecs import status_of
from toolfoundry.registry.records import Dependency, Dependent
from toolfoundry.registry.schema import dependencies, tools, versions
from toolfoundry.spec import VersionStatus


def write(conn: Connection, version_id: int, uses: Iterable[Dependency]) -> None:
    """Record the tools version ``version_id`` calls (one statement)."""
    rows = [
        {
            "version_id": version_id,
            "callee": d.callee,
            "callee_version": d.version,
            "schema_hash": d.schema_hash,
            "found": d.found,
        }
        for d in uses
    ]
    if rows:
        conn.execute(insert(dependencies), rows)


def of_named(conn: Connection, name: str, number: int | None) -> list[Dependency]:
    """What version ``number`` of ``name`` (its current version when None) calls."""
    which = versions.c.version == (tools.c.current_version if number is None else number)
    query = (
        select(
            dependencies.c.callee,
            dependencies.c.callee_version,
            dependencies.c.schema_hash,
            dependencies.c.found,
        )
        .select_from(tools)
        .join(versions, (versions.c.tool_id == tools.c.id) & which)
        .join(dependencies, dependencies.c.version_id == versions.c.id)
        .where(tools.c.name == name)
        .order_by(dependencies.c.callee)
    )
    return [Dependency(*row) for row in conn.execute(query)]


def of_current(conn: Connection, names: Sequence[str]) -> dict[str, list[Dependency]]:
    """What the current version of each named tool calls, by tool name (the tools that call
    nothing are left out)."""
    if not names:
        return {}
    query = (
        select(
            tools.c.name,
            dependencies.c.callee,
            dependencies.c.callee_version,
            dependencies.c.schema_hash,
            dependencies.c.found,
        )
        .select_from(tools)
        .join(
            versions,
            (versions.c.tool_id == tools.c.id) & (versions.c.version == tools.c.current_version),
        )
        .join(dependencies, dependencies.c.version_id == versions.c.id)
        .where(tools.c.name.in_(list(names)))
        .order_by(tools.c.name, dependencies.c.callee)
    )
    out: dict[str, list[Dependency]] = {}
    for name, *rest in conn.execute(query):
        out.setdefault(name, []).append(Dependency(*rest))
    return out


def dependents(conn: Connection, callees: Sequence[str]) -> dict[str, list[Dependent]]:
    """The versions that call each of ``callees``: every tool's current version and every
    version waiting for approval, by callee, then by tool name and version."""
    if not callees:
        return {}
    query = (
        select(
            dependencies.c.callee,
            tools.c.name,
            versions.c.version,
            versions.c.status,
            tools.c.current_version,
            dependencies.c.callee_version,
        )
        .select_from(dependencies)
        .join(versions, versions.c.id == dependencies.c.version_id)
        .join(tools, tools.c.id == versions.c.tool_id)
        .where(
            dependencies.c.callee.in_(list(callees)),
            or_(
                versions.c.version == tools.c.current_version,
                versions.c.status == VersionStatus.PENDING_APPROVAL.value,
            ),
        )
        .order_by(dependencies.c.callee, tools.c.name, versions.c.version)
    )
    out: dict[str, list[Dependent]] = {}
    for callee, name, number, status, current, tested in conn.execute(query):
        dependent = Dependent(name, number, status_of(status), number == current, tested)
        out.setdefault(callee, []).append(dependent)
    return out
