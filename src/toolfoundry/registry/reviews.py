"""Reviews of the library kept next to the tools: one row per review ``serve`` ran by itself.

The foundry decides what a review is and when one is due (``foundry/review_schedule.py``);
this module claims one atomically, so the servers of a fleet sharing a database run each due
review once, stores what it found, and keeps the newest :data:`REVIEWS_KEPT`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.engine import Connection

from toolfoundry.registry.codecs import as_utc, now
from toolfoundry.registry.schema import reviews

REVIEWS_KEPT = 100
_CLAIM_LOCK = 0x7466_7276  # a PostgreSQL advisory-lock key for claims ("tfrv")


@dataclass(frozen=True)
class ReviewRow:
    """One review as stored.

    Attributes:
        id: its number, ascending.
        started_at: when it was claimed (UTC).
        finished_at: when it ended; None while it runs, or when its process stopped first.
        trigger: why it ran (``first``, ``runtime_changed``, ``schedule``).
        runner: which process ran it (host and process id).
        fingerprint: the SHA-256 of ``runtime``.
        runtime: what it ran under (toolfoundry, the guest, wasmtime).
        summary: counts by finding, once finished.
        findings: what it found, once finished (foundry/library_review.py).
    """

    id: int
    started_at: datetime
    finished_at: datetime | None
    trigger: str
    runner: str
    fingerprint: str
    runtime: dict[str, Any]
    summary: dict[str, Any] | None
    findings: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (what ``GET /api/review`` answers)."""
        return {
            "id": self.id,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "trigger": self.trigger,
            "runner": self.runner,
            "fingerprint": self.fingerprint,
            "runtime": self.runtime,
            "summary": self.summary,
            "findings": self.findings,
        }


ReviewDue = Callable[[ReviewRow | None, datetime], str | None]


def claim(
    conn: Connection, due: ReviewDue, *, runner: str, fingerprint: str, runtime: dict[str, Any]
) -> ReviewRow | None:
    """Start a review when ``due(newest review or None, now)`` names a trigger, else None.

    Run in a write transaction: the newest row is read and the new one written under one lock
    (``BEGIN IMMEDIATE`` on SQLite, an advisory lock on PostgreSQL), so two processes asking
    at once start one review between them.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _CLAIM_LOCK})
    at = now()
    trigger = due(newest(conn), at)
    if trigger is None:
        return None
    values = {
        "started_at": at,
        "finished_at": None,
        "trigger": trigger,
        "runner": runner[:200],
        "fingerprint": fingerprint,
        "runtime": runtime,
        "summary": None,
        "findings": None,
    }
    made = conn.execute(insert(reviews).values(**values)).inserted_primary_key
    assert made is not None
    return ReviewRow(id=int(made[0]), **values)  # type: ignore[arg-type]


def finish(
    conn: Connection,
    review_id: int,
    summary: Mapping[str, object],
    findings: Mapping[str, object],
) -> None:
    """Store what the review found, then delete the reviews past the newest kept."""
    conn.execute(
        update(reviews)
        .where(reviews.c.id == review_id)
        .values(finished_at=now(), summary=summary, findings=findings)
    )
    oldest_kept = conn.execute(
        select(reviews.c.id).order_by(reviews.c.id.desc()).offset(REVIEWS_KEPT - 1).limit(1)
    ).scalar()
    if oldest_kept is not None:
        conn.execute(delete(reviews).where(reviews.c.id < oldest_kept))


def abandon(conn: Connection, review_id: int) -> None:
    """Delete a claimed review that will not finish (its server is stopping, or it failed), so
    it does not hold the next one back as if it were still running."""
    conn.execute(delete(reviews).where(reviews.c.id == review_id, reviews.c.finished_at.is_(None)))


def newest(conn: Connection, *, finished: bool = False) -> ReviewRow | None:
    """The newest review (only among finished ones when ``finished``), or None."""
    query = select(reviews).order_by(reviews.c.id.desc()).limit(1)
    if finished:
        query = query.where(reviews.c.finished_at.is_not(None))
    row = conn.execute(query).mappings().first()
    if row is None:
        return None
    values = dict(row)
    values["started_at"] = as_utc(values["started_at"])
    if values["finished_at"] is not None:
        values["finished_at"] = as_utc(values["finished_at"])
    for key in ("runtime", "summary", "findings"):
        if values[key] is not None:
            values[key] = dict(values[key])
    return ReviewRow(**values)
