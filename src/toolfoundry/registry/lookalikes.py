"""Tool names by what they look like: each tool's lookalike keys (spec/names.py:name_keys).

A new name must not pass for an existing tool's. Comparing it with every name would read and
fold every tool on each create (about 60 ms at 10 000 tools); the keys are stored instead, one
row per key and tool, so the check is one index probe whatever the number of tools.

The keys are written by :func:`remember` in the transaction that creates a tool's row (its
first version, ``Registry._lock_tool``), and by migration 0007 for the tools stored before
it; those a previous release registers during an upgrade get theirs with the next new tool.
They are derived from the rule in spec/names.py: a change of that rule needs a migration that
recomputes them (tests/registry/test_registry_lookalikes.py pins the rule).
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from toolfoundry.registry.engine import upsert_insert
from toolfoundry.registry.schema import name_keys, tools
from toolfoundry.spec.names import name_keys as keys_of


def rows(tool_id: int, name: str) -> list[dict[str, object]]:
    """The ``tf_name_keys`` rows of a tool."""
    return [{"key": key, "tool_id": tool_id} for key in sorted(keys_of(name))]


def remember(conn: Connection, tool_id: int, name: str) -> None:
    """Store the keys of a tool's name (again: a name's keys never change, so this is a no-op
    for a tool that has them), and those of the tools registered after the last one with keys:
    a process of the previous release, still running during an upgrade, writes none."""
    known = select(func.coalesce(func.max(name_keys.c.tool_id), 0)).scalar_subquery()
    missed = conn.execute(
        select(tools.c.id, tools.c.name).where(tools.c.id > known, tools.c.id != tool_id)
    ).all()
    values = [row for i, n in [(tool_id, name), *missed] for row in rows(int(i), str(n))]
    insert = upsert_insert(conn.dialect.name)
    conn.execute(insert(name_keys).on_conflict_do_nothing(), values)  # compiled once, cached


def twin(conn: Connection, name: str) -> str | None:
    """The first tool by name, other than ``name``, that ``name`` passes for, or None."""
    query = (
        select(tools.c.name)
        .join(name_keys, name_keys.c.tool_id == tools.c.id)
        .where(name_keys.c.key.in_(sorted(keys_of(name))), tools.c.name != name)
        .order_by(tools.c.name)
        .limit(1)
    )
    found = conn.execute(query).scalar()
    return None if found is None else str(found)
