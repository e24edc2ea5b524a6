"""What the page and the API show about tools: listings with usage, and a version's review.

Plain functions of a :class:`Foundry` returning JSON-ready dicts, so the page renders exactly
what the API returns. A version's review is :mod:`toolfoundry.foundry.review`'s, shared with
the CLI.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from toolfoundry.foundry import Foundry
from toolfoundry.foundry.review import pending_reviews, version_review
from toolfoundry.registry import UsageStats
from toolfoundry.registry import usage as usage_counters
from toolfoundry.registry.audit import as_utc
from toolfoundry.registry.schema import usage as usage_table

__all__ = ["last_error", "pending_reviews", "tool_detail", "tool_rows", "version_review"]


def tool_rows(fd: Foundry, *, active_only: bool = False) -> list[dict[str, Any]]:
    """Every tool's current version with its description, usage and last error.

    One connection serves every tool's counters, and tools never called cost no query:
    the listing stays fast with hundreds of tools.
    """
    current = fd.tools(include_inactive=not active_only)
    with fd.registry.engine.connect() as conn:
        called = set(conn.execute(select(usage_table.c.tool).distinct()).scalars())
        stats = {v.name: usage_counters.stats(conn, v.name) for v in current if v.name in called}
        errors = _last_errors(conn)
    return [
        {
            **v.summary(),
            "description": v.description,
            "usage": (stats.get(v.name) or _unused(v.name)).to_dict(),
            "last_error": errors.get(v.name),
        }
        for v in current
    ]


def last_error(fd: Foundry, name: str) -> dict[str, Any] | None:
    """The kind and time of the newest failed call of ``name``, or None."""
    with fd.registry.engine.connect() as conn:
        return _last_errors(conn, name).get(name)


def _last_errors(conn: Connection, name: str | None = None) -> dict[str, dict[str, Any]]:
    # Each failure kind's counter keeps the time of its latest failure: the newest of them
    # is the tool's last error, read without scanning the audit log.
    query = select(usage_table.c.tool, usage_table.c.counter, usage_table.c.last_at).where(
        usage_table.c.counter.like("failed:%")
    )
    if name is not None:
        query = query.where(usage_table.c.tool == name)
    newest: dict[str, dict[str, Any]] = {}
    for tool, counter, at in conn.execute(query):
        if at is None:
            continue
        at = as_utc(at)
        if tool not in newest or at > newest[tool]["_at"]:
            newest[tool] = {
                "kind": counter.removeprefix("failed:"),
                "at": at.isoformat(),
                "_at": at,
            }
    return {tool: {k: v for k, v in e.items() if k != "_at"} for tool, e in newest.items()}


def _unused(name: str) -> UsageStats:
    return UsageStats(name, 0, {}, None, None, None, None)


def tool_detail(fd: Foundry, name: str) -> dict[str, Any]:
    """The current version in full, with usage (what ``tools show --json`` prints)."""
    v = fd.show(name)
    return {**v.to_dict(), "usage": fd.usage(name).to_dict(), "last_error": last_error(fd, name)}
