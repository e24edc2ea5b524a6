"""A person's decisions about upstream tools, kept as rows of the append-only audit log.

An upstream tool (``UPSTREAM.TOOL``) that its policy says needs approval is callable once a
person approved it **for its input schema's hash** (foundry/upstream_gate.py). Each decision is
one audit row (event ``approved``, or ``rejected`` for a revocation; no version) whose detail
holds the hash and the schema the person saw, so the newest decision per tool is the state, an
older approved schema is what the review page diffs a changed one against, and the log keeps
every decision with who made it and why. Upstream names always hold a ``.``, registry names
never do: the rows of the two never mix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from toolfoundry.registry import audit as audit_log
from toolfoundry.registry.codecs import as_utc
from toolfoundry.registry.records import AuditEvent
from toolfoundry.registry.schema import audit

_EVENTS = (AuditEvent.APPROVED.value, AuditEvent.REJECTED.value)


@dataclass(frozen=True)
class UpstreamDecision:
    """One decision about one upstream tool.

    Attributes:
        tool: ``UPSTREAM.TOOL``.
        approved: True for an approval, False for a revocation.
        schema_hash: the input schema's hash the decision is bound to.
        schema: that input schema, as the person saw it.
        by: who decided.
        reason: why, as they said it.
        at: when.
    """

    tool: str
    approved: bool
    schema_hash: str
    schema: dict[str, Any]
    by: str
    reason: str
    at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "approved": self.approved,
            "schema_hash": self.schema_hash,
            "by": self.by,
            "reason": self.reason,
            "at": self.at.isoformat(),
        }


def decide(
    conn: Connection,
    tool: str,
    *,
    approve: bool,
    schema_hash: str,
    schema: dict[str, Any],
    by: str,
    reason: str,
) -> None:
    """Append one decision (visible when the caller's transaction commits)."""
    event = AuditEvent.APPROVED if approve else AuditEvent.REJECTED
    detail = {"upstream": True, "schema_hash": schema_hash, "schema": schema, "reason": reason}
    audit_log.append(conn, tool, None, event, by, detail)


def decisions(conn: Connection, tools: Sequence[str] | None) -> dict[str, list[UpstreamDecision]]:
    """Every decision about each of ``tools`` (all upstream tools when None), oldest first."""
    query = (
        select(audit.c.tool, audit.c.event, audit.c.actor, audit.c.detail, audit.c.at)
        .where(audit.c.event.in_(_EVENTS), audit.c.version.is_(None))
        .order_by(audit.c.id)
    )
    if tools is not None:
        if not tools:
            return {}
        query = query.where(audit.c.tool.in_(list(tools)))
    else:
        query = query.where(audit.c.tool.like("%.%"))
    found: dict[str, list[UpstreamDecision]] = {}
    for tool, event, actor, detail, at in conn.execute(query):
        detail = dict(detail or {})
        if not detail.get("upstream"):
            continue
        found.setdefault(tool, []).append(
            UpstreamDecision(
                tool=tool,
                approved=event == AuditEvent.APPROVED.value,
                schema_hash=str(detail.get("schema_hash", "")),
                schema=dict(detail.get("schema") or {}),
                by=actor,
                reason=str(detail.get("reason", "")),
                at=as_utc(at),
            )
        )
    return found
