"""A fleet: three ``toolfoundry serve --http`` processes on one PostgreSQL database.

They start at once on an empty schema (the migration runs once, under its advisory lock), a
tool is created on one and called on the others, a risky tool created on one is approved on a
third through the HTTP API, every server's MCP clients hear ``list_changed`` for each change
(PostgreSQL ``LISTEN/NOTIFY``, no fast poll: the servers are started with ``--poll 60``), and
the usage counters add up exactly after concurrent calls spread over the three. Prints the
notification latency (for docs/benchmarks.md).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from toolfoundry import Foundry
from toolfoundry.server.changes import SAFETY_INTERVAL_S

from .mcp.test_mcp_support import (
    WAIT_S,
    Notifications,
    by_name,
    env,
    free_port,
    relaxed_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
SERVERS = 3
START_S = 120.0  # three cold starts at once on a loaded 2-core machine
REQUEST_S = 30.0  # one HTTP request, or usage to be all recorded
CALLS_PER_SERVER = 20
TOGGLES = 8

ADD = {
    "name": "add",
    "description": "Add one to a number",
    "parameters": {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]},
    "code": "export const handler = ({ a }) => a + 1;\n",
    "tests": [{"input": {"a": 1}, "expected": 2}],
}
WEATHER = {
    "name": "weather",
    "description": "Current temperature of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "code": (
        "export async function handler({ city }) {\n"
        "  const r = await fetch(`https://api.example.com/w?city=${city}`);\n"
        "  return (await r.json()).temp;\n}\n"
    ),
    "capabilities": {"network": ["api.example.com"]},
    "fixtures": [
        {"url": "https://api.example.com/w?city=Oslo", "status": 200, "body": '{"temp": 4}'}
    ],
    "tests": [{"input": {"city": "Oslo"}, "expected": 4}],
}


class TimedNotifications(Notifications):
    """Also remembers when each ``list_changed`` arrived (monotonic clock)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.arrivals.append(time.monotonic())
        await super().__call__(message)


@contextmanager
def fleet(url: str, cwd: Path, n: int) -> Iterator[list[int]]:
    """``n`` ``serve --http`` processes started at the same moment; yields their ports once
    every one listens."""
    ports = [free_port() for _ in range(n)]
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []
    try:
        for port in ports:
            log = cwd / f"serve-{port}.log"
            with log.open("w") as stderr:
                command = [sys.executable, "-m", "toolfoundry", "serve", "--db", url]
                command += ["--poll", "60", "--http", f"127.0.0.1:{port}"]
                procs.append((subprocess.Popen(command, cwd=cwd, env=env(), stderr=stderr), log))
        deadline = time.monotonic() + START_S
        for proc, log in procs:
            # The announcement is printed once uvicorn's lifespan (and the watcher) started.
            while "MCP at" not in log.read_text():
                if proc.poll() is not None:
                    raise AssertionError(f"serve exited {proc.returncode}: {log.read_text()}")
                if time.monotonic() > deadline:
                    raise AssertionError(f"serve did not start in time: {log.read_text()}")
                time.sleep(0.1)
        yield ports
    finally:
        for proc, _ in procs:
            proc.terminate()
        for proc, _ in procs:
            proc.wait(timeout=20)


@asynccontextmanager
async def mcp_session(port: int, notes: Notifications) -> AsyncIterator[ClientSession]:
    """The SDK's Streamable HTTP client on server ``port``'s ``/mcp``, initialized."""
    client = httpx2.AsyncClient(timeout=httpx2.Timeout(REQUEST_S, read=300))
    async with (
        client,
        streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as (r, w),
        ClientSession(r, w, message_handler=notes) as session,
    ):
        await session.initialize()
        yield session


async def changed_everywhere(notes: list[TimedNotifications], seen: list[int]) -> list[float]:
    """Wait for one more ``list_changed`` on every client; their arrival times."""
    for note, count in zip(notes, seen, strict=True):
        await note.wait_list_changed(count)
    return [note.arrivals[count] for note, count in zip(notes, seen, strict=True)]


def counts(notes: list[TimedNotifications]) -> list[int]:
    return [note.list_changed for note in notes]


async def call_add(session: ClientSession, a: int) -> Any:
    result = await session.call_tool("add", {"a": a})
    assert isinstance(result, types.CallToolResult)
    assert not result.is_error, result
    return result.structured_content


@pytest.mark.timeout(600)
def test_three_servers_on_one_database(pg_url: str, tmp_path: Path) -> None:
    # Each list_changed is awaited for less than the safety poll (and the 60 s --poll): only a
    # notification can deliver it in time.
    assert WAIT_S < SAFETY_INTERVAL_S
    relaxed_config(tmp_path)
    latencies: list[float] = []

    async def scenario(ports: list[int]) -> None:
        api = [f"http://127.0.0.1:{port}/api" for port in ports]
        async with AsyncExitStack() as stack:
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=REQUEST_S * 2))
            sessions: list[ClientSession] = []
            notes: list[TimedNotifications] = []
            for port in ports:
                timed = TimedNotifications()
                sessions.append(await stack.enter_async_context(mcp_session(port, timed)))
                notes.append(timed)
            for session in sessions:
                assert "add" not in by_name(await session.list_tools())

            # Created through MCP on server 0, listed and called on 1 and 2.
            seen = counts(notes)
            created = await sessions[0].call_tool("create_tool", ADD)
            assert isinstance(created, types.CallToolResult)
            assert not created.is_error, created
            await changed_everywhere(notes, seen)
            for session in sessions:
                assert "add" in by_name(await session.list_tools())
            assert await call_add(sessions[1], 41) == {"result": 42}
            assert await call_add(sessions[2], 1) == {"result": 2}

            # A risky tool created on server 0 (HTTP API) waits; approved on server 2.
            seen = counts(notes)
            response = await http.post(f"{api[0]}/tools", json=WEATHER)
            assert response.status_code == 201, response.text
            assert response.json()["status"] == "pending_approval"
            for session in sessions:
                assert "weather" not in by_name(await session.list_tools())
            response = await http.post(
                f"{api[2]}/tools/weather/versions/1/approve", json={"by": "alice"}
            )
            assert response.status_code == 200, response.text
            await changed_everywhere(notes, seen)
            for session in sessions:
                assert "weather" in by_name(await session.list_tools())
            assert counts(notes) == [n + 1 for n in seen]  # one change, one notification each

            # Notification latency: from the start of the request that changes the active set
            # (disable / enable, on each server in turn) to each client's list_changed.
            for i in range(TOGGLES):
                action = "disable" if i % 2 == 0 else "enable"
                seen = counts(notes)
                started = time.monotonic()
                response = await http.post(f"{api[i % SERVERS]}/tools/add/{action}", json={})
                assert response.status_code == 200, response.text
                arrivals = await changed_everywhere(notes, seen)
                latencies.extend(arrival - started for arrival in arrivals)
            assert TOGGLES % 2 == 0  # ends enabled

            # Concurrent calls spread over the three, through MCP and the HTTP API at once.
            async def through_api(server: int, a: int) -> None:
                r = await http.post(f"{api[server]}/tools/add/call", json={"args": {"a": a}})
                assert r.status_code == 200, r.text
                assert r.json()["value"] == a + 1

            async def through_mcp(server: int, a: int) -> None:
                assert await call_add(sessions[server], a) == {"result": a + 1}

            async with anyio.create_task_group() as tasks:
                for server in range(SERVERS):
                    for a in range(CALLS_PER_SERVER):
                        tasks.start_soon(through_mcp if a % 2 else through_api, server, a)
            expected = 2 + SERVERS * CALLS_PER_SERVER
            # Usage may be recorded after the answer: wait until it is all in, then exactly.
            with anyio.fail_after(REQUEST_S):
                while True:
                    usage = [(await http.get(f"{base}/tools/add")).json()["usage"] for base in api]
                    if usage[0]["calls"] >= expected:
                        break
                    await anyio.sleep(0.1)
            assert [u["calls"] for u in usage] == [expected] * SERVERS
            assert all(u["failures"] == {} for u in usage)

    with fleet(pg_url, tmp_path, SERVERS) as ports:
        anyio.run(scenario, ports)
    with Foundry.open(pg_url) as fd:
        assert fd.usage("add").calls == 2 + SERVERS * CALLS_PER_SERVER
    ms = sorted(1000 * x for x in latencies)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    print(
        f"\nfleet of {SERVERS} on PostgreSQL: list_changed latency over {len(ms)} deliveries "
        f"p50 {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms, max {ms[-1]:.1f} ms"
    )
