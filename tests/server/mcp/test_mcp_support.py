"""Helpers shared by the MCP server tests (no tests here): spawning ``toolfoundry serve`` as a
real subprocess and connecting the official MCP client to it over stdio or HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from toolfoundry import Foundry

POLL = "0.2"
WAIT_S = 10.0


def relaxed_foundry(directory: Path) -> Iterator[Foundry]:
    """An empty SQLite foundry under :func:`relaxed_config` (the body of a ``fd`` fixture)."""
    with Foundry.open(
        f"sqlite:///{directory / 'registry.db'}", config=relaxed_config(directory)
    ) as foundry:
        yield foundry


def relaxed_config(directory: Path) -> Path:
    """A toolfoundry.toml with a generous time limit, so a loaded 2-core CI machine does not
    turn slow sandbox runs into refused drafts; servers started in ``directory`` read it."""
    path = directory / "toolfoundry.toml"
    path.write_text("[limits]\ntimeout_s = 20.0\n")
    return path


def env() -> dict[str, str]:
    """This process's environment without a TOOLFOUNDRY_DB that could override --db."""
    out = {k: v for k, v in os.environ.items() if k not in ("TOOLFOUNDRY_DB", "TOOLFOUNDRY_TOKEN")}
    out["PYTHONUNBUFFERED"] = "1"
    return out


class Notifications:
    """Collects the server's notifications; ``wait_list_changed`` awaits the next one.
    ``initialized`` is the server's answer to ``initialize`` (its instructions, capabilities),
    once the session helpers below have made it."""

    def __init__(self) -> None:
        self.initialized: types.InitializeResult | None = None
        self.list_changed = 0
        self.resources_changed = 0  # notifications/resources/list_changed
        self._event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changed += 1
            self._event.set()
        elif isinstance(message, types.ResourceListChangedNotification):
            self.resources_changed += 1
            self._event.set()

    async def wait_resources_changed(self, seen: int) -> None:
        """Wait until more than ``seen`` resources/list_changed notifications have arrived."""
        with anyio.fail_after(WAIT_S):
            while self.resources_changed <= seen:
                await self._event.wait()
                self._event = anyio.Event()

    async def wait_list_changed(self, seen: int) -> None:
        """Wait until more than ``seen`` list_changed notifications have arrived."""
        with anyio.fail_after(WAIT_S):
            while self.list_changed <= seen:
                await self._event.wait()
                self._event = anyio.Event()


@asynccontextmanager
async def stdio_session(
    url: str,
    cwd: Path,
    *extra: str,
    environ: dict[str, str] | None = None,
    errlog: Any = None,
) -> AsyncIterator[tuple[ClientSession, Notifications]]:
    """``toolfoundry serve --db URL [extra...]`` spawned by the SDK's stdio client in ``cwd``,
    initialized (the ``mcp_session`` fixture). ``environ`` adds to the server's environment;
    ``errlog`` receives its stderr (default: this process's)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolfoundry", "serve", "--db", url, "--poll", POLL, *extra],
        env={**env(), **(environ or {})},
        cwd=str(cwd),
    )
    notes = Notifications()
    async with (
        stdio_client(params, errlog=errlog or sys.stderr) as (read, write),
        ClientSession(read, write, message_handler=notes) as session,
    ):
        notes.initialized = await session.initialize()
        yield session, notes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_http(url: str, cwd: Path, host: str = "127.0.0.1", *extra: str) -> Iterator[int]:
    """``toolfoundry serve --http HOST:PORT`` as a subprocess; yields the port once it listens."""
    port = free_port()
    log = cwd / f"serve-{port}.log"
    command = [sys.executable, "-m", "toolfoundry", "serve", "--db", url, "--poll", POLL]
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [*command, "--http", f"{host}:{port}", *extra], cwd=cwd, env=env(), stderr=stderr
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"serve exited {proc.returncode}: {log.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("serve --http did not listen in time") from None
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@asynccontextmanager
async def http_session(
    port: int, headers: dict[str, str] | None = None
) -> AsyncIterator[tuple[ClientSession, Notifications]]:
    """The SDK's Streamable HTTP client on ``/mcp``, initialized."""
    notes = Notifications()
    # The SDK's own defaults: a response stream may stay open for a long time.
    client = httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(30, read=300))
    endpoint = f"http://127.0.0.1:{port}/mcp"
    async with (
        client,
        streamable_http_client(endpoint, http_client=client) as (read, write),
        ClientSession(read, write, message_handler=notes) as session,
    ):
        notes.initialized = await session.initialize()
        yield session, notes


def by_name(listing: types.ListToolsResult) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in listing.tools}


def structured(result: Any) -> Any:
    """A CallToolResult's structured content (which it must have)."""
    assert isinstance(result, types.CallToolResult)
    assert result.structured_content is not None, text_of(result)
    return result.structured_content


def text_of(result: Any) -> str:
    """The first content block's text of a CallToolResult."""
    assert isinstance(result, types.CallToolResult)
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text
