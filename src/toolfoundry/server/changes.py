"""Noticing when the active tool set changes, whoever changed it.

Every server process polls a fingerprint of the active set: a SHA-256 over the sorted
``(name, current version)`` pairs of the tools whose current version is active. A change made
by this process, by the CLI, or by another server sharing the same PostgreSQL database shows
up at the next poll. :meth:`Registry.active_set` reads one narrow row per active tool (no
versions, no JSON): with 300 active tools a poll takes about 1 ms on SQLite and 5 ms on
PostgreSQL on a loaded 2-core machine (``tests/server/test_server_mcp_changes.py::
test_poll_cost``), so the default half-second interval costs under 1% of a core. Polling is
the same on both backends and needs no trigger or ``NOTIFY`` in the registry's write paths.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable

import anyio
import anyio.to_thread

from toolfoundry.registry import Registry, StoreError

logger = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 0.5


def active_set_fingerprint(registry: Registry) -> str:
    """A digest that changes exactly when a tool becomes or stops being active, or its
    current active version changes (created, approved, rolled back, disabled, enabled)."""
    digest = hashlib.sha256()
    for name, version in registry.active_set():
        digest.update(f"{name}\0{version}\n".encode())
    return digest.hexdigest()


class ActiveSetWatcher:
    """Polls the active-set fingerprint and awaits ``on_change`` when it moves.

    Args:
        registry: the registry to watch.
        on_change: awaited once per detected change (never concurrently with itself).
        interval_s: seconds between polls.
    """

    def __init__(
        self,
        registry: Registry,
        on_change: Callable[[], Awaitable[None]],
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
    ) -> None:
        self.registry = registry
        self.interval_s = interval_s
        self._on_change = on_change
        self._wake = anyio.Event()
        self._last: str | None = None
        self.polls = 0

    async def _fingerprint(self) -> str | None:
        try:
            return await anyio.to_thread.run_sync(active_set_fingerprint, self.registry)
        except StoreError as exc:
            # A database hiccup must not take the server down; the next poll retries.
            logger.warning("active-set poll failed: %s", exc)
            return None

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
        """Poll as soon as possible (after this process changed the registry itself)."""
        self._wake.set()

    async def run(self) -> None:
        """Poll until cancelled (the first poll only sets the baseline)."""
        if self._last is None:
            await self.check()
        while True:
            with anyio.move_on_after(self.interval_s):
                await self._wake.wait()
            self._wake = anyio.Event()
            await self.check()
