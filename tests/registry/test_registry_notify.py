"""PostgreSQL's change feed: migration 0006's trigger notifies every pointer move, from any
writer, to the listeners of that schema only, and a listener that loses its connection comes
back by itself."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import anyio.to_thread
import pytest
from sqlalchemy import create_engine, text
from tests.factories import NewVersionFactory

from toolfoundry.registry import ChangeFeed, Registry, VersionStatus

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
WAIT_S = 20.0  # generous: a loaded 2-core machine


class Heard:
    """What a feed's ``on_notify`` was called for, awaitable."""

    def __init__(self) -> None:
        self.calls = 0
        self._event = anyio.Event()

    def __call__(self) -> None:
        self.calls += 1
        self._event.set()

    async def more_than(self, seen: int) -> None:
        with anyio.fail_after(WAIT_S):
            while self.calls <= seen:
                await self._event.wait()
                self._event = anyio.Event()


@pytest.fixture
def registry(pg_url: str) -> Iterator[Registry]:
    reg = Registry.open(pg_url)
    yield reg
    reg.close()


@pytest.fixture
def other_schema(pg_url: str) -> Iterator[Registry]:
    """A second registry in its own schema of the same database."""
    base = pg_url.partition("?")[0]
    schema = f"tf_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    reg = Registry.open(f"{base}?options=-csearch_path%3D{schema}")
    yield reg
    reg.close()
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


def listening(registry: Registry, scenario: Callable[[ChangeFeed, Heard], Any]) -> None:
    """Run ``scenario(feed, heard)`` while a feed on ``registry`` listens."""

    async def main() -> None:
        heard = Heard()
        feed = ChangeFeed(registry.engine, heard)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(feed.run)
            await heard.more_than(0)  # called once connected: it listens from now on
            assert feed.listening
            await scenario(feed, heard)
            tasks.cancel_scope.cancel()

    anyio.run(main)


def test_every_pointer_move_notifies_once(
    registry: Registry, new_version: NewVersionFactory
) -> None:
    async def scenario(feed: ChangeFeed, heard: Heard) -> None:
        moves: list[Callable[[], object]] = [
            lambda: registry.add_version(new_version("alpha")),
            lambda: registry.add_version(new_version("beta", VersionStatus.PENDING_APPROVAL)),
            lambda: registry.decide("beta", 1, approve=True, by="alice", reason=""),
            lambda: registry.add_version(new_version("alpha")),
            lambda: registry.rollback("alpha", 1),
            lambda: registry.set_enabled("alpha", False),
            lambda: registry.set_enabled("alpha", True),
        ]
        for move in moves:
            seen = heard.calls
            await anyio.to_thread.run_sync(move)
            await heard.more_than(seen)
        # A call touches usage and audit, not the pointer: no notification. The next move's
        # notification arrives after the call's would have (commit order), and is the only one.
        before = feed.notifications
        await anyio.to_thread.run_sync(
            lambda: registry.record_call("alpha", 1, duration_ms=1.0, error_kind=None)
        )
        seen = heard.calls
        await anyio.to_thread.run_sync(lambda: registry.set_enabled("alpha", False))
        await heard.more_than(seen)
        assert feed.notifications == before + 1

    listening(registry, scenario)


def test_other_schemas_do_not_wake_a_listener(
    registry: Registry, other_schema: Registry, new_version: NewVersionFactory
) -> None:
    async def scenario(feed: ChangeFeed, heard: Heard) -> None:
        before = feed.notifications
        await anyio.to_thread.run_sync(lambda: other_schema.add_version(new_version("elsewhere")))
        await anyio.to_thread.run_sync(lambda: registry.add_version(new_version("here")))
        await heard.more_than(before + 1)  # the connect call plus ours
        assert feed.notifications == before + 1  # the other schema's came first and was dropped

    listening(registry, scenario)


def test_a_killed_connection_reconnects_and_says_so(
    registry: Registry, new_version: NewVersionFactory
) -> None:
    async def scenario(feed: ChangeFeed, heard: Heard) -> None:
        first = feed.backend_pid
        seen = heard.calls
        with registry.engine.begin() as conn:
            conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first})
        # Told on the disconnect (poll fast now) and again once listening on a new backend.
        await heard.more_than(seen + 1)
        with anyio.fail_after(WAIT_S):
            while not feed.listening:
                await heard.more_than(heard.calls)
        assert feed.connects == 2
        assert feed.backend_pid not in (None, first)
        seen = heard.calls
        before = feed.notifications
        await anyio.to_thread.run_sync(lambda: registry.add_version(new_version("after")))
        await heard.more_than(seen)
        assert feed.notifications == before + 1

    listening(registry, scenario)


def test_sqlite_has_no_feed(tmp_path: Any) -> None:
    reg = Registry.open(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        assert not ChangeFeed.supports(reg.engine)
    finally:
        reg.close()
