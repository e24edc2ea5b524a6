"""The active-set watcher on PostgreSQL: told by the change feed, it does not poll fast (the
load of N servers does not grow with time), and it still reports each change once."""

from __future__ import annotations

import anyio
import anyio.to_thread
import pytest
from tests.factories import NewVersionFactory

from toolfoundry.registry import Registry
from toolfoundry.server.changes import ActiveSetWatcher

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
WAIT_S = 20.0
FAST_S = 0.05  # the poll interval without a feed: 20 polls a second
QUIET_S = 1.0


def test_notified_not_polled(pg_url: str, new_version: NewVersionFactory) -> None:
    registry = Registry.open(pg_url)

    async def scenario() -> None:
        changes = anyio.Event()
        seen: list[int] = []

        async def on_change() -> None:
            seen.append(watcher.polls)
            changes.set()

        watcher = ActiveSetWatcher(registry, on_change, interval_s=FAST_S)
        assert watcher.feed is not None
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watcher.run)
            with anyio.fail_after(WAIT_S):
                while not (watcher.feed.listening and watcher.polls >= 2):
                    await anyio.sleep(0.01)  # the baseline, then the check on connecting
            before = watcher.polls
            await anyio.sleep(QUIET_S)  # a window in which a 50 ms poll would run 20 times
            assert watcher.polls - before <= 1
            await anyio.to_thread.run_sync(registry.add_version, new_version("gamma"))
            with anyio.fail_after(WAIT_S):
                await changes.wait()
            assert len(seen) == 1
            assert watcher.feed.notifications == 1
            tasks.cancel_scope.cancel()

    try:
        anyio.run(scenario)
    finally:
        registry.close()
