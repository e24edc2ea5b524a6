"""What the page and the API show about tools: listings with usage, and a version's review.

Plain functions of a :class:`Foundry` returning JSON-ready dicts, so the page renders exactly
what the API returns. A version's review is :mod:`toolfoundry.foundry.review`'s, shared with
the CLI.
"""

from __future__ import annotations

from typing import Any

from toolfoundry.foundry import Foundry
from toolfoundry.foundry.review import pending_reviews, tool_links, version_review

__all__ = [
    "last_error",
    "last_review",
    "pending_reviews",
    "tool_detail",
    "tool_rows",
    "version_review",
]


def tool_rows(fd: Foundry, *, active_only: bool = False) -> list[dict[str, Any]]:
    """Every tool's current version with its description, usage, last error and the numbers
    of its versions waiting for a human.

    The registry reads every tool's counters in one transaction, and tools never called cost
    no query: the listing stays fast with hundreds of tools.
    """
    current = fd.tools(include_inactive=not active_only)
    stats = fd.registry.usage_of([v.name for v in current])
    errors = fd.registry.last_failures()
    pending = fd.registry.pending_by_tool()
    return [
        {
            **v.summary(),
            "description": v.description,
            "usage": stats[v.name].to_dict(),
            "last_error": errors[v.name].to_dict() if v.name in errors else None,
            "pending_versions": pending.get(v.name, []),
        }
        for v in current
    ]


def last_error(fd: Foundry, name: str) -> dict[str, Any] | None:
    """The kind and time of the newest failed call of ``name``, or None."""
    failure = fd.registry.last_failures(name).get(name)
    return failure.to_dict() if failure is not None else None


def tool_detail(fd: Foundry, name: str) -> dict[str, Any]:
    """The current version in full, with the tools it calls and those calling it, and usage
    (what ``tools show --json`` prints)."""
    v = fd.show(name)
    return {
        **v.to_dict(),
        **tool_links(fd, v),
        "usage": fd.usage(name).to_dict(),
        "last_error": last_error(fd, name),
    }


def last_review(fd: Foundry) -> dict[str, Any] | None:
    """The newest finished review of the library that ``serve`` ran by itself
    (foundry/review_schedule.py), with ``running``: whether a newer one is under way; None
    before the first."""
    last = fd.registry.last_review()
    if last is None:
        return None
    newest = fd.registry.last_review(finished=False)
    running = newest is not None and newest.id != last.id and newest.finished_at is None
    return {**last.to_dict(), "running": running}
