"""Agent runs kept next to the tools: one row per run, its outcome and its whole transcript.

The agent layer decides what a run and its transcript are; this module only stores the row it
is handed (written again after every turn, so a crash keeps the turns so far), reads it back,
and keeps the table within the bound of every kind of run (``kept_runs.py``) when a new run is
saved.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, bindparam, insert, select, text, update
from sqlalchemy.engine import Connection

from toolfoundry.registry.codecs import now
from toolfoundry.registry.kept_runs import RUNS_KEPT, cutoff, prune_sql
from toolfoundry.registry.schema import MODEL_CHARS, agent_runs

# the bound's statement, its cutoff written as the table's own started_at (on each backend)
_PRUNE = text(prune_sql(agent_runs.name)).bindparams(
    bindparam("cutoff", type_=agent_runs.c.started_at.type), bindparam("skip", type_=Integer())
)


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


def save(conn: Connection, row: RunRow, kept: int = RUNS_KEPT) -> None:
    """Update the run when it is already stored; else insert it, and delete the runs past the
    bound (older than the age kept, or beyond the newest ``kept``)."""
    values = asdict(row)
    run_id = values.pop("id")
    values["model"] = values["model"][:MODEL_CHARS]
    done = conn.execute(
        update(agent_runs).where(agent_runs.c.id == run_id).values(**values)
    ).rowcount
    if not done:
        conn.execute(insert(agent_runs).values(id=run_id, **values))
        conn.execute(_PRUNE, {"saved": run_id, "cutoff": cutoff(now()), "skip": kept - 1})


def transcript(conn: Connection, run_id: str) -> dict[str, Any] | None:
    """The stored transcript of a run, or None."""
    value = conn.execute(select(agent_runs.c.transcript).where(agent_runs.c.id == run_id)).scalar()
    return dict(value) if value is not None else None


def recent(conn: Connection, limit: int) -> list[dict[str, Any]]:
    """The summary columns (everything but the transcript) of the newest runs, newest first."""
    columns = [c for c in agent_runs.c if c.name != "transcript"]
    query = select(*columns).order_by(agent_runs.c.started_at.desc()).limit(limit)
    return [dict(row) for row in conn.execute(query).mappings().all()]
