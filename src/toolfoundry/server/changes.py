"""Noticing when the active tool set changes, whoever changed it.

Every server process keeps a fingerprint of the active set: a SHA-256 over the sorted
``(name, current version)`` pairs of the tools whose current version is active, read by
:meth:`Registry.active_set` (one narrow row per active tool, no JSON: about 1 ms on SQLite and
5 ms on PostgreSQL with 300 active tools, ``tests/server/mcp/test_mcp_changes.py::
test_poll_and_listing_cost``). It is checked again

- on PostgreSQL, when the registry's trigger notifies (:class:`toolfoundry.registry.ChangeFeed`
  listens on a dedicated connection): a change made by any process reaches every server in a
  few milliseconds, and the load is one check per change per server, not one per interval.
  A slow safety poll (``SAFETY_INTERVAL_S``) remains, and while the feed is reconnecting the
  fast poll below takes over;
- on SQLite (no cross-process notification), every ``interval_s`` (half a second by default),
  but only after :class:`~toolfoundry.registry.change_probe.ChangeProbe` (``PRAGMA
  data_version`` on a kept connection, microseconds) says something was committed since the
  last poll: an idle server reads no active set at all, whatever its size
  (``bench/bench_poll.py``);
- at once after this process changed the registry itself (:meth:`ActiveSetWatcher.nudge`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable

import anyio
import anyio.to_thread

from toolfoundry.registry import ChangeFeed, Registry, StoreError
from toolfoundry.registry.change_probe import ChangeProbe

logger = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 0.5
# While the change feed listens, polling is only a safety net against a lost notification.
SAFETY_INTERVAL_S = 15.0


def active_set_fingerprint(registry: Registry) -> str:
    """A digest that changes exactly when a tool becomes or stops being active, or its
    current active version changes (created, approved, rolled back, disabled, enabled)."""
    digest = hashlib.sha256()
    for name, version in registry.active_set():
        digest.update(f"{name}\0{version}\n".encode())
    return digest.hexdigest()


class ActiveSetWatcher:
    """Checks the active-set fingerprint when told to or when due; awaits ``on_change`` when
    it moved.

    Args:
        registry: the registry to watch.
        on_change: awaited once per detected change (never concurrently with itself).
        interval_s: seconds between polls without a change feed (SQLite, or PostgreSQL while
            the feed reconnects).
        safety_interval_s: seconds between polls while the change feed listens.
    """

    def __init__(
        self,
        registry: Registry,
        on_change: Callable[[], Awaitable[None]],
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        safety_interval_s: float = SAFETY_INTERVAL_S,
    ) -> None:
        self.registry = registry
        self.interval_s = interval_s
        self.safety_interval_s = safety_interval_s
        self._on_change = on_change
        self._wake = anyio.Event()
        self._last: str | None = None
        self.polls = 0
        self.feed = (
            ChangeFeed(registry.engine, self.nudge)
            if ChangeFeed.supports(registry.engine)
            else None
        )
        self.probe = ChangeProbe(registry.engine) if ChangeProbe.supports(registry.engine) else None

    def _read(self) -> str | None:
        # The probe first: a commit landing during the read below is seen by the next poll.
        if self.probe is not None and not self.probe.moved() and self._last is not None:
            return self._last  # nothing committed anywhere since the last read
        try:
            return active_set_fingerprint(self.registry)
        except StoreError as exc:
            # A database hiccup must not take the server down; the next poll retries (and
            # reads, though the probe has seen the commit already).
            logger.warning("active-set poll failed: %s", exc)
            if self.probe is not None:
                self.probe.forget()
            return None

    async def _fingerprint(self) -> str | None:
        return await anyio.to_thread.run_sync(self._read)

    async def check(self) -> bool:
        """Poll once now; True when the active set changed since the previous poll."""
        current = await self._fingerprint()
        self.polls += 1
        if current is None or current == self._last:
            return False
        changed = self._last is not None
        self._last = current
        if changed:
            await self._on_change()
        return changed

    def nudge(self) -> None:
        """Check as soon as possible (this process changed the registry, or the feed heard of
        a change)."""
        self._wake.set()

    def _interval(self) -> float:
        listening = self.feed is not None and self.feed.listening
        return self.safety_interval_s if listening else self.interval_s

    async def run(self) -> None:
        """Watch until cancelled (the first check only sets the baseline)."""
        try:
            if self._last is None:
                await self.check()
            async with anyio.create_task_group() as tasks:
                if self.feed is not None:
                    tasks.start_soon(self.feed.run)
                while True:
                    with anyio.move_on_after(self._interval()):
                        await self._wake.wait()
                    self._wake = anyio.Event()
                    await self.check()
        finally:
            if self.probe is not None:
                self.probe.close()
