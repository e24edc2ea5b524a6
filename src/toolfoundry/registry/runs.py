"""Agent runs kept next to the tools: one row per run, its outcome and its whole transcript.

The agent layer decides what a run and its transcript are; this module only stores the row it
is handed (written again after every turn, so a crash keeps the turns so far) and reads it back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from toolfoundry.registry.schema import MODEL_CHARS, agent_runs


@dataclass(frozen=True)
class RunRow:
    """One agent run as stored: its summary columns and its transcript (JSON)."""

    id: str
    task: str
    model: str
    stop_reason: str | None
    started_at: datetime
    finished_at: datetime | None
    turns: int
    input_tokens: int
    output_tokens: int
    transcript: dict[str, Any]


def save(conn: Connection, row: RunRow) -> None:
    """Insert the run, or update it when it is already stored."""
    values = asdict(row)
    run_id = values.pop("id")
    values["model"] = values["model"][:MODEL_CHARS]
    done = conn.execute(
        update(agent_runs).where(agent_runs.c.id == run_id).values(**values)
    ).rowcount
    if not done:
        conn.execute(insert(agent_runs).values(id=run_id, **values))


def transcript(conn: Connection, run_id: str) -> dict[str, Any] | None:
    """The stored transcript of a run, or None."""
    value = conn.execute(select(agent_runs.c.transcript).where(agent_runs.c.id == run_id)).scalar()
    return dict(value) if value is not None else None


def recent(conn: Connection, limit: int) -> list[dict[str, Any]]:
    """The summary columns (everything but the transcript) of the newest runs, newest first."""
    columns = [c for c in agent_runs.c if c.name != "transcript"]
    query = select(*columns).order_by(agent_runs.c.started_at.desc()).limit(limit)
    return [dict(row) for row in conn.execute(query).mappings().all()]
