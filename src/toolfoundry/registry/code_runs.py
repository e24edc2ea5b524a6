"""Code-mode runs kept next to the tools: one row per run_js snippet run through a foundry.

The foundry decides what a run and its recording are (``foundry/code_runs.py``); the registry
stores the row it is handed, on the call path's own statements (``calls.py``: the run and its
inner calls' records in one transaction), reads it back, and keeps the table within the bound
of every kind of run (``kept_runs.py``) when a new one is saved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

RUN_COLUMNS = (
    "id",
    "started_at",
    "actor",
    "ok",
    "error_kind",
    "duration_ms",
    "inner_calls",
    "code",
    "recording",
)


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
        recording: its arguments, result and inner answers (``foundry/code_runs.py``'s
            ``RecordingJson``: a JSON object to the registry), or None when they were too
            large to keep.
    """

    id: str
    started_at: datetime
    actor: str
    ok: bool
    error_kind: str | None
    duration_ms: float
    inner_calls: int
    code: str
    recording: Mapping[str, Any] | None
