"""Usage counters: calls, failures by kind, and a duration histogram for p50/p95.

Each call adds to two or three counter rows with one upsert (``n = n + 1``, see calls.py), so
concurrent callers never read-modify-write and recording costs one executemany. Durations go into
log-scaled buckets (four per doubling, from 10 µs), so a percentile is read from at most ~100
rows and is exact to within one bucket (+19 %), whatever the number of calls.
"""

from __future__ import annotations

import math

from sqlalchemy import select
from sqlalchemy.engine import Connection

from toolfoundry.registry.audit import as_utc
from toolfoundry.registry.records import UsageStats
from toolfoundry.registry.schema import usage

_BASE_MS = 0.01
_PER_DOUBLING = 4
_MAX_BUCKET = 120


def bucket(duration_ms: float) -> int:
    """The histogram bucket of a duration (bucket ``b`` holds up to ``bucket_upper(b)``)."""
    if duration_ms <= _BASE_MS:
        return 0
    b = math.ceil(_PER_DOUBLING * math.log2(duration_ms / _BASE_MS))
    return min(b, _MAX_BUCKET)


def bucket_upper(b: int) -> float:
    """Upper bound in ms of bucket ``b``."""
    return _BASE_MS * 2 ** (b / _PER_DOUBLING)


def stats(conn: Connection, tool: str) -> UsageStats:
    """Aggregate the counters of one tool."""
    rows = conn.execute(select(usage).where(usage.c.tool == tool)).all()
    calls, total_ms, last = 0, 0.0, None
    failures: dict[str, int] = {}
    histogram: list[tuple[int, int]] = []
    for row in rows:
        counter: str = row.counter
        if counter == "calls":
            calls, total_ms, last = int(row.n), float(row.total_ms), as_utc(row.last_at)
        elif counter.startswith("failed:"):
            failures[counter.removeprefix("failed:")] = int(row.n)
        elif counter.startswith("ms:"):
            histogram.append((int(counter.removeprefix("ms:")), int(row.n)))
    histogram.sort()
    return UsageStats(
        name=tool,
        calls=calls,
        failures=dict(sorted(failures.items())),
        p50_ms=_percentile(histogram, calls, 0.50),
        p95_ms=_percentile(histogram, calls, 0.95),
        mean_ms=round(total_ms / calls, 3) if calls else None,
        last_used=last,
    )


def _percentile(histogram: list[tuple[int, int]], calls: int, q: float) -> float | None:
    if not calls:
        return None
    target, seen = q * calls, 0
    for b, n in histogram:
        seen += n
        if seen >= target:
            return round(bucket_upper(b), 3)
    return round(bucket_upper(histogram[-1][0]), 3) if histogram else None
