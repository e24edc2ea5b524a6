"""The writes that failed lately: what ``/healthz`` says besides its own probe.

A full disk fails a transaction as large as a call's record while the one-page write of the
health probe (registry/write_probe.py) may still fit in file space an earlier, failed write
left allocated. So the foundry also notes every create and call the database failed under, and
health reports the store unwritable while the newest such failure is recent. The window makes
it a circuit breaker: with no traffic it closes, a load balancer sends requests again, and a
store still failing opens it again at once; a write that goes through closes it at once.
"""

from __future__ import annotations

import threading
import time

RECENT_S = 30.0


class FailedWrites:
    """The newest store failure of a foundry's writes (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: tuple[float, str] | None = None

    def note(self, what: str) -> None:
        """A write failed now; ``what`` says how (the driver's words)."""
        with self._lock:
            self._last = (time.monotonic(), what)

    def cleared(self) -> None:
        """A write went through: the store can be written again."""
        if self._last is not None:  # the common case costs one attribute read
            with self._lock:
                self._last = None

    def recent(self, within_s: float = RECENT_S) -> str | None:
        """How the newest write failed, when that was within ``within_s`` seconds; else None."""
        with self._lock:
            last = self._last
        if last is None or time.monotonic() - last[0] > within_s:
            return None
        return last[1]
