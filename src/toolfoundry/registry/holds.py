"""The one rule for approving a pending version: when the registry holds it back, and why.

A pending version may be approved unless one of these holds it (checked in this order):

- **superseded**: a newer version of the tool has been active (its status is ``active`` or
  ``disabled``). The pending one was never gated by that version's tests, and approving it
  would move the tool back to older code with no rollback in the log. It stays in the queue,
  marked, until a person rejects it; its code can come back as a new version, gated against
  the current one.
- **disabled**: a person disabled the tool. Approving would switch it back on, which only
  ``enable`` does; as for a new version of a disabled tool, enable it first.

:meth:`Registry.decide` applies the rule under the tool's write lock (every surface approves
through it: CLI, Python API, review page, HTTP API), and the queue reads the same holds
(:meth:`Registry.approval_holds`) so a reviewer sees them before the click. Rejecting is never
held: it changes nothing that runs.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, func, select, true
from sqlalchemy.engine import Connection

from toolfoundry.registry.records import ApprovalHold, AuditEvent, HoldKind
from toolfoundry.registry.schema import audit, tools, versions
from toolfoundry.spec import VersionStatus

# the statuses of a version that went live at some point (rolling back leaves a newer one
# active; disabling marks the current one)
_LIVE = (VersionStatus.ACTIVE.value, VersionStatus.DISABLED.value)


def holds(
    conn: Connection, which_tool: ColumnElement[bool] | None = None
) -> dict[tuple[str, int], ApprovalHold]:
    """Every pending version the rule holds back (of the tools ``which_tool`` selects, or
    all), by (name, version): one query, plus one for who disabled the disabled ones."""
    live = (
        select(versions.c.tool_id, func.max(versions.c.version).label("newest"))
        .where(versions.c.status.in_(_LIVE))
        .group_by(versions.c.tool_id)
        .subquery()
    )
    query = (
        select(tools.c.name, versions.c.version, tools.c.current_status, live.c.newest)
        .join(tools, tools.c.id == versions.c.tool_id)
        .outerjoin(live, live.c.tool_id == tools.c.id)
        .where(
            versions.c.status == VersionStatus.PENDING_APPROVAL.value,
            which_tool if which_tool is not None else true(),
        )
    )
    rows = conn.execute(query).all()
    disabled = {r.name for r in rows if r.current_status == VersionStatus.DISABLED.value}
    who = disabled_by(conn, disabled)
    found: dict[tuple[str, int], ApprovalHold] = {}
    for r in rows:
        hold = _hold(r.name, r.version, r.newest, who.get(r.name) if r.name in disabled else None)
        if hold is not None:
            found[(r.name, r.version)] = hold
    return found


def _hold(
    name: str, number: int, newest_live: int | None, disabled_by: str | None
) -> ApprovalHold | None:
    if newest_live is not None and newest_live > number:
        return ApprovalHold(
            HoldKind.SUPERSEDED,
            f"{name!r} v{number} is superseded: v{newest_live}, made after it, has been "
            f"active, and v{number} was never tested against it (approving would roll the "
            f"tool back). Reject it; to bring its code back, make a new version from it.",
            newest_live,
        )
    if disabled_by is not None:
        return ApprovalHold(
            HoldKind.DISABLED,
            f"{name!r} is disabled (by {disabled_by}): approving v{number} would switch it "
            "back on. Enable the tool first, then approve.",
        )
    return None


def disabled_by(conn: Connection, names: set[str]) -> dict[str, str]:
    """Who disabled each named tool last: the actor of its newest ``disabled`` audit row,
    quoted, or "an unknown actor"."""
    if not names:
        return {}
    newest = (
        select(func.max(audit.c.id))
        .where(audit.c.tool.in_(sorted(names)), audit.c.event == AuditEvent.DISABLED.value)
        .group_by(audit.c.tool)
    )
    rows = conn.execute(select(audit.c.tool, audit.c.actor).where(audit.c.id.in_(newest)))
    found = dict.fromkeys(names, "an unknown actor")
    found.update({r.tool: repr(r.actor) for r in rows})
    return found
