"""``toolfoundry serve --http``: bind first, then say where MCP, the page and the token are."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from toolfoundry.cli import main


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(tmp_path: Path, *extra: str) -> Iterator[tuple[int, list[str]]]:
    """``toolfoundry serve --http`` in a subprocess; yields the port and its stderr lines once
    it has announced itself (three lines)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLFOUNDRY_DB", "TOOLFOUNDRY_TOKEN")}
    command = [sys.executable, "-m", "toolfoundry", "serve", "--http", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(
        [*command, "--db", f"sqlite:///{tmp_path / 'r.db'}", *extra],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    announced = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if len([x for x in lines if x.startswith("toolfoundry: ")]) >= 3:
                announced.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not announced.wait(60):
            raise AssertionError(f"serve did not announce itself: {lines}")
        yield port, lines
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_it_announces_only_once_it_answers(tmp_path: Path) -> None:
    with serving(tmp_path) as (port, lines):
        # the page answers the moment the lines are out: they come after the bind and start-up
        page = httpx.get(f"http://127.0.0.1:{port}/ui/", timeout=5)
        assert page.status_code == 200
    base = f"http://127.0.0.1:{port}"
    assert lines[:3] == [
        f"toolfoundry: MCP at {base}/mcp",
        f"toolfoundry: review page at {base}/ui/",
        "toolfoundry: no token, loopback only (--token or TOOLFOUNDRY_TOKEN require one)",
    ]


def test_with_a_token_it_says_how_clients_send_it_and_never_prints_it(tmp_path: Path) -> None:
    secret = "s3cret-token-value"
    with serving(tmp_path, "--token", secret) as (port, lines):
        assert httpx.get(f"http://127.0.0.1:{port}/api/tools", timeout=5).status_code == 401
    hint = lines[2]
    assert "Authorization: Bearer <token>" in hint
    assert "/ui/?token=<token>" in hint
    assert secret not in "\n".join(lines)


def test_a_busy_port_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        result = CliRunner().invoke(
            main, ["serve", "--http", f"127.0.0.1:{port}", "--db", f"sqlite:///{tmp_path}/r.db"]
        )
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line == (
        f"Error: cannot listen on 127.0.0.1:{port}: address already in use "
        "(another server uses it; pick another port)"
    )
    assert "MCP at" not in result.output
    assert not (tmp_path / "r.db").exists()  # refused before the store is opened
    assert time.monotonic() - started < 10
