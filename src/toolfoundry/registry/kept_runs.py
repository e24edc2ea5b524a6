"""How many runs the registry keeps, and for how long: one bound for every kind of run.

Agent runs (``runs.py``: the ``toolfoundry agent`` loop's transcripts) and code-mode runs
(``code_runs.py``: run_js snippets, which ``create_tool(from_run=...)`` turns into tools) are
kept alike: when a new run is saved, the runs started before :data:`RUN_MAX_AGE` ago and those
beyond the newest :data:`RUNS_KEPT` are deleted in the same transaction, by one statement
(:func:`prune_sql`), which never deletes the run being saved. A run saved again (an agent
run after each turn) deletes nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta

# How many runs of each kind are kept, and for how long: enough to look back on (and turn
# into tools) today's runs, bounded whatever an agent or a loop of snippets does.
RUNS_KEPT = 1000
RUN_MAX_AGE = timedelta(days=7)


def prune_sql(table: str) -> str:
    """The statement that keeps ``table`` (a runs table, by its ``started_at``) within the
    bound; it binds ``saved`` (the id of the run just saved, kept whatever its start),
    ``cutoff`` (:func:`cutoff`) and ``skip`` (the runs kept, less one)."""
    return (
        f"DELETE FROM {table} WHERE id <> :saved AND (started_at < :cutoff OR started_at < "
        f"(SELECT started_at FROM {table} ORDER BY started_at DESC LIMIT 1 OFFSET :skip))"
    )


def cutoff(now: datetime) -> datetime:
    """The start time before which a run is no longer kept."""
    return now - RUN_MAX_AGE
