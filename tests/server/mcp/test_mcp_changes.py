"""Detecting active-set changes: which registry operations move the fingerprint, the watcher's
notifications, what a poll costs, and two server processes sharing one PostgreSQL."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from tests.factories import NewVersionFactory

from toolfoundry import Foundry
from toolfoundry.catalog import mcp_tools
from toolfoundry.foundry.meta_tools import builtin_tools
from toolfoundry.registry import VersionStatus
from toolfoundry.server.changes import ActiveSetWatcher, active_set_fingerprint
from toolfoundry.server.mcp.listing import ToolListing
from toolfoundry.server.mcp.server import ToolListBroadcast, build_mcp_server, meta_tool_entries

from .test_mcp_support import (
    Notifications,
    by_name,
    http_session,
    relaxed_config,
    serve_http,
)


@pytest.fixture
def foundry(db_url: str) -> Iterator[Foundry]:
    with Foundry.open(db_url) as fd:
        yield fd


def test_fingerprint_moves_exactly_with_the_active_set(
    foundry: Foundry, new_version: NewVersionFactory
) -> None:
    registry = foundry.registry
    prints = [active_set_fingerprint(registry)]

    def moved() -> bool:
        prints.append(active_set_fingerprint(registry))
        return prints[-1] != prints[-2]

    registry.add_version(new_version("alpha"))
    assert moved()  # created active
    registry.add_version(new_version("alpha", VersionStatus.PENDING_APPROVAL))
    assert not moved()  # a pending update leaves the current version in place
    registry.add_version(new_version("beta", VersionStatus.PENDING_APPROVAL))
    assert not moved()  # a new pending tool is not listed
    registry.record_call("alpha", 1, duration_ms=1.0, error_kind=None)
    assert not moved()  # calls are audited but change nothing listed
    # The registry's own decision (the forge's approval binding is tested in its area).
    registry.decide("alpha", 2, approve=True, by="alice", reason="")
    assert moved()  # approved: version 2 is current
    foundry.rollback("alpha", 1)
    assert moved()
    foundry.disable("alpha")
    assert moved()
    foundry.enable("alpha")
    assert moved()
    registry.decide("beta", 1, approve=False, by="alice", reason="no")
    assert not moved()
    assert prints[-1] == prints[4]  # same active set as after rollback to v1: same digest


def test_watcher_reports_each_change_once(foundry: Foundry, new_version: NewVersionFactory) -> None:
    async def scenario() -> None:
        changes: list[int] = []

        async def on_change() -> None:
            changes.append(watcher.polls)

        watcher = ActiveSetWatcher(foundry.registry, on_change, interval_s=0.05)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watcher.run)
            await anyio.sleep(0.2)
            assert changes == []  # the first poll sets the baseline only
            await anyio.to_thread.run_sync(foundry.registry.add_version, new_version("gamma"))
            with anyio.fail_after(5):
                while not changes:
                    await anyio.sleep(0.02)
            await anyio.sleep(0.3)
            assert len(changes) == 1
            await anyio.to_thread.run_sync(foundry.disable, "gamma")
            watcher.nudge()
            with anyio.fail_after(5):
                while len(changes) < 2:
                    await anyio.sleep(0.02)
            tasks.cancel_scope.cancel()

    anyio.run(scenario)


def _median_ms(fn: Callable[[], object], runs: int = 20) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def test_poll_and_listing_cost(
    foundry: Foundry, capsys: pytest.CaptureFixture[str], new_version: NewVersionFactory
) -> None:
    """What a poll and a ``tools/list`` cost with 300 active tools (the report's figures)."""
    for i in range(300):
        foundry.registry.add_version(new_version(f"tool_{i:03d}"))
    meta = {t.spec.name: t for t in builtin_tools(foundry)}
    listing = ToolListing(foundry, meta, meta_tool_entries(meta), page_size=1000)
    poll = _median_ms(lambda: active_set_fingerprint(foundry.registry), runs=50)
    projection = _median_ms(lambda: mcp_tools(foundry.active_specs()), runs=5)
    first = listing.tools()
    unchanged = _median_ms(listing.tools)
    assert listing.tools() == first  # no change event: served from memory
    foundry.disable("tool_000")
    listing.invalidate()  # what the server does on each change event
    after = listing.tools()
    assert len(after) == len(first) - 1
    dialect = foundry.registry.engine.dialect.name
    with capsys.disabled():
        print(
            f"\n300 active tools, {dialect}: poll {poll:.2f} ms; tools/list projection "
            f"{projection:.1f} ms, unchanged set {unchanged:.2f} ms"
        )
    # Generous for a loaded 2-core machine; an idle one measures a poll well under 1 ms.
    assert poll < 50
    assert unchanged < projection


@pytest.mark.slow
@pytest.mark.postgres
def test_two_servers_on_one_postgres(pg_url: str, tmp_path: Path) -> None:
    """A tool created through server B reaches server A's clients as list_changed."""
    relaxed_config(tmp_path)
    Foundry.open(pg_url).close()  # migrate once before two processes race to
    add = {
        "name": "add",
        "description": "Add two numbers",
        "parameters": {"type": "object", "properties": {"a": {"type": "number"}}},
        "code": "export const handler = ({ a }) => a + 1;\n",
        "tests": [{"input": {"a": 1}, "expected": 2}],
    }

    async def scenario(port_a: int, port_b: int) -> None:
        async with http_session(port_a) as (a, notes), http_session(port_b) as (b, _):
            assert "add" not in by_name(await a.list_tools())
            created = await b.call_tool("create_tool", add)
            assert isinstance(created, types.CallToolResult)
            assert not created.is_error
            await notes.wait_list_changed(0)
            assert "add" in by_name(await a.list_tools())
            result = await a.call_tool("add", {"a": 41})
            assert isinstance(result, types.CallToolResult)
            assert result.structured_content == {"result": 42}

    with serve_http(pg_url, tmp_path) as port_a, serve_http(pg_url, tmp_path) as port_b:
        anyio.run(scenario, port_a, port_b)


def test_connections_notified_then_forgotten(
    foundry: Foundry, new_version: NewVersionFactory
) -> None:
    """In process (the SDK's in-memory transport): a handshake client is attached on
    ``initialized``, notified on a change, and forgotten when it disconnects."""

    async def scenario() -> None:
        broadcast = ToolListBroadcast()
        server = build_mcp_server(foundry, broadcast=broadcast, poll_interval_s=0.05)
        notes = Notifications()
        async with Client(server, mode="legacy", message_handler=notes) as client:
            await client.list_tools()
            assert broadcast.connections == 1
            await anyio.to_thread.run_sync(foundry.registry.add_version, new_version("delta"))
            await notes.wait_list_changed(0)
            assert "delta" in by_name(await client.list_tools())
        with anyio.fail_after(5):
            while broadcast.connections:
                await anyio.sleep(0.01)

    anyio.run(scenario)
