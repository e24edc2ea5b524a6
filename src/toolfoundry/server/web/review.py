"""What the page and the API show about tools: listings with usage, and a version's review.

Plain functions of a :class:`Foundry` returning JSON-ready dicts, so the page renders exactly
what the API returns.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from toolfoundry.forge import code_diff, explain_capabilities
from toolfoundry.foundry import Foundry
from toolfoundry.registry import RegistryError, ToolVersion, UsageStats
from toolfoundry.registry import usage as usage_counters
from toolfoundry.registry.audit import as_utc
from toolfoundry.registry.schema import usage as usage_table


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


def _current(fd: Foundry, name: str) -> ToolVersion | None:
    try:
        return fd.show(name)
    except RegistryError:
        return None


def version_review(fd: Foundry, name: str, version: int) -> dict[str, Any]:
    """One version in full, plus what a reviewer needs: the diff against the current
    version (for the current version itself: against the version it was made from; for a
    first version: against nothing), what each capability means, and why the policy asked
    for a human.

    Raises:
        RegistryError: ``not_found``.
    """
    v = fd.show(name, version)
    current = _current(fd, name)
    against, base = None, "none"
    if current is not None and current.version != v.version:
        against, base = current, "current"
    elif v.parent_version is not None:
        # The current version itself: show what it changed from the version it was made from.
        against, base = fd.show(name, v.parent_version), "parent"
    policy = v.extra.get("policy") or {}
    return {
        **v.to_dict(),
        "reasons": list(policy.get("reasons", [])),
        "capability_details": explain_capabilities(v.capabilities, v.language),
        "current_version": current.version if current else None,
        "diff_against": against.version if against else None,
        "diff_base": base,
        "diff": code_diff(
            against.code if against else None,
            v.code,
            "handler.py" if v.language == "python" else "handler.js",
        ),
    }


def pending_reviews(fd: Foundry) -> list[dict[str, Any]]:
    """Every version awaiting a human, oldest first, as :func:`version_review` shows it."""
    return [version_review(fd, v.name, v.version) for v in fd.pending()]
