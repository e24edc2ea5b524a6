"""Code-mode runs kept next to the tools: one row per run_js snippet run through a foundry.

The foundry decides what a run and its recording are (``foundry/code_runs.py``); this module
stores the row it is handed, reads it back, and keeps the table bounded: a run older than
:data:`RUN_MAX_AGE` or beyond the newest :data:`RUNS_KEPT` is deleted when a new one is saved.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from toolfoundry.registry.codecs import as_utc, now
from toolfoundry.registry.schema import code_runs

# How many runs are kept, and for how long: enough to turn today's snippets into tools.
RUNS_KEPT = 1000
RUN_MAX_AGE = timedelta(days=7)


@dataclass(frozen=True)
class CodeRunRow:
    """One run as stored.

    Attributes:
        id: the run's id (what ``run_js`` returns as ``run_id``).
        started_at: when it started (UTC).
        actor: who ran it (``agent``, a login name, ``api``).
        ok: whether the snippet returned a value.
        error_kind: how it failed, or None.
        duration_ms: how long it took, inner calls included.
        inner_calls: how many calls it made through ``tools``, at every depth.
        code: the module it ran.
        recording: its arguments, result and inner answers (``foundry/code_runs.py``), or None
            when they were too large to keep.
    """

    id: str
    started_at: datetime
    actor: str
    ok: bool
    error_kind: str | None
    duration_ms: float
    inner_calls: int
    code: str
    recording: dict[str, Any] | None


def save(conn: Connection, row: CodeRunRow, *, kept: int = RUNS_KEPT) -> None:
    """Insert the run, then delete the runs past the age and the count kept."""
    conn.execute(insert(code_runs).values(**asdict(row)))
    cutoff = now() - RUN_MAX_AGE
    # the started_at of the oldest run still kept by count: an index step per kept run
    oldest_kept = conn.execute(
        select(code_runs.c.started_at)
        .order_by(code_runs.c.started_at.desc())
        .offset(kept - 1)
        .limit(1)
    ).scalar()
    if oldest_kept is not None:
        cutoff = max(cutoff, as_utc(oldest_kept))
    conn.execute(delete(code_runs).where(code_runs.c.started_at < cutoff))


def get(conn: Connection, run_id: str) -> CodeRunRow | None:
    """The stored run, or None."""
    row = conn.execute(select(code_runs).where(code_runs.c.id == run_id)).mappings().first()
    if row is None:
        return None
    values = dict(row)
    values["started_at"] = as_utc(values["started_at"])
    recording = values["recording"]
    values["recording"] = dict(recording) if recording is not None else None
    return CodeRunRow(**values)
