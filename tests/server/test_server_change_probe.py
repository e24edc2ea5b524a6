"""The SQLite change poll: no active-set read while nothing is committed, and every change seen,
whether another registry (another process's connection) or this server's own made it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from sqlalchemy import event
from tests.factories import NewVersionFactory

from toolfoundry import Foundry
from toolfoundry.registry.change_probe import ChangeProbe
from toolfoundry.server.changes import ActiveSetWatcher


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'registry.db'}"


@pytest.fixture
def server(url: str) -> Iterator[Foundry]:
    with Foundry.open(url) as fd:
        yield fd


@pytest.fixture
def other(url: str, server: Foundry) -> Iterator[Foundry]:
    with Foundry.open(url) as fd:  # its own engine and connections, like another process
        yield fd


def test_poll_reads_the_active_set_only_after_a_commit(
    server: Foundry, other: Foundry, new_version: NewVersionFactory
) -> None:
    statements: list[str] = []
    event.listen(
        server.registry.engine,
        "before_cursor_execute",
        lambda _c, _cur, sql, *_a: statements.append(sql),
    )

    async def scenario() -> None:
        changes: list[int] = []

        async def on_change() -> None:
            changes.append(watcher.polls)

        watcher = ActiveSetWatcher(server.registry, on_change)
        assert watcher.probe is not None
        assert not await watcher.check()  # the baseline: one read
        assert any("tf_tools" in sql for sql in statements)

        statements.clear()
        for _ in range(20):
            assert not await watcher.check()
        assert statements == []  # idle: not one query through the engine
        assert watcher.probe.reads == 21

        await anyio.to_thread.run_sync(other.registry.add_version, new_version("alpha"))
        assert await watcher.check()  # another registry's commit
        assert changes == [22]
        assert any("tf_tools" in sql for sql in statements)

        await anyio.to_thread.run_sync(server.registry.add_version, new_version("beta"))
        assert await watcher.check()  # this server's own commit, through its pool
        assert len(changes) == 2

        # A commit that lists nothing new (a call's usage row) costs one read, no event.
        await anyio.to_thread.run_sync(
            lambda: other.registry.record_call("alpha", 1, duration_ms=1.0, error_kind=None)
        )
        statements.clear()
        assert not await watcher.check()
        assert any("tf_tools" in sql for sql in statements)
        statements.clear()
        assert not await watcher.check()
        assert statements == []

        await anyio.to_thread.run_sync(other.disable, "alpha")
        assert await watcher.check()
        assert len(changes) == 3

    anyio.run(scenario)


def test_watcher_loop_sees_changes_and_releases_its_connection(
    server: Foundry,
    other: Foundry,
    new_version: NewVersionFactory,
) -> None:
    async def scenario() -> None:
        changes: list[int] = []

        async def on_change() -> None:
            changes.append(watcher.polls)

        watcher = ActiveSetWatcher(server.registry, on_change, interval_s=0.05)
        before = server.registry.engine.pool.checkedout()  # type: ignore[attr-defined]
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watcher.run)
            await anyio.sleep(0.2)
            await anyio.to_thread.run_sync(other.registry.add_version, new_version("gamma"))
            with anyio.fail_after(5):
                while not changes:
                    await anyio.sleep(0.02)
            tasks.cancel_scope.cancel()
        assert server.registry.engine.pool.checkedout() == before  # type: ignore[attr-defined]

    anyio.run(scenario)


def test_probe_says_maybe_after_forget_and_after_close(server: Foundry) -> None:
    probe = ChangeProbe(server.registry.engine)
    assert probe.moved()  # first ask
    assert not probe.moved()
    probe.forget()
    assert probe.moved()
    probe.close()
    assert probe.moved()  # reconnected: a new baseline
    assert not probe.moved()
    probe.close()


def test_probe_is_for_sqlite_files_only() -> None:
    from toolfoundry.registry.engine import create_registry_engine

    assert not ChangeProbe.supports(create_registry_engine("sqlite://"))
    assert not ChangeProbe.supports(create_registry_engine("sqlite:///:memory:"))
