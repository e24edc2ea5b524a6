"""Usage counters: calls, failures by kind, callers, and a duration histogram for p50/p95.

Each call adds to two to four counter rows with one upsert (``n = n + 1``, see calls.py): a
call made by code through ``tools`` also counts ``by:<caller>`` (a tool's name, or run_js). So
concurrent callers never read-modify-write and recording costs one executemany. Durations go into
log-scaled buckets (four per doubling, from 10 µs), so a percentile is read from at most ~100
rows and is exact to within one bucket (+19 %), whatever the number of calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from toolfoundry.registry.codecs import as_utc, bucket_upper
from toolfoundry.registry.records import LastFailure, UsageStats
from toolfoundry.registry.schema import audit, usage


def stats(conn: Connection, tool: str) -> UsageStats:
    """Aggregate the counters of one tool."""
    rows = conn.execute(select(usage).where(usage.c.tool == tool)).all()
    calls, total_ms, last = 0, 0.0, None
    failures: dict[str, int] = {}
    callers: dict[str, int] = {}
    histogram: list[tuple[int, int]] = []
    for row in rows:
        counter: str = row.counter
        if counter == "calls":
            calls, total_ms, last = int(row.n), float(row.total_ms), as_utc(row.last_at)
        elif counter.startswith("failed:"):
            failures[counter.removeprefix("failed:")] = int(row.n)
        elif counter.startswith("ms:"):
            histogram.append((int(counter.removeprefix("ms:")), int(row.n)))
        elif counter.startswith("by:"):
            callers[counter.removeprefix("by:")] = int(row.n)
    histogram.sort()
    return UsageStats(
        name=tool,
        calls=calls,
        failures=dict(sorted(failures.items())),
        p50_ms=_percentile(histogram, calls, 0.50),
        p95_ms=_percentile(histogram, calls, 0.95),
        mean_ms=round(total_ms / calls, 3) if calls else None,
        last_used=last,
        callers=dict(sorted(callers.items())),
    )


def stats_of(conn: Connection, names: Sequence[str]) -> dict[str, UsageStats]:
    """The counters of each of ``names``; a tool never called costs no query of its own."""
    called = set(conn.execute(select(usage.c.tool).distinct()).scalars())
    return {name: stats(conn, name) if name in called else _unused(name) for name in names}


def last_failures(conn: Connection, name: str | None = None) -> dict[str, LastFailure]:
    """The newest failed call of every tool (or of ``name``) that ever failed.

    Each failure kind's counter keeps the time of its latest failure, so the newest of them is
    the tool's last error, read without scanning the audit log.
    """
    query = select(usage.c.tool, usage.c.counter, usage.c.last_at).where(
        usage.c.counter.like("failed:%")
    )
    if name is not None:
        query = query.where(usage.c.tool == name)
    newest: dict[str, LastFailure] = {}
    for tool, counter, at in conn.execute(query):
        if at is None:
            continue
        at = as_utc(at)
        if tool not in newest or at > newest[tool].at:
            newest[tool] = LastFailure(tool, counter.removeprefix("failed:"), at)
    return newest


def _unused(name: str) -> UsageStats:
    return UsageStats(name, 0, {}, None, None, None, None)


def _percentile(histogram: list[tuple[int, int]], calls: int, q: float) -> float | None:
    if not calls:
        return None
    target, seen = q * calls, 0
    for b, n in histogram:
        seen += n
        if seen >= target:
            return round(bucket_upper(b), 3)
    return round(bucket_upper(histogram[-1][0]), 3) if histogram else None


@dataclass(frozen=True)
class UsageSeries:
    """What the tool page draws: calls per day and the duration histogram.

    Attributes:
        name: the tool.
        days: ``(day, calls)`` for each of the last days, oldest first, days without calls 0.
        latency: ``(upper bound in ms, calls)`` for each histogram bucket from the fastest
            call's to the slowest's (empty buckets between them included).
    """

    name: str
    days: tuple[tuple[date, int], ...]
    latency: tuple[tuple[float, int], ...]


def series(conn: Connection, tool: str, days: int, today: date) -> UsageSeries:
    """Calls per day over the ``days`` days up to ``today`` (UTC), from the audit's ``called``
    rows counted per day by the database, and the duration histogram of the counters."""
    first = today - timedelta(days=days - 1)
    day = func.date(audit.c.at)
    query = (
        select(day, func.count())
        .where(audit.c.tool == tool, audit.c.event == "called")
        .where(audit.c.at >= datetime.combine(first, time.min, tzinfo=UTC))
        .group_by(day)
    )
    counted = {str(d)[:10]: int(n) for d, n in conn.execute(query)}
    per_day = tuple(
        (first + timedelta(days=i), counted.get((first + timedelta(days=i)).isoformat(), 0))
        for i in range(days)
    )
    buckets = {
        int(row.counter.removeprefix("ms:")): int(row.n)
        for row in conn.execute(
            select(usage.c.counter, usage.c.n).where(
                usage.c.tool == tool, usage.c.counter.like("ms:%")
            )
        )
    }
    latency: tuple[tuple[float, int], ...] = ()
    if buckets:
        low, high = min(buckets), max(buckets)
        latency = tuple((bucket_upper(b), buckets.get(b, 0)) for b in range(low, high + 1))
    return UsageSeries(tool, per_day, latency)
