"""Real upstream MCP servers for the upstream tests: the Python SDK's (stdio and Streamable HTTP,
tests/upstream/servers/python_server.py) and the TypeScript SDK's (bench/node/upstream_server.mjs,
the SDK pinned by bench/node's lockfile and installed by scripts/setup.sh)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolfoundry import Foundry
from toolfoundry.config import parse_config

SERVERS = Path(__file__).resolve().parent / "servers"
PYTHON_SERVER = str(SERVERS / "python_server.py")
NODE = SERVERS.parents[2] / "bench" / "node"
TS_SERVER = NODE / "upstream_server.mjs"
TS_SDK = NODE / "node_modules" / "@modelcontextprotocol" / "sdk"
TOKEN = "tf-upstream-bearer-3c9f0a1d7e"


def notes_entry(**extra: Any) -> dict[str, Any]:
    """The ``[[upstream]]`` table of the stdio ``notes`` server."""
    return {"name": "notes", "command": sys.executable, "args": [PYTHON_SERVER, "notes"], **extra}


def ts_entry(**extra: Any) -> dict[str, Any]:
    """The ``[[upstream]]`` table of the TypeScript SDK's stdio server."""
    return {"name": "words", "command": "node", "args": [str(TS_SERVER)], **extra}


@dataclass(frozen=True)
class HttpUpstream:
    """A Streamable HTTP ``tracker`` server requiring ``Authorization: Bearer TOKEN``."""

    url: str
    token: str
    variable: str

    def entry(self, **extra: Any) -> dict[str, Any]:
        credential = {"header": "Authorization", "env": self.variable, "prefix": "Bearer "}
        return {"name": "tracker", "url": self.url, "credentials": [credential], **extra}


def toml_text(config: dict[str, Any]) -> str:
    """``config`` as toolfoundry.toml: tables, arrays of tables (``[[upstream]]``), and values
    (strings, numbers, booleans, lists, inline tables) in their JSON spelling, which TOML
    reads the same."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    lines: list[str] = []
    for section, table in config.items():
        for item in table if isinstance(table, list) else [table]:
            lines.append(f"[[{section}]]" if isinstance(table, list) else f"[{section}]")
            lines += [f"{k} = {value(v)}" for k, v in item.items()]
    return "\n".join(lines) + "\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def tracker(monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpUpstream]:
    """The tracker server on a loopback port, its token in ``TRACKER_TOKEN`` (never in the
    configuration)."""
    with tracker_server() as upstream:
        monkeypatch.setenv(upstream.variable, upstream.token)
        yield upstream


@contextmanager
def tracker_server() -> Iterator[HttpUpstream]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, PYTHON_SERVER, "tracker", "--http", str(port), "--token", TOKEN],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end:
            try:
                httpx.get(url, timeout=1.0)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield HttpUpstream(url, TOKEN, "TRACKER_TOKEN")
    finally:
        process.terminate()
        process.wait(10)


def ts_ready() -> bool:
    """Whether the TypeScript SDK server can run (node, and scripts/setup.sh's npm ci)."""
    return shutil.which("node") is not None and TS_SDK.is_dir()


requires_ts = pytest.mark.skipif(
    not ts_ready(), reason="the TypeScript SDK is not installed (run scripts/setup.sh)"
)

UpstreamFoundry = Callable[..., Foundry]


@pytest.fixture
def upstream_foundry(tmp_path: Path) -> Iterator[UpstreamFoundry]:
    """``upstream_foundry(*entries, limits={...}, wait=True)``: a foundry over a new SQLite
    registry with these ``[[upstream]]`` entries, their first connections made; closed after
    the test."""
    opened: list[Foundry] = []

    def make(*entries: dict[str, Any], wait: bool = True, **tables: Any) -> Foundry:
        config = parse_config({"upstream": list(entries), **tables})
        fd = Foundry.open(f"sqlite:///{tmp_path / f'registry{len(opened)}.db'}", config=config)
        opened.append(fd)
        if wait:
            assert fd.upstreams is not None
            assert fd.upstreams.wait(30), [s.to_dict() for s in fd.upstreams.statuses()]
        return fd

    yield make
    for fd in opened:
        fd.close()


def wait_until(check: Callable[[], bool], timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.05)


def environ_without(*names: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in names}
