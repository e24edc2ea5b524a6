"""``serve`` reviews the library by itself: on a schedule, and at start after a runtime change.

Every tool made widens what an agent can do, and a review that waits for a person to think of
``toolfoundry tools verify`` and ``tools report`` does not happen. While ``serve`` runs, a
background thread reviews the library (foundry/library_review.py):

- at start, when no review is stored yet (``first``) or the runtime changed since the newest
  (``runtime_changed``: toolfoundry, the guest or wasmtime, foundry/runtime_identity.py);
- then whenever ``[review] every`` has passed since the newest review started (``schedule``;
  ``"off"`` runs none). The setting is read again at each check, so a reload applies.

A review is claimed in the registry under a lock every process takes (registry/reviews.py), so
the servers of a fleet run each due review once. It is stored there, shown on the review page
(``/ui/review``, ``GET /api/review``), exported as metrics (foundry/telemetry.py) and summed up
in one line on stderr. Nothing is disabled: a tool failing its suite under the runtime of
today is flagged for a person.

It never delays calls: it runs in its own thread at a lower CPU priority (Linux: the thread's
nice value, raised by :data:`NICE`), one test at a time, each tool's suite bounded by
``[review] tool_budget_s`` and each test by the call limits; Python-tier tools are left to
``tools verify`` (their test runs would share the Python tier's admission with calls). It
writes only its own row, twice.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from toolfoundry.config import ReviewSettings
from toolfoundry.foundry import Foundry, telemetry
from toolfoundry.foundry.library_review import (
    LibraryFindingsJson,
    LibraryReviewSummaryJson,
    ReviewStopped,
    review_library,
)

if TYPE_CHECKING:  # loaded in the thread, after start-up
    from toolfoundry.foundry.runtime_identity import RuntimeIdentity
    from toolfoundry.registry.reviews import ReviewRow

FIRST, RUNTIME_CHANGED, SCHEDULE = "first", "runtime_changed", "schedule"
TRIGGERS = (FIRST, RUNTIME_CHANGED, SCHEDULE)  # why a review ran
POLL_S = 60.0  # the longest wait between two looks at whether a review is due
# the first look waits this long: a server's start-up (and its first requests) come first
START_DELAY_S = 3.0
ABANDONED_AFTER = timedelta(hours=1)  # an unfinished review this old: its process stopped
NICE = 10
_log = logging.getLogger(__name__)


def review_due(
    last: ReviewRow | None,
    now: datetime,
    *,
    fingerprint: str,
    settings: ReviewSettings,
    at_start: bool,
) -> str | None:
    """Why a review is due now, after ``last`` (the newest stored review), or None."""
    if settings.every_s is None:
        return None
    if last is None:
        return FIRST
    if last.finished_at is None and now - last.started_at < ABANDONED_AFTER:
        return None  # another process is reviewing right now
    if at_start and last.fingerprint != fingerprint:
        return RUNTIME_CHANGED
    if now - last.started_at >= timedelta(seconds=settings.every_s):
        return SCHEDULE
    return None


class ReviewSchedule:
    """The background thread of ``serve`` that reviews ``foundry``'s library when due.

    ``say`` gets one line per review (``serve`` prints it on stderr).
    """

    def __init__(self, foundry: Foundry, say: Callable[[str], None] = lambda _line: None):
        self.foundry = foundry
        self._say = say
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.runner = f"{socket.gethostname()}:{os.getpid()}"

    def start(self) -> ReviewSchedule:
        self._thread = threading.Thread(target=self._run, name="toolfoundry-review", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop between two tools (a review cut short stays unfinished in the registry)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def check_now(self) -> None:
        """Look at once whether a review is due (instead of at the next poll)."""
        self._wake.set()

    def _run(self) -> None:
        lower_priority()
        self._wake.wait(START_DELAY_S)
        self._wake.clear()
        if self._stop.is_set():
            return
        from toolfoundry.foundry.runtime_identity import RuntimeIdentity

        identity = RuntimeIdentity.current()
        try:
            publish(self.foundry.registry.last_review())
        except Exception:  # a database that does not answer now may later
            _log.warning("the last review of the library could not be read", exc_info=True)
        at_start = True
        while not self._stop.is_set():
            settings = self.foundry.config.review
            try:
                if self._once(identity, settings, at_start=at_start):
                    at_start = False  # decided: the start-up check is done
            except ReviewStopped:
                return
            except Exception as exc:  # the thread outlives a failure; the log says it
                _log.warning("the review of the library failed", exc_info=True)
                self._say(f"the review of the library failed: {exc}")
            wait = min(POLL_S, settings.every_s) if settings.every_s else POLL_S
            self._wake.wait(wait)
            self._wake.clear()

    def _once(self, identity: RuntimeIdentity, settings: ReviewSettings, *, at_start: bool) -> bool:
        """Review when due. False when another process's review under way left nothing to
        decide (a start-up check then waits for it: its runtime may not be ours)."""
        previous: list[ReviewRow | None] = []

        def due(last: ReviewRow | None, now: datetime) -> str | None:
            previous.append(last)
            return review_due(
                last, now, fingerprint=identity.fingerprint, settings=settings, at_start=at_start
            )

        registry = self.foundry.registry
        claimed = registry.claim_review(
            due, runner=self.runner, fingerprint=identity.fingerprint, runtime=identity.to_dict()
        )
        before = previous[0] if previous else None
        if claimed is None:
            running = before is not None and before.finished_at is None
            return not (running and settings.every_s is not None)
        changes = identity.changes_from(before.runtime) if before is not None else []
        try:
            found = review_library(self.foundry, settings, stop=self._stop.is_set)
        except BaseException:  # stopped or failed: it must not hold the next review back
            registry.abandon_review(claimed.id)
            raise
        findings: dict[str, object] = {**found.findings, "runtime_changes": changes}
        registry.finish_review(claimed.id, found.summary, findings)
        publish(registry.last_review())
        self._say(summary_line(claimed.trigger, found.summary, found.findings, changes))
        return True


def summary_line(
    trigger: str,
    summary: LibraryReviewSummaryJson,
    findings: LibraryFindingsJson,
    changes: list[str],
) -> str:
    """The one line ``serve`` prints after a review."""
    why = {FIRST: "first review", SCHEDULE: "scheduled"}.get(trigger, "runtime changed")
    if changes and trigger == RUNTIME_CHANGED:
        why += f": {', '.join(changes)}"
    failing = [f["name"] for f in findings["failing"]]
    parts = [
        f"{summary['verified']} suite(s) run",
        f"{len(failing)} failing" + (f" ({', '.join(failing[:5])})" if failing else ""),
        f"{summary['unused']} unused",
        f"{summary['waiting']} version(s) waiting",
    ]
    return f"library reviewed ({why}): {'; '.join(parts)}; see /ui/review"


def publish(review: ReviewRow | None) -> None:
    """Hand a stored review's counts to the metrics (foundry/telemetry.py)."""
    if review is not None and review.finished_at is not None and review.summary is not None:
        telemetry.publish_review(review.finished_at.timestamp(), review.summary)


def lower_priority() -> None:
    """Raise the calling thread's nice value by :data:`NICE` (Linux sets it per thread; a
    system without per-thread priorities, or one that refuses, keeps the thread as it is)."""
    getter, setter = getattr(os, "getpriority", None), getattr(os, "setpriority", None)
    if getter is None or setter is None:
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError):
        setter(os.PRIO_PROCESS, tid, min(19, getter(os.PRIO_PROCESS, tid) + NICE))
