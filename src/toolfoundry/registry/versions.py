"""Reading versions: one query shape (a version joined to its tool) and its record mapping.

Listings read every current version at once (10 000 rows and more), so a row is cheap to map:
JSON columns arrive as their stored text and are decoded here (an empty ``[]``/``{}`` without
the decoder), equal capability texts share one parsed :class:`Capabilities` (immutable), rows
are mapped by position, and the many records of one read are built with the cyclic collector
paused (``base.collector.gc_paused``: otherwise the cost grew faster than the number of rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, Select, Text, select, type_coerce
from sqlalchemy.engine import Connection, Row

from toolfoundry.base.collector import gc_paused
from toolfoundry.registry.codecs import (
    JSON_COLUMNS,
    as_utc,
    capabilities_of,
    decoded,
    status_of,
    version_record,
    version_records,
)
from toolfoundry.registry.records import (
    RegistryError,
    ToolListing,
    ToolVersion,
    example_arguments,
    tool_spec,
)
from toolfoundry.registry.schema import tools, versions
from toolfoundry.spec import Capabilities, ToolSpec, VersionStatus
from toolfoundry.spec.names import did_you_mean


def _as_text(column: Column[Any]) -> Any:
    # a JSON column as its stored text: SQLAlchemy's per-value JSON processor costs more than
    # the decode (codecs.decoded)
    return type_coerce(column, Text).label(column.name)


def _versions() -> Select[Any]:
    columns = [_as_text(c) if c.name in JSON_COLUMNS else c for c in versions.c]
    return select(*columns, tools.c.name, tools.c.current_version).join(
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
        raise RegistryError("not_found", f"no tool {what}{_close_to(conn, name, number)}")
    return to_version(row)


def _close_to(conn: Connection, name: str, number: int | None = None) -> str:
    """The "did you mean" of an unknown name; nothing when only the version is unknown."""
    if number is not None and conn.execute(select(tools.c.id).where(tools.c.name == name)).first():
        return ""
    return did_you_mean(name, conn.execute(select(tools.c.name)).scalars())


def history(conn: Connection, name: str) -> list[ToolVersion]:
    """Every version of a tool, oldest first (``not_found`` for unknown tools)."""
    found = versions_of(conn, name)
    if not found:
        raise RegistryError("not_found", f"no tool named {name!r}{_close_to(conn, name)}")
    return found


def versions_of(conn: Connection, name: str) -> list[ToolVersion]:
    """Every version of a tool, oldest first; [] for a name no tool has (no "did you mean",
    which reads every name: a create of a new tool asks this)."""
    query = _versions().where(tools.c.name == name).order_by(versions.c.version)
    return [to_version(r) for r in conn.execute(query).all()]


def current(
    conn: Connection,
    *,
    status: VersionStatus | None = None,
    names: Sequence[str] | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[ToolVersion]:
    """The current version of every tool by name, in one query (optionally only with
    ``status``, or only ``names``; ``limit`` rows after skipping ``offset``)."""
    query = _current(_versions(), status, names, limit, offset)
    result = conn.execute(query)  # the statement outside the pause: it may wait on a lock
    with gc_paused():
        return version_records(list(result.keys()), result.all(), {})


def _current(
    query: Select[Any],
    status: VersionStatus | None,
    names: Sequence[str] | None,
    limit: int | None,
    offset: int,
) -> Select[Any]:
    """``query`` (versions joined to their tools) narrowed to current versions, by name."""
    query = query.where(versions.c.version == tools.c.current_version)
    if status is not None:
        query = query.where(tools.c.current_status == status.value)
    if names is not None:
        query = query.where(tools.c.name.in_(list(names)))
    query = query.order_by(tools.c.name)
    if limit is not None or offset:
        query = query.limit(limit).offset(offset)
    return query


_LISTING = select(
    tools.c.name,
    versions.c.version,
    versions.c.status,
    versions.c.sha256,
    _as_text(versions.c.capabilities),
    versions.c.author,
    versions.c.created_at,
    versions.c.parent_version,
    versions.c.description,
).join(tools, tools.c.id == versions.c.tool_id)


def listing(
    conn: Connection,
    *,
    status: VersionStatus | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[ToolListing]:
    """Every tool's current version as a listing shows it, by name: one query of the narrow
    columns (no code, schemas, tests or results are read or decoded) and one of the pending
    versions, on ``conn`` (one snapshot when it is a read transaction)."""
    result = conn.execute(_current(_LISTING, status, None, limit, offset))
    with gc_paused():
        rows = result.all()
    waiting = pending_by_tool(conn) if rows else {}
    parsed: dict[str, Capabilities] = {}
    with gc_paused():
        return [
            ToolListing(
                name,
                version,
                status_of(state),
                sha256,
                capabilities_of(caps, parsed),
                author,
                as_utc(created),
                parent,
                description,
                waiting.get(name, ()),
            )
            for name, version, state, sha256, caps, author, created, parent, description in rows
        ]


# The columns of records.tool_spec, in its order (JSON ones as their stored text).
_SPECS = select(
    tools.c.name,
    versions.c.description,
    _as_text(versions.c.parameters),
    _as_text(versions.c.returns),
    versions.c.level,
    _as_text(versions.c.capabilities),
    versions.c.version,
).join(tools, tools.c.id == versions.c.tool_id)


def specs(
    conn: Connection,
    *,
    status: VersionStatus | None = None,
    names: Sequence[str] | None = None,
    examples: bool = False,
) -> list[ToolSpec]:
    """The spec of every tool's current version, by name (optionally only with ``status``, or
    only ``names``): one query of the columns a spec is made of (no code, tests, fixtures,
    results or findings), each spec equal to :attr:`ToolVersion.spec` of the full read.
    ``examples``: also read the tests and their results, for each spec's example arguments
    (records.example_arguments)."""
    if examples:
        return _specs_with_examples(conn, status, names)
    result = conn.execute(_current(_SPECS, status, names, None, 0))
    parsed: dict[str, Capabilities] = {}
    with gc_paused():
        return [
            tool_spec(
                name,
                description,
                decoded(parameters),
                decoded(returns),
                level,
                capabilities_of(caps, parsed),
                version,
            )
            for name, description, parameters, returns, level, caps, version in result.all()
        ]


_EXAMPLES = _SPECS.add_columns(versions.c.tests, versions.c.test_results)


def _specs_with_examples(
    conn: Connection, status: VersionStatus | None, names: Sequence[str] | None
) -> list[ToolSpec]:
    rows = conn.execute(_current(_EXAMPLES, status, names, None, 0)).all()
    parsed: dict[str, Capabilities] = {}
    return [
        tool_spec(
            name,
            description,
            decoded(parameters),
            decoded(returns),
            level,
            capabilities_of(caps, parsed),
            version,
            example_arguments(tests, results),
        )
        for name, description, parameters, returns, level, caps, version, tests, results in rows
    ]


def pending_by_tool(conn: Connection) -> dict[str, tuple[int, ...]]:
    """Every tool with versions waiting for a human: its name -> their numbers, ascending."""
    query = (
        select(tools.c.name, versions.c.version)
        .join(tools, tools.c.id == versions.c.tool_id)
        .where(versions.c.status == VersionStatus.PENDING_APPROVAL.value)
        .order_by(tools.c.name, versions.c.version)
    )
    out: dict[str, list[int]] = {}
    for name, number in conn.execute(query):
        out.setdefault(str(name), []).append(int(number))
    return {name: tuple(numbers) for name, numbers in out.items()}


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
    return version_record(row._mapping, {})
