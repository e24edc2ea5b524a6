"""Real parts for the browser tests: Debian's chromium driven by Playwright, a loopback HTTP
server a network tool calls, and ``toolfoundry serve --http`` as a subprocess.

Screenshots of a failing test are saved under ``test-artifacts/browser/`` (CI keeps that
directory as an artifact)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--headless",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"


@pytest.fixture
def chromium() -> Path:
    """Debian's chromium (installed by scripts/setup.sh); the test is skipped without it."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)")
    return CHROMIUM


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    """Where this test saves screenshots when it fails (created only then)."""
    return ARTIFACTS / request.node.name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    """A running ``toolfoundry serve --http`` on loopback."""

    def __init__(self, url: str, cwd: Path, *extra: str) -> None:
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = cwd / "serve.log"
        env = {
            k: v for k, v in os.environ.items() if k not in ("TOOLFOUNDRY_DB", "TOOLFOUNDRY_TOKEN")
        }
        command = [sys.executable, "-m", "toolfoundry", "serve", "--db", url, "--poll", "0.2"]
        with self.log.open("w") as stderr:
            self.proc = subprocess.Popen(
                [*command, "--http", f"127.0.0.1:{self.port}", *extra],
                cwd=cwd,
                env=env,
                stderr=stderr,
            )
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited {self.proc.returncode}: {self.log.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "serve --http did not listen in time"
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture
def serve_http() -> Iterator[Any]:
    """Start ``toolfoundry serve --http`` for a database URL in a directory (its config)."""
    started: list[Served] = []

    def start(url: str, cwd: Path, *extra: str) -> Served:
        started.append(Served(url, cwd, *extra))
        return started[-1]

    yield start
    for served in started:
        served.stop()
